//! A peer that leaves or falls silent makes the others' `recv` fail within the timeout.

use crate::common;

use std::time::{Duration, Instant};

use ringfence_core::net::{PartyId, Transport, TransportError};

const TIMEOUT: Duration = Duration::from_millis(500);
/// Slack for scheduling on a loaded CI machine.
const BOUND: Duration = Duration::from_secs(3);

#[test]
fn a_peer_that_closes_gives_closed_quickly() {
    let (parties, _) = common::parties(3, false, TIMEOUT);
    let results = common::run(parties, |me, t| async move {
        let mut t = t.unwrap();
        if me == PartyId(2) {
            drop(t); // leaves at once (as a crashed process would)
            return None;
        }
        let start = Instant::now();
        let e = t.recv(PartyId(2)).await.unwrap_err();
        // Later calls repeat the failure.
        assert_eq!(t.recv(PartyId(2)).await.unwrap_err(), e);
        Some((e, start.elapsed()))
    });
    for (e, took) in results.into_iter().flatten() {
        assert!(matches!(e, TransportError::Closed | TransportError::Timeout(_)), "{e:?}");
        assert!(took < BOUND, "took {took:?}");
    }
}

#[test]
fn a_silent_peer_gives_timeout_after_the_configured_time() {
    let (parties, _) = common::parties(3, false, TIMEOUT);
    let results = common::run(parties, |me, t| async move {
        let mut t = t.unwrap();
        if me == PartyId(2) {
            tokio::time::sleep(TIMEOUT * 3).await; // connected, but never sends
            return None;
        }
        let start = Instant::now();
        let e = t.recv(PartyId(2)).await.unwrap_err();
        Some((e, start.elapsed()))
    });
    for (e, took) in results.into_iter().flatten() {
        assert_eq!(e, TransportError::Timeout(500));
        assert!(took >= TIMEOUT && took < BOUND, "took {took:?}");
    }
}
