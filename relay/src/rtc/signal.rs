//! The WebRTC signalling messages of the SDK's `RtcTransport` (`web/src/rtc-signalling.ts`), as
//! JSON frames inside a pair's Noise link, and the channel that carries them.
//!
//! ```text
//! L → H   offer, ice*, use {via, why?}        `use` is L's last message: its decision
//! H → L   answer, ice*, ok {via, why?}        `ok` is H's last: H confirms, or says relay
//!         (no-rtc {why} instead of an answer when H cannot take part)
//! ```

use ringfence_core::net::PartyId;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::LinkKind;
use crate::error::RelayError;
use crate::link::{Link, Missed};

/// One signalling message.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t")]
pub(crate) enum Signal {
    /// L's session description.
    #[serde(rename = "offer")]
    Offer { sdp: String },
    /// H's session description.
    #[serde(rename = "answer")]
    Answer { sdp: String },
    /// A candidate (`RTCIceCandidate.toJSON()`: only its `candidate` line is used here).
    #[serde(rename = "ice")]
    Ice { candidate: serde_json::Map<String, serde_json::Value> },
    /// H takes no part in WebRTC.
    #[serde(rename = "no-rtc")]
    NoRtc { why: String },
    /// L's decision (its last message).
    #[serde(rename = "use")]
    Use {
        via: LinkKind,
        #[serde(skip_serializing_if = "Option::is_none")]
        why: Option<String>,
    },
    /// H's confirmation (its last message).
    #[serde(rename = "ok")]
    Ok {
        via: LinkKind,
        #[serde(skip_serializing_if = "Option::is_none")]
        why: Option<String>,
    },
}

impl Signal {
    /// The message's `t`, for errors.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Self::Offer { .. } => "offer",
            Self::Answer { .. } => "answer",
            Self::Ice { .. } => "ice",
            Self::NoRtc { .. } => "no-rtc",
            Self::Use { .. } => "use",
            Self::Ok { .. } => "ok",
        }
    }
}

/// Parses a peer's signalling frame.
pub(crate) fn parse(bytes: &[u8], peer: PartyId) -> Result<Signal, RelayError> {
    serde_json::from_slice(bytes).map_err(|e| {
        RelayError::signalling(
            peer,
            format!(
                "it sent something other than WebRTC signalling ({} bytes: {e}); every compute \
                 party must speak RtcTransport's signalling (the SDK's RtcTransport, or a native \
                 party with --webrtc)",
                bytes.len()
            ),
        )
    })
}

/// The error for a message that the protocol does not allow at this point.
pub(crate) fn unexpected(m: &Signal, peer: PartyId, when: &str) -> RelayError {
    RelayError::signalling(peer, format!("it sent a WebRTC \"{}\" {when}", m.kind()))
}

/// The signalling channel of one pair: JSON frames on its Noise link, read until `deadline`.
pub(crate) struct Signalling<'a> {
    pub(crate) peer: PartyId,
    link: &'a mut Link,
    deadline: Instant,
    finished: bool,
}

impl<'a> Signalling<'a> {
    pub(crate) fn new(link: &'a mut Link, deadline: Instant) -> Self {
        Self { peer: link.peer, link, deadline, finished: false }
    }

    /// Sends `m` unless this side already sent its last signalling message.
    pub(crate) fn send(&mut self, m: &Signal) -> Result<(), RelayError> {
        if self.finished {
            return Ok(());
        }
        let bytes = serde_json::to_vec(m)
            .map_err(|e| RelayError::signalling(self.peer, format!("encoding: {e}")))?;
        self.link.send(bytes).map_err(|e| {
            RelayError::signalling(self.peer, format!("the link ended during the signalling: {e}"))
        })
    }

    /// Sends this side's last signalling message: frames may follow it on the link.
    pub(crate) fn finish(&mut self, m: &Signal) -> Result<(), RelayError> {
        self.send(m)?;
        self.finished = true;
        Ok(())
    }

    /// The peer's next message (waiting until the pair's deadline). Cancel-safe.
    pub(crate) async fn next(&mut self) -> Result<Signal, RelayError> {
        let why = match self.link.recv_until(self.deadline).await {
            Ok(bytes) => return parse(&bytes, self.peer),
            Err(Missed::Ended(Some(e))) => {
                format!("the link ended during the WebRTC signalling: {e}")
            }
            Err(Missed::Ended(None)) => "the link ended during the WebRTC signalling".into(),
            Err(Missed::Late) => "it did not finish the WebRTC signalling in time".into(),
        };
        Err(RelayError::signalling(self.peer, why))
    }
}
