//! Native WebRTC (`ringfence_relay::rtc`): three native parties through a relay on loopback run
//! the SDK's `RtcTransport` signalling inside their Noise links and move their pairs onto str0m
//! DataChannels bound on 127.0.0.1; a party without WebRTC (or whose UDP bind fails) keeps its
//! pairs on the relay; a peer whose signalling is malformed or out of order is an error.

use std::net::IpAddr;
use std::time::Duration;

use crate::relay_common::relay;
use ringfence_core::net::{Ctx, PartyId, SessionId, Transport};
use ringfence_core::rep3::Rep3;
use ringfence_core::ring::{IntRing, Z64};
use ringfence_relay::rtc::{LinkKind, PairReport, RtcOptions};
use ringfence_relay::ws::{RelayLimits, RelayLinkConfig};
use ringfence_relay::{RelayError, Security, StaticKeypair, TcpTransport};

const S: SessionId = SessionId(*b"webrtc-natives-1");

/// Loopback, and DataChannels between these native parties too.
fn loopback() -> RtcOptions {
    RtcOptions { open_timeout_ms: 20_000, between_natives: true, ..RtcOptions::default() }
}

fn off() -> RtcOptions {
    RtcOptions { bind: Vec::new(), ..loopback() }
}

/// Connects three Noise parties through `url` (receive timeout `recv_ms`).
async fn three(url: &str, recv_ms: u64) -> Vec<TcpTransport> {
    let keys: Vec<StaticKeypair> = (0..3).map(|_| StaticKeypair::generate().unwrap()).collect();
    let cfg = |i: usize| {
        let security = Security::Noise {
            keypair: keys[i].clone(),
            public_keys: keys.iter().map(|k| k.public).collect(),
        };
        let mut c = RelayLinkConfig::new(url, PartyId(i as u8), 3, security, S);
        c.recv_timeout = Duration::from_millis(recv_ms);
        c.connect_timeout = Duration::from_secs(10);
        c
    };
    let (a, b, c) = tokio::join!(
        TcpTransport::connect_via_relay(cfg(0)),
        TcpTransport::connect_via_relay(cfg(1)),
        TcpTransport::connect_via_relay(cfg(2)),
    );
    vec![a.unwrap(), b.unwrap(), c.unwrap()]
}

/// Runs `connect_webrtc` at all three with `opts[i]`.
async fn signal(
    ts: &mut [TcpTransport],
    opts: [RtcOptions; 3],
) -> Vec<Result<Vec<PairReport>, RelayError>> {
    let [a, b, c] = ts else { panic!("three transports") };
    let (ra, rb, rc) = tokio::join!(
        a.connect_webrtc(&opts[0]),
        b.connect_webrtc(&opts[1]),
        c.connect_webrtc(&opts[2]),
    );
    vec![ra, rb, rc]
}

fn kinds(ts: &[TcpTransport]) -> Vec<Vec<LinkKind>> {
    ts.iter()
        .enumerate()
        .map(|(i, t)| (0..3).filter(|&j| j != i).map(|j| t.via(PartyId(j as u8))).collect())
        .collect()
}

/// A frame of `len` bytes that names its sender, receiver and index.
fn frame(from: usize, to: usize, k: usize, len: usize) -> Vec<u8> {
    (0..len).map(|i| (from * 31 + to * 7 + k * 13 + i * 5) as u8).collect()
}

/// Frame sizes across the chunking: empty, tiny, exactly one chunk with and without its
/// length prefix, several chunks, and a MiB.
const SIZES: [usize; 7] = [0, 1, 65_532, 65_536, 200_001, 1 << 20, 7];

/// Every party sends every size to every other, then checks what arrives, in order.
async fn exchange(ts: &mut [TcpTransport]) {
    for (i, t) in ts.iter_mut().enumerate() {
        for j in (0..3).filter(|&j| j != i) {
            for (k, &len) in SIZES.iter().enumerate() {
                t.send(PartyId(j as u8), frame(i, j, k, len)).unwrap();
            }
        }
    }
    for (i, t) in ts.iter_mut().enumerate() {
        for j in (0..3).filter(|&j| j != i) {
            for (k, &len) in SIZES.iter().enumerate() {
                let got = t.recv(PartyId(j as u8)).await.unwrap();
                assert!(got == frame(j, i, k, len), "P{i} from P{j}: frame {k} ({len} B)");
            }
        }
    }
}

