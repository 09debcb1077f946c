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

#[cfg(not(feature = "ring-accelerated"))]
use aes_gcm::Aes256Gcm;
use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use chacha20poly1305::ChaCha20Poly1305;
#[cfg(feature = "ring-accelerated")]
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM};

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

/// One direction's record key from the Noise handshake's split, with no associated data and
/// Noise's nonces (`0^32 ‖ n`: big-endian for AES-GCM, little-endian for ChaChaPoly), so that
/// an AES-GCM record body is exactly the Noise transport message of its plaintext.
///
/// The record layer runs the AEAD itself rather than through snow's transport state: snow's
/// `write_message` takes the plaintext and a separate output, which costs a zero-fill and a copy
/// of every byte on top of the copy into the record; here the plaintext is appended to the
/// record once and sealed where it lies (opened likewise in the input buffer).
///
/// Dropping it zeroizes the ChaCha20-Poly1305 key (RustCrypto's cipher does so itself) but not
/// ring's AES-GCM key schedule (ring does not zeroize, and its key is opaque). RustCrypto's
/// AES-GCM, used without ring (WebAssembly), is not relied on either: its zeroizing is opt-in
/// per crate and not asserted here.
// Boxed: the expanded key schedules are hundreds of bytes, `Cipher::DangerPlain` none.
pub enum RecordKey {
    /// AES-256-GCM: ring natively (AES-NI/VAES), RustCrypto in wasm.
    #[cfg(feature = "ring-accelerated")]
    Aes(Box<LessSafeKey>),
    /// AES-256-GCM: ring natively (AES-NI/VAES), RustCrypto in wasm.
    #[cfg(not(feature = "ring-accelerated"))]
    Aes(Box<Aes256Gcm>),
    /// ChaCha20-Poly1305 (RustCrypto; SIMD backends where the target has them).
    ChaCha(Box<ChaCha20Poly1305>),
}

impl RecordKey {
    /// The `aead` key of a direction from its 32 bytes (a half of the handshake's split).
    pub fn new(aead: Aead, key: &[u8; 32]) -> Result<Self, RecordError> {
        if aead == Aead::ChaChaPoly {
            return Ok(Self::ChaCha(Box::new(ChaCha20Poly1305::new(key.into()))));
        }
        let bad = |_| RecordError::Seal("AES-256-GCM rejected the transport key".into());
        #[cfg(feature = "ring-accelerated")]
        let key = LessSafeKey::new(UnboundKey::new(&AES_256_GCM, key).map_err(bad)?);
        #[cfg(not(feature = "ring-accelerated"))]
        let key = Aes256Gcm::new_from_slice(key).map_err(bad)?;
        Ok(Self::Aes(Box::new(key)))
    }

    /// Encrypts `in_out` in place under `nonce` and returns the tag.
    fn seal(&self, nonce: u64, in_out: &mut [u8]) -> Result<[u8; TAG_LEN], RecordError> {
        let failed = || RecordError::Seal("the AEAD refused the record".into());
        let mut tag = [0u8; TAG_LEN];
        match self {
            #[cfg(feature = "ring-accelerated")]
            Self::Aes(key) => {
                let n = Nonce::assume_unique_for_key(nonce_bytes(nonce));
                let t = key
                    .seal_in_place_separate_tag(n, Aad::empty(), in_out)
                    .map_err(|_| failed())?;
                tag.copy_from_slice(t.as_ref());
            }
            #[cfg(not(feature = "ring-accelerated"))]
            Self::Aes(key) => {
                let t = key
                    .encrypt_in_place_detached(&nonce_bytes(nonce).into(), &[], in_out)
                    .map_err(|_| failed())?;
                tag.copy_from_slice(&t);
            }
            Self::ChaCha(key) => {
                let t = key
                    .encrypt_in_place_detached(&chacha_nonce(nonce).into(), &[], in_out)
                    .map_err(|_| failed())?;
                tag.copy_from_slice(&t);
            }
        }
        Ok(tag)
    }

