//! The server party's side of a deployment lobby: wait at the relay for clients' invitations.
//!
//! A long-running server party keeps one WebSocket open at `/v1/lobby/{deployment}/{party}`.
//! When a client opens a session inviting the deployment, the relay sends every waiting party
//! one text message `{"session": HEX, "parties": N, "client": C, "client_key": HEX, "token":
//! T}`, `T` being the client's join token as the client gave it (or `null`).
//!
//! The party does not take the relay's word for it: [`InvitationCheck`] verifies the client's
//! token itself (signed by its own deployment, for this session and participant, bound to this
//! client key, not expired) and refuses a token it has already served, so a relay can neither
//! open sessions without a client's token, nor replay one, nor put its own key in place of the
//! client's. An accepted invitation is joined like any session
//! ([`TcpTransport::connect_via_relay`]), with the client's key among the Noise peers. A refused
//! one is answered on the lobby socket with `{"refused": HEX, "reason": R}` ([`Lobby::refuse`]):
//! the relay closes the session with that reason, which is how the client learns of it.
//!
//! [`TcpTransport::connect_via_relay`]: crate::TcpTransport::connect_via_relay

use std::collections::HashMap;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use ringfence_core::net::{PartyId, SessionId};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::client::open_ws;
use super::path::{parse_session_hex, LobbyPath};
use crate::error::RelayError;
use crate::keys::PublicKey;
use crate::token::{DeploymentPublicKey, Trusted};

/// How often a waiting party pings the relay (keeps idle proxies from dropping the socket).
const PING_EVERY: Duration = Duration::from_secs(20);

/// An invitation to serve a client's session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invitation {
    /// The session to join.
    pub session: SessionId,
    /// Its number of participants (the server parties and the client).
    pub parties: u8,
    /// The client's participant index.
    pub client: PartyId,
    /// The client's static public key, for its Noise links.
    pub client_key: PublicKey,
    /// The client's join token, forwarded by the relay (checked by [`InvitationCheck`]).
    pub token: Option<String>,
}

/// What arrived in the lobby.
#[derive(Debug)]
pub enum LobbyEvent {
    /// A client opened a session.
    Invited(Invitation),
    /// The relay sent something that is not an invitation (skipped; the reason says what).
    Malformed(String),
}

/// A connection waiting in a deployment's lobby.
///
/// ```no_run
/// use ringfence_core::net::PartyId;
/// use ringfence_relay::ws::{Lobby, LobbyEvent, LobbyPath};
/// # async fn f() -> Result<(), ringfence_relay::RelayError> {
/// let path = LobbyPath { deployment: "acme".into(), party: PartyId(0), parties: 3,
///                        mode: "noise-aesgcm".into(), token: None };
/// let mut lobby = Lobby::connect("ws://127.0.0.1:9000", &path, std::time::Duration::from_secs(5)).await?;
/// while let LobbyEvent::Invited(inv) = lobby.next().await? {
///     println!("serve session {:?} for client {}", inv.session, inv.client);
/// }
/// # Ok(()) }
/// ```
pub struct Lobby {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_ping: Instant,
}

impl core::fmt::Debug for Lobby {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Lobby").finish_non_exhaustive()
    }
}

impl Lobby {
    /// Enters the lobby at relay `url` (e.g. `ws://127.0.0.1:9000`) within `timeout`.
    pub async fn connect(
        url: &str,
        path: &LobbyPath,
        timeout: Duration,
    ) -> Result<Self, RelayError> {
        let cfg = WebSocketConfig::default().max_message_size(Some(4096));
        let ws = open_ws(url, &path.to_string(), cfg, Instant::now() + timeout).await?;
        Ok(Self { ws, next_ping: Instant::now() + PING_EVERY })
    }

    /// Waits for the next event; an error when the relay closes the lobby (with its reason)
    /// or the connection fails.
    pub async fn next(&mut self) -> Result<LobbyEvent, RelayError> {
        loop {
            let msg = tokio::select! {
                m = self.ws.next() => m,
                () = tokio::time::sleep_until(self.next_ping) => {
                    self.next_ping = Instant::now() + PING_EVERY;
                    self.ws.send(Message::Ping(Vec::new().into())).await.map_err(lost)?;
                    continue;
                }
            };
            return match msg {
                Some(Ok(Message::Text(t))) => Ok(parse_invitation(t.as_str())),
                Some(Ok(Message::Close(c))) => {
                    let why = c.map(|c| c.reason.to_string()).unwrap_or_default();
                    Err(lost(format!("the relay closed the lobby: {why}")))
                }
                None => Err(lost("the relay connection ended")),
                Some(Ok(Message::Binary(_))) => {
                    Ok(LobbyEvent::Malformed("a binary message".into()))
                }
                Some(Ok(_)) => continue,
                Some(Err(e)) => Err(lost(e)),
            };
        }
    }

