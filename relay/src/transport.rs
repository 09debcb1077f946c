//! [`TcpTransport`]: the native [`Transport`] over TCP, with Noise-protected links.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use ringfence_core::net::{PartyId, RecvLimit, Roster, Transport, TransportError};
use ringfence_core::prg::Seed;
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;
use tokio::time::Instant;

use crate::config::TransportConfig;
use crate::direct::Router;
use crate::error::RelayError;
use crate::establish::{Acceptor, OwnedEnds, Plan};
use crate::link::{Allowance, Cut, Link};
use crate::ws::Mux;

/// How frames travel to a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkKind {
    /// A WebRTC DataChannel ([`TcpTransport::connect_webrtc`]).
    Webrtc,
    /// The Noise link through the relay.
    Relay,
    /// A direct TCP connection ([`TcpTransport::connect`], [`TcpTransport::connect_direct`]).
    Direct,
}

impl LinkKind {
    /// `"webrtc"`, `"relay"` or `"direct"` (the SDK names the first two so too).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Webrtc => "webrtc",
            Self::Relay => "relay",
            Self::Direct => "direct",
        }
    }
}

/// Where one pair's frames go after [`TcpTransport::connect_webrtc`] or
/// [`TcpTransport::connect_direct`], and why not on the link sought.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairReport {
    /// The other party.
    pub peer: PartyId,
    /// The link its frames use.
    pub via: LinkKind,
    /// Why the pair kept the relay (`None` when it moved).
    pub why: Option<String>,
}

impl std::fmt::Display for PairReport {
    /// `P1 direct`, or `P2 relay (why)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.peer, self.via.as_str())?;
        match &self.why {
            Some(why) => write!(f, " ({why})"),
            None => Ok(()),
        }
    }
}

/// Wire counters of one link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WireStats {
    /// Bytes written to the socket: handshake, record length prefixes, ciphertext and tags.
    pub bytes_sent: u64,
    /// Bytes read from the socket after the handshake.
    pub bytes_received: u64,
    /// The part of `bytes_sent` spent on the handshake.
    pub handshake_bytes_sent: u64,
}

/// A party's links to all its peers: direct TCP connections ([`TcpTransport::connect`]) or
/// virtual streams through a WebSocket relay ([`TcpTransport::connect_via_relay`]).
///
/// `send` queues the frame for the link's writer task and returns at once; `recv` waits for the
/// next frame from a peer for at most the configured `recv_timeout`. After a failure on a link,
/// `recv` from that peer keeps returning the same error.
pub struct TcpTransport {
    me: PartyId,
    links: Vec<Option<Link>>,
    recv_timeout: Duration,
    name: &'static str,
    /// The relay connection carrying the links, if they go through a relay.
    relay: Option<Mux>,
    /// Where each peer's frames go (see [`TcpTransport::connect_webrtc`]).
    via: Vec<LinkKind>,
    /// Relay links replaced by a DataChannel: kept open until `close`, so the peer sees them
    /// end with the session, as on every other link.
    parked: Vec<Link>,
    /// Shared by every link: ends them all once a peer is cut off for sending too much.
    cut: Cut,
}

impl core::fmt::Debug for TcpTransport {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TcpTransport")
            .field("me", &self.me)
            .field("security", &self.name)
            .field("recv_timeout", &self.recv_timeout)
            .finish_non_exhaustive()
    }
}

impl TcpTransport {
    /// Connects to every peer: dials the parties with higher ids, accepts the lower ones on
    /// `listener` (required unless this is party 0), authenticates every link, and starts the
    /// link tasks on the current tokio runtime.
    ///
    /// Connections on `listener` that fail their handshake are dropped and waited past; the
    /// call fails if the links are not all up within `connect_timeout`, naming the last refusal.
    pub async fn connect(
        cfg: TransportConfig,
        listener: Option<TcpListener>,
    ) -> Result<Self, RelayError> {
        Self::connect_from(cfg, listener.map(Acceptor::Listener), false).await
    }

    /// [`TcpTransport::connect`] through [`Router`]s: this party accepts the lower ids on its
    /// router (which serves other sessions on the same port too; required unless this is party
    /// 0) and dials the higher ids at theirs, naming the session before the handshake.
    pub async fn connect_routed(
        cfg: TransportConfig,
        router: Option<&Router>,
    ) -> Result<Self, RelayError> {
        let acceptor = router.map(|r| Acceptor::Routed(r.expect(cfg.session)));
        Self::connect_from(cfg, acceptor, true).await
    }

