//! The WebSocket relay and its native client.
//!
//! Parties that cannot reach each other directly (browsers, Node, parties behind NAT) all
//! connect to one relay, which forwards opaque bytes between the parties of a session:
//!
//! ```text
//!  party ──ws──► relay ──ws──► party       request path  /v1/{session}/{party}?parties=N&mode=M
//!  party → relay   [to: u8]   ‖ payload    (binary messages only)
//!  relay → party   [from: u8] ‖ payload    payload = bytes of the link `from → me`
//!  relay → party   [from: u8]              (no payload) `from` left: its link has ended
//! ```
//!
//! A refused connection gets the HTTP status and reason of its refusal; a client offering the
//! subprotocol [`IN_BAND_ADMISSION`] (browsers: they cannot read a refused upgrade) is upgraded
//! either way, then hears [`ADMITTED`] first or is closed with 4000 + that status.
//!
//! What the payloads are is up to the parties' link mode (announced in the path, equal for
//! every party of a session):
//! - `noise-aesgcm` (native [`TcpTransport::connect_via_relay`](crate::TcpTransport), and the
//!   SDK's `SecureRelayTransport` running the same `ringfence-link` code in wasm): each pair of
//!   parties runs the same Noise KK handshake and record layer as over TCP on a virtual byte
//!   stream; payloads are slices of that stream, so the relay sees only the handshake and
//!   ciphertext, and the pairwise seeds come from the handshake's secret keys.
//! - `plain` (insecure): the same stream without encryption.
//! - `plain-test-seeds` (insecure, tests only: the SDK's `WebSocketTransport` and native parties
//!   computing with it): one core frame per payload, seeds from a public test label.
//!
//! The relay ([`RelayServer`]) is bounded by [`RelayLimits`]: sessions, parties per session,
//! message size, a queue per party and a byte budget per session (senders wait for room, up
//! to a stall timeout, then the session closes with a reason), idle expiry. It logs connects
//! and disconnects, never payloads.

mod client;
mod lobby;
#[cfg(fuzzing)]
pub(crate) use lobby::parse_invitation;
mod metrics;
mod path;
mod pump;
mod server;
mod session;
mod stream;

pub(crate) use client::Mux;
pub use client::RelayLinkConfig;
pub use lobby::{
    Invitation, InvitationCheck, Lobby, LobbyEvent, MAX_CLIENT_TOKEN_LIFETIME,
    MAX_REMEMBERED_SESSIONS,
};
pub use path::{parse_session_hex, Invite, LobbyPath, RelayPath, Request};
pub use server::{RelayLimits, RelayServer, ADMITTED, IN_BAND_ADMISSION};
pub use session::{log, set_log_json};
// The WebTransport front end (`crate::wt`) serves the same sessions.
pub(crate) use pump::{run_member, truncate, PartyReader, PartyWriter};
pub(crate) use session::{short, Registry};
