//! The native client: [`TcpTransport::connect_via_relay`] joins a session through a relay and
//! returns the same transport as a direct TCP connection (same links, record layer, seeds,
//! counters and `close`).
//!
//! One WebSocket carries every link. A reader task demultiplexes `[from] ‖ payload` messages
//! into per-peer inboxes; a writer task sends the queued `[to] ‖ payload` messages and, once
//! every link's writer is done, closes the WebSocket.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use ringfence_core::net::frame::{HEADER_LEN, MAX_PAYLOAD};
use ringfence_core::net::{PartyId, RecvLimit, SessionId, TransportError};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::path::{Invite, RelayPath};
use super::stream::{inbox, peer_stream, Inbound, Inbox, InboxTx, Outbox};
use crate::config::{Security, DEFAULT_CONNECT_TIMEOUT, DEFAULT_RECV_TIMEOUT};
use crate::error::RelayError;
use ringfence_link::LinkEnds;

use crate::handshake;
use crate::link::{Allowance, Counters, Cut, Link, RECV_QUEUE};
use crate::TcpTransport;

/// Largest payload of one relay message carrying record-stream bytes (Noise and plain modes).
const STREAM_CHUNK: usize = 64 << 10;

/// Everything a party needs to join a session through a relay.
#[derive(Clone, Debug)]
pub struct RelayLinkConfig {
    /// The relay's base URL, e.g. `ws://127.0.0.1:9000` (the session path is appended).
    pub url: String,
    /// This party's id.
    pub me: PartyId,
    /// Number of parties in the session.
    pub parties: u8,
    /// Link protection, end to end between the parties (the relay sees only its output).
    pub security: Security,
    /// The session; bound into every handshake.
    pub session: SessionId,
    /// How long `recv` waits for a frame before failing with `Timeout`.
    pub recv_timeout: Duration,
    /// How long connecting to the relay and authenticating every link may take.
    pub connect_timeout: Duration,
    /// The relay's largest message (`RelayLimits::max_message`): in `plain-test-seeds` mode a
    /// frame travels in one message, so larger frames fail to send.
    pub max_message: usize,
    /// Bytes from one peer that may wait unread before its link fails.
    pub max_unread: usize,
    /// Peers held to a smaller [`RecvLimit`] from the moment their link is made (e.g. an
    /// untrusted client, see [`ringfence_core::service::request_limit`]); the protocol may
    /// change it later ([`Transport::limit_recv`](ringfence_core::net::Transport)). Other
    /// peers: [`RecvLimit::NONE`] and `max_unread`.
    pub recv_limits: Vec<(PartyId, RecvLimit)>,
    /// The join token, when the relay requires one (see [`crate::token`]).
    pub token: Option<String>,
    /// Opening a session with a deployment's server parties: the relay invites them (set by
    /// [`RelayLinkConfig::inviting`]).
    pub invite: Option<Invite>,
}

impl RelayLinkConfig {
    /// A configuration with the default timeouts and the relay's default message limit.
    ///
    /// ```no_run
    /// use ringfence_core::net::{Ctx, PartyId, SessionId};
    /// use ringfence_relay::{Security, TcpTransport, ws::RelayLinkConfig};
    /// # async fn f(security: Security) -> Result<(), ringfence_relay::RelayError> {
    /// let session = SessionId([7; 16]);
    /// let cfg = RelayLinkConfig::new("ws://127.0.0.1:9000", PartyId(1), 3, security, session);
    /// let transport = TcpTransport::connect_via_relay(cfg).await?;
    /// let ctx = Ctx::new(PartyId(1), 3, session, transport);
    /// # let _ = ctx; Ok(()) }
    /// ```
    pub fn new(
        url: impl Into<String>,
        me: PartyId,
        parties: u8,
        security: Security,
        session: SessionId,
    ) -> Self {
        Self {
            url: url.into(),
            me,
            parties,
            security,
            session,
            recv_timeout: DEFAULT_RECV_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            max_message: super::RelayLimits::default().max_message,
            max_unread: 2 * (MAX_PAYLOAD + HEADER_LEN) + (1 << 20),
            recv_limits: Vec::new(),
            token: None,
            invite: None,
        }
    }

