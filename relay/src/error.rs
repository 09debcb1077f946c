//! Errors of the native runtime.

use ringfence_core::net::PartyId;

/// A failure while setting up or running the native transport.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RelayError {
    /// The configuration is inconsistent (wrong number of keys, bad party id, bad hex).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A cryptographic primitive failed locally (key generation, cipher setup).
    #[error("crypto failure: {0}")]
    Crypto(String),
    /// A socket operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The connection to a peer could not be authenticated or was malformed.
    #[error("handshake with {peer} failed: {reason}")]
    Handshake {
        /// The peer at the other end (as claimed by it, or the one dialled).
        peer: PartyId,
        /// What went wrong.
        reason: String,
    },
    /// Some peers did not complete a handshake before the connect deadline.
    #[error("{missing} did not connect within {ms} ms{}", last_rejection(.last_rejected))]
    ConnectTimeout {
        /// The parties still missing, e.g. `[P0, P2]`.
        missing: String,
        /// The deadline in milliseconds.
        ms: u64,
        /// Why the last rejected connection attempt was refused, if any.
        last_rejected: Option<String>,
    },
    /// A peer's WebRTC signalling was malformed, out of order, or did not finish in time.
    #[error("WebRTC signalling with {peer} failed: {reason}")]
    Signalling {
        /// The peer at the other end.
        peer: PartyId,
        /// What went wrong.
        reason: String,
    },
}

fn last_rejection(r: &Option<String>) -> String {
    match r {
        Some(r) => format!(" (last rejected connection: {r})"),
        None => String::new(),
    }
}

impl From<ringfence_link::LinkError> for RelayError {
    fn from(e: ringfence_link::LinkError) -> Self {
        use ringfence_link::LinkError as L;
        match e {
            L::Config(m) => Self::Config(m),
            L::Handshake { peer, reason } => Self::Handshake { peer, reason },
            L::Crypto(m) => Self::Crypto(m),
            other => Self::Crypto(other.to_string()),
        }
    }
}

impl RelayError {
    /// Wraps an I/O error with what was being done.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io { context: context.into(), source }
    }

    /// A signalling failure with `peer`.
    pub(crate) fn signalling(peer: PartyId, reason: impl Into<String>) -> Self {
        Self::Signalling { peer, reason: reason.into() }
    }

    /// A handshake failure with `peer`.
    pub(crate) fn handshake(peer: PartyId, reason: impl Into<String>) -> Self {
        Self::Handshake { peer, reason: reason.into() }
    }
}
