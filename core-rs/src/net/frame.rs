//! The frame: the unit a [`Transport`](super::Transport) carries between two parties.
//!
//! ```text
//! offset  size  field
//!      0    16  session id
//!     16     8  step: per-link sequence number, starting at 0 (u64 LE)
//!     24     4  payload length in bytes (u32 LE)
//!     28     n  payload: ring elements packed little-endian at their width
//! ```
//!
//! The receiver knows which session, step and payload length it expects at every point of a
//! protocol, and checks all three; any mismatch is a [`FrameError`], never a panic.

use core::fmt;

/// Bytes in a frame header.
pub const HEADER_LEN: usize = 28;
/// The largest payload a frame may carry (256 MiB); larger batches are split by the caller.
pub const MAX_PAYLOAD: usize = 256 << 20;

/// The length field of an **abort notice**, which no data frame can announce (payloads are at
/// most [`MAX_PAYLOAD`]). A party that stops a run because a check failed sends one in place of
/// its next frame on a link, so that the receiver learns why, whatever it was waiting for,
/// instead of seeing the link close. Its payload is one 8-byte reason code
/// ([`ABORT_CHECK_FAILED`]); it carries nothing of the run.
pub const ABORT_NOTICE: u32 = u32::MAX;
/// The reason code of an abort notice: a malicious-secure scheme's check failed.
pub const ABORT_CHECK_FAILED: u64 = 1;

/// A 128-bit session identifier; every frame of a session carries it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SessionId(pub [u8; 16]);

impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SessionId(")?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        write!(f, ")")
    }
}

/// Why a received frame was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// Fewer bytes than a header.
    #[error("frame of {0} bytes is shorter than the {HEADER_LEN}-byte header")]
    Truncated(usize),
    /// The header's session id is not this session's.
    #[error("frame for session {got:?}, expected {expected:?}")]
    WrongSession {
        /// The session this party runs.
        expected: SessionId,
        /// The session named in the frame.
        got: SessionId,
    },
    /// A frame arrived out of order (replayed, skipped or reordered).
    #[error("frame step {got}, expected step {expected}")]
    WrongStep {
        /// The next step on this link.
        expected: u64,
        /// The step in the frame.
        got: u64,
    },
    /// The header's length field disagrees with the bytes received.
    #[error("frame header announces {announced} payload bytes but {actual} arrived")]
    LengthMismatch {
        /// The header's length field.
        announced: usize,
        /// The payload bytes actually present.
        actual: usize,
    },
    /// The payload is not the size the protocol expects at this step.
    #[error("payload of {got} bytes, the protocol expects {expected}")]
    WrongSize {
        /// Bytes the protocol expects.
        expected: usize,
        /// Bytes received.
        got: usize,
    },
    /// The payload exceeds [`MAX_PAYLOAD`].
    #[error("payload of {0} bytes exceeds the {MAX_PAYLOAD}-byte limit")]
    Oversized(usize),
    /// An element's encoding is outside its type's range (e.g. a byte ≥ 67 for F_67).
    #[error("element {0} of the payload is not a valid encoding")]
    InvalidElement(usize),
    /// A control message (e.g. a service request or reply) is well framed but meaningless.
    #[error("malformed message: {0}")]
    Malformed(&'static str),
    /// Well-formed frames that disagree with what the sender sent other parties where the
    /// protocol has them equal (e.g. a client's shares of its input); the text says which.
    #[error("inconsistent messages: {0}")]
    Inconsistent(String),
    /// An abort notice ([`ABORT_NOTICE`]) with its reason code: the sender stopped the run.
    #[error("the sender stopped the run (reason {0})")]
    Aborted(u64),
}

/// The header of a frame with a payload of `payload_len` bytes.
pub fn header(session: SessionId, step: u64, payload_len: usize) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..16].copy_from_slice(&session.0);
    h[16..24].copy_from_slice(&step.to_le_bytes());
    h[24..].copy_from_slice(&(payload_len as u32).to_le_bytes());
    h
}