    /// Leaves the lobby with a WebSocket close handshake, so that the relay logs a planned
    /// departure (`closed by the party`) rather than a lost connection.
    pub async fn close(mut self) {
        use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
        use tokio_tungstenite::tungstenite::protocol::CloseFrame;
        let frame = CloseFrame { code: CloseCode::Away, reason: "server party stopping".into() };
        if self.ws.close(Some(frame)).await.is_err() {
            return;
        }
        // The relay answers with its own close frame; waiting for it ends the handshake cleanly.
        let answered = async { while let Some(Ok(_)) = self.ws.next().await {} };
        let _ = tokio::time::timeout(Duration::from_secs(2), answered).await;
    }
}

impl Lobby {
    /// Tells the relay that this party refuses the invitation to `session`, and why: the relay
    /// closes the session with the reason (the client sees it). An error when the lobby's
    /// connection fails.
    pub async fn refuse(&mut self, session: SessionId, reason: &str) -> Result<(), RelayError> {
        let msg = serde_json::json!({ "refused": crate::hex(&session.0), "reason": reason });
        self.ws.send(Message::Text(msg.to_string().into())).await.map_err(lost)
    }
}

/// Client tokens valid for longer than this are refused by [`InvitationCheck`]: each served
/// token is remembered until it expires, so its lifetime bounds how long the memory lasts.
pub const MAX_CLIENT_TOKEN_LIFETIME: u64 = 24 * 3600;

/// Served sessions remembered at once by [`InvitationCheck`]; when that many unexpired tokens
/// have been served, new invitations are refused until some expire (never forgotten early,
/// which would let a replay in).
pub const MAX_REMEMBERED_SESSIONS: usize = 65_536;

/// A server party's own check of the invitations the relay sends: the client's token must be
/// signed by this party's deployment, for the invited session and client participant, bound
/// to the invited client key (an `rf2` token), not expired nor valid for more than
/// [`MAX_CLIENT_TOKEN_LIFETIME`], and not served before (each session's token opens it once;
/// the served sessions are remembered until their tokens expire, at most
/// [`MAX_REMEMBERED_SESSIONS`] at once).
///
/// ```
/// use ringfence_core::net::{PartyId, SessionId};
/// use ringfence_relay::PublicKey;
/// use ringfence_relay::token::{DeploymentKey, Token};
/// use ringfence_relay::ws::{Invitation, InvitationCheck};
/// let key = DeploymentKey::generate().unwrap();
/// let (session, client_key) = (SessionId([5; 16]), PublicKey([7; 32]));
/// let token = Token { deployment: "acme".into(), session: Some(session), party: PartyId(3),
///                     client_key: Some(client_key), expires: 1_000 };
/// let inv = Invitation { session, parties: 4, client: PartyId(3), client_key,
///                        token: Some(token.sign(&key)) };
/// let mut check = InvitationCheck::new("acme", key.public());
/// assert_eq!(check.check(&inv, 900), Ok(()));
/// assert!(check.check(&inv, 901).unwrap_err().contains("already served"));
/// ```
#[derive(Debug)]
pub struct InvitationCheck {
    trusted: Trusted,
    /// Served sessions and when their tokens expire (unix seconds).
    served: HashMap<SessionId, u64>,
    cap: usize,
}

impl InvitationCheck {
    /// Checks invitations to `deployment`, whose tokens `key` signs.
    pub fn new(deployment: &str, key: DeploymentPublicKey) -> Self {
        let mut trusted = Trusted::default();
        trusted.add(deployment, key);
        Self { trusted, served: HashMap::new(), cap: MAX_REMEMBERED_SESSIONS }
    }

    /// The same check remembering at most `cap` sessions at once (tests).
    pub fn with_cap(mut self, cap: usize) -> Self {
        self.cap = cap;
        self
    }

    /// Sessions remembered now.
    pub fn remembered(&self) -> usize {
        self.served.len()
    }

    /// Accepts `inv` at `now` (unix seconds) and remembers its session as served, or says why
    /// it is refused.
    pub fn check(&mut self, inv: &Invitation, now: u64) -> Result<(), String> {
        let token = inv.token.as_deref().ok_or("the invitation carries no client token")?;
        let t = self.trusted.verify(token, now).map_err(|e| format!("client token: {e}"))?;
        if t.party != inv.client {
            return Err(format!("client token for {}, not the client {}", t.party, inv.client));
        }
        if t.session != Some(inv.session) {
            return Err("client token for another session (or any session)".into());
        }
        match t.client_key {
            None => {
                return Err(
                    "client token not bound to a client key (rf1): issue it with --client-key"
                        .into(),
                )
            }
            Some(k) if k != inv.client_key => {
                return Err("client token bound to another key than the invited client's".into())
            }
            Some(_) => {}
        }
        if t.expires.saturating_sub(now) > MAX_CLIENT_TOKEN_LIFETIME {
            return Err(format!(
                "client token valid for {} s; a client's may be valid for {MAX_CLIENT_TOKEN_LIFETIME} s at most",
                t.expires - now
            ));
        }
        if self.served.contains_key(&inv.session) {
            return Err("replayed: this session's client token was already served".into());
        }
        if self.served.len() >= self.cap {
            self.served.retain(|_, expires| *expires >= now);
            if self.served.len() >= self.cap {
                return Err(format!(
                    "{} sessions served whose tokens have not expired: refusing more until some do",
                    self.served.len()
                ));
            }
        }
        self.served.insert(inv.session, t.expires);
        Ok(())
    }
}

