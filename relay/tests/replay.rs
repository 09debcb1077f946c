//! A captured link handshake replayed to a server's router (the security review: Noise `KK`
//! message 1 replays, and the mesh's session id is the same every epoch). The acceptor answers
//! a replayed message 1, but the link counts only after the dialer's key confirmation, which a
//! replayer cannot make: the replay never becomes a link, and the genuine dialer of the later
//! run links beside it, without waiting for the stalled replay to time out. The acceptor runs a
//! bounded number of candidates at once, each for a bounded time: replays that fill every slot
//! only delay the genuine dialer.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ringfence_core::net::{PartyId, SessionId, Transport};
use ringfence_relay::direct::Router;
use ringfence_relay::{Security, StaticKeypair, TcpTransport, TransportConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The router's preamble ("rfd1" ‖ session), then the hello.
const PREAMBLE: usize = 4 + 16;
const HELLO: usize = 24;
/// The dialer's key confirmation after message 1.
const CONFIRM: usize = 32;
/// Short enough that a run which had to wait for the acceptor to drop a stalled candidate
/// ([`ACCEPT_HANDSHAKE`]) fails.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// The acceptor's limits (`relay/src/establish.rs`): candidates in their handshake at once, and
/// how long each may take.
const CANDIDATES: usize = 4;
const ACCEPT_HANDSHAKE: Duration = Duration::from_secs(5);

fn noise(keys: &[StaticKeypair], i: usize) -> Security {
    Security::Noise {
        keypair: keys[i].clone(),
        public_keys: keys.iter().map(|k| k.public).collect(),
    }
}

fn config(
    keys: &[StaticKeypair],
    me: usize,
    addrs: &[SocketAddr],
    s: SessionId,
) -> TransportConfig {
    let mut cfg = TransportConfig::new(PartyId(me as u8), addrs.to_vec(), noise(keys, me), s);
    cfg.connect_timeout = CONNECT_TIMEOUT;
    cfg
}

/// A loopback proxy for one connection to `upstream` that records what the client sends.
async fn recording_proxy(upstream: SocketAddr) -> (SocketAddr, Arc<Mutex<Vec<u8>>>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        let (client, _) = l.accept().await.unwrap();
        let server = TcpStream::connect(upstream).await.unwrap();
        let ((mut cr, mut cw), (mut sr, mut sw)) = (client.into_split(), server.into_split());
        tokio::spawn(async move { tokio::io::copy(&mut sr, &mut cw).await });
        let mut buf = [0u8; 4096];
        loop {
            let n = cr.read(&mut buf).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            record.lock().unwrap().extend_from_slice(&buf[..n]);
            if sw.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    });
    (addr, seen)
}

/// Reads one `u16 BE length ‖ body` handshake message; `None` if the connection ends first.
async fn read_message(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut len = [0u8; 2];
    s.read_exact(&mut len).await.ok()?;
    let mut body = vec![0u8; usize::from(u16::from_be_bytes(len))];
    s.read_exact(&mut body).await.ok()?;
    Some(body)
}

/// The acceptor's message 2, if it comes in time.
async fn answer(s: &mut TcpStream) -> Option<Vec<u8>> {
    tokio::time::timeout(CONNECT_TIMEOUT, read_message(s)).await.ok().flatten()
}

/// One frame each way and the seeds: the two transports hold the same link.
async fn linked(t0: &mut TcpTransport, t1: &mut TcpTransport) {
    t0.send(PartyId(1), b"from P0".to_vec()).unwrap();
    t1.send(PartyId(0), b"from P1".to_vec()).unwrap();
    assert_eq!(t1.recv(PartyId(0)).await.unwrap(), b"from P0");
    assert_eq!(t0.recv(PartyId(1)).await.unwrap(), b"from P1");
    assert_eq!(t0.seed_with(PartyId(1)), t1.seed_with(PartyId(0)));
}

