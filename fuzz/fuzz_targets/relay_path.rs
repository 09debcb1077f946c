//! The relay's request path and query (`/v1/SESSION/PARTY?…`, `/v1/lobby/…`), as the WebSocket
//! and WebTransport relays parse what a client asks for. A parsed path must print to a path
//! that parses back the same.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ringfence_relay::ws::Request;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match Request::parse(text) {
        Ok(Request::Session(p)) => {
            let again = Request::parse(&p.to_string());
            assert_eq!(again, Ok(Request::Session(p)));
        }
        Ok(Request::Lobby(p)) => {
            let again = Request::parse(&p.to_string());
            assert_eq!(again, Ok(Request::Lobby(p)));
        }
        Err(e) => assert!(!e.is_empty()),
    }
});
