//! Browser-to-native WebRTC: a native compute party speaks the WebRTC signalling of the SDK's
//! `RtcTransport` inside its Noise links through the relay, and moves each pair whose
//! DataChannel opens onto it ([`TcpTransport::connect_webrtc`]).
//!
//! The signalling travels inside the pair's authenticated, encrypted Noise link, so the relay
//! can neither read nor swap the DTLS fingerprints in the SDP. The lower id of a pair offers
//! one ordered, reliable, negotiated DataChannel (id 0, label `ringfence`); a pair whose channel
//! does not open in time keeps its relay link, and both ends always agree (`use`/`ok`, see
//! `signal.rs`). The WebRTC side is str0m (sans-IO): the party binds UDP only on the addresses
//! it is given ([`RtcOptions::bind`]) and offers exactly those as host candidates; it gathers
//! nothing else (no other interface, no STUN or TURN).
//!
//! ```text
//!   Noise link through the relay:  offer/answer/ice/use/ok (JSON frames), then nothing
//!   DataChannel (DTLS, SCTP):       len (u32 LE) ‖ frame, in messages of at most 64 KiB
//! ```

mod pair;
mod peer;
mod signal;
#[cfg(fuzzing)]
pub(crate) use signal::parse as parse_signal;

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use tokio::time::Instant;

use crate::error::RelayError;
pub use crate::transport::{LinkKind, PairReport};
use crate::TcpTransport;
use pair::Outcome;
use signal::Signalling;

/// The WebRTC side of a native compute party.
#[derive(Clone, Debug)]
pub struct RtcOptions {
    /// The local addresses to bind UDP on (an ephemeral port each), offered to the peer as the
    /// only candidates. Empty: WebRTC is off, the party still takes part in the signalling and
    /// keeps every pair on the relay (as the SDK's `RTCPeerConnection: null`).
    pub bind: Vec<IpAddr>,
    /// How long a DataChannel may take to open before its pair keeps the relay (the SDK's
    /// `rtcTimeoutMs`).
    pub open_timeout_ms: u64,
    /// Accept DataChannels offered by other native (str0m) parties too (this side answers the
    /// parties with lower ids). Off by default: a pair of native parties keeps its relay link,
    /// which carries bulk frames several times faster than str0m's SCTP does here
    /// (BENCHMARKS.md), so WebRTC serves the pairs with a browser.
    pub between_natives: bool,
}

impl Default for RtcOptions {
    /// Loopback only, 10 s to open, pairs of native parties on the relay.
    fn default() -> Self {
        Self {
            bind: vec![IpAddr::V4(Ipv4Addr::LOCALHOST)],
            open_timeout_ms: 10_000,
            between_natives: false,
        }
    }
}

impl TcpTransport {
    /// Runs the SDK's `RtcTransport` signalling with every other compute party (ids 0–2) over
    /// the established links, and moves each pair whose DataChannel opens onto it; the others
    /// keep their links. Links to other participants (a client, ids from 3) are untouched. Call
    /// it right after connecting, before any frame: every compute peer must run the same
    /// signalling (the SDK's `RtcTransport`, or a native party calling this).
    ///
    /// Fails, for every pair, when a peer sends anything but signalling in the right order, or
    /// does not finish it within `open_timeout_ms` plus the receive timeout.
    pub async fn connect_webrtc(&mut self, o: &RtcOptions) -> Result<Vec<PairReport>, RelayError> {
        if self.security_name() != "noise-aesgcm" {
            return Err(RelayError::Config(
                "WebRTC needs Noise links: the signalling must be authenticated".into(),
            ));
        }
        let me = self.me();
        let deadline =
            Instant::now() + Duration::from_millis(o.open_timeout_ms) + self.recv_timeout();
        let parties = ringfence_core::net::Roster::THREE.n();
        let pairs = self.links_mut().iter_mut().take(parties).flatten().map(|link| async move {
            let mut sig = Signalling::new(link, deadline);
            let peer = sig.peer;
            let out = if me < peer {
                pair::offer(&mut sig, o).await
            } else {
                pair::answer(&mut sig, o).await
            };
            out.map(|out| (peer, out))
        });
        // The first failure ends every pair (their peers are dropped, which closes them).
        let outcomes = futures_util::future::try_join_all(pairs).await?;
        let mut reports = Vec::new();
        for (peer, out) in outcomes {
            reports.push(match out {
                Outcome::Webrtc(rtc) => {
                    self.use_link(peer, LinkKind::Webrtc, |seed, a| rtc.into_link(seed, a));
                    PairReport { peer, via: LinkKind::Webrtc, why: None }
                }
                Outcome::Relay(why) => PairReport { peer, via: LinkKind::Relay, why: Some(why) },
            });
        }
        Ok(reports)
    }
}
