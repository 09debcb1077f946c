//! One pair's WebRTC peer: a str0m [`Rtc`] driven by a task that owns it, its UDP sockets, and
//! the frame link over its negotiated DataChannel (the wire of the SDK's `rtc-channel.ts`).
//!
//! Wire, on one ordered reliable channel: a frame of `len` bytes travels as `len (u32 LE) ‖
//! frame`, cut into messages of at most [`CHUNK`] bytes; the receiver finds the frame ends from
//! the lengths.
//!
//! str0m is sans-IO: the driver reads the UDP sockets itself, feeds str0m datagrams and
//! timeouts, drains its output after every mutation (its contract), sends the datagrams, and
//! moves frames between the party's queues and the channel. Incoming frames wait in the driver
//! until the party's bounded queue has room, so a party that is not reading yet never stops the
//! connection's timers and acks.

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant as StdInstant};

use ringfence_core::net::frame::{HEADER_LEN, MAX_PAYLOAD};
use ringfence_core::net::{PartyId, TransportError};
use ringfence_core::prg::Seed;
use str0m::change::{SdpAnswer, SdpOffer, SdpPendingOffer};
use str0m::channel::{ChannelConfig, ChannelId, Reliability};
use str0m::net::{Protocol, Receive};
use str0m::{Candidate, Event, IceConnectionState, Input, Output, Rtc};
use tokio::io::ReadBuf;
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::link::{Allowance, Counters, Link, RECV_QUEUE};

/// Largest message sent: well below the 64 KiB every WebRTC implementation accepts, so the
/// window (below) fills in fine steps; SCTP fragments messages into datagrams anyway.
const CHUNK: usize = 16 << 10;
/// What the SCTP send buffer may hold; chunks wait in the driver beyond it.
const SCTP_BUFFER: usize = 4 << 20;
/// The least the driver lets the channel hold (queued in SCTP or in flight), and all it lets it
/// hold until the path's round-trip time is known: enough for a loopback or LAN path.
///
/// Why a window below [`SCTP_BUFFER`]: sctp-proto 0.10 walks its whole in-flight queue (a hash
/// lookup per chunk) several times whenever it is polled, i.e. for every datagram in or out,
/// so a datagram's CPU cost grows with the data in flight. Where nothing else bounds the window
/// (loopback without losses), 1 MiB in flight made a transfer several times slower than 128 KiB.
const MIN_WINDOW: usize = 128 << 10;
/// The rate (bytes/s) the window is sized for once the round-trip time is known: the window is
/// `WINDOW_RATE × smallest RTT`, between [`MIN_WINDOW`] and [`SCTP_BUFFER`], so a WAN path
/// still gets the window its round trip needs.
const WINDOW_RATE: f64 = 32e6;
/// How often str0m reports the ICE round-trip time (with its other statistics).
const STATS_INTERVAL: Duration = Duration::from_millis(500);
/// The UDP receive buffer asked of the kernel (it caps it at `net.core.rmem_max`). The default
/// (~208 KiB) overflows under one window of the peer's datagrams: every lost datagram costs
/// SCTP a retransmission, and a lost tail its 1 s minimum retransmission timeout.
const SOCKET_BUFFER: usize = 4 << 20;
/// The largest frame accepted from a peer (the core's largest frame).
const MAX_FRAME: usize = MAX_PAYLOAD + HEADER_LEN;
/// The label and stream id of the channel, as the SDK negotiates it.
const LABEL: &str = "ringfence";
const STREAM_ID: u16 = 0;
/// Largest UDP datagram read.
const DATAGRAM: usize = 2048;

/// Where the channel stands, as the signalling sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Not open yet.
    Connecting,
    /// Open: frames may flow.
    Open,
    /// Failed or closed before the signalling ended (why).
    Failed(String),
}

/// What the signalling asks of the driver.
enum Cmd {
    /// The answer to this side's offer.
    Answer(String),
    /// A remote candidate line.
    Candidate(String),
}

