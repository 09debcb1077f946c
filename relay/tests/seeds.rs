//! Pairwise seeds agree at both ends of a link and differ between links and sessions.

use crate::common;

use std::time::Duration;

use ringfence_core::net::PartyId;
use ringfence_core::prg::Prg;

/// The first keystream word of a seed: equal seeds give equal words, and a collision between
/// different 256-bit seeds is negligible. (`Seed` has no accessor for its bytes, by design.)
fn fingerprint(t: &ringfence_relay::TcpTransport, peer: u8) -> u64 {
    Prg::new(&t.seed_with(PartyId(peer)), 0, 0).next_u64()
}

fn seeds_of_a_run(plain: bool) -> Vec<Vec<Option<u64>>> {
    let (parties, _) = common::parties(3, plain, Duration::from_secs(5));
    common::run(parties, |me, t| async move {
        let t = t.unwrap();
        (0..3u8).map(|j| (j != me.0).then(|| fingerprint(&t, j))).collect::<Vec<_>>()
    })
}

fn check(s: &[Vec<Option<u64>>]) {
    for (i, row) in s.iter().enumerate() {
        for (j, seed) in row.iter().enumerate() {
            if i != j {
                assert_eq!(*seed, s[j][i], "P{i} and P{j} disagree");
            }
        }
    }
    let (a, b, c) = (s[0][1], s[0][2], s[1][2]);
    assert!(a != b && a != c && b != c, "links share a seed");
}

#[test]
fn noise_seeds_agree_per_link_and_differ_between_links_and_runs() {
    let first = seeds_of_a_run(false);
    check(&first);
    let second = seeds_of_a_run(false);
    check(&second);
    assert_ne!(first[0][1], second[0][1], "a fresh handshake must give a fresh seed");
}

#[test]
fn insecure_plain_seeds_also_agree() {
    check(&seeds_of_a_run(true));
}