    async fn connect_from(
        cfg: TransportConfig,
        acceptor: Option<Acceptor>,
        routed: bool,
    ) -> Result<Self, RelayError> {
        cfg.validate()?;
        let (me, n) = (cfg.me, cfg.parties());
        let mut acceptor = match acceptor {
            Some(a) => a,
            None if me.index() == 0 => Acceptor::Nobody,
            None => return Err(RelayError::Config(format!("{me} needs a listener"))),
        };
        let plan = Plan {
            ends: Arc::new(OwnedEnds::of(&cfg)),
            addrs: cfg.addrs.clone(),
            routed,
            deadline: Instant::now() + cfg.connect_timeout,
            fail_fast: true,
            patient: true,
        };
        let dial: Vec<PartyId> = (me.index() + 1..n).map(|j| PartyId(j as u8)).collect();
        let accept: Vec<PartyId> = (0..me.index()).map(|j| PartyId(j as u8)).collect();
        let (done, last_rejected) = plan.establish(&dial, &accept, &mut acceptor, None).await;
        let cut = Cut::new();
        let mut links = Vec::with_capacity(n);
        let mut missing = Vec::new();
        for (j, slot) in done.into_iter().enumerate() {
            links.push(match slot {
                Some(Ok(h)) => Some(Link::spawn(h, Allowance::unlimited(&cut))),
                Some(Err(e)) => return Err(e),
                None => {
                    if j != me.index() {
                        missing.push(format!("P{j}"));
                    }
                    None
                }
            });
        }
        if !missing.is_empty() {
            return Err(RelayError::ConnectTimeout {
                missing: missing.join(", "),
                ms: cfg.connect_timeout.as_millis() as u64,
                last_rejected,
            });
        }
        Ok(Self::from_links(me, links, cfg.recv_timeout, cfg.security.name(), None, cut))
    }

    /// A transport over established links, whose allowances share `cut`.
    pub(crate) fn from_links(
        me: PartyId,
        links: Vec<Option<Link>>,
        recv_timeout: Duration,
        name: &'static str,
        relay: Option<Mux>,
        cut: Cut,
    ) -> Self {
        let kind = if relay.is_some() { LinkKind::Relay } else { LinkKind::Direct };
        let via = vec![kind; links.len()];
        Self { me, links, recv_timeout, name, relay, via, parked: Vec::new(), cut }
    }

    /// How long `recv` waits for a frame.
    pub fn recv_timeout(&self) -> Duration {
        self.recv_timeout
    }

    /// How frames travel to `peer`.
    pub fn via(&self, peer: PartyId) -> LinkKind {
        self.via.get(peer.index()).copied().unwrap_or(LinkKind::Relay)
    }

    /// The established links, by peer id (`None`: this party).
    pub(crate) fn links_mut(&mut self) -> &mut [Option<Link>] {
        &mut self.links
    }

    /// Replaces `peer`'s link by the `kind` of link that `make` builds from its seed and
    /// allowance (no limit; in this transport's session); the old link is parked until `close`.
    pub(crate) fn use_link(
        &mut self,
        peer: PartyId,
        kind: LinkKind,
        make: impl FnOnce(Seed, Arc<Allowance>) -> Link,
    ) {
        let allowance = Allowance::unlimited(&self.cut);
        let Some(slot) = self.links.get_mut(peer.index()) else { return };
        let Some(old) = slot.take() else { return };
        *slot = Some(make(old.seed.clone(), allowance));
        self.parked.push(old);
        self.via[peer.index()] = kind;
    }

    /// This party's id.
    pub fn me(&self) -> PartyId {
        self.me
    }

