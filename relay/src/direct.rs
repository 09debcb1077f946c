//! Direct TCP links among server parties that meet through a relay.
//!
//! A client session joins the three server parties and the client through the relay. The
//! servers' links with each other can go straight between them instead: each server runs a
//! [`Router`] on its direct address, and [`TcpTransport::connect_direct`] moves every server
//! pair that can link directly onto a new TCP connection (Noise with the same keys and session
//! as its relay link), so the relay carries only the client's traffic. A pair that cannot link
//! (no address, a firewall, a peer without a router) keeps its relay link; both ends always
//! agree, and say why.
//!
//! A [`Router`] serves many sessions on one port: the dialer names the session in a 20-byte
//! preamble before the handshake, and the router hands the connection to whoever expects that
//! session ([`TcpTransport::connect_routed`] too: the servers' mesh of setup ahead of demand).
//! The preamble is not secret and proves nothing; the handshake that follows binds the session
//! id and both parties' identity keys, so a wrongly routed or forged connection fails there.
//!
//! ```text
//!   dialer → router   "rfd1" ‖ session id (16 bytes), then the link's handshake and records
//!   on each server pair's relay link (JSON frames, before any protocol frame):
//!     both  → {"t":"direct","can":bool}          can this side link directly with the peer
//!     both  → {"t":"direct-done","why":string?}  after the attempt (no why: it worked)
//! ```
//!
//! [`TcpTransport::connect_routed`]: crate::TcpTransport::connect_routed

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::join_all;
use ringfence_core::net::{PartyId, Roster, SessionId};
use ringfence_link::Security;
use serde::{Deserialize, Serialize};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::error::RelayError;
use crate::establish::{Acceptor, OwnedEnds, Plan};
use crate::link::Link;
use crate::transport::{LinkKind, PairReport};
use crate::TcpTransport;

const MAGIC: &[u8; 4] = b"rfd1";
const PREAMBLE_LEN: usize = MAGIC.len() + 16;
/// How long an arriving connection may take to name its session.
const NAMING: Duration = Duration::from_secs(5);
/// Connections still naming their session, at most (more are closed at once).
const NAMING_MAX: usize = 64;
/// A connection for a session nobody expects yet (its peer was quicker) is held this long…
const HOLD: Duration = Duration::from_secs(10);
/// … and at most this many are held (the oldest goes first).
const HELD_MAX: usize = 32;
/// Longest reason a peer may give for a pair keeping the relay.
const WHY_MAX: usize = 300;

/// The bytes a dialer sends before the handshake on a routed connection.
pub(crate) fn preamble(session: SessionId) -> [u8; PREAMBLE_LEN] {
    let mut p = [0u8; PREAMBLE_LEN];
    p[..MAGIC.len()].copy_from_slice(MAGIC);
    p[MAGIC.len()..].copy_from_slice(&session.0);
    p
}

type Waiting = HashMap<[u8; 16], mpsc::UnboundedSender<std::net::TcpStream>>;

#[derive(Default)]
struct Table {
    waiting: Waiting,
    held: VecDeque<([u8; 16], Instant, std::net::TcpStream)>,
}

/// One TCP port on which a server party accepts the direct links of many sessions, each
/// connection handed to the session it names.
///
/// ```no_run
/// # async fn f() -> Result<(), ringfence_relay::RelayError> {
/// let router = ringfence_relay::direct::Router::bind("127.0.0.1:7101".parse().unwrap()).await?;
/// // TcpTransport::connect_routed(cfg, &router) or transport.connect_direct(&DirectLinks { … })
/// # Ok(()) }
/// ```
pub struct Router {
    addr: SocketAddr,
    table: Arc<Mutex<Table>>,
    task: JoinHandle<()>,
}

impl core::fmt::Debug for Router {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Router").field("addr", &self.addr).finish_non_exhaustive()
    }
}

