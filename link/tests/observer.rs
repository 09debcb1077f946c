//! The pairwise seed of a link is secret from whoever sees its handshake: the relay, or anyone
//! holding the recorded bytes and the parties' public keys (security review, item 1).
//!
//! The observer (see `transcript`) recomputes the Noise handshake hash from public data alone;
//! these tests show it gets the parties' very hash (so the model is faithful), that link v1's
//! seed was therefore public, and that the seed the parties now use is none of the observer's
//! derivations.

mod transcript;

use ringfence_core::net::SessionId;
use ringfence_link::NOISE_PROTOCOL;
use transcript::{keypairs, observe, public_derivations, record_link, v1_seed};

const PROLOGUE_LABEL: &[u8] = b"ringfence link v2";

#[test]
fn the_observer_recomputes_the_handshake_hash_from_public_data() {
    let keys = keypairs(3);
    for (i, pair) in [(0, 1), (0, 2), (1, 2)].into_iter().enumerate() {
        let session = SessionId([0x30 + i as u8; 16]);
        let (d, a, wire) = record_link(&keys, session, pair, 0x11 * (i as u8 + 1));
        assert_eq!(&wire.to_acceptor[..5], b"RFNC2");
        let pks = (&keys[usize::from(pair.0)].public, &keys[usize::from(pair.1)].public);
        let o = observe(&wire, NOISE_PROTOCOL, PROLOGUE_LABEL, pks.0, pks.1);
        assert_eq!(d.handshake_hash, Some(o.h), "link {pair:?}: dialer's h");
        assert_eq!(a.handshake_hash, Some(o.h), "link {pair:?}: acceptor's h");

        // Control: a wrong public key, or a wrong prologue, gives another hash, so the
        // equality above is the observer's doing, not a coincidence of the comparison.
        let other = &keys[usize::from(3 - pair.0 - pair.1)].public;
        assert_ne!(observe(&wire, NOISE_PROTOCOL, PROLOGUE_LABEL, other, pks.1).h, o.h);
        assert_ne!(observe(&wire, NOISE_PROTOCOL, b"ringfence link v1", pks.0, pks.1).h, o.h);
    }
}

#[test]
fn v1_seeds_were_public_and_v2_seeds_are_not() {
    let keys = keypairs(3);
    let mut seen = Vec::new();
    for (i, pair) in [(0, 1), (0, 2), (1, 2), (0, 2)].into_iter().enumerate() {
        let session = SessionId([0x50 + i as u8; 16]);
        let (d, a, wire) = record_link(&keys, session, pair, 0x21 + i as u8);
        assert_eq!(d.seed_bytes, a.seed_bytes, "both ends agree");
        let pks = [&keys[usize::from(pair.0)].public, &keys[usize::from(pair.1)].public];
        let o = observe(&wire, NOISE_PROTOCOL, PROLOGUE_LABEL, pks[0], pks[1]);

        // What link v1 would have given these parties, from their own hash, is exactly what
        // the observer computes from the wire: v1 handed every seed to the relay.
        let parties_v1 = v1_seed(&d.handshake_hash.unwrap());
        assert_eq!(v1_seed(&o.h), parties_v1);

        let candidates = public_derivations(&o, &wire, pks);
        assert!(candidates.len() >= 10);
        assert!(candidates.contains(&parties_v1));
        for (k, c) in candidates.iter().enumerate() {
            assert_ne!(
                *c, *d.seed_bytes,
                "link {pair:?}: derivation {k} of public data is the seed"
            );
        }
        seen.push(*d.seed_bytes);
    }
    // The same pair in another session (fresh ephemerals) gets a fresh seed.
    assert_ne!(seen[1], seen[3]);
}