/// Aborts the peer's driver unless it became a [`Link`].
struct Task(Option<JoinHandle<()>>);

impl Drop for Task {
    fn drop(&mut self) {
        self.0.take().inspect(JoinHandle::abort);
    }
}

/// One pair's WebRTC peer connection, while the signalling runs; [`Peer::into_link`] makes it
/// the pair's frame link once both ends chose it. Dropping it closes the connection.
pub(crate) struct Peer {
    peer: PartyId,
    cmds: mpsc::UnboundedSender<Cmd>,
    state: watch::Receiver<State>,
    frames: mpsc::UnboundedSender<Vec<u8>>,
    delivered: mpsc::Receiver<Result<Vec<u8>, TransportError>>,
    counters: Arc<Counters>,
    writer_error: Arc<Mutex<Option<String>>>,
    driver: Task,
}

impl Peer {
    /// The offering side: binds `bind` and makes the offer (SDP with the host candidates).
    pub(crate) async fn offer(peer: PartyId, bind: &[IpAddr]) -> Result<(Self, String), String> {
        let mut d = Driver::new(peer, bind).await?;
        let mut api = d.rtc.sdp_api();
        let cid = api.add_channel_with_config(channel_config());
        let (offer, pending) = api.apply().ok_or("str0m made no offer")?;
        d.drain().map_err(|e| format!("making the offer: {e}"))?;
        d.cid = Some(cid);
        d.pending = Some(pending);
        Ok((Self::spawn(d), offer.to_sdp_string()))
    }

    /// The answering side: binds `bind` and answers `offer` (SDP with the host candidates).
    pub(crate) async fn answer(
        peer: PartyId,
        bind: &[IpAddr],
        offer: &str,
    ) -> Result<(Self, String), String> {
        let offer = SdpOffer::from_sdp_string(offer).map_err(|e| format!("the offer: {e}"))?;
        let mut d = Driver::new(peer, bind).await?;
        let answer = d.rtc.sdp_api().accept_offer(offer).map_err(|e| format!("the offer: {e}"))?;
        d.drain().map_err(|e| format!("answering: {e}"))?;
        d.cid = Some(d.rtc.direct_api().create_data_channel(channel_config()));
        d.drain().map_err(|e| format!("answering: {e}"))?;
        Ok((Self::spawn(d), answer.to_sdp_string()))
    }

    fn spawn(mut d: Driver) -> Self {
        let (cmds, cmd_rx) = mpsc::unbounded_channel();
        let (state_tx, state) = watch::channel(State::Connecting);
        let (frames, frame_rx) = mpsc::unbounded_channel();
        let (deliver_tx, delivered) = mpsc::channel(RECV_QUEUE);
        let (counters, writer_error) = (d.counters.clone(), d.writer_error.clone());
        let peer = d.peer;
        let driver =
            tokio::spawn(async move { d.run(cmd_rx, frame_rx, deliver_tx, state_tx).await });
        Self {
            peer,
            cmds,
            state,
            frames,
            delivered,
            counters,
            writer_error,
            driver: Task(Some(driver)),
        }
    }

    /// Applies the peer's answer (a refusal makes the state `Failed`).
    pub(crate) fn accept_answer(&self, sdp: String) {
        let _ = self.cmds.send(Cmd::Answer(sdp));
    }

    /// Adds a remote candidate from its signalled form; one this side cannot use (an mDNS
    /// name, a missing line) is skipped, as browsers do.
    pub(crate) fn add_candidate(&self, c: &serde_json::Map<String, serde_json::Value>) {
        if let Some(line) = c.get("candidate").and_then(serde_json::Value::as_str) {
            if !line.is_empty() {
                let _ = self.cmds.send(Cmd::Candidate(line.to_string()));
            }
        }
    }

