//! The relay's request paths: which session a WebSocket joins, as which party, in a session of
//! how many parties, with which link mode, and with which token; or which deployment's lobby a
//! server party waits in.
//!
//! ```text
//! /v1/{session: 32 hex}/{party}?parties={2..=255}&mode={[a-z0-9-]{1,32}}
//!        [&token={token}] [&deployment={name}&client_key={64 hex}]
//! /v1/lobby/{deployment}/{party}?parties={servers}&mode={mode} [&token={token}]
//! ```
//!
//! The mode is the link protection the parties run end to end (`noise-aesgcm`, `plain`,
//! `plain-test-seeds`): the relay never interprets payloads, it only refuses to put parties
//! that announce different modes in one session, so a misconfigured party fails at once with a
//! clear reason instead of as garbage frames.
//!
//! `deployment` + `client_key` (a client opening a session with a deployment's long-running
//! server parties): the relay invites every party waiting in that deployment's lobby to join
//! the new session, passing on the client's public key for their end-to-end links.

use core::fmt;

use ringfence_core::net::{PartyId, SessionId};

use crate::token::valid_name;

/// A parsed session request path.
///
/// ```
/// use ringfence_core::net::{PartyId, SessionId};
/// use ringfence_relay::ws::RelayPath;
/// let p = RelayPath::new(SessionId([0xab; 16]), PartyId(1), 3, "noise-aesgcm");
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
    /// The join token (required by a relay that trusts some deployment).
    pub token: Option<String>,
    /// Invite this deployment's lobby into the new session, for the client with this key.
    pub invite: Option<Invite>,
}

/// A client's request that a deployment's server parties join its new session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invite {
    /// The deployment whose lobby is invited.
    pub deployment: String,
    /// The client's static public key (64 hex digits), passed on to the server parties.
    pub client_key: String,
}

/// A parsed lobby request path: a server party of `deployment` waiting for invitations.
///
/// ```
/// use ringfence_core::net::PartyId;
/// use ringfence_relay::ws::{LobbyPath, Request};
/// let p = LobbyPath { deployment: "acme".into(), party: PartyId(2), parties: 3,
///                     mode: "noise-aesgcm".into(), token: None };
/// assert_eq!(p.to_string(), "/v1/lobby/acme/2?parties=3&mode=noise-aesgcm");
/// assert_eq!(Request::parse(&p.to_string()), Ok(Request::Lobby(p)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LobbyPath {
    /// The deployment's name.
    pub deployment: String,
    /// This server party's index.
    pub party: PartyId,
    /// How many server parties the deployment has.
    pub parties: u8,
    /// The link mode the server parties run (clients must announce the same).
    pub mode: String,
    /// The join token (good for any session of the deployment).
    pub token: Option<String>,
}

/// Any request the relay serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// Join a session.
    Session(RelayPath),
    /// Wait in a deployment's lobby.
    Lobby(LobbyPath),
}

impl Request {
    /// Parses a request path with its query; the error says what is wrong.
    pub fn parse(path_and_query: &str) -> Result<Self, String> {
        let (path, query) = path_and_query.split_once('?').unwrap_or((path_and_query, ""));
        let rest = path.strip_prefix("/v1/").ok_or("path must start with /v1/")?;
        let q = Query::parse(query)?;
        if let Some(rest) = rest.strip_prefix("lobby/") {
            let Some((deployment, party)) = rest.split_once('/') else {
                return Err("path must be /v1/lobby/{deployment}/{party}".into());
            };
            if !valid_name(deployment) {
                return Err("deployment name must be [a-z0-9-]{1,32}".into());
            }
            if q.invite.is_some() {
                return Err("a lobby connection cannot invite".into());
            }
            // A lobby counts the deployment's servers: one serves spdz2k with its client.
            let (party, parties, mode) = q.party_in(party, 1)?;
            let deployment = deployment.to_string();
            return Ok(Self::Lobby(LobbyPath { deployment, party, parties, mode, token: q.token }));
        }
        let Some((session, party)) = rest.split_once('/') else {
            return Err("path must be /v1/{session}/{party}".into());
        };
        let session = parse_session_hex(session)?;
        let (party, parties, mode) = q.party_in(party, 2)?;
        Ok(Self::Session(RelayPath {
            session,
            party,
            parties,
            mode,
            token: q.token,
            invite: q.invite,
        }))
    }
}

/// The query parameters of either request.
struct Query {
    parties: Option<u8>,
    mode: Option<String>,
    token: Option<String>,
    invite: Option<Invite>,
}

