//! The native transport through the relay: end-to-end Noise (the relay sees only ciphertext),
//! pairwise seeds, the insecure test-seed mode shared with the SDK, and departures.

use std::time::{Duration, Instant};

use crate::relay_common::{contains, relay, tap};
use ringfence_core::net::{PartyId, SessionId, Transport, TransportError};
use ringfence_core::prg::Seed;
use ringfence_relay::ws::{RelayLimits, RelayLinkConfig};
use ringfence_relay::{RelayError, Security, StaticKeypair, TcpTransport};

const S: SessionId = SessionId(*b"relay-links-test");
const MARKER: &[u8] = b"RINGFENCE-KNOWN-PLAINTEXT-7f3a";

/// Connects three parties through `url` with `security(i)`.
async fn three(
    url: &str,
    security: impl Fn(usize) -> Security,
) -> Vec<Result<TcpTransport, RelayError>> {
    let cfg = |i: usize| {
        let mut c = RelayLinkConfig::new(url, PartyId(i as u8), 3, security(i), S);
        c.recv_timeout = Duration::from_millis(1500);
        c.connect_timeout = Duration::from_secs(5);
        c
    };
    let (a, b, c) = tokio::join!(
        TcpTransport::connect_via_relay(cfg(0)),
        TcpTransport::connect_via_relay(cfg(1)),
        TcpTransport::connect_via_relay(cfg(2)),
    );
    vec![a, b, c]
}

fn noise(keys: &[StaticKeypair]) -> impl Fn(usize) -> Security + '_ {
    |i| Security::Noise {
        keypair: keys[i].clone(),
        public_keys: keys.iter().map(|k| k.public).collect(),
    }
}

/// A frame of ~100 KB full of the marker: several records and relay messages.
fn secret_frame(from: usize, to: usize) -> Vec<u8> {
    let mut f = vec![from as u8, to as u8];
    while f.len() < 100_000 {
        f.extend_from_slice(MARKER);
    }
    f
}

/// Every party sends its secret frame to every other and checks what it receives; then the
/// transports close. Returns the transports' pairwise seeds `seeds[i][j]`.
async fn exchange(ts: Vec<Result<TcpTransport, RelayError>>) -> Vec<Vec<Option<Seed>>> {
    let mut ts: Vec<TcpTransport> = ts.into_iter().map(Result::unwrap).collect();
    let seeds = (0..3)
        .map(|i| (0..3).map(|j| (i != j).then(|| ts[i].seed_with(PartyId(j as u8)))).collect())
        .collect();
    for (i, t) in ts.iter_mut().enumerate() {
        for j in (0..3).filter(|&j| j != i) {
            t.send(PartyId(j as u8), secret_frame(i, j)).unwrap();
        }
    }
    for (i, t) in ts.iter_mut().enumerate() {
        for j in (0..3).filter(|&j| j != i) {
            assert_eq!(t.recv(PartyId(j as u8)).await.unwrap(), secret_frame(j, i));
        }
    }
    for t in ts {
        t.close().await.unwrap();
    }
    seeds
}

