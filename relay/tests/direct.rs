//! Direct links among server parties: one router port serves several sessions at once, ignores
//! junk, and `connect_direct` moves the pairs of a relayed session that can link directly (a
//! pair that cannot keeps its relay link, both ends agreeing, with the reason).

use std::net::SocketAddr;
use std::time::Duration;

use crate::relay_common::relay;
use ringfence_core::net::{PartyId, SessionId, Transport};
use ringfence_relay::direct::{DirectLinks, Router};
use ringfence_relay::rtc::LinkKind;
use ringfence_relay::ws::{RelayLimits, RelayLinkConfig};
use ringfence_relay::{Security, StaticKeypair, TcpTransport, TransportConfig};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

fn noise(keys: &[StaticKeypair], i: usize) -> Security {
    Security::Noise {
        keypair: keys[i].clone(),
        public_keys: keys.iter().map(|k| k.public).collect(),
    }
}

/// Every party sends a distinct frame to every other and checks what it receives; the pairwise
/// seeds agree.
async fn exchange(ts: &mut [TcpTransport]) {
    for (i, t) in ts.iter_mut().enumerate() {
        for j in (0..3).filter(|&j| j != i) {
            t.send(PartyId(j as u8), vec![i as u8, j as u8, 7]).unwrap();
        }
    }
    for (i, t) in ts.iter_mut().enumerate() {
        for j in (0..3).filter(|&j| j != i) {
            assert_eq!(t.recv(PartyId(j as u8)).await.unwrap(), vec![j as u8, i as u8, 7]);
        }
    }
    for i in 0..3 {
        for j in (0..3).filter(|&j| j != i) {
            let (a, b) = (PartyId(i as u8), PartyId(j as u8));
            assert_eq!(ts[i].seed_with(b), ts[j].seed_with(a), "P{i}–P{j}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_router_port_serves_two_sessions_at_once_and_ignores_junk() {
    let keys: Vec<StaticKeypair> = (0..3).map(|_| StaticKeypair::generate().unwrap()).collect();
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let routers =
        [None, Some(Router::bind(any).await.unwrap()), Some(Router::bind(any).await.unwrap())];
    let addrs: Vec<SocketAddr> =
        routers.iter().map(|r| r.as_ref().map_or(any, Router::local_addr)).collect();
    // Junk first: wrong magic, a connection that never names a session, and one that names a
    // session nobody expects and then sends garbage.
    let target = addrs[2];
    let mut junk = TcpStream::connect(target).await.unwrap();
    junk.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
    let _silent = TcpStream::connect(target).await.unwrap();
    let mut stray = TcpStream::connect(target).await.unwrap();
    stray.write_all(b"rfd1sixteen-bytes-idxxxxxxxxxxxxxxxx").await.unwrap();
    let session = |tag: u8| SessionId([tag; 16]);
    let connect = |i: usize, s: SessionId| {
        let mut cfg = TransportConfig::new(PartyId(i as u8), addrs.clone(), noise(&keys, i), s);
        cfg.connect_timeout = Duration::from_secs(5);
        TcpTransport::connect_routed(cfg, routers[i].as_ref())
    };
    let (a0, a1, a2, b0, b1, b2) = tokio::join!(
        connect(0, session(1)),
        connect(1, session(1)),
        connect(2, session(1)),
        connect(0, session(2)),
        connect(1, session(2)),
        connect(2, session(2)),
    );
    let mut a = [a0.unwrap(), a1.unwrap(), a2.unwrap()];
    let mut b = [b0.unwrap(), b1.unwrap(), b2.unwrap()];
    exchange(&mut a).await;
    exchange(&mut b).await;
    // The sessions' links are distinct (their handshakes bind the session).
    assert_ne!(a[0].seed_with(PartyId(1)), b[0].seed_with(PartyId(1)));
    assert!(a.iter().chain(&b).all(|t| t.via(PartyId((t.me().0 + 1) % 3)) == LinkKind::Direct));
}

/// Three parties of `session` through the relay at `url`.
async fn through_relay(url: &str, keys: &[StaticKeypair], session: SessionId) -> Vec<TcpTransport> {
    let cfg = |i: usize| {
        let mut c = RelayLinkConfig::new(url, PartyId(i as u8), 3, noise(keys, i), session);
        c.recv_timeout = Duration::from_secs(5);
        c
    };
    let (a, b, c) = tokio::join!(
        TcpTransport::connect_via_relay(cfg(0)),
        TcpTransport::connect_via_relay(cfg(1)),
        TcpTransport::connect_via_relay(cfg(2)),
    );
    vec![a.unwrap(), b.unwrap(), c.unwrap()]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relayed_session_moves_the_pairs_that_can_link_and_keeps_the_others() {
    const TIMEOUT: Duration = Duration::from_secs(30);
    let url = relay(RelayLimits::default()).await;
    let keys: Vec<StaticKeypair> = (0..3).map(|_| StaticKeypair::generate().unwrap()).collect();
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let routers =
        [None, Some(Router::bind(any).await.unwrap()), Some(Router::bind(any).await.unwrap())];
    let good: Vec<SocketAddr> =
        routers.iter().map(|r| r.as_ref().map_or(any, Router::local_addr)).collect();
    // P0 has a dead address for P2 (nothing listens there): that pair stays on the relay.
    let dead = std::net::TcpListener::bind(any).unwrap().local_addr().unwrap();
    let mut p0_addrs = good.clone();
    p0_addrs[2] = dead;
    let session = SessionId(*b"direct-test-sess");
    let mut ts = through_relay(&url, &keys, session).await;
    let security: Vec<Security> = (0..3).map(|i| noise(&keys, i)).collect();
    let direct = |i: usize| DirectLinks {
        addrs: if i == 0 { &p0_addrs } else { &good },
        router: routers[i].as_ref(),
        security: &security[i],
        session,
        timeout: TIMEOUT,
    };
    let (d0, d1, d2) = (direct(0), direct(1), direct(2));
    let [t0, t1, t2] = &mut ts[..] else { unreachable!() };
    let start = std::time::Instant::now();
    let (r0, r1, r2) =
        tokio::join!(t0.connect_direct(&d0), t1.connect_direct(&d1), t2.connect_direct(&d2));
    // The dead address is refused at once and P0 tells P2 so: nobody waits out the timeout.
    assert!(start.elapsed() < TIMEOUT / 2, "took {:?}", start.elapsed());
    let (r0, r1, r2) = (r0.unwrap(), r1.unwrap(), r2.unwrap());
    let via = |r: &[ringfence_relay::rtc::PairReport]| r.iter().map(|p| p.via).collect::<Vec<_>>();
    assert_eq!(via(&r0), [LinkKind::Direct, LinkKind::Relay]);
    assert_eq!(via(&r1), [LinkKind::Direct, LinkKind::Direct]);
    assert_eq!(via(&r2), [LinkKind::Relay, LinkKind::Direct]);
    // Both ends of the failed pair say why: P0 its dial, P2 what P0 told it.
    let why0 = r0[1].why.clone().unwrap();
    let why2 = r2[0].why.clone().unwrap();
    assert!(why0.contains("dialling P2") && why0.contains(&dead.to_string()), "{why0}");
    assert!(why2.starts_with("P0: ") && why2.contains("dialling P2"), "{why2}");
    assert_eq!(ts[0].via(PartyId(2)), LinkKind::Relay);
    assert_eq!(ts[1].via(PartyId(2)), LinkKind::Direct);
    // Frames flow on every pair, whichever link it uses; the seeds are the relay links'.
    exchange(&mut ts).await;
    for t in ts {
        t.close().await.unwrap();
    }
}
