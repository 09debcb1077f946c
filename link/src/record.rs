//! Records: how frames are cut into Noise messages on a byte stream (sans-IO).
//!
//! ```text
//! wire    := record*
//! record  := len (u16 BE) ‖ body            body = Noise ciphertext (≤ 65535 bytes, tag included)
//!                                            or, in plain mode, the plaintext itself
//! frame   := the plaintexts of 1..k consecutive records:
//!            first record  = frame_len (u32 LE) ‖ frame[0 .. ≤ 65515]
//!            later records = next ≤ 65519 bytes of the frame
//! ```
//!
//! A record never carries bytes of two frames. [`FrameEncoder`] appends the records of a frame
//! to an output buffer; [`FrameDecoder`] takes stream bytes and yields whole frames. Every length
//! read from the peer is checked: a malformed record or a failed decryption is a
//! [`RecordError`], never a panic, and a frame is capped at `max_frame` bytes.

use std::sync::Arc;

use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Nonce, Tag};
use snow::StatelessTransportState;

/// Largest Noise message (the record body).
pub const MAX_RECORD: usize = 65535;
/// Bytes of the AEAD tag on each encrypted record.
pub const TAG_LEN: usize = 16;
/// Largest plaintext carried by one record.
pub const MAX_RECORD_PLAINTEXT: usize = MAX_RECORD - TAG_LEN;
/// Bytes of the frame-length prefix in a frame's first record.
const LEN_PREFIX: usize = 4;

/// Why a record or frame from the peer was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// Authentication of a record failed: tampered, replayed, reordered or wrongly keyed.
    #[error("record failed to decrypt (tampered or wrongly keyed)")]
    Decrypt,
    /// A length field is impossible.
    #[error("malformed record: {0}")]
    Malformed(String),
    /// A frame announces more bytes than allowed.
    #[error("frame of {len} bytes exceeds the {max}-byte limit")]
    Oversized {
        /// Announced frame length.
        len: usize,
        /// The cap.
        max: usize,
    },
    /// Encryption failed locally (nonce space exhausted).
    #[error("record encryption failed: {0}")]
    Seal(String),
}

/// The AEAD that protects a link's records, agreed during its handshake: ChaCha20-Poly1305 when
/// either end prefers it, else AES-256-GCM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aead {
    /// AES-256-GCM (Noise's `AESGCM`): fastest where the CPU has AES instructions.
    AesGcm,
    /// ChaCha20-Poly1305 (Noise's `ChaChaPoly`): several times faster than a constant-time
    /// software AES, e.g. in WebAssembly.
    ChaChaPoly,
}

impl Aead {
    /// What this build prefers: ChaCha20-Poly1305 where AES has no hardware support here
    /// (WebAssembly, which exposes no AES instructions; an x86-64 CPU without AES-NI), else
    /// AES-256-GCM.
    pub fn preferred() -> Self {
        #[cfg(target_arch = "wasm32")]
        let hardware_aes = false;
        #[cfg(target_arch = "x86_64")]
        let hardware_aes = std::arch::is_x86_feature_detected!("aes")
            && std::arch::is_x86_feature_detected!("pclmulqdq");
        #[cfg(not(any(target_arch = "wasm32", target_arch = "x86_64")))]
        let hardware_aes = true;
        if hardware_aes {
            Self::AesGcm
        } else {
            Self::ChaChaPoly
        }
    }

    /// The link's AEAD given both ends' preferences: one end without fast AES decides.
    pub fn agree(mine: Self, theirs: Self) -> Self {
        if mine == Self::ChaChaPoly || theirs == Self::ChaChaPoly {
            Self::ChaChaPoly
        } else {
            Self::AesGcm
        }
    }

    /// The preference's byte in a handshake payload.
    pub(crate) fn to_byte(self) -> u8 {
        match self {
            Self::AesGcm => 0,
            Self::ChaChaPoly => 1,
        }
    }

    pub(crate) fn from_byte(b: u8) -> Option<Self> {
        match b {
            0 => Some(Self::AesGcm),
            1 => Some(Self::ChaChaPoly),
            _ => None,
        }
    }

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::AesGcm => "aes-256-gcm",
            Self::ChaChaPoly => "chacha20-poly1305",
        }
    }
}

