//! The relay's WebTransport (HTTP/3) front end: a second way into the same sessions.
//!
//! Browsers that have WebTransport reach the relay over QUIC instead of a WebSocket over TCP:
//! no head-of-line blocking behind lost TCP segments of other traffic, a connection set up in
//! fewer round trips. Everything past the transport is the WebSocket relay's ([`crate::ws`]):
//! request paths, tokens and invitations, the per-party bounded queues and byte budget, message
//! limits, end-of-link markers, idle expiry. A session may mix parties of both front ends.
//!
//! ```text
//!  browser ──WebTransport──► relay ◄──WebSocket── server party
//!    CONNECT https://HOST:PORT/v1/{session}/{party}?parties=N&mode=M[&token=…][&deployment=…]
//!    relay opens one bidirectional stream:
//!      relay → party   [0xFF] 200            admitted   (or [0xFF] 4xx/5xx reason, then end)
//!      party → relay   [to]   ‖ payload      ┐ each message: len: u32 LE ‖ body
//!      relay → party   [from] ‖ payload      │ (the WebSocket relay's binary messages)
//!      relay → party   [from]                ┘ `from` left: its link has ended
//!      relay → party   [0xFF] 1000 reason    the relay ends the connection (then FIN)
//! ```
//!
//! A party ends its side by finishing its send stream (the WebSocket close) or by closing the
//! session; the relay answers with its closing message and finishes its stream, then waits a
//! moment for the party to close the connection. Lobbies (server parties waiting for
//! invitations) are served over WebSocket only.
//!
//! The certificate ([`WtCertificate`]) is self-signed unless one is configured: browsers
//! accept it by the hash [`WtServer::certificate_hash_hex`] gives.

mod cert;
mod server;
pub mod wire;

pub use cert::WtCertificate;
pub use server::WtServer;