    /// Decrypts the body `ciphertext ‖ tag` in place; returns the plaintext length (the
    /// plaintext is the body's start).
    fn open(&self, nonce: u64, body: &mut [u8]) -> Result<usize, RecordError> {
        let n = body.len().checked_sub(TAG_LEN).ok_or_else(|| {
            RecordError::Malformed(format!(
                "record of {} bytes is shorter than its tag",
                body.len()
            ))
        })?;
        let opened = match self {
            #[cfg(feature = "ring-accelerated")]
            Self::Aes(key) => {
                let nonce = Nonce::assume_unique_for_key(nonce_bytes(nonce));
                key.open_in_place(nonce, Aad::empty(), body).is_ok()
            }
            #[cfg(not(feature = "ring-accelerated"))]
            Self::Aes(key) => {
                let (text, tag) = body.split_at_mut(n);
                let tag = aes_gcm::Tag::from_slice(tag);
                key.decrypt_in_place_detached(&nonce_bytes(nonce).into(), &[], text, tag).is_ok()
            }
            Self::ChaCha(key) => {
                let (text, tag) = body.split_at_mut(n);
                let tag = chacha20poly1305::Tag::from_slice(tag);
                key.decrypt_in_place_detached(&chacha_nonce(nonce).into(), &[], text, tag).is_ok()
            }
        };
        if !opened {
            return Err(RecordError::Decrypt);
        }
        Ok(n)
    }
}

/// The Noise AES-GCM nonce of record number `n` (Noise spec §12.3).
fn nonce_bytes(n: u64) -> [u8; 12] {
    let mut b = [0u8; 12];
    b[4..].copy_from_slice(&n.to_be_bytes());
    b
}

/// The Noise ChaChaPoly nonce of record number `n` (Noise spec §12.2).
fn chacha_nonce(n: u64) -> [u8; 12] {
    let mut b = [0u8; 12];
    b[4..].copy_from_slice(&n.to_le_bytes());
    b
}

/// The record protection of one direction of a link.
pub enum Cipher {
    /// This direction's Noise transport key with its next nonce (records arrive in order on
    /// TCP, so the nonce is implicit on the wire).
    Noise {
        /// The key of this direction.
        key: RecordKey,
        /// Next nonce of this direction.
        nonce: u64,
    },
    /// **Insecure** plaintext records, for benchmarking only.
    DangerPlain,
}

impl Cipher {
    /// Bytes the body adds over the plaintext.
    fn overhead(&self) -> usize {
        match self {
            Self::Noise { .. } => TAG_LEN,
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
        out.extend_from_slice(plaintext);
        if let Self::Noise { key, nonce } = self {
            let n = take_nonce(nonce)
                .ok_or_else(|| RecordError::Seal("the link's nonces are exhausted".into()))?;
            let tag = key.seal(n, &mut out[start..])?;
            out.extend_from_slice(&tag);
        }
        Ok(())
    }

    /// Opens `body` in place; returns the plaintext length (the plaintext is the body's start).
    fn open(&mut self, body: &mut [u8]) -> Result<usize, RecordError> {
        match self {
            Self::Noise { key, nonce } => {
                key.open(take_nonce(nonce).ok_or(RecordError::Decrypt)?, body)
            }
            Self::DangerPlain => Ok(body.len()),
        }
    }
}

/// This direction's next nonce, then advanced; `None` once exhausted (Noise reserves 2^64 − 1,
/// §5.1).
fn take_nonce(nonce: &mut u64) -> Option<u64> {
    let n = *nonce;
    (n != u64::MAX).then(|| {
        *nonce += 1;
        n
    })
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
        self.encode_parts(&[], frame, offset, out, limit)
    }