/// The record protection of one direction of a link.
pub enum Cipher {
    /// A Noise transport state shared by both directions of a link, with this direction's next
    /// nonce (records arrive in order on TCP, so the nonce is implicit on the wire).
    Noise {
        /// The keys of both directions.
        state: Arc<StatelessTransportState>,
        /// Next nonce of this direction.
        nonce: u64,
    },
    /// ChaCha20-Poly1305 under this direction's key from the Noise handshake's split, with
    /// Noise's `ChaChaPoly` nonces (32 zero bits ‖ the 64-bit counter, little-endian) and no
    /// associated data.
    ChaCha {
        /// This direction's key schedule.
        aead: Box<ChaCha20Poly1305>,
        /// Next nonce of this direction.
        nonce: u64,
    },
    /// **Insecure** plaintext records, for benchmarking only.
    DangerPlain,
}

impl Cipher {
    /// ChaCha20-Poly1305 records under `key` (one direction of a Noise split).
    pub(crate) fn chacha(key: &[u8; 32]) -> Self {
        Self::ChaCha { aead: Box::new(ChaCha20Poly1305::new(key.into())), nonce: 0 }
    }

    /// Bytes the body adds over the plaintext.
    fn overhead(&self) -> usize {
        match self {
            Self::Noise { .. } | Self::ChaCha { .. } => TAG_LEN,
            Self::DangerPlain => 0,
        }
    }

    /// Appends the record for `plaintext` (≤ [`MAX_RECORD_PLAINTEXT`] bytes) to `out`.
    fn seal(&mut self, plaintext: &[u8], out: &mut Vec<u8>) -> Result<(), RecordError> {
        let body = plaintext.len() + self.overhead();
        debug_assert!(plaintext.len() <= MAX_RECORD_PLAINTEXT);
        // body ≤ MAX_RECORD = u16::MAX, asserted by the callers' chunking.
        out.extend_from_slice(&(body as u16).to_be_bytes());
        let start = out.len();
        match self {
            Self::Noise { state, nonce } => {
                out.resize(start + body, 0);
                let n = state
                    .write_message(*nonce, plaintext, &mut out[start..])
                    .map_err(|e| RecordError::Seal(e.to_string()))?;
                *nonce += 1;
                out.truncate(start + n);
            }
            Self::ChaCha { aead, nonce } => {
                let n = chacha_nonce(nonce)
                    .ok_or_else(|| RecordError::Seal("nonces exhausted".into()))?;
                out.extend_from_slice(plaintext);
                let tag = aead
                    .encrypt_in_place_detached(&n, &[], &mut out[start..])
                    .map_err(|e| RecordError::Seal(e.to_string()))?;
                out.extend_from_slice(&tag);
            }
            Self::DangerPlain => out.extend_from_slice(plaintext),
        }
        Ok(())
    }

    /// Opens `body` into `out` (which must have room for `body.len()` bytes); returns the
    /// plaintext length.
    fn open(&mut self, body: &[u8], out: &mut [u8]) -> Result<usize, RecordError> {
        match self {
            Self::Noise { state, nonce } => {
                if body.len() < TAG_LEN {
                    return Err(RecordError::Malformed(format!(
                        "record of {} bytes is shorter than its tag",
                        body.len()
                    )));
                }
                let n = state.read_message(*nonce, body, out).map_err(|_| RecordError::Decrypt)?;
                *nonce += 1;
                Ok(n)
            }
            Self::ChaCha { aead, nonce } => {
                let Some(len) = body.len().checked_sub(TAG_LEN) else {
                    return Err(RecordError::Malformed(format!(
                        "record of {} bytes is shorter than its tag",
                        body.len()
                    )));
                };
                let n = chacha_nonce(nonce).ok_or(RecordError::Decrypt)?;
                let (text, tag) = body.split_at(len);
                out[..len].copy_from_slice(text);
                aead.decrypt_in_place_detached(&n, &[], &mut out[..len], Tag::from_slice(tag))
                    .map_err(|_| RecordError::Decrypt)?;
                Ok(len)
            }
            Self::DangerPlain => {
                out[..body.len()].copy_from_slice(body);
                Ok(body.len())
            }
        }
    }
}

