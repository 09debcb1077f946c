//! The two roles of a pair's signalling, step for step those of the SDK's `offer` and `answer`
//! (`web/src/rtc-signalling.ts`), so a native party and a browser agree on where frames go.

use super::peer::{self, Peer};
use super::signal::{unexpected, Signal, Signalling};
use super::{LinkKind, RtcOptions};
use crate::error::RelayError;

/// Why a pair of native parties keeps its relay link.
const NATIVE_PAIR: &str = "both parties are native: the pair keeps its relay link \
                           (--webrtc-between-natives opens a DataChannel)";

/// What one pair's signalling settled on.
pub(crate) enum Outcome {
    /// Frames go over this peer's DataChannel.
    Webrtc(Peer),
    /// Frames stay on the Noise link through the relay, for this reason.
    Relay(String),
}

fn relay_why(why: Option<String>, default: &str) -> String {
    why.unwrap_or_else(|| default.to_string())
}

/// The lower id: offers a channel, decides (`use`) once it opens or the time is up, and takes
/// the peer's confirmation (`ok`), which may still say relay.
pub(crate) async fn offer(sig: &mut Signalling<'_>, o: &RtcOptions) -> Result<Outcome, RelayError> {
    let peer = sig.peer;
    let (rtc, sdp) = match Peer::offer(peer, &o.bind).await {
        Ok(started) => started,
        Err(why) => {
            sig.finish(&Signal::Use { via: LinkKind::Relay, why: Some(why.clone()) })?;
            return match sig.next().await? {
                Signal::Ok { .. } => Ok(Outcome::Relay(why)),
                m => Err(unexpected(&m, peer, "instead of confirming the relay")),
            };
        }
    };
    sig.send(&Signal::Offer { sdp })?;
    // Reads the answer and candidates until the channel opens, fails or the time is up.
    let why = {
        let opened = rtc.open_within(o.open_timeout_ms);
        tokio::pin!(opened);
        loop {
            tokio::select! {
                r = &mut opened => break r.err(),
                m = sig.next() => match m? {
                    Signal::Answer { sdp } => rtc.accept_answer(sdp),
                    Signal::Ice { candidate } => rtc.add_candidate(&candidate),
                    Signal::NoRtc { why } => break Some(why),
                    m => return Err(unexpected(&m, peer, "out of turn")),
                },
            }
        }
    };
    let via = if why.is_none() { LinkKind::Webrtc } else { LinkKind::Relay };
    sig.finish(&Signal::Use { via, why: why.clone() })?;
    let (ok_via, ok_why) = loop {
        match sig.next().await? {
            Signal::Answer { sdp } => rtc.accept_answer(sdp),
            Signal::Ice { candidate } => rtc.add_candidate(&candidate),
            Signal::NoRtc { .. } => {}
            Signal::Ok { via, why } => break (via, why),
            m => return Err(unexpected(&m, peer, "out of turn")),
        }
    };
    Ok(match (why, ok_via) {
        (None, LinkKind::Webrtc) => Outcome::Webrtc(rtc),
        (why, _) => Outcome::Relay(relay_why(why.or(ok_why), "the peer kept the relay")),
    })
}

/// The higher id: answers the offer, and confirms the offerer's decision (`use`) once its own
/// end of the channel is open, or says relay.
pub(crate) async fn answer(
    sig: &mut Signalling<'_>,
    o: &RtcOptions,
) -> Result<Outcome, RelayError> {
    let peer = sig.peer;
    let mut rtc: Option<Peer> = None;
    let mut refused = false;
    loop {
        match sig.next().await? {
            Signal::Offer { sdp } if rtc.is_none() && !refused => {
                let started = if !o.between_natives && peer::made_by_str0m(&sdp) {
                    Err(NATIVE_PAIR.to_string())
                } else {
                    Peer::answer(peer, &o.bind, &sdp).await
                };
                match started {
                    Ok((p, answer)) => {
                        sig.send(&Signal::Answer { sdp: answer })?;
                        rtc = Some(p);
                    }
                    Err(why) => {
                        refused = true;
                        sig.send(&Signal::NoRtc { why })?;
                    }
                }
            }
            Signal::Ice { candidate } => {
                if let Some(p) = &rtc {
                    p.add_candidate(&candidate);
                }
            }
            Signal::Use { via, why } => {
                let why = match (via, &rtc) {
                    (LinkKind::Relay | LinkKind::Direct, _) => {
                        Some(relay_why(why, "the peer kept the relay"))
                    }
                    (LinkKind::Webrtc, Some(p)) => p.open_within(o.open_timeout_ms).await.err(),
                    (LinkKind::Webrtc, None) => Some("no channel on this side".into()),
                };
                let via = if why.is_none() { LinkKind::Webrtc } else { LinkKind::Relay };
                sig.finish(&Signal::Ok { via, why: why.clone() })?;
                return Ok(match (why, rtc) {
                    (None, Some(p)) => Outcome::Webrtc(p),
                    (why, _) => Outcome::Relay(relay_why(why, "no channel")),
                });
            }
            m => return Err(unexpected(&m, peer, "out of turn")),
        }
    }
}
