//! The relay's invitation to a server party waiting in its deployment's lobby (JSON: session,
//! parties, client index, client key, the client's token), as the party parses it, then the
//! party's own check of the client's token (`InvitationCheck`: signature, session, participant,
//! key binding, lifetime, replay) at a fixed "now". The deployment `acme` has the seeds' fixed
//! key.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ringfence_relay::token::DeploymentKey;
use ringfence_relay::ws::{InvitationCheck, LobbyEvent};

/// The seeds' deployment key and "now" (see `src/bin/seeds.rs`).
const SEED: [u8; 32] = [0x42; 32];
const NOW: u64 = 1_700_000_000;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let LobbyEvent::Invited(i) = ringfence_relay::fuzzing::invitation(text) {
        assert!(i.client.0 < i.parties);
        let key = DeploymentKey::from_seed(SEED).expect("a fixed seed");
        let mut check = InvitationCheck::new("acme", key.public());
        if check.check(&i, NOW).is_ok() {
            // Accepted once: the token names this session, this client and its key, and the
            // same invitation again is a replay.
            assert_eq!(check.remembered(), 1);
            assert!(check.check(&i, NOW).unwrap_err().contains("replayed"));
        }
    }
});