/// Run 1 of `session` between P0 and P1 (accepting on `router`), with P0's bytes captured on
/// the way: returns what a replayer has, the preamble, hello and message 1, and then the key
/// confirmation (what came after message 1, for a dialer without one).
async fn capture(
    keys: &[StaticKeypair],
    router: &Router,
    session: SessionId,
) -> (Vec<u8>, Vec<u8>) {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let (proxy, seen) = recording_proxy(router.local_addr()).await;
    let (r0, r1) = tokio::join!(
        TcpTransport::connect_routed(config(keys, 0, &[any, proxy], session), None),
        TcpTransport::connect_routed(config(keys, 1, &[any, any], session), Some(router)),
    );
    let (mut t0, mut t1) = (r0.unwrap(), r1.unwrap());
    linked(&mut t0, &mut t1).await;
    t0.close().await.unwrap();
    t1.close().await.unwrap();
    let captured = seen.lock().unwrap().clone();
    let at = PREAMBLE + HELLO;
    let msg1_end = at + 2 + usize::from(u16::from_be_bytes([captured[at], captured[at + 1]]));
    assert_eq!(&captured[PREAMBLE..PREAMBLE + 5], b"RFNC2");
    let confirmation = &captured[msg1_end..(msg1_end + CONFIRM).min(captured.len())];
    (captured[..msg1_end].to_vec(), confirmation.to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_handshake_never_links_and_the_genuine_dialer_still_does() {
    let keys: Vec<StaticKeypair> = (0..2).map(|_| StaticKeypair::generate().unwrap()).collect();
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    // P1's router outlives the runs, as a server's does across mesh epochs.
    let router = Router::bind(any).await.unwrap();
    let session = SessionId([0x5e; 16]);
    let (message_1, confirmation) = capture(&keys, &router, session).await;

    // Run 2 of the same session. Two replayers reach P1's router before the genuine dialer: one
    // sends the preamble, hello and message 1, the other the captured confirmation too.
    let mut stalled = TcpStream::connect(router.local_addr()).await.unwrap();
    stalled.write_all(&message_1).await.unwrap();
    let mut confirming = TcpStream::connect(router.local_addr()).await.unwrap();
    confirming.write_all(&message_1).await.unwrap();
    let addr1 = router.local_addr();
    let acceptor = tokio::spawn({
        let cfg = config(&keys, 1, &[any, any], session);
        async move {
            let router = router;
            let t = TcpTransport::connect_routed(cfg, Some(&router)).await;
            (t, router)
        }
    });
    // P1 answers both: as far as message 2, a replay is indistinguishable from its dialer. Only
    // then does the genuine dialer come, so both replays hold candidate slots when it does.
    assert!(answer(&mut stalled).await.is_some_and(|m| !m.is_empty()));
    let stalled_since = Instant::now();
    assert!(answer(&mut confirming).await.is_some_and(|m| !m.is_empty()));
    confirming.write_all(&confirmation).await.unwrap();
    let r0 = TcpTransport::connect_routed(config(&keys, 0, &[any, addr1], session), None).await;
    let (r1, _router) = acceptor.await.unwrap();
    let mut t0 = r0.expect("the genuine dialer links despite the replays");
    let mut t1 = r1.expect("P1 links with the genuine dialer");
    // It did not wait for the stalled replay to time out.
    assert!(
        stalled_since.elapsed() < ACCEPT_HANDSHAKE,
        "linked after {:?}",
        stalled_since.elapsed()
    );
    linked(&mut t0, &mut t1).await;

    // Neither replay became the link: P1 dropped both, sending nothing after message 2.
    for (name, mut s) in [("stalled", stalled), ("confirming", confirming)] {
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut rest)).await;
        assert!(read.is_ok(), "P1 keeps the {name} replay's connection open");
        assert!(rest.is_empty(), "P1 sent {} bytes on the {name} replay", rest.len());
    }
    t0.close().await.unwrap();
    t1.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replays_filling_every_candidate_slot_only_delay_the_genuine_dialer() {
    let keys: Vec<StaticKeypair> = (0..2).map(|_| StaticKeypair::generate().unwrap()).collect();
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let router = Router::bind(any).await.unwrap();
    let session = SessionId([0x5f; 16]);
    let (message_1, _) = capture(&keys, &router, session).await;
    // More stalled replays than the acceptor runs at once, all ahead of the genuine dialer.
    let mut replays = Vec::new();
    for _ in 0..CANDIDATES + 2 {
        let mut s = TcpStream::connect(router.local_addr()).await.unwrap();
        s.write_all(&message_1).await.unwrap();
        replays.push(s);
    }
    let patient = |me: usize, addrs: &[SocketAddr]| {
        let mut cfg = config(&keys, me, addrs, session);
        cfg.connect_timeout = ACCEPT_HANDSHAKE * 3;
        cfg
    };
    let addr1 = router.local_addr();
    let started = Instant::now();
    let acceptor = tokio::spawn({
        let cfg = patient(1, &[any, any]);
        async move { TcpTransport::connect_routed(cfg, Some(&router)).await }
    });
    // P1 runs as many as it may at once: exactly that many replays hear message 2 (the others
    // wait unanswered), and only then does the genuine dialer come.
    let answered = futures_util::future::join_all(replays.iter_mut().map(|s| async move {
        tokio::time::timeout(ACCEPT_HANDSHAKE / 2, read_message(s)).await.ok().flatten().is_some()
    }))
    .await;
    assert_eq!(answered.iter().filter(|&&a| a).count(), CANDIDATES, "{answered:?}");
    let r0 = TcpTransport::connect_routed(patient(0, &[any, addr1]), None).await;
    let r1 = acceptor.await.unwrap();
    let (mut t0, mut t1) = (r0.unwrap(), r1.unwrap());
    let took = started.elapsed();
    linked(&mut t0, &mut t1).await;
    // The first replays held every slot until they timed out: the acceptor never ran more than
    // its bound at once, and a slot came free for the genuine dialer.
    assert!(took >= ACCEPT_HANDSHAKE - Duration::from_millis(500), "linked after {took:?}");
    assert!(took < ACCEPT_HANDSHAKE * 2, "linked after {took:?}");
    t0.close().await.unwrap();
    t1.close().await.unwrap();
}