    /// Resolves when the channel is open (`Ok`), fails (`Err(why)`), or after `ms`.
    pub(crate) fn open_within(
        &self,
        ms: u64,
    ) -> impl std::future::Future<Output = Result<(), String>> + 'static {
        let mut state = self.state.clone();
        async move {
            let wait = state.wait_for(|s| *s != State::Connecting);
            match tokio::time::timeout(std::time::Duration::from_millis(ms), wait).await {
                Err(_) => Err(format!("the DataChannel did not open within {ms} ms")),
                Ok(Ok(s)) if *s == State::Open => Ok(()),
                Ok(Ok(s)) => match &*s {
                    State::Failed(why) => Err(why.clone()),
                    _ => Err("the WebRTC connection ended".into()),
                },
                Ok(Err(_)) => Err("the WebRTC connection ended".into()),
            }
        }
    }

    /// The pair's frame link over the channel, with the pair's seed from its Noise link.
    pub(crate) fn into_link(mut self, seed: Seed, allowance: Arc<Allowance>) -> Link {
        let driver = self.driver.0.take();
        let Self { peer, frames, delivered, counters, writer_error, .. } = self;
        Link {
            peer,
            sealer: None,
            tx: Some(frames),
            queued: 0,
            rx: delivered,
            seed,
            counters,
            writer: driver,
            reader: None,
            writer_error,
            failed: None,
            // Frames are capped at MAX_FRAME by the driver; nothing else is held to it yet.
            allowance,
        }
    }
}

/// Whether `sdp` was made by str0m, i.e. by another native party (its origin line).
pub(crate) fn made_by_str0m(sdp: &str) -> bool {
    sdp.lines().any(|l| l.starts_with("o=str0m-"))
}

fn channel_config() -> ChannelConfig {
    ChannelConfig {
        label: LABEL.into(),
        ordered: true,
        reliability: Reliability::Reliable,
        negotiated: Some(STREAM_ID),
        protocol: String::new(),
    }
}

/// One bound UDP socket. Its address is kept: str0m names the socket of every datagram by it,
/// and asking the kernel each time costs a system call per datagram.
struct Bound {
    socket: UdpSocket,
    local: SocketAddr,
    /// Cleared when a read fails: the socket is not read again (the other sockets may still
    /// carry the connection).
    readable: bool,
}

/// A datagram read into the driver's buffer: which socket, from whom, how many bytes.
struct Datagram {
    socket: usize,
    from: SocketAddr,
    len: usize,
}

/// Reads the next datagram from any socket still readable into `buf` (pending while none is).
fn poll_datagram(
    sockets: &[Bound],
    buf: &mut [u8],
    cx: &mut Context<'_>,
) -> Poll<Result<Datagram, (usize, std::io::Error)>> {
    for (i, b) in sockets.iter().enumerate().filter(|(_, b)| b.readable) {
        let mut rb = ReadBuf::new(buf);
        match b.socket.poll_recv_from(cx, &mut rb) {
            Poll::Ready(Ok(from)) => {
                return Poll::Ready(Ok(Datagram { socket: i, from, len: rb.filled().len() }))
            }
            Poll::Ready(Err(e)) => return Poll::Ready(Err((i, e))),
            Poll::Pending => {}
        }
    }
    Poll::Pending
}

/// A frame being sent: its bytes and how much of its wire form (`len ‖ frame`) is out.
struct Outgoing {
    frame: Vec<u8>,
    sent: usize,
}

/// The task's state: the `Rtc` and everything between it and the party.
struct Driver {
    peer: PartyId,
    rtc: Rtc,
    sockets: Vec<Bound>,
    cid: Option<ChannelId>,
    pending: Option<SdpPendingOffer>,
    open: bool,
    outbox: VecDeque<Outgoing>,
    /// What the channel may hold before the driver waits for acks (see [`MIN_WINDOW`]).
    window: usize,
    /// The smallest ICE round-trip time reported (queueing during a transfer only adds to it).
    min_rtt: Option<Duration>,
    /// The frame being reassembled and how much of it arrived.
    partial: Option<(Vec<u8>, usize)>,
    /// Frames (or the link's end) waiting for room in the party's queue.
    inbox: VecDeque<Result<Vec<u8>, TransportError>>,
    /// The link's end once known: nothing more is read or delivered after it.
    ended: Option<TransportError>,
    counters: Arc<Counters>,
    writer_error: Arc<Mutex<Option<String>>>,
}

