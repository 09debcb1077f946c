//! Helpers shared by the fuzz targets: a transport that replays fuzzer-chosen frames, and a
//! single-poll executor for the core's futures.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use ringfence_core::net::frame::{begin, SessionId};
use ringfence_core::net::{PartyId, Transport, TransportError};

/// The session id every scripted run uses (the seed corpus was written for it).
pub const SESSION: SessionId = SessionId([0x5e; 16]);

/// Splits `data` into length-prefixed chunks: `len: u16 LE ‖ len bytes`, the last one cut
/// short when the data ends. The format of every multi-message target's input.
pub fn chunks(mut data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while data.len() >= 2 {
        let n = usize::from(u16::from_le_bytes([data[0], data[1]])).min(data.len() - 2);
        out.push(&data[2..2 + n]);
        data = &data[2 + n..];
    }
    out
}

/// Appends `chunk` in the format [`chunks`] reads.
pub fn put_chunk(out: &mut Vec<u8>, chunk: &[u8]) {
    let n = u16::try_from(chunk.len()).expect("a seed chunk under 64 KiB");
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(chunk);
}

/// A transport whose every received frame, from whichever peer the protocol reads next, is the
/// next fuzzer chunk as a payload, under a header with the right session and step: the
/// fuzzer's bytes reach the message decoders instead of dying in the frame check (which has a
/// target of its own). When the chunks run out the link is closed. Sent frames are dropped.
pub struct Script<'a> {
    chunks: std::vec::IntoIter<&'a [u8]>,
    steps: [u64; 256],
}

impl<'a> Script<'a> {
    /// A script replaying [`chunks`] of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { chunks: chunks(data).into_iter(), steps: [0; 256] }
    }
}

impl Transport for Script<'_> {
    fn send(&mut self, _to: PartyId, _frame: Vec<u8>) -> Result<(), TransportError> {
        Ok(())
    }

    async fn recv(&mut self, from: PartyId) -> Result<Vec<u8>, TransportError> {
        let payload = self.chunks.next().ok_or(TransportError::Closed)?;
        let step = &mut self.steps[from.index()];
        let mut f = begin(SESSION, *step, payload.len());
        *step += 1;
        f.extend_from_slice(payload);
        Ok(f)
    }
}

/// Runs `fut` to completion; every future here is driven by a [`Script`], which never waits,
/// so a `Pending` would be a hang.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000_000 {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
    }
    panic!("a scripted protocol run is still pending after a million polls: a hang");
}

/// The link targets' fixed identities and entropy, shared with the seed writer so that its
/// recorded peer bytes replay byte for byte against the fuzzed end.
pub mod link {
    use std::sync::OnceLock;

    use ringfence_core::net::PartyId;
    use ringfence_link::{Security, StaticKeypair};

    /// The fuzzed end's entropy when it accepts (its ephemeral key or nonce).
    pub const ACCEPTOR_ENTROPY: [u8; 32] = [0xa5; 32];
    /// The fuzzed end's entropy when it dials.
    pub const DIALER_ENTROPY: [u8; 32] = [0x5a; 32];
    /// The dialer (lower ids dial higher ones).
    pub const DIALER: PartyId = PartyId(0);
    /// The acceptor.
    pub const ACCEPTOR: PartyId = PartyId(1);

    /// Three parties' static keypairs, from fixed entropy.
    pub fn keypairs() -> &'static [StaticKeypair] {
        static KEYS: OnceLock<Vec<StaticKeypair>> = OnceLock::new();
        KEYS.get_or_init(|| {
            (0..3u8)
                .map(|i| StaticKeypair::from_entropy(&[0x40 + i; 32]).expect("fixed entropy"))
                .collect()
        })
    }

    /// Party `me`'s security: Noise among [`keypairs`], or the insecure plain mode.
    pub fn security(me: PartyId, noise: bool) -> Security {
        if !noise {
            return Security::DangerInsecurePlain;
        }
        let keys = keypairs();
        Security::Noise {
            keypair: keys[me.index()].clone(),
            public_keys: keys.iter().map(|k| k.public).collect(),
        }
    }

    /// The record key of [`crate::link`]'s record target (its seeds are sealed with it).
    pub const RECORD_KEY: [u8; 32] = [0x33; 32];
    /// The record target's largest frame.
    pub const MAX_FRAME: usize = 1 << 20;
}

/// Appends each of `parts` to `dec`'s input in turn and takes every frame it completes, until
/// the parts end or a record is refused; returns how many frames came out.
pub fn open_records(dec: &mut ringfence_link::record::FrameDecoder, parts: &[&[u8]]) -> usize {
    let mut frames = 0;
    for part in parts {
        dec.input(part.len()).extend_from_slice(part);
        loop {
            match dec.poll_frame() {
                Ok(Some(f)) => {
                    assert!(f.len() <= link::MAX_FRAME);
                    frames += 1;
                }
                Ok(None) => break,
                Err(_) => return frames,
            }
        }
    }
    frames
}
