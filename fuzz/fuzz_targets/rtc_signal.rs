//! A peer's WebRTC signalling frame (offer, answer, ice, no-rtc, use, ok: JSON inside the
//! pair's Noise link), parsed as the native `RtcTransport` does.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = ringfence_relay::fuzzing::signal(data) {
        assert!(!e.to_string().is_empty());
    }
});
