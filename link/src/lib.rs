//! # ringfence-link
//!
//! The sans-IO link layer of ringfence, shared by the native runtime (`ringfence-relay`: TCP
//! and relay links) and the WebAssembly bindings (relay links from browsers and Node), so a
//! link between any two parties runs the very same bytes:
//!
//! - [`keys`]: x25519 static identity keys (private keys never print);
//! - [`Handshake`]: the link handshake as a state machine — a hello naming session and party
//!   ids, then Noise `KK_25519_AESGCM_SHA256` with that hello as prologue — ending in record
//!   ciphers (AES-256-GCM, or ChaCha20-Poly1305 when an end has no AES instructions, e.g.
//!   WebAssembly: [`Aead`]) and a pairwise PRG seed derived from the handshake's secret split
//!   keys, bound to its transcript;
//! - [`record`]: frames cut into Noise records on a byte stream, and reassembled.
//!
//! Nothing here does I/O or reads a clock or the OS random source: randomness (ephemeral keys,
//! nonces) is an input, so the crate builds for `wasm32-unknown-unknown` with pure-Rust
//! primitives. The native runtime turns on `ring-accelerated` (ring's AES-GCM) and `os-rng`.

pub mod handshake;
pub mod keys;
pub mod record;
mod rng;

use core::fmt;

use ringfence_core::net::PartyId;
use ringfence_core::prg::Seed;
use sha2::{Digest, Sha256};

pub use handshake::{Established, Handshake, LinkEnds};
pub use keys::{PrivateKey, PublicKey, StaticKeypair};
pub use record::Aead;

/// The Noise protocol of every link's handshake (its records: see [`Aead`]).
pub const NOISE_PROTOCOL: &str = "Noise_KK_25519_AESGCM_SHA256";

/// Parsed [`NOISE_PROTOCOL`].
pub fn noise_params() -> Result<snow::params::NoiseParams, LinkError> {
    NOISE_PROTOCOL.parse().map_err(|e| LinkError::Crypto(format!("{NOISE_PROTOCOL}: {e}")))
}

/// A failure of the link layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkError {
    /// Inconsistent input from the caller (bad key hex, a mode without handshake).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A cryptographic primitive failed locally.
    #[error("crypto failure: {0}")]
    Crypto(String),
    /// The peer's handshake was malformed or failed authentication.
    #[error("handshake with {peer} failed: {reason}")]
    Handshake {
        /// The peer (as claimed by it, or the one dialled; `P255` if not known yet).
        peer: PartyId,
        /// What went wrong.
        reason: String,
    },
}

impl LinkError {
    pub(crate) fn handshake(peer: PartyId, reason: impl Into<String>) -> Self {
        Self::Handshake { peer, reason: reason.into() }
    }
}

/// How links are protected.
#[derive(Clone)]
#[non_exhaustive]
pub enum Security {
    /// Noise `KK` over x25519 with AES-256-GCM and SHA-256: every link is mutually authenticated
    /// with static keys known in advance, encrypted, and its pairwise PRG seed comes from the
    /// handshake's secret split keys (see [`handshake`]).
    Noise {
        /// This party's static keypair.
        keypair: StaticKeypair,
        /// Every party's static public key, indexed by party id (this party's own included).
        public_keys: Vec<PublicKey>,
    },
    /// **Insecure, for benchmarking only.** The same framing in plaintext, no authentication;
    /// pairwise seeds come from an unauthenticated exchange of random nonces, so anyone on the
    /// path learns them and can impersonate parties.
    DangerInsecurePlain,
    /// **Insecure, for tests and demos only; relay links only.** Frames travel in plaintext,
    /// one per relay message, with no handshake, and the pairwise seeds are derived from a
    /// public `label` exactly like the SDK's `insecureTestSeeds(label, id)`: anyone who knows
    /// the label knows every pairwise key. It matches the SDK's `WebSocketTransport`, for
    /// tests that mix native and SDK parties without keys (the SDK's `SecureRelayTransport`
    /// runs [`Noise`](Self::Noise) like native parties do).
    DangerInsecureTestSeeds {
        /// The public label naming the session's test seeds.
        label: String,
    },
}

impl Security {
    /// A short name for reports: `"noise-aesgcm"` or `"plain"`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Noise { .. } => "noise-aesgcm",
            Self::DangerInsecurePlain => "plain",
            Self::DangerInsecureTestSeeds { .. } => "plain-test-seeds",
        }
    }

    /// The pairwise seed of parties `a` and `b` under
    /// [`DangerInsecureTestSeeds`](Self::DangerInsecureTestSeeds): SHA-256 of
    /// `"ringfence-insecure-test-seed\0" ‖ label ‖ "\0pair " ‖ min(a,b) ‖ "-" ‖ max(a,b)`, the same
    /// bytes as the SDK's `insecureTestSeeds` (web/src/seeds.ts).
    ///
    /// ```
    /// use ringfence_core::net::PartyId;
    /// use ringfence_link::Security;
    /// let s = Security::insecure_test_seed("demo", PartyId(2), PartyId(0));
    /// assert_eq!(s, Security::insecure_test_seed("demo", PartyId(0), PartyId(2)));
    /// ```
    pub fn insecure_test_seed(label: &str, a: PartyId, b: PartyId) -> Seed {
        let (lo, hi) = (a.0.min(b.0), a.0.max(b.0));
        let text = format!("ringfence-insecure-test-seed\0{label}\0pair {lo}-{hi}");
        Seed::from_bytes(Sha256::digest(text.as_bytes()).into())
    }

    pub(crate) fn mode_byte(&self) -> u8 {
        match self {
            Self::Noise { .. } => 1,
            Self::DangerInsecurePlain => 2,
            Self::DangerInsecureTestSeeds { .. } => 3,
        }
    }
}

impl fmt::Debug for Security {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Noise { keypair, public_keys } => f
                .debug_struct("Noise")
                .field("keypair", keypair)
                .field("public_keys", public_keys)
                .finish(),
            Self::DangerInsecurePlain => f.write_str("DangerInsecurePlain"),
            Self::DangerInsecureTestSeeds { label } => {
                f.debug_struct("DangerInsecureTestSeeds").field("label", label).finish()
            }
        }
    }
}
