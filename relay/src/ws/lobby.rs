//! The server party's side of a deployment lobby: wait at the relay for clients' invitations.
//!
//! A long-running server party keeps one WebSocket open at `/v1/lobby/{deployment}/{party}`.
//! When a client opens a session inviting the deployment, the relay sends every waiting party
//! one text message `{"session": HEX, "parties": N, "client": C, "client_key": HEX}`; each
//! party then joins that session like any other ([`TcpTransport::connect_via_relay`]), with
//! the client's key among its Noise peers. The relay could lie about the client's key, but
//! then it could only impersonate a client (anyone may be a client): it still cannot read a
//! real client's links, which authenticate the server parties by their keys.
//!
//! [`TcpTransport::connect_via_relay`]: crate::TcpTransport::connect_via_relay

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
    }
    let parsed = serde_json::from_str::<Wire>(text).map_err(|e| e.to_string()).and_then(|w| {
        let session = parse_session_hex(&w.session)?;
        let client_key = PublicKey::from_hex(&w.client_key).map_err(|e| e.to_string())?;
        if w.client >= w.parties {
            return Err(format!("client P{} of {} parties", w.client, w.parties));
        }
        Ok(Invitation { session, parties: w.parties, client: PartyId(w.client), client_key })
    });
    match parsed {
        Ok(i) => LobbyEvent::Invited(i),
        Err(e) => LobbyEvent::Malformed(format!("invitation: {e}")),
    }
}
