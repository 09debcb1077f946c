//! The line protocol between the parent `ringfence` process and its party processes: one JSON
//! object per line, parent → child on stdin, child → parent on stdout.
//!
//! ```text
//! parent → child   Setup { private_key, public_keys, session }   (the key travels on a pipe only)
//! child  → parent  Port { port }                                  (after binding 127.0.0.1:0)
//! parent → child   Peers { addrs }
//! child  → parent  Links {..}? then Pass {..} | Op {..} | Served {..} ... then Done, or Error { message }
//! ```
//!
//! A child exits when its stdin closes, so children never outlive their parent.

use serde::{Deserialize, Serialize};

/// Parent → child.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ToChild {
    /// Identity and session; `private_key` is `None` in insecure plain mode.
    Setup {
        private_key: Option<String>,
        public_keys: Vec<String>,
        session: String,
        /// Participants of the session: the 3 parties, plus a client (id 3) when 4.
        participants: u8,
    },
    /// Every party's listening address, indexed by party id.
    Peers { addrs: Vec<String> },
}

/// Child → parent.
#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum FromChild {
    /// The port the child listens on.
    Port { port: u16 },
    /// Figures of one benchmarked operation at this party.
    Op(OpReport),
    /// A benchmark run in sub-batches finished pass `pass` of `passes` of run `run` (0: the
    /// warm-up): progress, and a sign of life during runs longer than the parent's patience.
    Pass { run: usize, pass: usize, passes: usize },
    /// A session party's figures of the classification it served.
    Served(ServedReport),
    /// Where each pair's frames go after the WebRTC signalling (`--webrtc`).
    Links { links: Vec<crate::webrtc::LinkReport> },
    /// The party finished.
    Done,
    /// The party failed.
    Error { message: String },
}

/// One party's measurement of one operation.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub(crate) struct OpReport {
    pub(crate) op: String,
    pub(crate) n: usize,
    /// Extra shape information (matmul dimensions).
    pub(crate) shape: Option<String>,
    /// Mean wall time of one batched operation (after warm-up and a barrier).
    pub(crate) seconds: f64,
    /// Frame bytes sent per operation (`Ctx::stats`).
    pub(crate) frame_bytes: f64,
    /// Payload bytes (ring elements, no frame headers) sent per operation: what protocol cost
    /// models count.
    pub(crate) payload_bytes: f64,
    /// Socket bytes sent per operation (records, tags, length prefixes).
    pub(crate) wire_bytes: f64,
    /// Rounds per operation.
    pub(crate) rounds: f64,
    /// Preprocessing for the timed runs, if the operation needs any.
    pub(crate) setup_seconds: Option<f64>,
    pub(crate) setup_frame_bytes: Option<f64>,
    /// Inference, at the input owner: agreement with the reference runtime's classes.
    #[serde(default)]
    pub(crate) agreement: Option<f64>,
    /// A circuit run on given inputs, at P0: the first instance's output groups, in hex.
    #[serde(default)]
    pub(crate) outputs: Option<Vec<String>>,
}

/// One session party's figures of the classification it served (frame bytes it sent, per stage).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub(crate) struct ServedReport {
    pub(crate) setup_seconds: f64,
    pub(crate) setup_bytes: u64,
    pub(crate) online_seconds: f64,
    pub(crate) online_bytes: u64,
    pub(crate) online_rounds: u64,
}
