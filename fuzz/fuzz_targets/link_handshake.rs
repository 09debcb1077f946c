//! The link handshake fed a peer's bytes: the hello, the Noise messages (or plain nonces) and
//! the key confirmation, as the fuzzed end (acceptor or dialer, Noise or plain) reads them; a
//! handshake that completes then opens the rest of the input as records, with the keys it
//! agreed. Input: one byte (bit 0: the fuzzed end dials; bit 1: plain instead of Noise), then
//! the peer's bytes as `len: u16 LE ‖ bytes` chunks, each handed to `handle_input` in turn.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ringfence_fuzz::link::{
    security, ACCEPTOR, ACCEPTOR_ENTROPY, DIALER, DIALER_ENTROPY, MAX_FRAME,
};
use ringfence_fuzz::SESSION;
use ringfence_fuzz::{chunks, open_records};
use ringfence_link::record::FrameDecoder;
use ringfence_link::{Handshake, LinkEnds};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let dials = mode & 1 != 0;
    let noise = mode & 2 == 0;
    let me = if dials { DIALER } else { ACCEPTOR };
    let sec = security(me, noise);
    let ends = LinkEnds { me, session: SESSION, security: &sec };
    let mut h = if dials {
        Handshake::dial(ends, ACCEPTOR, &DIALER_ENTROPY)
    } else {
        Handshake::accept(ends, &ACCEPTOR_ENTROPY)
    }
    .expect("a valid configuration");
    let mut parts = chunks(rest).into_iter();
    while !h.is_done() {
        let _ = h.take_output();
        let Some(part) = parts.next() else { return };
        match h.handle_input(part) {
            Ok(n) => assert!(n <= part.len()),
            Err(_) => return,
        }
    }
    let _ = h.take_output();
    let Ok(est) = h.finish() else { return };
    assert_eq!(est.peer, if dials { ACCEPTOR } else { DIALER });
    let rest: Vec<&[u8]> = parts.collect();
    open_records(&mut FrameDecoder::new(est.recv, MAX_FRAME), &rest);
});
