//! `--webrtc`: a compute party that takes part in the WebRTC signalling of the SDK's
//! `RtcTransport` ([`ringfence_relay::rtc`]), so a browser party's pair with it goes direct.

use std::net::IpAddr;

use clap::Args;
use ringfence_relay::rtc::{LinkKind, RtcOptions};
use ringfence_relay::TcpTransport;
use serde::{Deserialize, Serialize};

/// The WebRTC options of a compute party.
#[derive(Args, Clone, Debug, Default)]
pub(crate) struct WebrtcArgs {
    /// Take part in the WebRTC signalling of the SDK's RtcTransport with the other compute
    /// parties (every one of them must: browsers with RtcTransport, native parties with
    /// --webrtc), and move each pair with a browser whose DataChannel opens onto it. UDP is bound only on these
    /// addresses (comma-separated; without a value 127.0.0.1), which are the only candidates
    /// offered; `off` takes part in the signalling but keeps every pair on the relay. Needs
    /// --relay and Noise links.
    #[arg(long, value_name = "IP,...|off", num_args = 0..=1, default_missing_value = "127.0.0.1")]
    pub(crate) webrtc: Option<String>,
    /// How long a pair's DataChannel may take to open before the pair keeps the relay.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    pub(crate) webrtc_timeout_ms: u64,
    /// Accept DataChannels offered by native parties with a lower id too (by default a pair of
    /// native parties keeps its relay link, faster for bulk frames).
    #[arg(long, requires = "webrtc")]
    pub(crate) webrtc_between_natives: bool,
}

/// Where one pair's frames went, as the party reports it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub(crate) struct LinkReport {
    pub(crate) peer: u8,
    pub(crate) via: LinkKind,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) why: Option<String>,
}

impl WebrtcArgs {
    /// The options, or `None` without `--webrtc`.
    pub(crate) fn options(&self) -> Result<Option<RtcOptions>, String> {
        let Some(spec) = self.webrtc.as_deref() else { return Ok(None) };
        let bind = if spec.trim() == "off" {
            Vec::new()
        } else {
            spec.split(',')
                .map(|a| a.trim().parse::<IpAddr>().map_err(|e| format!("--webrtc {a}: {e}")))
                .collect::<Result<Vec<_>, _>>()?
        };
        Ok(Some(RtcOptions {
            bind,
            open_timeout_ms: self.webrtc_timeout_ms,
            between_natives: self.webrtc_between_natives,
        }))
    }

    /// Runs the signalling on `t` when `--webrtc` is given; returns where each pair went (and
    /// says so on stderr).
    pub(crate) async fn connect(
        &self,
        t: &mut TcpTransport,
    ) -> Result<Option<Vec<LinkReport>>, String> {
        let Some(o) = self.options()? else { return Ok(None) };
        let reports = t.connect_webrtc(&o).await.map_err(|e| e.to_string())?;
        let said: Vec<String> = reports.iter().map(ToString::to_string).collect();
        let links: Vec<LinkReport> = reports
            .into_iter()
            .map(|r| LinkReport { peer: r.peer.0, via: r.via, why: r.why })
            .collect();
        eprintln!(
            "ringfence P{}: links after the WebRTC signalling: {}",
            t.me().0,
            said.join(", ")
        );
        Ok(Some(links))
    }
}
