//! The record layer's opener: stream bytes reassembled into frames by `FrameDecoder`, under a
//! Noise record key (AES-256-GCM or ChaCha20-Poly1305, as a link agrees them) or plain records.
//! Input: one byte (0: AES-GCM, 1: ChaCha20-Poly1305, else plain), then the stream as
//! `len: u16 LE ‖ bytes` chunks, appended one at a time (records split across reads).
#![no_main]
use libfuzzer_sys::fuzz_target;
use ringfence_fuzz::link::{MAX_FRAME, RECORD_KEY};
use ringfence_fuzz::{chunks, open_records};
use ringfence_link::record::{Cipher, FrameDecoder, RecordKey};
use ringfence_link::Aead;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let cipher = match mode {
        0 | 1 => {
            let aead = if mode == 0 { Aead::AesGcm } else { Aead::ChaChaPoly };
            Cipher::Noise { key: RecordKey::new(aead, &RECORD_KEY).expect("a key"), nonce: 0 }
        }
        _ => Cipher::DangerPlain,
    };
    open_records(&mut FrameDecoder::new(cipher, MAX_FRAME), &chunks(rest));
});
