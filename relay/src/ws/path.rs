//! The relay's request path: which session a WebSocket joins, as which party, in a session of
//! how many parties, with which link mode.
//!
//! ```text
//! /v1/{session: 32 hex digits}/{party: 0..parties}?parties={2..=255}&mode={[a-z0-9-]{1,32}}
//! ```
//!
//! The mode is the link protection the parties run end to end (`noise-aesgcm`, `plain`,
//! `plain-test-seeds`): the relay never interprets payloads, it only refuses to put parties
//! that announce different modes in one session, so a misconfigured party fails at once with a
//! clear reason instead of as garbage frames.

use core::fmt;

use ringfence_core::net::{PartyId, SessionId};

/// A parsed relay request path.
///
/// ```
/// use ringfence_core::net::{PartyId, SessionId};
/// use ringfence_relay::ws::RelayPath;
/// let p = RelayPath { session: SessionId([0xab; 16]), party: PartyId(1), parties: 3,
///                     mode: "noise-aesgcm".into() };
/// let s = p.to_string();
/// assert_eq!(s, format!("/v1/{}/1?parties=3&mode=noise-aesgcm", "ab".repeat(16)));
/// assert_eq!(RelayPath::parse(&s), Ok(p));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelayPath {
    /// The session id.
    pub session: SessionId,
    /// The party this connection speaks for.
    pub party: PartyId,
    /// How many parties the session has.
    pub parties: u8,
    /// The end-to-end link mode every party of the session must announce.
    pub mode: String,
}

impl RelayPath {
    /// Parses a request path with its query; the error says what is wrong.
    pub fn parse(path_and_query: &str) -> Result<Self, String> {
        let (path, query) = path_and_query.split_once('?').unwrap_or((path_and_query, ""));
        let mut seg = path.strip_prefix("/v1/").ok_or("path must start with /v1/")?.split('/');
        let (Some(session), Some(party), None) = (seg.next(), seg.next(), seg.next()) else {
            return Err("path must be /v1/{session}/{party}".into());
        };
        let session = parse_session_hex(session)?;
        let party: u8 =
            party.parse().map_err(|_| format!("party index {party:?} is not 0..255"))?;
        let (mut parties, mut mode) = (None, None);
        for kv in query.split('&').filter(|s| !s.is_empty()) {
            match kv.split_once('=') {
                Some(("parties", v)) => parties = v.parse::<u8>().ok(),
                Some(("mode", v)) if valid_mode(v) => mode = Some(v.to_string()),
                _ => return Err(format!("unexpected query parameter {kv:?}")),
            }
        }
        let parties = parties.filter(|&n| n >= 2).ok_or("query needs parties=2..255")?;
        let mode = mode.ok_or("query needs mode=[a-z0-9-]{1,32}")?;
        if party >= parties {
            return Err(format!("party {party} is not among {parties} parties"));
        }
        Ok(Self { session, party: PartyId(party), parties, mode })
    }
}

impl fmt::Display for RelayPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/v1/")?;
        for b in self.session.0 {
            write!(f, "{b:02x}")?;
        }
        write!(f, "/{}?parties={}&mode={}", self.party.0, self.parties, self.mode)
    }
}

fn valid_mode(m: &str) -> bool {
    (1..=32).contains(&m.len())
        && m.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Parses a session id written as 32 hex digits.
///
/// ```
/// use ringfence_relay::ws::parse_session_hex;
/// assert_eq!(parse_session_hex(&"0f".repeat(16)).unwrap().0, [0x0f; 16]);
/// assert!(parse_session_hex("xyz").is_err());
/// ```
pub fn parse_session_hex(hex: &str) -> Result<SessionId, String> {
    let bad = || format!("session id must be 32 hex digits, got {hex:?}");
    if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let mut s = [0u8; 16];
    for (b, pair) in s.iter_mut().zip(hex.as_bytes().chunks_exact(2)) {
        // Two ASCII hex digits, checked above.
        let pair = core::str::from_utf8(pair).map_err(|_| bad())?;
        *b = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
    }
    Ok(SessionId(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_paths_are_refused_with_a_reason() {
        let s = "ab".repeat(16);
        for bad in [
            "/".to_string(),
            format!("/v2/{s}/0?parties=3&mode=plain"),
            format!("/v1/{s}?parties=3&mode=plain"),
            format!("/v1/{s}/3?parties=3&mode=plain"),
            format!("/v1/{s}/0?parties=1&mode=plain"),
            format!("/v1/{s}/0?parties=3&mode=Plain"),
            format!("/v1/{s}/0?parties=3"),
            format!("/v1/{s}/0/x?parties=3&mode=plain"),
            format!("/v1/{s}/0?parties=3&mode=plain&x=1"),
            "/v1/zz/0?parties=3&mode=plain".to_string(),
        ] {
            assert!(RelayPath::parse(&bad).is_err(), "{bad}");
        }
    }
}
