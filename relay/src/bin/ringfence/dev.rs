//! `ringfence local-deployment --dev`: hands a fresh session and its join token to anyone who
//! asks over HTTP, so that a page or script can be the client of the local deployment without
//! a backend of its own. Development only: a real deployment's backend decides who gets a
//! token (`ringfence token issue`), which is the whole point of tokens.
//!
//! The client makes its Noise keypair first and sends its public key: the token is bound to
//! it (the server parties refuse the session if the relay hands them another key), as a real
//! backend's would be.
//!
//! ```text
//! GET /session?key=HEX   200 application/json, a fresh session each time, for the client
//!                        whose Noise public key is HEX (64 hex digits):
//!                        {"relay", "webTransport": {"url", "certificateHash"}, "deployment",
//!                         "session": 32 hex, "token", "parties": [N × 64 hex]}
//!                        400 text/plain without a valid key
//! OPTIONS *      204 (CORS preflight)
//! GET /          200 text/plain: what is served here
//! anything else  404 text/plain
//! ```
//!
//! The keys are those of the SDK's `ClientOptions` (`session` and `parties` as hex, which the
//! SDK's byte options are made from); `webTransport` is left out without a WebTransport front
//! end. Every answer allows any origin: pages are served from anywhere during development.

use std::net::SocketAddr;
use std::sync::Arc;

use ringfence_core::net::SessionId;
use ringfence_relay::http::Reply;
use ringfence_relay::token::DeploymentKey;
use ringfence_relay::PublicKey;

/// What `GET /session` hands out.
pub(crate) struct DevSessions {
    /// The relay's `ws://` URL.
    pub(crate) relay: String,
    /// The WebTransport front end's URL and certificate hash (hex), if on.
    pub(crate) webtransport: Option<(String, String)>,
    /// The deployment the client invites.
    pub(crate) deployment: &'static str,
    /// The server parties' public keys (hex), in party order.
    pub(crate) parties: Vec<String>,
    /// Signs each session's client token.
    pub(crate) key: Arc<DeploymentKey>,
}

impl DevSessions {
    /// The client's participant id: the one after the servers.
    fn client(&self) -> ringfence_core::net::PartyId {
        ringfence_core::net::PartyId(u8::try_from(self.parties.len()).unwrap_or(u8::MAX))
    }

    /// A fresh session and its token for the client with `client_key`, as the body of
    /// `GET /session` (written by hand: the keys keep the documented order, which a JSON map
    /// would sort).
    fn session(&self, client_key: PublicKey) -> Result<String, String> {
        let id = SessionId(crate::random_bytes::<16>()?);
        let hex = ringfence_relay::hex(&id.0);
        let json = |v: serde_json::Value| v.to_string();
        let webtransport = match &self.webtransport {
            Some((url, hash)) => format!(
                r#""webTransport":{{"url":{},"certificateHash":{}}},"#,
                json(url.clone().into()),
                json(hash.clone().into())
            ),
            None => String::new(),
        };
        Ok(format!(
            r#"{{"relay":{},{webtransport}"deployment":{},"session":"{hex}","token":{},"parties":{}}}"#,
            json(self.relay.clone().into()),
            json(self.deployment.into()),
            json(crate::local::client_token(&self.key, id, self.client(), client_key).into()),
            json(self.parties.clone().into()),
        ))
    }

    /// The answer to `method target`.
    fn answer(&self, method: &str, target: &str) -> Reply {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let reply = match (method, path) {
            ("OPTIONS", _) => Reply::empty("204 No Content")
                .header("access-control-allow-methods", "GET")
                .header("access-control-allow-headers", "*"),
            ("GET", "/session") => match client_key(query).map(|k| self.session(k)) {
                Ok(Ok(body)) => Reply::new("200 OK", "application/json", body)
                    .header("cache-control", "no-store"),
                Ok(Err(e)) => Reply::text("500 Internal Server Error", format!("{e}\n")),
                Err(e) => Reply::text("400 Bad Request", format!("{e}\n")),
            },
            ("GET", "/") => Reply::text(
                "200 OK",
                "ringfence local-deployment --dev (development only)\n\
                 GET /session?key=HEX: a fresh session of the local deployment and a join token \
                 for its client, bound to the client's Noise public key HEX, as JSON with the \
                 keys of the SDK's ClientOptions.\n",
            ),
            _ => Reply::text("404 Not Found", "not found: GET /session serves sessions\n"),
        };
        reply.header("access-control-allow-origin", "*")
    }
}

/// The client's public key in the query of `GET /session` (`key=HEX`).
fn client_key(query: &str) -> Result<PublicKey, String> {
    let key = query.split('&').find_map(|kv| kv.strip_prefix("key="));
    let key = key.ok_or(
        "GET /session?key=HEX: the client's Noise public key (64 hex digits; the SDK's \
         generateNoiseKeypair()), to which the session's token is bound",
    )?;
    PublicKey::from_hex(key).map_err(|e| format!("GET /session?key=HEX: {e}"))
}

/// Refuses an address other than loopback, saying why.
pub(crate) fn check_loopback(addr: SocketAddr) -> Result<(), String> {
    if addr.ip().is_loopback() {
        return Ok(());
    }
    Err(format!(
        "--dev-http {addr}: not a loopback address. --dev hands a join token to anyone who asks, \
         so it serves on loopback only (e.g. 127.0.0.1:8787); a real deployment issues tokens \
         from its own backend (ringfence token issue)"
    ))
}

/// Serves `sessions` on `addr` (loopback only) in the background; returns the URL of
/// `GET /session`.
pub(crate) async fn serve(addr: SocketAddr, sessions: DevSessions) -> Result<String, String> {
    check_loopback(addr)?;
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("--dev-http {addr}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| format!("--dev-http {addr}: {e}"))?;
    tokio::spawn(ringfence_relay::http::serve(listener, "dev session server", move |m, t| {
        sessions.answer(m, t)
    }));
    Ok(format!("http://{bound}/session"))
}
