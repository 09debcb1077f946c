//! The wire frame check every received frame passes: `frame::check` against the session, step
//! and payload length the protocol expects (the first 28 input bytes choose them).
#![no_main]
use libfuzzer_sys::fuzz_target;
use ringfence_core::net::frame::{check, SessionId, HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    let Some((params, frame)) = data.split_first_chunk::<28>() else { return };
    let session = SessionId(params[..16].try_into().unwrap());
    let step = u64::from_le_bytes(params[16..24].try_into().unwrap());
    let expected = u32::from_le_bytes(params[24..28].try_into().unwrap()) as usize;
    if let Ok(payload) = check(frame, session, step, expected) {
        assert_eq!(payload.len(), expected);
        assert_eq!(frame.len(), HEADER_LEN + expected);
    }
});