/// Starts a frame: writes the header for a payload of `payload_len` bytes.
pub fn begin(session: SessionId, step: u64, payload_len: usize) -> Vec<u8> {
    let mut f = Vec::with_capacity(HEADER_LEN + payload_len);
    f.extend_from_slice(&header(session, step, payload_len));
    f
}

/// Checks a received frame against what the protocol expects and returns its payload.
pub fn check(
    frame: &[u8],
    session: SessionId,
    step: u64,
    expected_len: usize,
) -> Result<&[u8], FrameError> {
    if frame.len() < HEADER_LEN {
        return Err(FrameError::Truncated(frame.len()));
    }
    let (head, payload) = frame.split_at(HEADER_LEN);
    let got_session = SessionId(head[..16].try_into().expect("16-byte slice"));
    if got_session != session {
        return Err(FrameError::WrongSession { expected: session, got: got_session });
    }
    let got_step = u64::from_le_bytes(head[16..24].try_into().expect("8-byte slice"));
    if got_step != step {
        return Err(FrameError::WrongStep { expected: step, got: got_step });
    }
    let announced = u32::from_le_bytes(head[24..28].try_into().expect("4-byte slice")) as usize;
    if announced == ABORT_NOTICE as usize {
        let code: [u8; 8] = payload
            .try_into()
            .map_err(|_| FrameError::Malformed("abort notice of another size"))?;
        return Err(FrameError::Aborted(u64::from_le_bytes(code)));
    }
    if announced != payload.len() {
        return Err(FrameError::LengthMismatch { announced, actual: payload.len() });
    }
    if payload.len() > MAX_PAYLOAD {
        return Err(FrameError::Oversized(payload.len()));
    }
    if payload.len() != expected_len {
        return Err(FrameError::WrongSize { expected: expected_len, got: payload.len() });
    }
    Ok(payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: SessionId = SessionId([9; 16]);

    fn frame(step: u64, payload: &[u8]) -> Vec<u8> {
        let mut f = begin(S, step, payload.len());
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn header_is_the_start_of_a_frame() {
        let h = header(S, 0x0102_0304_0506_0708, 5);
        assert_eq!(&h[..16], &S.0);
        assert_eq!(h[16..24], 0x0102_0304_0506_0708u64.to_le_bytes());
        assert_eq!(h[24..], 5u32.to_le_bytes());
        assert_eq!(begin(S, 0x0102_0304_0506_0708, 5), h);
    }

    #[test]
    fn an_abort_notice_is_reported_whatever_was_expected() {
        let mut f = header(S, 4, ABORT_NOTICE as usize).to_vec();
        f.extend_from_slice(&ABORT_CHECK_FAILED.to_le_bytes());
        for expected in [0, 8, 800] {
            assert_eq!(check(&f, S, 4, expected), Err(FrameError::Aborted(ABORT_CHECK_FAILED)));
        }
        // Still a frame of this session and step; and only ever 8 bytes of reason.
        assert!(matches!(check(&f, S, 5, 8), Err(FrameError::WrongStep { .. })));
        f.push(0);
        assert!(matches!(check(&f, S, 4, 8), Err(FrameError::Malformed(_))));
    }

    #[test]
    fn accepts_the_expected_frame() {
        assert_eq!(check(&frame(4, b"abcd"), S, 4, 4), Ok(&b"abcd"[..]));
    }

    #[test]
    fn rejects_every_kind_of_bad_frame() {
        let f = frame(4, b"abcd");
        assert_eq!(check(&f[..10], S, 4, 4), Err(FrameError::Truncated(10)));
        assert!(matches!(
            check(&f, SessionId([1; 16]), 4, 4),
            Err(FrameError::WrongSession { .. })
        ));
        assert_eq!(check(&f, S, 5, 4), Err(FrameError::WrongStep { expected: 5, got: 4 }));
        assert_eq!(
            check(&f[..30], S, 4, 4),
            Err(FrameError::LengthMismatch { announced: 4, actual: 2 })
        );
        assert_eq!(check(&f, S, 4, 8), Err(FrameError::WrongSize { expected: 8, got: 4 }));
    }
}
