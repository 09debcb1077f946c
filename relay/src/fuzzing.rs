//! Entry points for the fuzz targets (`fuzz/`) into decoders that are private to this crate;
//! compiled only with `--cfg fuzzing`, so they are no part of the API.

use ringfence_core::net::PartyId;

use crate::error::RelayError;
use crate::ws::LobbyEvent;

/// A peer's WebRTC signalling frame, parsed as `RtcTransport` parses it; returns its kind.
pub fn signal(bytes: &[u8]) -> Result<&'static str, RelayError> {
    crate::rtc::parse_signal(bytes, PartyId(1)).map(|s| s.kind())
}

/// A lobby invitation as the relay sends it to a waiting server party.
pub fn invitation(text: &str) -> LobbyEvent {
    crate::ws::parse_invitation(text)
}