impl Driver {
    async fn new(peer: PartyId, bind: &[IpAddr]) -> Result<Self, String> {
        if bind.is_empty() {
            return Err("WebRTC is turned off on this party (no --webrtc address)".into());
        }
        let mut rtc = Rtc::builder()
            .set_sctp_max_buffered_amount(SCTP_BUFFER)
            .set_stats_interval(Some(STATS_INTERVAL))
            .build(StdInstant::now());
        let mut sockets = Vec::new();
        for ip in bind {
            let s =
                UdpSocket::bind((*ip, 0)).await.map_err(|e| format!("binding UDP on {ip}: {e}"))?;
            let addr = s.local_addr().map_err(|e| format!("UDP on {ip}: {e}"))?;
            // Best effort: a smaller buffer only costs retransmissions.
            let _ = socket2::SockRef::from(&s).set_recv_buffer_size(SOCKET_BUFFER);
            let c = Candidate::host(addr, "udp").map_err(|e| format!("candidate {addr}: {e}"))?;
            rtc.add_local_candidate(c);
            sockets.push(Bound { socket: s, local: addr, readable: true });
        }
        let mut d = Self {
            peer,
            rtc,
            sockets,
            cid: None,
            pending: None,
            open: false,
            outbox: VecDeque::new(),
            window: MIN_WINDOW,
            min_rtt: None,
            partial: None,
            inbox: VecDeque::new(),
            ended: None,
            counters: Arc::new(Counters::default()),
            writer_error: Arc::new(Mutex::new(None)),
        };
        d.drain().map_err(|e| format!("starting WebRTC: {e}"))?;
        Ok(d)
    }

    async fn run(
        &mut self,
        mut cmds: mpsc::UnboundedReceiver<Cmd>,
        mut frames: mpsc::UnboundedReceiver<Vec<u8>>,
        deliver: mpsc::Sender<Result<Vec<u8>, TransportError>>,
        state: watch::Sender<State>,
    ) {
        let (mut cmds_open, mut frames_open) = (true, true);
        let mut buf = vec![0u8; DATAGRAM];
        let result: Result<(), String> = async {
            loop {
                let timeout = self.drain()?;
                if self.open && *state.borrow() == State::Connecting {
                    state.send_replace(State::Open);
                }
                if let Some(e) = &self.ended {
                    if *state.borrow() == State::Connecting {
                        state.send_replace(State::Failed(e.to_string()));
                    }
                }
                self.flush()?;
                if !frames_open && self.outbox.is_empty() && self.sent_all() {
                    // The party is done (or never used the channel): close the channel, so the
                    // peer sees its end rather than a connection that goes silent.
                    if let Some(cid) = self.cid.filter(|_| self.open && self.ended.is_none()) {
                        self.rtc.direct_api().close_data_channel(cid);
                        self.drain()?;
                    }
                    return Ok(());
                }
                let timeout = tokio::time::Instant::from_std(timeout);
                let sockets = &self.sockets;
                tokio::select! {
                    d = std::future::poll_fn(|cx| poll_datagram(sockets, &mut buf, cx)) => match d {
                        Ok(d) => {
                            let local = self.sockets[d.socket].local;
                            // A datagram that is not STUN, DTLS or RTP is not for this peer.
                            if let Ok(r) = Receive::new(Protocol::Udp, d.from, local, &buf[..d.len]) {
                                let now = StdInstant::now();
                                self.rtc.handle_input(Input::Receive(now, r)).map_err(s)?;
                            }
                        }
                        Err((i, e)) => {
                            self.sockets[i].readable = false;
                            if self.sockets.iter().all(|b| !b.readable) {
                                return Err(format!("reading UDP on {}: {e}", self.sockets[i].local));
                            }
                        }
                    },
                    cmd = cmds.recv(), if cmds_open => match cmd {
                        Some(c) => self.command(c)?,
                        None => cmds_open = false,
                    },
                    f = frames.recv(), if frames_open => match f {
                        Some(frame) => self.outbox.push_back(Outgoing { frame, sent: 0 }),
                        None => frames_open = false,
                    },
                    permit = deliver.reserve(), if !self.inbox.is_empty() => match permit {
                        Ok(p) => p.send(self.inbox.pop_front().unwrap_or(Err(TransportError::Closed))),
                        // The party dropped the link: nobody reads any more.
                        Err(_) => self.inbox.clear(),
                    },
                    () = tokio::time::sleep_until(timeout) => {
                        self.rtc.handle_input(Input::Timeout(StdInstant::now())).map_err(s)?;
                    }
                }
            }
        }
        .await;
        // After the peer closed the channel, a failing connection loses nothing still due.
        let lost = self.ended.is_none() || !self.outbox.is_empty();
        if let (Err(why), true) = (result, lost) {
            let why = format!("WebRTC connection to {}: {why}", self.peer);
            if let Ok(mut slot) = self.writer_error.lock() {
                *slot = Some(why.clone());
            }
            state.send_replace(State::Failed(why.clone()));
            if self.ended.is_none() {
                let _ = deliver.try_send(Err(TransportError::Io(why)));
            }
        }
        self.rtc.disconnect();
        self.counters.progress.notify_one();
    }