/// The nonce for counter `n` (then advanced), as Noise's `ChaChaPoly` encodes it; `None` once
/// the counter is exhausted (Noise reserves 2^64 − 1).
fn chacha_nonce(n: &mut u64) -> Option<Nonce> {
    if *n == u64::MAX {
        return None;
    }
    let mut bytes = [0u8; 12];
    bytes[4..].copy_from_slice(&n.to_le_bytes());
    *n += 1;
    Some(bytes.into())
}

/// Cuts frames into records.
pub struct FrameEncoder {
    cipher: Cipher,
    scratch: Vec<u8>,
}

impl FrameEncoder {
    /// An encoder sealing with `cipher`.
    pub fn new(cipher: Cipher) -> Self {
        Self { cipher, scratch: Vec::with_capacity(MAX_RECORD_PLAINTEXT) }
    }

    /// Appends records for `frame[*offset..]` to `out` until the frame is done or `out` holds at
    /// least `limit` bytes; advances `offset`. `*offset == None` means the frame has not
    /// started. Returns `true` when the whole frame has been encoded.
    pub fn encode(
        &mut self,
        frame: &[u8],
        offset: &mut Option<usize>,
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<bool, RecordError> {
        let mut off = match *offset {
            Some(o) => o,
            None => {
                let first = frame.len().min(MAX_RECORD_PLAINTEXT - LEN_PREFIX);
                self.scratch.clear();
                let len = u32::try_from(frame.len()).map_err(|_| RecordError::Oversized {
                    len: frame.len(),
                    max: u32::MAX as usize,
                })?;
                self.scratch.extend_from_slice(&len.to_le_bytes());
                self.scratch.extend_from_slice(&frame[..first]);
                self.cipher.seal(&self.scratch, out)?;
                first
            }
        };
        while off < frame.len() && out.len() < limit {
            let end = frame.len().min(off + MAX_RECORD_PLAINTEXT);
            self.cipher.seal(&frame[off..end], out)?;
            off = end;
        }
        *offset = Some(off);
        Ok(off == frame.len())
    }
}

/// A frame being reassembled: `data` has `len + TAG_LEN` bytes so every record can be opened in
/// place (the tag room past the end is overwritten by the next record, then cut off).
struct Partial {
    data: Vec<u8>,
    len: usize,
    filled: usize,
}

/// Reassembles frames from stream bytes.
pub struct FrameDecoder {
    cipher: Cipher,
    max_frame: usize,
    buf: Vec<u8>,
    pos: usize,
    partial: Option<Partial>,
    scratch: Vec<u8>,
}

impl FrameDecoder {
    /// A decoder opening with `cipher` and refusing frames over `max_frame` bytes.
    pub fn new(cipher: Cipher, max_frame: usize) -> Self {
        Self {
            cipher,
            max_frame,
            buf: Vec::new(),
            pos: 0,
            partial: None,
            scratch: vec![0; MAX_RECORD],
        }
    }

