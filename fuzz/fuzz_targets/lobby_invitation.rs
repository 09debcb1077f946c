//! The relay's invitation to a server party waiting in its deployment's lobby (JSON: session,
//! parties, client index, client key), as the party parses it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ringfence_relay::ws::LobbyEvent;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let LobbyEvent::Invited(i) = ringfence_relay::fuzzing::invitation(text) {
        assert!(i.client.0 < i.parties);
    }
});