    /// Whether everything written to the channel has left the SCTP buffer (or cannot any more).
    fn sent_all(&mut self) -> bool {
        match self.cid.and_then(|id| self.rtc.channel(id)) {
            Some(mut c) if self.open && self.ended.is_none() => c.buffered_amount() == 0,
            _ => true,
        }
    }

    fn command(&mut self, c: Cmd) -> Result<(), String> {
        match c {
            Cmd::Answer(sdp) => {
                let Some(pending) = self.pending.take() else { return Ok(()) };
                let answer =
                    SdpAnswer::from_sdp_string(&sdp).map_err(|e| format!("the answer: {e}"))?;
                self.rtc
                    .sdp_api()
                    .accept_answer(pending, answer)
                    .map_err(|e| format!("the answer: {e}"))
            }
            Cmd::Candidate(line) => {
                if let Ok(c) = Candidate::from_sdp_string(&line) {
                    self.rtc.add_remote_candidate(c);
                }
                Ok(())
            }
        }
    }

    /// Drains str0m's output: sends datagrams, handles events; returns the next timeout.
    fn drain(&mut self) -> Result<StdInstant, String> {
        loop {
            match self.rtc.poll_output().map_err(s)? {
                Output::Timeout(t) => return Ok(t),
                Output::Transmit(t) => {
                    if let Some(b) = self.sockets.iter().find(|b| b.local == t.source) {
                        // UDP: a datagram the kernel cannot take now is lost, and retransmitted.
                        let _ = b.socket.try_send_to(&t.contents, t.destination);
                    }
                }
                Output::Event(e) => self.event(e)?,
            }
        }
    }