    /// Makes this party the client of a session with `deployment`'s server parties: joining
    /// invites them (they wait in the relay's lobby), and they learn this party's Noise public
    /// key from the invitation. Needs Noise security.
    pub fn inviting(mut self, deployment: &str) -> Result<Self, RelayError> {
        let Security::Noise { keypair, .. } = &self.security else {
            return Err(RelayError::Config("inviting a deployment needs Noise links".into()));
        };
        let client_key = keypair.public.to_hex();
        self.invite = Some(Invite { deployment: deployment.to_string(), client_key });
        Ok(self)
    }

    fn validate(&self) -> Result<(), RelayError> {
        let bad = |m: String| Err(RelayError::Config(m));
        if self.parties < 2 || self.me.0 >= self.parties {
            return bad(format!("{} in a session of {} parties", self.me, self.parties));
        }
        if self.max_message < 2 {
            return bad("max_message must be at least 2".into());
        }
        if let Security::Noise { keypair, public_keys } = &self.security {
            if public_keys.len() != usize::from(self.parties)
                || public_keys[self.me.index()] != keypair.public
            {
                return bad(format!(
                    "Noise needs {} public keys, this party's own at index {}",
                    self.parties, self.me.0
                ));
            }
        }
        Ok(())
    }
}

/// The relay connection's tasks, owned by the transport.
pub(crate) struct Mux {
    writer: Option<JoinHandle<Result<(), String>>>,
    reader: JoinHandle<()>,
}

impl Mux {
    /// Waits until the writer has sent everything and closed the WebSocket (it does once
    /// every link writer is gone).
    pub(crate) async fn finish(&mut self, deadline: Instant) -> Result<(), RelayError> {
        let Some(w) = self.writer.take() else { return Ok(()) };
        match tokio::time::timeout_at(deadline, w).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(e))) => Err(RelayError::io("closing the relay connection", io_other(e))),
            Ok(Err(e)) => Err(RelayError::io("relay writer task", io_other(e.to_string()))),
            Err(_) => Err(RelayError::io(
                "flushing to the relay",
                std::io::Error::from(std::io::ErrorKind::TimedOut),
            )),
        }
    }
}