impl Query {
    fn parse(query: &str) -> Result<Self, String> {
        let mut q = Self { parties: None, mode: None, token: None, invite: None };
        let (mut deployment, mut client_key) = (None, None);
        for kv in query.split('&').filter(|s| !s.is_empty()) {
            match kv.split_once('=') {
                Some(("parties", v)) => q.parties = v.parse::<u8>().ok(),
                Some(("mode", v)) if valid_name(v) => q.mode = Some(v.to_string()),
                Some(("token", v)) if (1..=512).contains(&v.len()) => q.token = Some(v.into()),
                Some(("deployment", v)) if valid_name(v) => deployment = Some(v.to_string()),
                Some(("client_key", v))
                    if v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()) =>
                {
                    client_key = Some(v.to_ascii_lowercase());
                }
                _ => return Err(format!("unexpected query parameter {kv:?}")),
            }
        }
        q.invite = match (deployment, client_key) {
            (Some(deployment), Some(client_key)) => Some(Invite { deployment, client_key }),
            (None, None) => None,
            _ => return Err("deployment= and client_key= go together".into()),
        };
        Ok(q)
    }

    /// The party index `party` (a path segment), the party count (at least `min`) and the
    /// mode, checked.
    fn party_in(&self, party: &str, min: u8) -> Result<(PartyId, u8, String), String> {
        let party: u8 =
            party.parse().map_err(|_| format!("party index {party:?} is not 0..255"))?;
        let parties = self
            .parties
            .filter(|&n| n >= min)
            .ok_or_else(|| format!("query needs parties={min}..255"))?;
        let mode = self.mode.clone().ok_or("query needs mode=[a-z0-9-]{1,32}")?;
        if party >= parties {
            return Err(format!("party {party} is not among {parties} parties"));
        }
        Ok((PartyId(party), parties, mode))
    }
}

impl RelayPath {
    /// A session path without token or invitation.
    pub fn new(session: SessionId, party: PartyId, parties: u8, mode: &str) -> Self {
        Self { session, party, parties, mode: mode.into(), token: None, invite: None }
    }

    /// Parses a session request path; the error says what is wrong.
    pub fn parse(path_and_query: &str) -> Result<Self, String> {
        match Request::parse(path_and_query)? {
            Request::Session(p) => Ok(p),
            Request::Lobby(_) => Err("a lobby path, not a session path".into()),
        }
    }
}

impl fmt::Display for RelayPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/v1/")?;
        for b in self.session.0 {
            write!(f, "{b:02x}")?;
        }
        write!(f, "/{}?parties={}&mode={}", self.party.0, self.parties, self.mode)?;
        if let Some(t) = &self.token {
            write!(f, "&token={t}")?;
        }
        if let Some(i) = &self.invite {
            write!(f, "&deployment={}&client_key={}", i.deployment, i.client_key)?;
        }
        Ok(())
    }
}

impl fmt::Display for LobbyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "/v1/lobby/{}/{}?parties={}&mode={}",
            self.deployment, self.party.0, self.parties, self.mode
        )?;
        if let Some(t) = &self.token {
            write!(f, "&token={t}")?;
        }
        Ok(())
    }
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
            format!("/v1/{s}/0?parties=3&mode=plain&deployment=acme"),
            format!("/v1/{s}/0?parties=3&mode=plain&client_key=00"),
            "/v1/lobby/acme?parties=3&mode=plain".to_string(),
            "/v1/lobby/Acme/0?parties=3&mode=plain".to_string(),
            "/v1/lobby/acme/3?parties=3&mode=plain".to_string(),
            "/v1/lobby/acme/0?parties=0&mode=plain".to_string(),
            format!("/v1/lobby/acme/0?parties=3&mode=plain&deployment=acme&client_key={s}{s}"),
        ] {
            assert!(Request::parse(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_lobby_of_one_server_parses_and_a_session_of_one_party_does_not() {
        let lobby = "/v1/lobby/acme/0?parties=1&mode=plain";
        assert!(matches!(Request::parse(lobby), Ok(Request::Lobby(LobbyPath { parties: 1, .. }))));
        let e = Request::parse(&format!("/v1/{}/0?parties=1&mode=plain", "ab".repeat(16)));
        assert_eq!(e, Err("query needs parties=2..255".into()));
    }

    #[test]
    fn token_and_invitation_round_trip() {
        let mut p = RelayPath::new(SessionId([1; 16]), PartyId(3), 4, "noise-aesgcm");
        p.token = Some("rf1.acme.any.3.9.ab".into());
        p.invite = Some(Invite { deployment: "acme".into(), client_key: "cd".repeat(32) });
        assert_eq!(RelayPath::parse(&p.to_string()), Ok(p));
    }
}
