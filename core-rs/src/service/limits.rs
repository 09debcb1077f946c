//! What a client may send a compute party, derived from the request and the catalogue: the
//! bound a server gives its transport for the client's link ([`RecvLimit`]).
//!
//! A client sends each party two messages in a session: its request ([`REQUEST_WORDS`] words),
//! and once all three parties admitted it, its input (rep3: two components of `batch ×
//! input_len` elements; METEOR: one masked vector of as many). Before its request is admitted a
//! client may therefore have no more than the request unread at a party, and afterwards no more
//! than that request's input; [`serve`](super::serve) tells the transport both in turn, and a
//! server gives [`request_limit`] to the client's link when it makes it (before the session
//! starts). Anything beyond is cut off by the transport, so a client cannot make a party buffer
//! more than the largest input the catalogue allows ([`Catalog::client_limit`]).

use super::{Backend, Catalog, ModelInfo, REQUEST_WORDS};
use crate::net::frame::MAX_PAYLOAD;
use crate::net::RecvLimit;
use crate::ring::{Ring, Z64};

/// What a client may send a party before its request is admitted: the request alone.
pub fn request_limit() -> RecvLimit {
    RecvLimit::for_messages(&[REQUEST_WORDS * Z64::BYTES], MAX_PAYLOAD)
}

impl ModelInfo {
    /// Elements of the client's input message to each party for this request.
    pub(super) fn input_elems(&self) -> usize {
        let per_component = self.batch.saturating_mul(self.input_len);
        match self.backend {
            Backend::Rep3 => per_component.saturating_mul(2),
            Backend::Meteor => per_component,
        }
    }
}

impl Catalog {
    /// The most a client may send a party in any session this catalogue would admit: the
    /// request, or the largest input (a rep3 request of `max_batch` samples for the model with
    /// the longest input), whichever is larger. What a server's memory must allow per client.
    pub fn client_limit(&self) -> RecvLimit {
        let longest = self.models.iter().map(|m| m.shape.input_len).max().unwrap_or(0);
        let elems = self.max_batch.saturating_mul(longest).saturating_mul(2);
        let input = RecvLimit::for_messages(&[elems.saturating_mul(Z64::BYTES)], MAX_PAYLOAD);
        request_limit().max(input)
    }
}