impl Router {
    /// Binds `addr` and starts accepting on the current tokio runtime (which must outlive the
    /// router's use; the connections are handed over to other runtimes as they come).
    pub async fn bind(addr: SocketAddr) -> Result<Self, RelayError> {
        let l = TcpListener::bind(addr)
            .await
            .map_err(|e| RelayError::io(format!("listening on {addr}"), e))?;
        let addr = l.local_addr().map_err(|e| RelayError::io("the listener's address", e))?;
        let table = Arc::new(Mutex::new(Table::default()));
        let task = tokio::spawn(serve(l, table.clone()));
        Ok(Self { addr, table, task })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The connections for `session` from now on (and any that arrived a little early), until
    /// the returned value is dropped.
    pub(crate) fn expect(&self, session: SessionId) -> Incoming {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut t = lock(&self.table);
        let held = std::mem::take(&mut t.held);
        for (s, at, stream) in held {
            if s == session.0 {
                let _ = tx.send(stream);
            } else {
                t.held.push_back((s, at, stream));
            }
        }
        t.waiting.insert(session.0, tx.clone());
        Incoming { session, rx, tx, table: self.table.clone() }
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn lock(t: &Mutex<Table>) -> std::sync::MutexGuard<'_, Table> {
    // A panic while holding the table cannot leave it inconsistent (single inserts/removes).
    t.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

async fn serve(l: TcpListener, table: Arc<Mutex<Table>>) {
    let naming = Arc::new(Semaphore::new(NAMING_MAX));
    loop {
        let (stream, _) = crate::listen::accept(&l, "direct-link router").await;
        let Ok(permit) = naming.clone().try_acquire_owned() else { continue };
        let table = table.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let mut stream = stream;
            let mut head = [0u8; PREAMBLE_LEN];
            let named = tokio::time::timeout(NAMING, stream.read_exact(&mut head)).await;
            if !matches!(named, Ok(Ok(_))) || &head[..MAGIC.len()] != MAGIC {
                return;
            }
            let mut session = [0u8; 16];
            session.copy_from_slice(&head[MAGIC.len()..]);
            if let Ok(stream) = stream.into_std() {
                route(&table, session, stream);
            }
        });
    }
}

fn route(table: &Mutex<Table>, session: [u8; 16], stream: std::net::TcpStream) {
    let mut t = lock(table);
    let stream = match t.waiting.get(&session) {
        Some(tx) => match tx.send(stream) {
            Ok(()) => return,
            Err(mpsc::error::SendError(stream)) => stream,
        },
        None => stream,
    };
    let now = Instant::now();
    while t.held.front().is_some_and(|(_, at, _)| now.duration_since(*at) > HOLD) {
        t.held.pop_front();
    }
    if t.held.len() >= HELD_MAX {
        t.held.pop_front();
    }
    t.held.push_back((session, now, stream));
}

/// The connections routed to one session.
pub(crate) struct Incoming {
    session: SessionId,
    rx: mpsc::UnboundedReceiver<std::net::TcpStream>,
    tx: mpsc::UnboundedSender<std::net::TcpStream>,
    table: Arc<Mutex<Table>>,
}

impl Incoming {
    /// The next connection, registered with the current runtime.
    pub(crate) async fn next(&mut self) -> Result<TcpStream, RelayError> {
        // `self.tx` keeps the channel open: this waits until a connection comes.
        let Some(s) = self.rx.recv().await else { return std::future::pending().await };
        TcpStream::from_std(s).map_err(|e| RelayError::io("taking a routed connection", e))
    }
}

impl Drop for Incoming {
    fn drop(&mut self) {
        let mut t = lock(&self.table);
        if t.waiting.get(&self.session.0).is_some_and(|tx| tx.same_channel(&self.tx)) {
            t.waiting.remove(&self.session.0);
        }
    }
}

/// What a server party needs to move its links with the other server parties off the relay
/// ([`TcpTransport::connect_direct`]).
#[derive(Debug)]
pub struct DirectLinks<'a> {
    /// The server parties' direct addresses, by id; empty: this party links nothing directly
    /// (it still tells its peers so).
    pub addrs: &'a [SocketAddr],
    /// Where this party accepts the lower ids (`None`: it accepts none).
    pub router: Option<&'a Router>,
    /// The session's keys: the same as its links through the relay.
    pub security: &'a Security,
    /// The session.
    pub session: SessionId,
    /// How long the direct connections may take before their pairs keep the relay.
    pub timeout: Duration,
}

