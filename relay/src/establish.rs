//! Establishing direct TCP links: dial some peers, accept others, run the handshake on each,
//! until every link is up or a deadline passes. [`TcpTransport::connect`] (every link direct)
//! and [`TcpTransport::connect_direct`] (server pairs moved off the relay) both run this loop.
//!
//! [`TcpTransport::connect`]: crate::TcpTransport::connect
//! [`TcpTransport::connect_direct`]: crate::TcpTransport::connect_direct

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ringfence_core::net::{PartyId, SessionId};
use ringfence_link::{LinkEnds, Security};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::config::TransportConfig;
use crate::direct::{preamble, Incoming};
use crate::error::RelayError;
use crate::handshake::{self, Handshaken};

/// Retry interval while a peer's listener is not up yet.
const DIAL_RETRY: Duration = Duration::from_millis(25);
/// Accepted connections in their handshake at once, at most; more wait in the listener's
/// backlog (or the router's queue) until one ends. Several, because a connection can stall
/// until its key confirmation (a replayed message 1 never confirms): the genuine dialer's
/// connection must find room beside it.
const CANDIDATES: usize = 4;
/// How long an accepted connection may take from its first byte to the key confirmation
/// (within the plan's deadline), so that stalled candidates make room.
const ACCEPT_HANDSHAKE: Duration = Duration::from_secs(5);

/// This party's side of every handshake, owned so that handshake tasks can hold it.
pub(crate) struct OwnedEnds {
    pub(crate) me: PartyId,
    pub(crate) session: SessionId,
    pub(crate) security: Security,
}

impl OwnedEnds {
    pub(crate) fn of(cfg: &TransportConfig) -> Self {
        Self { me: cfg.me, session: cfg.session, security: cfg.security.clone() }
    }

    fn ends(&self) -> LinkEnds<'_> {
        LinkEnds { me: self.me, session: self.session, security: &self.security }
    }
}

/// Where the connections of lower-id peers arrive.
pub(crate) enum Acceptor {
    /// Nobody dials this party (party 0).
    Nobody,
    /// A listener of this transport's own.
    Listener(TcpListener),
    /// The connections a [`Router`](crate::direct::Router) routed to this session.
    Routed(Incoming),
}

impl Acceptor {
    async fn next(&mut self) -> Result<TcpStream, RelayError> {
        let stream = match self {
            Self::Nobody => std::future::pending().await,
            Self::Listener(l) => {
                l.accept().await.map_err(|e| RelayError::io("accepting a peer", e))?.0
            }
            Self::Routed(r) => r.next().await?,
        };
        stream.set_nodelay(true).map_err(|e| RelayError::io("setting TCP_NODELAY", e))?;
        Ok(stream)
    }
}

/// The links to establish, and how.
pub(crate) struct Plan {
    pub(crate) ends: Arc<OwnedEnds>,
    /// Where each peer listens, by id (read for the dialled peers only).
    pub(crate) addrs: Vec<SocketAddr>,
    /// Name the session before the handshake (the peers accept on [`Router`]s).
    ///
    /// [`Router`]: crate::direct::Router
    pub(crate) routed: bool,
    pub(crate) deadline: Instant,
    /// Stop at the first failed dial (else every peer gets its own result).
    pub(crate) fail_fast: bool,
    /// Retry a refused dial until the deadline: the peer may not be listening yet. Without it a
    /// refused dial fails at once (a router is bound before its party joins any session).
    pub(crate) patient: bool,
}

type Dialed = (PartyId, Result<Handshaken<TcpStream>, RelayError>);

/// Per peer id: `None` (not attempted, or not up by the deadline), or the outcome.
pub(crate) type Slots = Vec<Option<Result<Handshaken<TcpStream>, RelayError>>>;

/// Peers that were to dial this party and said they gave up, with their reason: their slots
/// settle at once instead of waiting for the deadline.
pub(crate) type GaveUp = mpsc::UnboundedReceiver<(PartyId, String)>;

