//! # ringfence-relay
//!
//! The native side of ringfence: a TCP [`Transport`](ringfence_core::net::Transport) whose
//! links are mutually authenticated and encrypted with Noise (keys, handshake and records come
//! from the sans-IO crate `ringfence-link`), the WebSocket relay and its native client
//! ([`ws`]: the same Noise links, end to end through the relay) with its WebTransport front end
//! ([`wt`], for browsers), direct links among server parties that meet through the relay
//! ([`direct`]: one routed port per server), DataChannels to browsers ([`rtc`]), the health and metrics endpoints of the relay and the server
//! parties ([`metrics`]), and the `ringfence` binary (`bench`, `demo`, `relay`, `party`).
//!
//! ```text
//!   protocol (ringfence-core, sans-IO)         Ctx ─ send(frame) / recv(from).await
//!        │                                       │
//!   TcpTransport ── per link ──┬─ unbounded queue ─► writer task: frame → Noise records → TCP
//!                              └─ bounded queue ◄── reader task: TCP → records → frame
//! ```
//!
//! ## Run loop
//! 1. Each party binds a listener and learns its peers' addresses and static public keys.
//! 2. [`TcpTransport::connect`]: party `i` dials every `j > i` and accepts every `j < i`; each
//!    link runs Noise `KK_25519_AESGCM_SHA256` bound to the session id and both party ids, then
//!    derives its pairwise seed from the Noise split keys ([`TcpTransport::seed_with`]).
//! 3. The protocol runs over a [`Ctx`](ringfence_core::net::Ctx) holding the transport. Its
//!    futures need not be `Send`: drive them with `Runtime::block_on` (current-thread or
//!    multi-thread runtime; the link tasks are `Send` and run on the runtime's workers).
//! 4. [`TcpTransport::close`] flushes queued frames and closes the links.
//!
//! Invariants: `send` never waits; frames arrive in order; a frame is capped at
//! `MAX_PAYLOAD + HEADER_LEN` bytes; peer bytes never cause a panic (bad records are
//! `TransportError::Io`, a clean close is `Closed`, silence is `Timeout` after `recv_timeout`).
//!
//! ```no_run
//! use ringfence_core::net::{Ctx, PartyId, Roster, SessionId};
//! use ringfence_core::ring::Z64;
//! use ringfence_relay::{Security, StaticKeypair, TcpTransport, TransportConfig};
//!
//! # async fn party(keys: Vec<StaticKeypair>, me: u8, addrs: Vec<std::net::SocketAddr>,
//! #                listener: tokio::net::TcpListener) -> Result<(), Box<dyn std::error::Error>> {
//! let security = Security::Noise {
//!     keypair: keys[me as usize].clone(),
//!     public_keys: keys.iter().map(|k| k.public).collect(),
//! };
//! let cfg = TransportConfig::new(PartyId(me), addrs, security, SessionId([7; 16]));
//! let transport = TcpTransport::connect(cfg, Some(listener)).await?;
//! let (roster, me) = (Roster::THREE, PartyId(me));
//! let mut ctx = Ctx::new(me, roster.n(), SessionId([7; 16]), transport);
//! ctx.round();
//! ctx.send(roster.next(me), &[Z64(1), Z64(2)])?;
//! let got: Vec<Z64> = ctx.recv(roster.prev(me), 2).await?;
//! # let _ = got;
//! ctx.into_transport().close().await?;
//! # Ok(()) }
//! ```

pub mod config;
pub mod direct;
pub mod error;
mod establish;
mod handshake;
pub mod http;
pub mod keys;
mod link;
pub mod listen;
pub mod metrics;
pub mod netem;
pub mod record;
pub mod rtc;
pub mod token;
pub mod transport;
pub mod ws;
pub mod wt;

#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing;

pub use config::{Security, TransportConfig};
pub use error::RelayError;
pub use keys::{PrivateKey, PublicKey, StaticKeypair};
pub use transport::{TcpTransport, WireStats};

use ringfence_core::prg::Seed;

pub use ringfence_link::NOISE_PROTOCOL;

/// 32 bytes from the OS random source as a [`Seed`] (e.g. a party's own seed).
pub fn os_seed() -> Result<Seed, RelayError> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).map_err(|e| RelayError::Crypto(format!("OS random source: {e}")))?;
    Ok(Seed::from_bytes(b))
}

/// Lower-case hex of `bytes`: how session ids, digests and certificate hashes are shown.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