fn assert_pairwise(seeds: &[Vec<Option<Seed>>]) {
    for (i, row) in seeds.iter().enumerate() {
        for (j, seed) in row.iter().enumerate() {
            assert_eq!(*seed, seeds[j][i], "seed of P{i}–P{j}");
        }
    }
    assert_ne!(seeds[0][1], seeds[0][2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noise_through_the_relay_shows_the_relay_only_ciphertext() {
    let (url, seen) = tap(&relay(RelayLimits::default()).await).await;
    let keys: Vec<StaticKeypair> = (0..3).map(|_| StaticKeypair::generate().unwrap()).collect();
    let seeds = exchange(three(&url, noise(&keys)).await).await;
    assert_pairwise(&seeds);
    let seen = seen.lock().unwrap();
    assert!(seen.len() > 6 * 100_000, "the tap saw the traffic ({} bytes)", seen.len());
    assert!(!contains(&seen, MARKER), "plaintext crossed the relay");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_insecure_modes_are_visible_to_the_relay() {
    // The control for the test above: the same traffic in the clear, the tap sees it.
    for security in [
        Security::DangerInsecurePlain,
        Security::DangerInsecureTestSeeds { label: "control".into() },
    ] {
        let (url, seen) = tap(&relay(RelayLimits::default()).await).await;
        assert_pairwise(&exchange(three(&url, |_| security.clone()).await).await);
        assert!(contains(&seen.lock().unwrap(), MARKER), "{security:?}");
    }
}

#[test]
fn test_seeds_are_the_sdk_s() {
    // SHA-256("ringfence-insecure-test-seed\0demo\0pair 0-2"), as `insecureTestSeeds` makes it.
    let hex = "b371066dac485885d2735c84aca86cba85dc7e4feced15f441a16110123385cf";
    let bytes: Vec<u8> =
        (0..32).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect();
    let want = Seed::from_bytes(bytes.try_into().unwrap());
    assert_eq!(Security::insecure_test_seed("demo", PartyId(2), PartyId(0)), want);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_seed_links_use_the_label_s_seeds() {
    let url = relay(RelayLimits::default()).await;
    let label = || Security::DangerInsecureTestSeeds { label: "demo".into() };
    let seeds = exchange(three(&url, |_| label()).await).await;
    assert_eq!(seeds[0][2], Some(Security::insecure_test_seed("demo", PartyId(0), PartyId(2))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_party_that_leaves_ends_its_links_and_the_others_carry_on() {
    let url = relay(RelayLimits::default()).await;
    let keys: Vec<StaticKeypair> = (0..3).map(|_| StaticKeypair::generate().unwrap()).collect();
    let mut ts: Vec<TcpTransport> =
        three(&url, noise(&keys)).await.into_iter().map(Result::unwrap).collect();
    drop(ts.pop()); // P2 vanishes
    let start = Instant::now();
    for t in &mut ts {
        let e = t.recv(PartyId(2)).await.unwrap_err();
        assert_eq!(e, TransportError::Closed);
        assert_eq!(t.recv(PartyId(2)).await.unwrap_err(), e, "the failure sticks");
    }
    assert!(start.elapsed() < Duration::from_secs(1), "took {:?}", start.elapsed());
    ts[0].send(PartyId(1), b"P0 and P1 carry on".to_vec()).unwrap();
    assert_eq!(ts[1].recv(PartyId(0)).await.unwrap(), b"P0 and P1 carry on");
    // Silence from a live peer is a timeout, not a hang.
    let e = ts[1].recv(PartyId(0)).await.unwrap_err();
    assert_eq!(e, TransportError::Timeout(1500));
}

#[tokio::test]
async fn refusals_are_clear_errors() {
    let url = relay(RelayLimits::default()).await;
    let cfg = |me: u8| {
        let sec = Security::DangerInsecureTestSeeds { label: "x".into() };
        let mut c = RelayLinkConfig::new(url.as_str(), PartyId(me), 3, sec, S);
        c.connect_timeout = Duration::from_secs(2);
        c
    };
    let first = tokio::spawn(TcpTransport::connect_via_relay(cfg(0)));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let e = TcpTransport::connect_via_relay(cfg(0)).await.unwrap_err().to_string();
    assert!(e.contains("409"), "{e}");
    drop(first);
    let mut bad = cfg(5);
    bad.parties = 3;
    let e = TcpTransport::connect_via_relay(bad).await.unwrap_err();
    assert!(matches!(e, RelayError::Config(_)), "{e}");
    let nobody =
        RelayLinkConfig::new("ws://127.0.0.1:1", PartyId(0), 3, Security::DangerInsecurePlain, S);
    assert!(TcpTransport::connect_via_relay(nobody).await.is_err());
}
