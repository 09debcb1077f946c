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

use super::messages::REQUEST_WORDS;
use super::{Backend, Catalog, ModelInfo};
use crate::net::frame::{self, MAX_PAYLOAD};
use crate::net::{PartyId, RecvLimit, Roster};
use crate::ring::{Ring, Z64};

/// What a computing client (spdz2k's) may have sent a party beyond what it has read, once its
/// request is admitted: its largest legitimate message is an OT extension batch (a few MB),
/// and this bounds a hostile client's hold on a server's memory per session.
pub(super) const COMPUTING_CLIENT_LIMIT: RecvLimit =
    RecvLimit { max_frame: frame::HEADER_LEN + MAX_PAYLOAD, max_unread: 256 << 20 };

/// What a client may send a party before its request is admitted: the request alone.
pub fn request_limit() -> RecvLimit {
    RecvLimit::for_messages(&[REQUEST_WORDS * Z64::BYTES], MAX_PAYLOAD)
}

impl ModelInfo {
    /// Elements of each of the client's input messages to party `me` of `roster` for this
    /// request.
    pub(super) fn input_frames(&self, roster: Roster, me: PartyId) -> Vec<usize> {
        let values = self.batch.saturating_mul(self.input_len);
        self.backend.client_frames(roster, me, values)
    }
}

impl Catalog {
    /// The most a client may send party `me` of `roster` in any session this catalogue would
    /// admit: the request, or the largest input (a request of `max_batch` samples for the model
    /// with the longest input, on the family whose client sends the most), whichever is larger.
    /// What a server's memory must allow per client.
    pub fn client_limit(&self, roster: Roster, me: PartyId) -> RecvLimit {
        let longest = self.models.iter().map(|m| m.shape.input_len).max().unwrap_or(0);
        let values = self.max_batch.saturating_mul(longest);
        // A computing client is a party of a dishonest-majority roster (all but one may be
        // corrupt): its servers are the others. Otherwise the roster is the servers (rep3's
        // three and spdz2k's two servers with their client are both rosters of three).
        let computing_roster = roster.t() + 1 == roster.n();
        let computing = Backend::all()
            .filter(|b| {
                computing_roster
                    && b.client_computes()
                    && b.servers().contains(&roster.n().saturating_sub(1))
            })
            .map(|_| COMPUTING_CLIENT_LIMIT);
        Backend::all()
            .filter(|b| !computing_roster && b.servers().contains(&roster.n()))
            .map(|b| {
                let bytes: Vec<usize> = b
                    .client_frames(roster, me, values)
                    .into_iter()
                    .map(|e| e.saturating_mul(Z64::BYTES))
                    .collect();
                RecvLimit::for_messages(&bytes, MAX_PAYLOAD)
            })
            .chain(computing)
            .fold(request_limit(), RecvLimit::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::frame::HEADER_LEN;
    use crate::nn::{Dense, FixedPlan, Layer, Model, Output};

    fn catalog(max_batch: usize, inputs: &[usize]) -> Catalog {
        let mut c = Catalog::new(max_batch);
        for (k, &n) in inputs.iter().enumerate() {
            let model = Model {
                input_name: "x".into(),
                input_shape: vec![n],
                class_labels: None,
                dropped_transforms: vec![],
                input_range: None,
                layers: vec![Layer::Dense(Dense {
                    inputs: n,
                    outputs: 2,
                    weights: vec![0.5; 2 * n],
                    bias: vec![0.0; 2],
                })],
            };
            let plan = FixedPlan::<Z64>::new(&model, 13).unwrap();
            c.add(&format!("m{k}"), plan.shape(), None, Output::Logits);
        }
        c
    }

    #[test]
    fn before_its_request_is_admitted_a_client_may_send_only_the_request() {
        let l = request_limit();
        assert_eq!(l.max_frame, HEADER_LEN + REQUEST_WORDS * 8);
        assert_eq!(l.max_unread, l.max_frame);
    }

    #[test]
    fn the_largest_input_is_a_rep3_request_of_max_batch_samples_of_the_widest_model() {
        let l = catalog(4, &[10, 300, 7]).client_limit(Roster::THREE, PartyId(1));
        let bytes = 2 * 4 * 300 * 8;
        assert_eq!(l, RecvLimit { max_frame: HEADER_LEN + bytes, max_unread: HEADER_LEN + bytes });
        // An empty catalogue admits nothing: the request is all a client may send.
        assert_eq!(catalog(4, &[]).client_limit(Roster::THREE, PartyId(0)), request_limit());
    }

    /// A client that computes (spdz2k, with one or two servers) sends OT extension batches:
    /// its bound is the computing client's, whatever the catalogue's inputs.
    #[test]
    fn a_computing_client_may_send_an_ot_extension_batch() {
        for n in [2, 3] {
            let roster = Roster::new(n, n - 1).unwrap();
            let l = catalog(4, &[10, 300, 7]).client_limit(roster, PartyId(0));
            assert_eq!(l, COMPUTING_CLIENT_LIMIT, "{n} parties");
        }
    }

    #[test]
    fn among_five_servers_the_largest_input_is_rss_seeds_and_the_designated_share() {
        let roster = Roster::new(5, 2).unwrap();
        let access = crate::rss::Access::for_roster(roster).unwrap();
        let c = catalog(4, &[10, 300, 7]);
        let mut designated = 0;
        for me in roster.parties() {
            let held = access.held(me);
            let l = c.client_limit(roster, me);
            // Six shares held: their seeds (32 bytes each, but for the designated share,
            // which travels as its values).
            let (seeds, values) = match held.contains(&0) {
                true => (5 * 32, 4 * 300 * 8),
                false => (6 * 32, 0),
            };
            designated += usize::from(values > 0);
            let frames = 1 + usize::from(values > 0);
            assert_eq!(l.max_unread, seeds + values + frames * HEADER_LEN, "{me}");
        }
        assert_eq!(designated, 3, "t + 1 parties hold the designated share");
    }

    #[test]
    fn an_input_beyond_one_frame_is_counted_with_a_header_per_frame() {
        let l = RecvLimit::for_messages(&[2 * MAX_PAYLOAD + 8], MAX_PAYLOAD);
        assert_eq!(l.max_frame, HEADER_LEN + MAX_PAYLOAD);
        assert_eq!(l.max_unread, 2 * MAX_PAYLOAD + 8 + 3 * HEADER_LEN);
        // An empty message is still one frame.
        assert_eq!(RecvLimit::for_messages(&[0], MAX_PAYLOAD).max_unread, HEADER_LEN);
    }

    #[test]
    fn an_admitted_request_s_input_is_two_components_on_rep3_and_one_on_meteor() {
        let info = |backend| ModelInfo {
            input_len: 784,
            output_len: 10,
            frac_bits: 13,
            batch: 3,
            input_range: None,
            class_labels: None,
            backend,
            output: Output::Logits,
        };
        let three = |b| info(b).input_frames(Roster::THREE, PartyId(2));
        assert_eq!(three(Backend::Rep3), [2 * 3 * 784]);
        assert_eq!(three(Backend::Meteor), [3 * 784]);
    }
}