impl Plan {
    /// Dials `dial`, accepts `accept` on `acceptor`, and returns each peer's link or failure
    /// once all are settled or the deadline passes, with the reason of the last connection
    /// refused on the acceptor. An accepted connection counts only once its handshake is done,
    /// key confirmation included, and the first to get there takes the peer's slot: up to
    /// [`CANDIDATES`] run at once, each for at most [`ACCEPT_HANDSHAKE`], so a connection that
    /// stalls (a replayed handshake) cannot block the genuine one. Connections from anyone but
    /// `accept` (or a second one from the same peer) are refused and waited past; a peer named
    /// on `gave_up` is not waited for.
    pub(crate) async fn establish(
        &self,
        dial: &[PartyId],
        accept: &[PartyId],
        acceptor: &mut Acceptor,
        mut gave_up: Option<&mut GaveUp>,
    ) -> (Slots, Option<String>) {
        let mut done: Slots = (0..self.addrs.len()).map(|_| None).collect();
        let mut tasks: JoinSet<Dialed> = JoinSet::new();
        let mut candidates = JoinSet::new();
        for &peer in dial {
            let Some(&addr) = self.addrs.get(peer.index()) else {
                let e = RelayError::Config(format!("no address for {peer}"));
                done[peer.index()] = Some(Err(e));
                continue;
            };
            let (ends, how) = (
                self.ends.clone(),
                Dial { routed: self.routed, patient: self.patient, deadline: self.deadline },
            );
            tasks.spawn(async move { (peer, dial_peer(&ends, peer, addr, how).await) });
        }
        let mut last_rejected = None;
        let settled = |done: &Slots| dial.iter().chain(accept).all(|p| done[p.index()].is_some());
        while !settled(&done) {
            let accepting =
                accept.iter().any(|p| done[p.index()].is_none()) && candidates.len() < CANDIDATES;
            // A dial ends by itself at the deadline, with its own reason: wait for it rather
            // than racing it (the deadline alone only ends the wait for peers to dial in).
            let dialling = dial.iter().any(|p| done[p.index()].is_none());
            tokio::select! {
                acc = acceptor.next(), if accepting => match acc {
                    Ok(stream) => {
                        let ends = self.ends.clone();
                        let until = self.deadline.min(Instant::now() + ACCEPT_HANDSHAKE);
                        candidates.spawn(async move {
                            let shake = handshake::accept(ends.ends(), stream);
                            tokio::time::timeout_at(until, shake).await.unwrap_or_else(|_| {
                                let e = std::io::Error::from(std::io::ErrorKind::TimedOut);
                                Err(RelayError::io("an accepted connection's handshake", e))
                            })
                        });
                    }
                    Err(e) => {
                        // The acceptor is gone (a failed listener): no lower peer can arrive.
                        let why = e.to_string();
                        for p in accept {
                            done[p.index()].get_or_insert_with(|| {
                                Err(RelayError::io("accepting a peer", std::io::Error::other(why.clone())))
                            });
                        }
                    }
                },
                Some(joined) = tasks.join_next() => match joined {
                    Ok((peer, r)) => {
                        let failed = r.is_err();
                        done[peer.index()] = Some(r);
                        if failed && self.fail_fast {
                            break;
                        }
                    }
                    Err(e) => last_rejected = Some(format!("dialling task failed: {e}")),
                },
                Some(joined) = candidates.join_next() => match joined {
                    Ok(Ok(h)) => {
                        let peer = h.link.peer;
                        if !accept.contains(&peer) {
                            last_rejected = Some(format!("{peer} is not expected to connect here"));
                        } else if done[peer.index()].is_some() {
                            last_rejected = Some(format!("{peer} connected twice"));
                        } else {
                            done[peer.index()] = Some(Ok(h));
                        }
                    }
                    Ok(Err(e)) => last_rejected = Some(e.to_string()),
                    Err(e) => last_rejected = Some(format!("handshake task failed: {e}")),
                },
                Some((peer, why)) = async {
                    match gave_up.as_deref_mut() {
                        Some(g) => g.recv().await,
                        None => std::future::pending().await,
                    }
                } => {
                    if accept.contains(&peer) {
                        done[peer.index()].get_or_insert_with(|| Err(RelayError::handshake(peer, why)));
                    }
                }
                () = tokio::time::sleep_until(self.deadline), if !dialling || tasks.is_empty() => break,
            }
        }
        (done, last_rejected)
    }
}

/// How [`dial_peer`] dials (see [`Plan`]).
#[derive(Clone, Copy)]
struct Dial {
    routed: bool,
    patient: bool,
    deadline: Instant,
}

async fn dial_peer(
    ends: &OwnedEnds,
    peer: PartyId,
    addr: SocketAddr,
    Dial { routed, patient, deadline }: Dial,
) -> Result<Handshaken<TcpStream>, RelayError> {
    let timed_out = || {
        let e = std::io::Error::from(std::io::ErrorKind::TimedOut);
        RelayError::io(format!("dialling {peer} at {addr}"), e)
    };
    let mut stream = loop {
        match tokio::time::timeout_at(deadline, TcpStream::connect(addr)).await {
            Ok(Ok(s)) => break s,
            Ok(Err(e)) if !patient || Instant::now() + DIAL_RETRY >= deadline => {
                return Err(RelayError::io(format!("dialling {peer} at {addr}"), e))
            }
            Ok(Err(_)) => tokio::time::sleep(DIAL_RETRY).await,
            Err(_) => return Err(timed_out()),
        }
    };
    stream.set_nodelay(true).map_err(|e| RelayError::io("setting TCP_NODELAY", e))?;
    if routed {
        let p = preamble(ends.session);
        match tokio::time::timeout_at(deadline, stream.write_all(&p)).await {
            Ok(r) => r.map_err(|e| RelayError::io(format!("naming the session to {peer}"), e))?,
            Err(_) => return Err(timed_out()),
        }
    }
    match tokio::time::timeout_at(deadline, handshake::dial(ends.ends(), peer, stream)).await {
        Ok(r) => r,
        Err(_) => Err(RelayError::handshake(peer, "no answer before the connect deadline")),
    }
}