fn lost(e: impl ToString) -> RelayError {
    RelayError::io("waiting in the lobby", std::io::Error::other(e.to_string()))
}

pub(crate) fn parse_invitation(text: &str) -> LobbyEvent {
    #[derive(serde::Deserialize)]
    struct Wire {
        session: String,
        parties: u8,
        client: u8,
        client_key: String,
        #[serde(default)]
        token: Option<String>,
    }
    let parsed = serde_json::from_str::<Wire>(text).map_err(|e| e.to_string()).and_then(|w| {
        let session = parse_session_hex(&w.session)?;
        let client_key = PublicKey::from_hex(&w.client_key).map_err(|e| e.to_string())?;
        if w.client >= w.parties {
            return Err(format!("client P{} of {} parties", w.client, w.parties));
        }
        let (parties, client, token) = (w.parties, PartyId(w.client), w.token);
        Ok(Invitation { session, parties, client, client_key, token })
    });
    match parsed {
        Ok(i) => LobbyEvent::Invited(i),
        Err(e) => LobbyEvent::Malformed(format!("invitation: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token::{DeploymentKey, Token};

    const NOW: u64 = 1_000_000;

    fn invitation(key: &DeploymentKey, session: u8, expires: u64) -> Invitation {
        let (session, client_key) = (SessionId([session; 16]), PublicKey([7; 32]));
        let t = Token {
            deployment: "acme".into(),
            session: Some(session),
            party: PartyId(3),
            client_key: Some(client_key),
            expires,
        };
        Invitation { session, parties: 4, client: PartyId(3), client_key, token: Some(t.sign(key)) }
    }

    #[test]
    fn the_served_set_is_pruned_by_expiry_and_capped() {
        let key = DeploymentKey::from_seed([3; 32]).unwrap();
        let mut check = InvitationCheck::new("acme", key.public()).with_cap(2);
        assert_eq!(check.check(&invitation(&key, 1, NOW + 10), NOW), Ok(()));
        assert_eq!(check.check(&invitation(&key, 2, NOW + 100), NOW), Ok(()));
        // Full, and nothing has expired: refused rather than forgetting a served token.
        let err = check.check(&invitation(&key, 3, NOW + 100), NOW + 5).unwrap_err();
        assert!(err.contains("2 sessions served"), "{err}");
        // Session 1's token expired: its place is free again; session 2 is still remembered.
        assert_eq!(check.check(&invitation(&key, 3, NOW + 100), NOW + 11), Ok(()));
        assert_eq!(check.remembered(), 2);
        let err = check.check(&invitation(&key, 2, NOW + 100), NOW + 12).unwrap_err();
        assert!(err.contains("replayed"), "{err}");
    }

    #[test]
    fn long_lived_unbound_and_foreign_client_tokens_are_refused() {
        let key = DeploymentKey::from_seed([3; 32]).unwrap();
        let mut check = InvitationCheck::new("acme", key.public());
        let long = invitation(&key, 1, NOW + MAX_CLIENT_TOKEN_LIFETIME + 1);
        assert!(check.check(&long, NOW).unwrap_err().contains("at most"));
        let mut unbound = invitation(&key, 2, NOW + 10);
        let t = Token {
            deployment: "acme".into(),
            session: Some(unbound.session),
            party: PartyId(3),
            client_key: None,
            expires: NOW + 10,
        };
        unbound.token = Some(t.sign(&key));
        assert!(check.check(&unbound, NOW).unwrap_err().contains("not bound"));
        let mut wrong_party = invitation(&key, 3, NOW + 10);
        wrong_party.client = PartyId(2);
        assert!(check.check(&wrong_party, NOW).unwrap_err().contains("not the client P2"));
        let other = DeploymentKey::from_seed([4; 32]).unwrap();
        let err = check.check(&invitation(&other, 4, NOW + 10), NOW).unwrap_err();
        assert!(err.contains("signature"), "{err}");
        // None of the refused invitations was remembered.
        assert_eq!(check.remembered(), 0);
    }
}