/// One message of the exchange on a pair's relay link.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t")]
enum Exchange {
    /// Whether this side can link directly with the peer.
    #[serde(rename = "direct")]
    Can { can: bool },
    /// The attempt's result on this side: no reason means the link is up.
    #[serde(rename = "direct-done")]
    Done {
        #[serde(skip_serializing_if = "Option::is_none", default)]
        why: Option<String>,
    },
}

impl TcpTransport {
    /// Moves each link with another server party (ids 0–2) that both ends can link directly
    /// onto a direct TCP connection (dialled by the lower id at `addrs`, accepted by the higher
    /// id on its router), and reports where each pair's frames go. Call it right after
    /// connecting through the relay, before any protocol frame; every server party of the
    /// session must call it. Links to a client (ids from 3) are untouched.
    ///
    /// Fails only when a peer breaks the exchange (a malformed or missing message); a pair
    /// whose direct connection fails keeps its relay link.
    pub async fn connect_direct(
        &mut self,
        d: &DirectLinks<'_>,
    ) -> Result<Vec<PairReport>, RelayError> {
        let me = self.me();
        let incoming = d.router.map(|r| r.expect(d.session));
        let peers: Vec<PartyId> = Roster::THREE
            .parties()
            .filter(|p| *p != me && self.links_mut().get(p.index()).is_some_and(Option::is_some))
            .collect();
        let can = |p: PartyId| {
            if p > me {
                d.addrs.get(p.index()).is_some()
            } else {
                incoming.is_some()
            }
        };
        let deadline = Instant::now() + self.recv_timeout() + d.timeout;
        for &p in &peers {
            self.exchange_send(p, &Exchange::Can { can: can(p) })?;
        }
        let mut reports = Vec::new();
        let (mut dial, mut accept) = (Vec::new(), Vec::new());
        for &p in &peers {
            let theirs = match self.exchange_recv(p, deadline).await? {
                Exchange::Can { can } => can,
                Exchange::Done { .. } => return Err(out_of_turn(p)),
            };
            let why = match (can(p), theirs) {
                (true, true) => None,
                (false, _) if p > me => Some("this party has no direct address for it".into()),
                (false, _) => Some("this party takes no direct links".to_string()),
                (true, false) => Some("it takes no direct links".to_string()),
            };
            match why {
                None if p > me => dial.push(p),
                None => accept.push(p),
                Some(why) => {
                    reports.push(PairReport { peer: p, via: LinkKind::Relay, why: Some(why) })
                }
            }
        }
        let plan = Plan {
            ends: Arc::new(OwnedEnds { me, session: d.session, security: d.security.clone() }),
            addrs: d.addrs.to_vec(),
            routed: true,
            deadline: Instant::now() + d.timeout,
            fail_fast: false,
            patient: false,
        };
        let mut acceptor = incoming.map_or(Acceptor::Nobody, Acceptor::Routed);
        // While accepting, listen for the dialers' results: one that failed (a refused dial, a
        // handshake error) says so at once, and its pair need not wait out the timeout.
        let (gave_up_tx, mut gave_up) = mpsc::unbounded_channel();
        let dialers: Vec<(PartyId, &mut Link)> = self
            .links_mut()
            .iter_mut()
            .enumerate()
            .filter_map(|(i, l)| Some((PartyId(i as u8), l.as_mut()?)))
            .filter(|(p, _)| accept.contains(p))
            .collect();
        let listen = join_all(dialers.into_iter().map(|(p, link)| {
            let tx = gave_up_tx.clone();
            async move {
                let m = recv_exchange(p, link, deadline).await;
                if let Ok(Exchange::Done { why: Some(why) }) = &m {
                    let _ = tx.send((p, why.clone()));
                }
                (p, m)
            }
        }));
        drop(gave_up_tx);
        let ((mut done, last_rejected), heard) =
            tokio::join!(plan.establish(&dial, &accept, &mut acceptor, Some(&mut gave_up)), listen);
        let mut heard: HashMap<PartyId, _> = heard.into_iter().collect();
        let tried: Vec<PartyId> = dial.iter().chain(&accept).copied().collect();
        let mut mine = Vec::new();
        for &p in &tried {
            let why = match &done[p.index()] {
                Some(Ok(_)) => None,
                Some(Err(e)) => Some(e.to_string()),
                None => Some(format!(
                    "no direct connection within {} ms{}",
                    d.timeout.as_millis(),
                    last_rejected
                        .as_ref()
                        .map(|r| format!(" (last refused: {r})"))
                        .unwrap_or_default()
                )),
            };
            self.exchange_send(p, &Exchange::Done { why: why.clone() })?;
            mine.push(why);
        }
        for (&p, why) in tried.iter().zip(mine) {
            let theirs = match heard.remove(&p) {
                Some(m) => m?,
                None => self.exchange_recv(p, deadline).await?,
            };
            let theirs = match theirs {
                Exchange::Done { why } => why,
                Exchange::Can { .. } => return Err(out_of_turn(p)),
            };
            let theirs = theirs.map(|w| format!("{p}: {}", truncate(&w)));
            // The dialer's reason says more than the acceptor's "nothing came".
            let why = if p < me { theirs.or(why) } else { why.or(theirs) };
            match (why, done[p.index()].take()) {
                (None, Some(Ok(h))) => {
                    self.use_link(p, LinkKind::Direct, |seed, allowance| {
                        let mut link = Link::spawn(h, allowance);
                        link.seed = seed;
                        link
                    });
                    reports.push(PairReport { peer: p, via: LinkKind::Direct, why: None });
                }
                (why, _) => reports.push(PairReport {
                    peer: p,
                    via: LinkKind::Relay,
                    why: Some(why.unwrap_or_else(|| "no link".into())),
                }),
            }
        }
        reports.sort_by_key(|r| r.peer);
        Ok(reports)
    }

