//! The core's error type, grouped by who is to blame.

use crate::net::{FrameError, PartyId, TransportError};

/// Any failure of a core protocol. Peer-caused errors name the peer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A peer sent a frame that breaks the protocol (wrong session, step or size, garbage).
    #[error("{peer} misbehaved: {reason}")]
    PeerMisbehaved {
        /// The peer that sent the frame.
        peer: PartyId,
        /// What was wrong with it.
        reason: FrameError,
    },
    /// The link to a peer failed (closed, timed out, I/O or crypto failure).
    #[error("link to {peer} failed: {source}")]
    Transport {
        /// The peer at the other end.
        peer: PartyId,
        /// The transport's report.
        #[source]
        source: TransportError,
    },
    /// The caller used the API wrongly (mismatched lengths, wrong role); never caused by peer data.
    #[error("API misuse: {0}")]
    ApiMisuse(String),
    /// A text input (a circuit file) that does not parse or is inconsistent; `line` is 1-based.
    #[error("malformed input at line {line}: {reason}")]
    Malformed {
        /// The line where the problem was found.
        line: usize,
        /// What is wrong there.
        reason: String,
    },
    /// A value is outside the range its encoding supports (e.g. fixed point).
    #[error("value out of range: {0}")]
    OutOfRange(String),
    /// A preprocessing store has less material than the operation needs.
    #[error("preprocessing exhausted: {0}")]
    PreprocessingExhausted(String),
    /// A check of a malicious-secure scheme failed (a MAC, a triple, a view comparison): the
    /// session stops and releases nothing. `blame` names the party the evidence points to,
    /// where it points to one.
    #[error("protocol aborted{}: {reason}", blame.map(|p| format!(" (blaming {p})")).unwrap_or_default())]
    Abort {
        /// The party the failed check points to, if any.
        blame: Option<PartyId>,
        /// Which check failed.
        reason: String,
    },
    /// A participant declined a well-formed request (unknown model, limits), giving its reason.
    #[error("{peer} refused the request: {reason}")]
    Refused {
        /// Who refused (a compute party, or the client for a party's own refusal).
        peer: PartyId,
        /// Why.
        reason: String,
    },
}