    /// [`encode`](Self::encode) of the frame `head ‖ body`, without concatenating the two: a
    /// record within `body` is sealed straight from it, so a frame's payload is copied once
    /// (into its record) instead of twice. The records are the same bytes as for the
    /// concatenated frame.
    pub fn encode_parts(
        &mut self,
        head: &[u8],
        body: &[u8],
        offset: &mut Option<usize>,
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<bool, RecordError> {
        let total = head.len() + body.len();
        let mut off = match *offset {
            Some(o) => o,
            None => self.seal_first(head, body, out)?,
        };
        while off < total && out.len() < limit {
            let end = total.min(off + MAX_RECORD_PLAINTEXT);
            if off >= head.len() {
                self.cipher.seal(&body[off - head.len()..end - head.len()], out)?;
            } else {
                // Only when `head` is longer than a first record: assemble the straddling piece.
                self.scratch.clear();
                extend_range(&mut self.scratch, head, body, off, end);
                self.cipher.seal(&self.scratch, out)?;
            }
            off = end;
        }
        *offset = Some(off);
        Ok(off == total)
    }

    /// Bytes on the wire of the records of a `frame_len`-byte frame.
    pub fn wire_len(&self, frame_len: usize) -> usize {
        let records = (frame_len + LEN_PREFIX).div_ceil(MAX_RECORD_PLAINTEXT).max(1);
        frame_len + LEN_PREFIX + records * (2 + self.cipher.overhead())
    }

    /// Seals the first record of the frame `head ‖ body` (its length, then as many bytes as
    /// fit) into `out`; returns how many frame bytes it carries.
    fn seal_first(
        &mut self,
        head: &[u8],
        body: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<usize, RecordError> {
        let total = head.len() + body.len();
        let len = u32::try_from(total)
            .map_err(|_| RecordError::Oversized { len: total, max: u32::MAX as usize })?;
        let first = total.min(MAX_RECORD_PLAINTEXT - LEN_PREFIX);
        self.scratch.clear();
        self.scratch.extend_from_slice(&len.to_le_bytes());
        extend_range(&mut self.scratch, head, body, 0, first);
        self.cipher.seal(&self.scratch, out)?;
        Ok(first)
    }
}

/// Appends bytes `start..end` of `head ‖ body` to `dst`.
fn extend_range(dst: &mut Vec<u8>, head: &[u8], body: &[u8], start: usize, end: usize) {
    let split = head.len();
    if start < split {
        dst.extend_from_slice(&head[start..end.min(split)]);
    }
    if end > split {
        dst.extend_from_slice(&body[start.max(split) - split..end - split]);
    }
}

/// A frame being reassembled: the plaintexts so far in `data`, `len` bytes in all.
struct Partial {
    data: Vec<u8>,
    len: usize,
}

/// Reassembles frames from stream bytes.
pub struct FrameDecoder {
    cipher: Cipher,
    max_frame: usize,
    buf: Vec<u8>,
    pos: usize,
    partial: Option<Partial>,
}

impl FrameDecoder {
    /// A decoder opening with `cipher` and refusing frames over `max_frame` bytes.
    pub fn new(cipher: Cipher, max_frame: usize) -> Self {
        Self { cipher, max_frame, buf: Vec::new(), pos: 0, partial: None }
    }

    /// Changes the cap on frames that start from now on (a frame already begun keeps the cap
    /// it was checked against), e.g. once a protocol knows how large the peer's next frames may
    /// legitimately be.
    pub fn set_max_frame(&mut self, max_frame: usize) {
        self.max_frame = max_frame;
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

    /// Opens the record whose body ends at `self.pos` (in place: its bytes are consumed) and
    /// appends its plaintext to the frame; returns a frame when it completes one.
    fn take_record(&mut self, body_len: usize) -> Result<Option<Vec<u8>>, RecordError> {
        let start = self.pos - body_len;
        let n = self.cipher.open(&mut self.buf[start..self.pos])?;
        let plain = &self.buf[start..start + n];
        let p = match self.partial.as_mut() {
            Some(p) => {
                let left = p.len - p.data.len();
                if n == 0 || n > left {
                    return Err(RecordError::Malformed(format!(
                        "record of {body_len} bytes does not fit the {left} bytes left in its frame"
                    )));
                }
                p.data.extend_from_slice(plain);
                p
            }
            None => {
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
                let mut data = Vec::with_capacity(len);
                data.extend_from_slice(first);
                self.partial.insert(Partial { data, len })
            }
        };
        if p.data.len() < p.len {
            return Ok(None);
        }
        Ok(self.partial.take().map(|p| p.data))
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
    fn a_lowered_cap_refuses_a_frame_by_its_announced_length_before_its_bytes() {
        let mut enc = FrameEncoder::new(Cipher::DangerPlain);
        let mut wire = Vec::new();
        assert!(enc.encode(&[7; 100], &mut None, &mut wire, usize::MAX).unwrap());
        assert!(enc.encode(&vec![7; 1 << 20], &mut None, &mut wire, usize::MAX).unwrap());
        let mut dec = FrameDecoder::new(Cipher::DangerPlain, usize::MAX);
        dec.input(0).extend_from_slice(&wire[..2 + 4 + 100 + 2 + 4]);
        assert_eq!(dec.poll_frame().unwrap().map(|f| f.len()), Some(100));
        dec.set_max_frame(100);
        // Only the start of the large frame's first record has arrived.
        assert_eq!(dec.poll_frame(), Ok(None));
        // Its first record (64 KiB of the 1 MiB) is enough to refuse it.
        let first_record = 2 + MAX_RECORD_PLAINTEXT;
        dec.input(0).extend_from_slice(&wire[2 + 4 + 100 + 2 + 4..][..first_record - 6]);
        assert_eq!(dec.poll_frame(), Err(RecordError::Oversized { len: 1 << 20, max: 100 }));
    }

    #[test]
    fn frames_of_every_size_survive_chunking() {
        let sizes = [0, 1, 65515, 65516, 65519, 65520, 131_034, 200_000, 300_001];
        let frames: Vec<Vec<u8>> =
            sizes.iter().map(|&n| (0..n).map(|i| (i * 7 + n) as u8).collect()).collect();
        assert_eq!(round_trip(&frames), frames);
    }

    #[test]
    fn parts_make_the_same_records_as_the_whole_frame() {
        let frame: Vec<u8> = (0..200_000u32).map(|i| (i * 31 + 7) as u8).collect();
        // Heads shorter than, equal to and longer than a first record, and empty bodies.
        for (h, end) in [(0, 0), (28, 28), (28, 65_600), (65_515, 131_100), (70_000, 200_000)] {
            let mut whole = Vec::new();
            let mut enc = FrameEncoder::new(Cipher::DangerPlain);
            assert!(enc.encode(&frame[..end], &mut None, &mut whole, usize::MAX).unwrap());
            let mut enc = FrameEncoder::new(Cipher::DangerPlain);
            // Also in pieces of at least 100 kB, as a link queues a large frame.
            let (mut parts, mut off) = (Vec::new(), None);
            let mut pieces = 0;
            while !enc
                .encode_parts(
                    &frame[..h],
                    &frame[h..end],
                    &mut off,
                    &mut parts,
                    100_000 * (pieces + 1),
                )
                .unwrap()
            {
                pieces += 1;
            }
            assert_eq!(parts, whole, "head {h}, frame {end}");
            assert_eq!(parts.len(), enc.wire_len(end));
        }
    }

    /// A finished Noise KK handshake between two fresh keys: (initiator, responder).
    fn noise_pair() -> (snow::HandshakeState, snow::HandshakeState) {
        let b = |e: u8| crate::rng::builder(&[e; 32]).unwrap();
        let (ki, kr) = (b(1).generate_keypair().unwrap(), b(2).generate_keypair().unwrap());
        let mut i = b(3)
            .local_private_key(&ki.private)
            .and_then(|x| x.remote_public_key(&kr.public))
            .and_then(|x| x.build_initiator())
            .unwrap();
        let mut r = b(4)
            .local_private_key(&kr.private)
            .and_then(|x| x.remote_public_key(&ki.public))
            .and_then(|x| x.build_responder())
            .unwrap();
        let (mut m, mut p) = (vec![0; 1024], vec![0; 1024]);
        let n = i.write_message(&[], &mut m).unwrap();
        r.read_message(&m[..n], &mut p).unwrap();
        let n = r.write_message(&[], &mut m).unwrap();
        i.read_message(&m[..n], &mut p).unwrap();
        (i, r)
    }

    #[test]
    fn records_are_the_noise_transport_messages() {
        let (mut i, mut r) = noise_pair();
        let (k1, k2) = i.dangerously_get_raw_split();
        assert_eq!(r.dangerously_get_raw_split(), (k1, k2));
        let snow_i = i.into_stateless_transport_mode().unwrap();
        let snow_r = r.into_stateless_transport_mode().unwrap();
        let mut send = Cipher::Noise { key: RecordKey::new(Aead::AesGcm, &k1).unwrap(), nonce: 0 };
        let mut back = Cipher::Noise { key: RecordKey::new(Aead::AesGcm, &k2).unwrap(), nonce: 0 };
        for (n, len) in [0usize, 1, 1000, MAX_RECORD_PLAINTEXT].into_iter().enumerate() {
            let text: Vec<u8> = (0..len).map(|j| (j * 13 + n) as u8).collect();
            let mut ours = Vec::new();
            send.seal(&text, &mut ours).unwrap();
            let mut theirs = vec![0; len + TAG_LEN];
            let m = snow_i.write_message(n as u64, &text, &mut theirs).unwrap();
            assert_eq!(&ours[2..], &theirs[..m], "record {n} is snow's transport message");
            assert_eq!(ours[..2], ((len + TAG_LEN) as u16).to_be_bytes());
            // And the other direction: what snow's responder sends, the initiator opens.
            let m = snow_r.write_message(n as u64, &text, &mut theirs).unwrap();
            let k = back.open(&mut theirs[..m]).unwrap();
            assert_eq!(&theirs[..k], &text[..]);
        }
        let mut wrong = Cipher::Noise { key: RecordKey::new(Aead::AesGcm, &k2).unwrap(), nonce: 0 };
        let mut rec = Vec::new();
        Cipher::Noise { key: RecordKey::new(Aead::AesGcm, &k1).unwrap(), nonce: 0 }
            .seal(b"x", &mut rec)
            .unwrap();
        assert_eq!(wrong.open(&mut rec[2..]), Err(RecordError::Decrypt));
    }

    #[test]
    fn noise_frames_survive_chunking_and_tampering_is_caught() {
        let (mut i, _) = noise_pair();
        let (k1, _) = i.dangerously_get_raw_split();
        let cipher = || Cipher::Noise { key: RecordKey::new(Aead::AesGcm, &k1).unwrap(), nonce: 0 };
        let frames: Vec<Vec<u8>> = [0, 5, 65_515, 200_000]
            .iter()
            .map(|&n| (0..n).map(|j| (j % 251) as u8).collect())
            .collect();
        let mut enc = FrameEncoder::new(cipher());
        let mut wire = Vec::new();
        for f in &frames {
            let (head, body) = f.split_at(f.len().min(28));
            assert!(enc.encode_parts(head, body, &mut None, &mut wire, usize::MAX).unwrap());
        }
        let mut dec = FrameDecoder::new(cipher(), 1 << 20);
        let mut got = Vec::new();
        for chunk in wire.chunks(5000) {
            dec.input(chunk.len()).extend_from_slice(chunk);
            while let Some(f) = dec.poll_frame().unwrap() {
                got.push(f);
            }
        }
        assert_eq!(got, frames);
        let mut bad = wire.clone();
        bad[100] ^= 1;
        let mut dec = FrameDecoder::new(cipher(), 1 << 20);
        dec.input(bad.len()).extend_from_slice(&bad);
        let result = (0..frames.len()).try_for_each(|_| dec.poll_frame().map(drop));
        assert_eq!(result, Err(RecordError::Decrypt));
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