/// The product of P0's and P1's edge values through rep3 on the transports; every party's
/// revealed result.
async fn products(ts: Vec<TcpTransport>, x: &[i64], y: &[i64]) -> Vec<Vec<i64>> {
    let n = x.len();
    let runs = ts.into_iter().enumerate().map(|(i, t)| async move {
        let me = PartyId(i as u8);
        let seeds = t.rep3_seeds().unwrap();
        let mut p = Rep3::setup(Ctx::new(me, 3, S, t), seeds).await.unwrap();
        let mine = |v: &[i64]| v.iter().map(|&a| Z64::from_i64(a)).collect::<Vec<_>>();
        let a = p.input(PartyId(0), (i == 0).then(|| mine(x)).as_deref(), n).await.unwrap();
        let b = p.input(PartyId(1), (i == 1).then(|| mine(y)).as_deref(), n).await.unwrap();
        let c = p.mul(&a, &b).await.unwrap();
        let out = p.reveal(c).await.unwrap();
        p.into_ctx().into_transport().close().await.unwrap();
        out.iter().map(|z| z.to_i64()).collect::<Vec<_>>()
    });
    futures_util::future::join_all(runs).await
}

fn edge_values() -> (Vec<i64>, Vec<i64>) {
    let e = [0, 1, -1, i64::MIN, i64::MAX];
    let x: Vec<i64> = e.iter().flat_map(|&a| e.iter().map(move |_| a)).collect();
    let y: Vec<i64> = e.iter().flat_map(|_| e.iter().copied()).collect();
    (x, y)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_natives_move_every_pair_onto_datachannels_and_multiply() {
    let url = relay(RelayLimits::default()).await;
    let mut ts = three(&url, 60_000).await;
    let seeds_before: Vec<_> =
        (0..3).map(|i| ts[i].seed_with(PartyId(((i + 1) % 3) as u8))).collect();
    let reports = signal(&mut ts, [loopback(), loopback(), loopback()]).await;
    for (i, r) in reports.into_iter().enumerate() {
        let r = r.unwrap_or_else(|e| panic!("P{i}: {e}"));
        assert!(r.iter().all(|p| p.via == LinkKind::Webrtc && p.why.is_none()), "P{i}: {r:?}");
    }
    assert_eq!(kinds(&ts), vec![vec![LinkKind::Webrtc; 2]; 3]);
    // The pairwise seeds stay those of the Noise handshakes.
    for (i, seed) in seeds_before.iter().enumerate() {
        assert_eq!(*seed, ts[i].seed_with(PartyId(((i + 1) % 3) as u8)));
    }
    exchange(&mut ts).await;
    let (x, y) = edge_values();
    let expected: Vec<i64> = x.iter().zip(&y).map(|(a, b)| a.wrapping_mul(*b)).collect();
    for (i, out) in products(ts, &x, &y).await.into_iter().enumerate() {
        assert_eq!(out, expected, "P{i}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_party_without_webrtc_keeps_its_pairs_on_the_relay() {
    let url = relay(RelayLimits::default()).await;
    let mut ts = three(&url, 60_000).await;
    // P0 offers to P1 (off: it answers no-rtc); P1 offers to P2 without WebRTC (use relay).
    let reports = signal(&mut ts, [loopback(), off(), loopback()]).await;
    let reports: Vec<Vec<PairReport>> = reports.into_iter().map(Result::unwrap).collect();
    assert_eq!(
        kinds(&ts),
        vec![
            vec![LinkKind::Relay, LinkKind::Webrtc],
            vec![LinkKind::Relay, LinkKind::Relay],
            vec![LinkKind::Webrtc, LinkKind::Relay],
        ]
    );
    let why = |i: usize, peer: u8| {
        reports[i].iter().find(|p| p.peer == PartyId(peer)).and_then(|p| p.why.clone()).unwrap()
    };
    for (i, peer) in [(0, 1), (1, 0), (1, 2), (2, 1)] {
        assert!(why(i, peer).contains("WebRTC is turned off"), "P{i}–P{peer}: {}", why(i, peer));
    }
    exchange(&mut ts).await;
    let (x, y) = edge_values();
    let expected: Vec<i64> = x.iter().zip(&y).map(|(a, b)| a.wrapping_mul(*b)).collect();
    for out in products(ts, &x, &y).await {
        assert_eq!(out, expected);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_pairs_keep_the_relay_by_default() {
    let url = relay(RelayLimits::default()).await;
    let mut ts = three(&url, 60_000).await;
    let default = RtcOptions { open_timeout_ms: 20_000, ..RtcOptions::default() };
    // P2 answers both offers: it refuses str0m's unless it opens DataChannels between natives.
    let reports = signal(&mut ts, [default.clone(), default, loopback()]).await;
    let reports: Vec<Vec<PairReport>> = reports.into_iter().map(Result::unwrap).collect();
    assert_eq!(
        kinds(&ts),
        vec![
            vec![LinkKind::Relay, LinkKind::Webrtc],
            vec![LinkKind::Relay, LinkKind::Webrtc],
            vec![LinkKind::Webrtc, LinkKind::Webrtc],
        ]
    );
    let why = reports[0][0].why.as_deref().unwrap();
    assert!(why.contains("both parties are native"), "{why}");
    assert_eq!(reports[1][0].why, reports[0][0].why);
    exchange(&mut ts).await;
    for t in ts {
        t.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_udp_bind_falls_back_to_the_relay_with_its_reason() {
    let url = relay(RelayLimits::default()).await;
    let mut ts = three(&url, 60_000).await;
    // 192.0.2.1 (TEST-NET-1) is no address of this host: binding it fails, nothing is sent.
    let foreign: IpAddr = "192.0.2.1".parse().unwrap();
    let bad = RtcOptions { bind: vec![foreign], ..loopback() };
    let reports = signal(&mut ts, [bad, loopback(), loopback()]).await;
    let r0 = reports[0].as_ref().unwrap();
    assert!(r0.iter().all(|p| p.via == LinkKind::Relay), "{r0:?}");
    assert!(r0[0].why.as_deref().unwrap().contains("binding UDP on 192.0.2.1"), "{r0:?}");
    assert_eq!(ts[1].via(PartyId(2)), LinkKind::Webrtc);
    exchange(&mut ts).await;
    for t in ts {
        t.close().await.unwrap();
    }
}

/// P0 sends `first` instead of its signalling; P1 answers P0 and P2, P2 signals normally.
/// Returns P1's error.
async fn p1_after(first: &[u8]) -> String {
    let url = relay(RelayLimits::default()).await;
    let mut ts = three(&url, 3_000).await;
    let mut rest = ts.split_off(1);
    ts[0].send(PartyId(1), first.to_vec()).unwrap();
    let quick = RtcOptions { open_timeout_ms: 3_000, ..loopback() };
    let [p1, p2] = &mut rest[..] else { unreachable!() };
    let t0 = std::time::Instant::now();
    let (r1, _) = tokio::join!(p1.connect_webrtc(&quick), p2.connect_webrtc(&quick));
    assert!(t0.elapsed() < Duration::from_secs(15), "took {:?}", t0.elapsed());
    match r1 {
        Err(e @ RelayError::Signalling { .. }) => e.to_string(),
        other => panic!("P1 should fail the signalling: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_signalling_is_an_error_that_names_the_peer() {
    let e = p1_after(b"{\"t\":\"offer\"").await;
    assert!(e.contains("P0") && e.contains("something other than WebRTC signalling"), "{e}");
    let e = p1_after(&[0xff, 0x00, 0x13]).await;
    assert!(e.contains("something other than WebRTC signalling"), "{e}");
    let e = p1_after(br#"{"t":"use","via":"carrier-pigeon"}"#).await;
    assert!(e.contains("something other than WebRTC signalling"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signalling_out_of_order_is_an_error() {
    // The answerer gets a confirmation it should have sent.
    let e = p1_after(br#"{"t":"ok","via":"webrtc"}"#).await;
    assert!(e.contains(r#"sent a WebRTC "ok" out of turn"#), "{e}");
    // An answer to an offer it never made.
    let e = p1_after(br#"{"t":"answer","sdp":"v=0"}"#).await;
    assert!(e.contains(r#""answer" out of turn"#), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_that_never_signals_is_a_timeout_not_a_hang() {
    let url = relay(RelayLimits::default()).await;
    let mut ts = three(&url, 1_000).await;
    let quick = RtcOptions { open_timeout_ms: 1_000, ..loopback() };
    // P2 stays silent; P0 and P1 finish their pair, then wait for P2 until the deadline.
    let t0 = std::time::Instant::now();
    let [p0, p1, _p2] = &mut ts[..] else { unreachable!() };
    let (r0, r1) = tokio::join!(p0.connect_webrtc(&quick), p1.connect_webrtc(&quick));
    assert!(t0.elapsed() < Duration::from_secs(10), "took {:?}", t0.elapsed());
    for r in [r0, r1] {
        let e = r.unwrap_err().to_string();
        assert!(
            e.contains("P2") && e.contains("did not finish the WebRTC signalling in time"),
            "{e}"
        );
    }
}
