//! The WebTransport relay's stream format: a message's length prefix (checked against the
//! relay's limit) and the relay's control messages, as a party reads them.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ringfence_relay::wt::wire::{body_len, Control, LEN_BYTES};

fuzz_target!(|data: &[u8]| {
    let Some((prefix, body)) = data.split_first_chunk::<LEN_BYTES>() else { return };
    if let Ok(n) = body_len(*prefix, 1 << 20) {
        assert!((1..=1 << 20).contains(&n));
    }
    if let Some(c) = Control::parse(body) {
        // What parses re-encodes to the same body (texts within the limit are not cut).
        if c.text.len() <= ringfence_relay::wt::wire::MAX_TEXT {
            assert_eq!(&c.to_message()[LEN_BYTES..], body);
        }
    }
});