impl Drop for Mux {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

fn io_other(e: String) -> std::io::Error {
    std::io::Error::other(e)
}

impl TcpTransport {
    /// Joins `cfg.session` through the relay at `cfg.url` and sets up a link to every other
    /// party over that one WebSocket: Noise KK (or the insecure modes) end to end, exactly as
    /// [`TcpTransport::connect`] does over direct TCP connections.
    pub async fn connect_via_relay(cfg: RelayLinkConfig) -> Result<Self, RelayError> {
        cfg.validate()?;
        let deadline = Instant::now() + cfg.connect_timeout;
        let path = RelayPath {
            token: cfg.token.clone(),
            invite: cfg.invite.clone(),
            ..RelayPath::new(cfg.session, cfg.me, cfg.parties, cfg.security.name())
        };
        let ws_cfg = WebSocketConfig::default()
            .max_message_size(Some(cfg.max_message))
            .max_frame_size(Some(cfg.max_message));
        let ws = open_ws(&cfg.url, &path.to_string(), ws_cfg, deadline).await?;
        let (mut sink, mut stream) = ws.split();
        let (out, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let writer = tokio::spawn(async move {
            while let Some(m) = out_rx.recv().await {
                sink.send(Message::Binary(m.into())).await.map_err(|e| e.to_string())?;
            }
            sink.send(Message::Close(None)).await.map_err(|e| e.to_string())?;
            Ok(())
        });
        let (me, n) = (cfg.me, usize::from(cfg.parties));
        let cut = Cut::new();
        let allowances: Vec<Arc<Allowance>> = (0..n)
            .map(|j| {
                let limit = cfg.recv_limits.iter().find(|(p, _)| p.index() == j);
                Allowance::new(limit.map_or(RecvLimit::NONE, |&(_, l)| l), &cut)
            })
            .collect();
        let (txs, mut inboxes): (Vec<InboxTx>, Vec<Option<Inbox>>) = allowances
            .iter()
            .enumerate()
            .map(|(j, a)| inbox(PartyId(j as u8), cfg.max_unread, a.clone()))
            .map(|(t, r)| (t, Some(r)))
            .unzip();
        let reader = tokio::spawn(async move {
            let fail = |e: String| txs.iter().for_each(|t| t.push(Inbound::Failed(e.clone())));
            loop {
                match stream.next().await {
                    Some(Ok(Message::Binary(b))) => {
                        let from = usize::from(b.first().copied().unwrap_or(u8::MAX));
                        if from >= n || from == me.index() {
                            return fail(format!("the relay sent a message from P{from}"));
                        }
                        let item = if b.len() == 1 {
                            Inbound::End
                        } else {
                            Inbound::Data(b[1..].to_vec())
                        };
                        txs[from].push(item);
                    }
                    // A reason means the relay closed the session (a server party refused its
                    // invitation, idle, a full queue): the links fail with it, not a bare end.
                    Some(Ok(Message::Close(Some(f)))) if !f.reason.is_empty() => {
                        return fail(format!("the relay closed the session: {}", f.reason));
                    }
                    Some(Ok(Message::Close(_))) | None => {
                        return txs.iter().for_each(|t| t.push(Inbound::End));
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return fail(format!("relay connection: {e}")),
                }
            }
        });
        let mux = Mux { writer: Some(writer), reader };
        let mut links: Vec<Option<Link>> = (0..n).map(|_| None).collect();
        match &cfg.security {
            Security::DangerInsecureTestSeeds { label } => {
                for j in (0..n).filter(|&j| j != me.index()) {
                    let peer = PartyId(j as u8);
                    let seed = Security::insecure_test_seed(label, me, peer);
                    let inbox = inboxes[j].take().ok_or_else(|| unreachable_inbox(peer))?;
                    let (out, allowance) = (out.clone(), allowances[j].clone());
                    links[j] = Some(raw_link(peer, seed, inbox, out, cfg.max_message, allowance));
                }
            }
            security => {
                let ends = LinkEnds { me, session: cfg.session, security };
                let mut pending = Vec::new();
                for j in (0..n).filter(|&j| j != me.index()) {
                    let peer = PartyId(j as u8);
                    let inbox = inboxes[j].take().ok_or_else(|| unreachable_inbox(peer))?;
                    let s = peer_stream(peer.0, inbox, out.clone(), STREAM_CHUNK);
                    pending.push(async move {
                        let h = if me < peer {
                            handshake::dial(ends, peer, s).await?
                        } else {
                            handshake::accept(ends, s).await?
                        };
                        if h.link.peer != peer {
                            let why =
                                format!("{peer}'s relay link carries a hello from {}", h.link.peer);
                            return Err(RelayError::handshake(peer, why));
                        }
                        Ok(h)
                    });
                }
                let all = futures_util::future::try_join_all(pending);
                let done = match tokio::time::timeout_at(deadline, all).await {
                    Ok(r) => r?,
                    Err(_) => {
                        return Err(RelayError::ConnectTimeout {
                            missing: "some peers".into(),
                            ms: cfg.connect_timeout.as_millis() as u64,
                            last_rejected: None,
                        })
                    }
                };
                for h in done {
                    let j = h.link.peer.index();
                    links[j] = Some(Link::spawn(h, allowances[j].clone()));
                }
            }
        }
        // Every link holds its own sender; the writer closes the WebSocket when they are gone.
        drop(out);
        Ok(Self::from_links(me, links, cfg.recv_timeout, cfg.security.name(), Some(mux), cut))
    }
}

/// Opens the WebSocket `base` + `path` before `deadline`. Errors name the relay and its
/// reason for a refusal, never the query (it may hold a token).
pub(crate) async fn open_ws(
    base: &str,
    path: &str,
    ws_cfg: WebSocketConfig,
    deadline: Instant,
) -> Result<WebSocketStream<MaybeTlsStream<TcpStream>>, RelayError> {
    use tokio_tungstenite::tungstenite::Error as WsError;
    let url = format!("{}{path}", base.trim_end_matches('/'));
    let shown = url.split_once('?').map_or(url.as_str(), |(u, _)| u);
    let connect = tokio_tungstenite::connect_async_with_config(url.as_str(), Some(ws_cfg), true);
    match tokio::time::timeout_at(deadline, connect).await {
        Ok(Ok((ws, _))) => Ok(ws),
        Ok(Err(WsError::Http(resp))) => {
            let why = resp.body().as_deref().map(String::from_utf8_lossy).unwrap_or_default();
            Err(RelayError::Config(format!("the relay refused {shown}: {} {why}", resp.status())))
        }
        Ok(Err(e)) => Err(RelayError::Config(format!("joining the relay at {shown}: {e}"))),
        Err(_) => {
            let e = std::io::Error::from(std::io::ErrorKind::TimedOut);
            Err(RelayError::io(format!("connecting to the relay at {shown}"), e))
        }
    }
}

fn unreachable_inbox(peer: PartyId) -> RelayError {
    RelayError::Config(format!("internal: no inbox for {peer}"))
}

/// A link carrying one frame per relay message (`plain-test-seeds`): no records, no handshake.
fn raw_link(
    peer: PartyId,
    seed: ringfence_core::prg::Seed,
    mut inbox: Inbox,
    out: Outbox,
    max_message: usize,
    allowance: Arc<Allowance>,
) -> Link {
    let counters = Arc::new(Counters::default());
    let (tx, mut frames) = mpsc::unbounded_channel::<Vec<u8>>();
    let (frame_tx, rx) = mpsc::channel(RECV_QUEUE);
    let writer_error = Arc::new(std::sync::Mutex::new(None));
    let (c, err) = (counters.clone(), writer_error.clone());
    let writer = tokio::spawn(async move {
        while let Some(f) = frames.recv().await {
            if f.len() + 1 > max_message {
                let m = format!("frame of {} bytes exceeds the relay's message limit", f.len());
                if let Ok(mut slot) = err.lock() {
                    *slot = Some(m);
                }
                break;
            }
            let mut msg = Vec::with_capacity(f.len() + 1);
            msg.push(peer.0);
            msg.extend_from_slice(&f);
            if out.send(msg).is_err() {
                if let Ok(mut slot) = err.lock() {
                    *slot = Some("the relay connection is closed".into());
                }
                break;
            }
            c.sent.fetch_add(f.len() as u64 + 1, Ordering::Relaxed);
            c.frames_written.fetch_add(1, Ordering::Release);
            c.progress.notify_one();
        }
        c.progress.notify_one();
    });
    let (c, a) = (counters.clone(), allowance.clone());
    let reader = tokio::spawn(async move {
        let end = loop {
            match inbox.recv().await {
                Some(Inbound::Data(f)) => {
                    c.received.fetch_add(f.len() as u64 + 1, Ordering::Relaxed);
                    if let Err(e) =
                        a.check_frame(peer, f.len()).and_then(|()| a.admit(peer, f.len()))
                    {
                        break e;
                    }
                    if frame_tx.send(Ok(f)).await.is_err() {
                        return;
                    }
                }
                Some(Inbound::End) | None => break TransportError::Closed,
                Some(Inbound::Failed(e)) => break TransportError::Io(format!("from {peer}: {e}")),
            }
        };
        let _ = frame_tx.send(Err(end)).await;
    });
    Link {
        peer,
        sealer: None,
        tx: Some(tx),
        queued: 0,
        rx,
        seed,
        counters,
        writer: Some(writer),
        reader: Some(reader),
        writer_error,
        failed: None,
        allowance,
    }
}