    /// The input buffer, with at least `room` bytes of spare capacity: append received stream
    /// bytes to it (e.g. with `AsyncReadExt::read_buf`).
    pub fn input(&mut self, room: usize) -> &mut Vec<u8> {
        if self.pos > 0 && (self.pos == self.buf.len() || self.pos >= self.buf.capacity() / 2) {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.reserve(room);
        &mut self.buf
    }

    /// Whether unconsumed bytes are buffered (a stream ending now would cut a record or frame).
    pub fn mid_frame(&self) -> bool {
        self.pos < self.buf.len() || self.partial.is_some()
    }

    /// The next complete frame, if the buffered bytes contain one.
    pub fn poll_frame(&mut self) -> Result<Option<Vec<u8>>, RecordError> {
        loop {
            let avail = &self.buf[self.pos..];
            if avail.len() < 2 {
                return Ok(None);
            }
            let body_len = usize::from(u16::from_be_bytes([avail[0], avail[1]]));
            if avail.len() < 2 + body_len {
                return Ok(None);
            }
            self.pos += 2 + body_len;
            if let Some(frame) = self.take_record(body_len)? {
                return Ok(Some(frame));
            }
        }
    }

    /// Opens the record whose body ends at `self.pos`; returns a frame when it completes one.
    fn take_record(&mut self, body_len: usize) -> Result<Option<Vec<u8>>, RecordError> {
        let body = &self.buf[self.pos - body_len..self.pos];
        let p = match self.partial.as_mut() {
            Some(p) => {
                let plain_max = body_len.saturating_sub(self.cipher.overhead());
                if plain_max == 0 || plain_max > p.len - p.filled {
                    return Err(RecordError::Malformed(format!(
                        "record of {body_len} bytes does not fit the {} bytes left in its frame",
                        p.len - p.filled
                    )));
                }
                // Room: data has len + TAG_LEN bytes and plain_max ≤ len - filled.
                p.filled += self.cipher.open(body, &mut p.data[p.filled..])?;
                p
            }
            None => {
                let n = self.cipher.open(body, &mut self.scratch)?;
                let plain = &self.scratch[..n];
                if n < LEN_PREFIX {
                    return Err(RecordError::Malformed(format!(
                        "first record of a frame has {n} plaintext bytes, no length"
                    )));
                }
                let len = u32::from_le_bytes([plain[0], plain[1], plain[2], plain[3]]) as usize;
                if len > self.max_frame {
                    return Err(RecordError::Oversized { len, max: self.max_frame });
                }
                let first = &plain[LEN_PREFIX..];
                if first.len() > len {
                    return Err(RecordError::Malformed(format!(
                        "frame of {len} bytes starts with a record of {} bytes",
                        first.len()
                    )));
                }
                let mut data = vec![0u8; len + TAG_LEN];
                data[..first.len()].copy_from_slice(first);
                self.partial.insert(Partial { data, len, filled: first.len() })
            }
        };
        if p.filled < p.len {
            return Ok(None);
        }
        let mut done = self.partial.take().map(|p| p.data).unwrap_or_default();
        let len = done.len() - TAG_LEN;
        done.truncate(len);
        Ok(Some(done))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(frames: &[Vec<u8>]) -> Vec<Vec<u8>> {
        let mut enc = FrameEncoder::new(Cipher::DangerPlain);
        let mut wire = Vec::new();
        for f in frames {
            let mut off = None;
            assert!(enc.encode(f, &mut off, &mut wire, usize::MAX).unwrap());
        }
        let mut dec = FrameDecoder::new(Cipher::DangerPlain, 1 << 20);
        let mut out = Vec::new();
        for chunk in wire.chunks(7777) {
            dec.input(chunk.len()).extend_from_slice(chunk);
            while let Some(f) = dec.poll_frame().unwrap() {
                out.push(f);
            }
        }
        assert!(!dec.mid_frame());
        out
    }

    #[test]
    fn frames_of_every_size_survive_chunking() {
        let sizes = [0, 1, 65515, 65516, 65519, 65520, 131_034, 200_000, 300_001];
        let frames: Vec<Vec<u8>> =
            sizes.iter().map(|&n| (0..n).map(|i| (i * 7 + n) as u8).collect()).collect();
        assert_eq!(round_trip(&frames), frames);
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        let mut dec = FrameDecoder::new(Cipher::DangerPlain, 1000);
        dec.input(16).extend_from_slice(&[0, 4, 0xff, 0xff, 0, 0]);
        assert!(matches!(dec.poll_frame(), Err(RecordError::Oversized { .. })));
        let mut dec = FrameDecoder::new(Cipher::DangerPlain, 1000);
        dec.input(16).extend_from_slice(&[0, 2, 1, 1]);
        assert!(matches!(dec.poll_frame(), Err(RecordError::Malformed(_))));
        let mut dec = FrameDecoder::new(Cipher::DangerPlain, 1000);
        dec.input(16).extend_from_slice(&[0, 6, 3, 0, 0, 0, 9, 9, 0, 5, 1, 2, 3, 4, 5]);
        assert!(matches!(dec.poll_frame(), Err(RecordError::Malformed(_))));
    }
}
