//! The WAN emulator used by `ringfence bench --wan`: bytes arrive intact, never earlier than the
//! link's delay and rate allow. (Lower bounds only: an idle machine is never slower than
//! expected by a fixed amount, so upper bounds would be flaky.)

use std::time::{Duration, Instant};

use ringfence_relay::netem::{LinkShape, ShapedProxy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// An echo server on loopback; returns its address.
async fn echo() -> std::net::SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let (mut r, mut w) = s.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
    addr
}

#[tokio::test]
async fn a_round_trip_takes_the_rtt_and_a_bulk_transfer_the_rate() {
    let shape = LinkShape::new(Duration::from_millis(60), 16.0);
    let proxy = ShapedProxy::start(echo().await, shape).await.unwrap();
    let mut s = TcpStream::connect(proxy.addr()).await.unwrap();
    s.set_nodelay(true).unwrap();

    let t = Instant::now();
    s.write_all(b"x").await.unwrap();
    let mut one = [0u8; 1];
    s.read_exact(&mut one).await.unwrap();
    assert_eq!(&one, b"x");
    assert!(t.elapsed() >= Duration::from_millis(60), "round trip in {:?}", t.elapsed());

    // 200 kB each way at 16 Mbit/s: at least 100 ms of serialization plus the RTT.
    let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let t = Instant::now();
    let (mut r, mut w) = s.into_split();
    let sent = data.clone();
    let writer = tokio::spawn(async move { w.write_all(&sent).await.unwrap() });
    let mut back = vec![0u8; data.len()];
    r.read_exact(&mut back).await.unwrap();
    writer.await.unwrap();
    assert!(back == data, "bytes changed in transit");
    assert!(t.elapsed() >= Duration::from_millis(160), "bulk transfer in {:?}", t.elapsed());
}
