//! The stream format of the WebTransport relay (sans-IO): length-prefixed messages on one
//! bidirectional stream, and the relay's control messages.
//!
//! ```text
//! message        len: u32 LE ‖ body            1 ≤ len ≤ max_message
//! party → relay  body = [to: u8]   ‖ payload   (as a WebSocket binary message)
//! relay → party  body = [from: u8] ‖ payload   body = [from]: `from` left (end of link)
//! relay → party  body = [0xFF] ‖ code: u16 LE ‖ UTF-8 text          (control)
//! ```
//!
//! No party has the index `0xFF` (a session has at most 255 parties, numbered from 0), so a
//! control message cannot be mistaken for a party's. The relay's first message on a stream is
//! always the admission answer: code 200 ([`Control::admitted`]), or the HTTP status the
//! WebSocket relay refuses the same request with and the reason ([`Control::refused`]), after
//! which the relay finishes the stream. Its last message on a stream it ends is
//! [`Control::closing`] (code 1000, the WebSocket "normal closure", with the reason a WebSocket
//! close frame would carry).

use crate::ws::truncate;

/// Bytes of a message's length prefix.
pub const LEN_BYTES: usize = 4;

/// The first body byte of a relay control message.
pub const CONTROL: u8 = 0xFF;

/// Longest control text, in bytes (longer reasons are cut at a character boundary).
pub const MAX_TEXT: usize = 1024;

/// Frames `body` as one message: `len: u32 LE ‖ body`.
///
/// ```
/// use ringfence_relay::wt::wire;
/// assert_eq!(wire::encode(&[2, 7, 7]), [3, 0, 0, 0, 2, 7, 7]);
/// ```
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(LEN_BYTES + body.len());
    m.extend_from_slice(&prefix(body.len()));
    m.extend_from_slice(body);
    m
}

/// The length prefix of a body of `len` bytes.
///
/// Bodies are at most the relay's `max_message`, which [`crate::ws::RelayLimits::check`]
/// keeps below 4 GiB; a larger `len` saturates (and is refused by the reader).
pub fn prefix(len: usize) -> [u8; LEN_BYTES] {
    u32::try_from(len).unwrap_or(u32::MAX).to_le_bytes()
}

/// The body length a prefix announces, checked against `max` before anything is allocated;
/// the error is the reason the relay gives.
///
/// ```
/// use ringfence_relay::wt::wire;
/// assert_eq!(wire::body_len([5, 0, 0, 0], 5), Ok(5));
/// assert!(wire::body_len([6, 0, 0, 0], 5).unwrap_err().contains("too big"));
/// assert!(wire::body_len([0; 4], 5).is_err());
/// ```
pub fn body_len(prefix: [u8; LEN_BYTES], max: usize) -> Result<usize, String> {
    let len = u32::from_le_bytes(prefix) as usize;
    if len == 0 {
        return Err("an empty message".into());
    }
    if len > max {
        return Err(format!("message too big ({len} bytes; the limit is {max})"));
    }
    Ok(len)
}

/// A relay control message: the admission answer, or why the relay ends the connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Control {
    /// 200: admitted; 400..=599: refused (the WebSocket relay's HTTP status); 1000: closing.
    pub code: u16,
    /// Empty when admitted; else the reason.
    pub text: String,
}

impl Control {
    /// The code of an admission.
    pub const ADMITTED: u16 = 200;
    /// The code of the relay's last message on a connection it ends.
    pub const CLOSING: u16 = 1000;

    /// The admission answer of an admitted party.
    pub fn admitted() -> Self {
        Self { code: Self::ADMITTED, text: String::new() }
    }

    /// The admission answer of a refused request: the HTTP status and the reason.
    pub fn refused(code: u16, reason: &str) -> Self {
        Self { code, text: truncate(reason, MAX_TEXT) }
    }

    /// The relay's last message on a connection it ends, with the reason.
    pub fn closing(reason: &str) -> Self {
        Self { code: Self::CLOSING, text: truncate(reason, MAX_TEXT) }
    }

    /// Whether this admission answer admits the party.
    pub fn is_admitted(&self) -> bool {
        self.code == Self::ADMITTED
    }

    /// The framed message (length prefix included).
    ///
    /// ```
    /// use ringfence_relay::wt::wire::Control;
    /// let m = Control::refused(403, "no").to_message();
    /// assert_eq!(m, [5, 0, 0, 0, 0xFF, 0x93, 0x01, b'n', b'o']);
    /// assert_eq!(Control::parse(&m[4..]), Some(Control::refused(403, "no")));
    /// ```
    pub fn to_message(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(3 + self.text.len());
        body.push(CONTROL);
        body.extend_from_slice(&self.code.to_le_bytes());
        body.extend_from_slice(self.text.as_bytes());
        encode(&body)
    }

    /// Parses a message body; `None` unless it is a well-formed control message.
    pub fn parse(body: &[u8]) -> Option<Self> {
        let [CONTROL, lo, hi, text @ ..] = body else {
            return None;
        };
        let text = core::str::from_utf8(text).ok()?.to_string();
        Some(Self { code: u16::from_le_bytes([*lo, *hi]), text })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_messages_round_trip_and_party_messages_are_not_control() {
        for c in [Control::admitted(), Control::refused(503, "relay is full"), Control::closing("")]
        {
            let m = c.to_message();
            let len = body_len(m[..4].try_into().unwrap(), 100).unwrap();
            assert_eq!(len, m.len() - 4);
            assert_eq!(Control::parse(&m[4..]), Some(c));
        }
        assert_eq!(Control::parse(&[254, 1, 2, 3]), None);
        assert_eq!(Control::parse(&[CONTROL, 1]), None);
        assert_eq!(Control::parse(&[CONTROL, 1, 0, 0xC3]), None, "not UTF-8");
    }

    #[test]
    fn long_reasons_are_cut_at_a_character_boundary() {
        let c = Control::closing(&"é".repeat(MAX_TEXT));
        assert_eq!(c.text.len(), MAX_TEXT);
        assert!(Control::parse(&c.to_message()[4..]).is_some());
    }

    #[test]
    fn lengths_are_checked_before_allocation() {
        assert_eq!(body_len(prefix(1), 1), Ok(1));
        assert!(body_len(prefix(2), 1).is_err());
        assert!(body_len(u32::MAX.to_le_bytes(), usize::MAX).is_ok());
        assert_eq!(prefix(usize::MAX), [0xFF; 4]);
    }
}