    fn event(&mut self, e: Event) -> Result<(), String> {
        match e {
            Event::ChannelOpen(id, _) if Some(id) == self.cid => self.open = true,
            Event::ChannelData(d) if Some(d.id) == self.cid => {
                if !d.binary {
                    return Err(format!("{} sent a message that is not binary", self.peer));
                }
                self.counters.received.fetch_add(d.data.len() as u64, Ordering::Relaxed);
                self.receive(&d.data)?;
            }
            Event::ChannelClose(id) if Some(id) == self.cid => self.end(),
            Event::PeerStats(p) => {
                let rtt = p.selected_candidate_pair.and_then(|c| c.current_round_trip_time);
                if let Some(rtt) = rtt.filter(|r| self.min_rtt.is_none_or(|m| *r < m)) {
                    self.min_rtt = Some(rtt);
                    let bdp = (WINDOW_RATE * rtt.as_secs_f64()) as usize;
                    self.window = bdp.clamp(MIN_WINDOW, SCTP_BUFFER);
                }
            }
            Event::Closed => self.end(),
            // Once the peer closed the channel, its connection may go: nothing more is due.
            Event::IceConnectionStateChange(IceConnectionState::Disconnected)
                if self.ended.is_none() =>
            {
                return Err("ICE disconnected".into());
            }
            _ => {}
        }
        Ok(())
    }

    /// The peer closed the channel: what arrived is delivered, then the link's end.
    fn end(&mut self) {
        if self.ended.is_some() {
            return;
        }
        let e = match &self.partial {
            Some((f, filled)) => TransportError::Io(format!(
                "{} closed its link in the middle of a frame ({filled} of {} bytes)",
                self.peer,
                f.len()
            )),
            None => TransportError::Closed,
        };
        self.inbox.push_back(Err(e.clone()));
        self.ended = Some(e);
    }

    /// Reassembles frames from one message.
    fn receive(&mut self, mut rest: &[u8]) -> Result<(), String> {
        if self.ended.is_some() {
            return Ok(());
        }
        while !rest.is_empty() {
            let (mut frame, mut filled) = match self.partial.take() {
                Some(p) => p,
                None => {
                    let Some((len, tail)) = rest.split_first_chunk::<4>() else {
                        return Err(format!(
                            "{} sent a frame start of {} bytes",
                            self.peer,
                            rest.len()
                        ));
                    };
                    let len = u32::from_le_bytes(*len) as usize;
                    if len > MAX_FRAME {
                        return Err(format!(
                            "{} announced a frame of {len} bytes (limit {MAX_FRAME})",
                            self.peer
                        ));
                    }
                    rest = tail;
                    (vec![0u8; len], 0)
                }
            };
            let take = rest.len().min(frame.len() - filled);
            frame[filled..filled + take].copy_from_slice(&rest[..take]);
            filled += take;
            rest = &rest[take..];
            if filled == frame.len() {
                self.inbox.push_back(Ok(frame));
            } else {
                self.partial = Some((frame, filled));
            }
        }
        Ok(())
    }

    /// Hands queued chunks to the channel while it holds less than the window.
    fn flush(&mut self) -> Result<(), String> {
        let Some(cid) = self.cid.filter(|_| self.open && self.ended.is_none()) else {
            return Ok(());
        };
        while let Some(o) = self.outbox.front_mut() {
            let Some(mut channel) = self.rtc.channel(cid) else { return Ok(()) };
            if channel.buffered_amount() + CHUNK > self.window {
                return Ok(()); // acks make room
            }
            let wire_len = o.frame.len() + 4;
            let end = (o.sent + CHUNK).min(wire_len);
            let chunk: std::borrow::Cow<'_, [u8]> = if o.sent == 0 {
                let mut first = Vec::with_capacity(end);
                first.extend_from_slice(&(o.frame.len() as u32).to_le_bytes());
                first.extend_from_slice(&o.frame[..end - 4]);
                first.into()
            } else {
                (&o.frame[o.sent - 4..end - 4]).into()
            };
            if !channel.write(true, &chunk).map_err(s)? {
                return Ok(()); // the SCTP buffer is full: acks make room
            }
            self.counters.sent.fetch_add(chunk.len() as u64, Ordering::Relaxed);
            o.sent = end;
            if o.sent == wire_len {
                self.outbox.pop_front();
                self.counters.frames_written.fetch_add(1, Ordering::Release);
                self.counters.progress.notify_one();
            }
            self.drain()?;
        }
        Ok(())
    }
}

fn s(e: impl ToString) -> String {
    e.to_string()
}