    fn exchange_send(&mut self, p: PartyId, m: &Exchange) -> Result<(), RelayError> {
        let bytes = serde_json::to_vec(m).map_err(|e| RelayError::Config(e.to_string()))?;
        let link = self.links_mut()[p.index()].as_mut().ok_or_else(|| no_link(p))?;
        link.send(bytes).map_err(|e| {
            RelayError::handshake(p, format!("its relay link ended before the direct link: {e}"))
        })
    }

    async fn exchange_recv(
        &mut self,
        p: PartyId,
        deadline: Instant,
    ) -> Result<Exchange, RelayError> {
        let link = self.links_mut()[p.index()].as_mut().ok_or_else(|| no_link(p))?;
        recv_exchange(p, link, deadline).await
    }
}

/// The next message of the exchange from `p` on its relay link.
async fn recv_exchange(
    p: PartyId,
    link: &mut Link,
    deadline: Instant,
) -> Result<Exchange, RelayError> {
    let bytes = link
        .recv_until(deadline)
        .await
        .map_err(|e| RelayError::handshake(p, format!("while agreeing on a direct link: {e}")))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        RelayError::handshake(
            p,
            format!(
                "it sent something other than the direct-link exchange ({} bytes: {e}); \
                     every server party of a session must be a `ringfence party` of this version",
                bytes.len()
            ),
        )
    })
}

fn no_link(p: PartyId) -> RelayError {
    RelayError::Config(format!("no link to {p}"))
}

fn out_of_turn(p: PartyId) -> RelayError {
    RelayError::handshake(p, "it sent a direct-link message out of turn")
}

fn truncate(s: &str) -> &str {
    match s.char_indices().nth(WHY_MAX) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}