    /// `"noise-aesgcm"`, `"plain"` or `"plain-test-seeds"`.
    pub fn security_name(&self) -> &'static str {
        self.name
    }

    /// The pairwise PRG seed shared with `peer`: both ends of a link get the same seed, and
    /// different links get independent seeds.
    ///
    /// # Panics
    /// If `peer` is this party or not a party of the session (a caller bug).
    pub fn seed_with(&self, peer: PartyId) -> Seed {
        match self.links.get(peer.index()).and_then(Option::as_ref) {
            Some(l) => l.seed.clone(),
            None => panic!("{} has no link to {peer}", self.me),
        }
    }

    /// This compute party's `rep3` seeds: the pairwise seeds with its two neighbours (from the
    /// links) and a fresh private seed from the OS.
    ///
    /// # Panics
    /// If this party is not a compute party 0, 1 or 2 with links to the other two.
    pub fn rep3_seeds(&self) -> Result<ringfence_core::rep3::Rep3Seeds, RelayError> {
        let ring = Roster::THREE;
        Ok(ringfence_core::rep3::Rep3Seeds {
            prev: self.seed_with(ring.prev(self.me)),
            next: self.seed_with(ring.next(self.me)),
            own: crate::os_seed()?,
        })
    }

    /// Wire counters of the link to `peer` (zero for this party itself).
    pub fn wire_stats(&self, peer: PartyId) -> WireStats {
        let Some(l) = self.links.get(peer.index()).and_then(Option::as_ref) else {
            return WireStats::default();
        };
        let c = &l.counters;
        WireStats {
            bytes_sent: c.sent.load(Ordering::Relaxed),
            bytes_received: c.received.load(Ordering::Relaxed),
            handshake_bytes_sent: c.handshake_sent.load(Ordering::Relaxed),
        }
    }

    /// Bytes written to all sockets so far (handshakes included).
    pub fn wire_bytes_sent(&self) -> u64 {
        (0..self.links.len()).map(|j| self.wire_stats(PartyId(j as u8)).bytes_sent).sum()
    }

    /// Waits until every frame queued so far has been written to its socket (at most the
    /// receive timeout), e.g. to read exact wire counters after a measured region.
    pub async fn flushed(&self) -> Result<(), TransportError> {
        let wait = async {
            for l in self.links.iter().flatten() {
                l.flushed().await?;
            }
            Ok(())
        };
        match tokio::time::timeout(self.recv_timeout, wait).await {
            Ok(r) => r,
            Err(_) => Err(TransportError::Timeout(self.recv_timeout.as_millis() as u64)),
        }
    }

    /// Flushes every queued frame, closes the write side of every link and stops the tasks.
    ///
    /// Waits at most the receive timeout for the writers. Dropping the transport instead also
    /// flushes, in the background, as long as the runtime keeps running.
    pub async fn close(mut self) -> Result<(), RelayError> {
        let mut writers = Vec::new();
        for l in self.links.iter_mut().flatten().chain(self.parked.iter_mut()) {
            l.tx = None;
            if let Some(w) = l.writer.take() {
                writers.push((l.peer, w));
            }
        }
        let deadline = Instant::now() + self.recv_timeout;
        for (peer, w) in writers {
            if tokio::time::timeout_at(deadline, w).await.is_err() {
                let e = std::io::Error::from(std::io::ErrorKind::TimedOut);
                return Err(RelayError::io(format!("flushing queued frames to {peer}"), e));
            }
        }
        for l in self.links.iter().flatten().chain(&self.parked) {
            if let TransportError::Io(m) = l.writer_failure() {
                return Err(RelayError::io(m, std::io::Error::other("link writer failed")));
            }
        }
        // The link writers are done and dropped their relay senders: the relay writer sends
        // what is left and closes the WebSocket.
        self.links.iter_mut().flatten().chain(&mut self.parked).for_each(|l| l.writer = None);
        match self.relay.as_mut() {
            Some(mux) => mux.finish(deadline).await,
            None => Ok(()),
        }
    }

    fn link(&mut self, peer: PartyId) -> Result<&mut Link, TransportError> {
        let me = self.me;
        self.links
            .get_mut(peer.index())
            .and_then(Option::as_mut)
            .ok_or_else(|| TransportError::Io(format!("{me} has no link to {peer}")))
    }
}

impl Transport for TcpTransport {
    fn send(&mut self, to: PartyId, frame: Vec<u8>) -> Result<(), TransportError> {
        self.link(to)?.send(frame)
    }

    fn send_parts(
        &mut self,
        to: PartyId,
        header: &[u8],
        payload: &[u8],
    ) -> Result<(), TransportError> {
        self.link(to)?.send_parts(header, payload)
    }

    async fn recv(&mut self, from: PartyId) -> Result<Vec<u8>, TransportError> {
        let timeout = self.recv_timeout;
        let link = self.link(from)?;
        if let Some(e) = &link.failed {
            return Err(e.clone());
        }
        let err = match tokio::time::timeout(timeout, link.next()).await {
            Ok(Some(Ok(frame))) => return Ok(frame),
            Ok(Some(Err(e))) => e,
            Ok(None) => TransportError::Closed,
            Err(_) => TransportError::Timeout(timeout.as_millis() as u64),
        };
        link.failed = Some(err.clone());
        Err(err)
    }

    fn limit_recv(&mut self, from: PartyId, limit: RecvLimit) {
        if let Ok(link) = self.link(from) {
            link.allowance.set(limit);
        }
    }
}
