//! [`RelayServer`]: accepts WebSocket connections, admits them into sessions, and runs one
//! reader loop and one writer task per connection.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::http::{HeaderValue, Response, StatusCode};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use super::path::Request;
use super::pump::{run_member, truncate, PartyReader, PartyWriter};
use super::session::{log, reap_interval, short, Member, Refusal, Registry, Waiter};
use crate::error::RelayError;
use crate::token::Trusted;

/// The bounds of a relay. Every field has a default ([`RelayLimits::default`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RelayLimits {
    /// Connections at once, WebSocket (admitted or still in their handshake) and
    /// WebTransport together; more are closed at once.
    pub max_connections: usize,
    /// Sessions open at once; more are refused with HTTP 503.
    pub max_sessions: usize,
    /// Parties (connections) per session.
    pub max_parties: u8,
    /// Largest message, in bytes, the `to`/`from` byte included; a larger one closes the
    /// sender's connection ("message too big").
    pub max_message: usize,
    /// Messages queued toward one party (also before it connects).
    pub conn_queue: usize,
    /// Bytes queued in one session, over all its parties.
    pub session_queue_bytes: usize,
    /// How long a sender waits for queue room before the session is closed ("queue full").
    pub stall_timeout: Duration,
    /// A session with no message and no join for this long is closed.
    pub idle_timeout: Duration,
    /// Time allowed for the TCP + WebSocket handshake of a new connection.
    pub handshake_timeout: Duration,
}

impl Default for RelayLimits {
    fn default() -> Self {
        Self {
            max_connections: 4096,
            max_sessions: 1024,
            max_parties: 16,
            max_message: (16 << 20) + 1,
            conn_queue: 256,
            session_queue_bytes: 256 << 20,
            stall_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            handshake_timeout: Duration::from_secs(10),
        }
    }
}

impl RelayLimits {
    /// Checks that the limits are usable together.
    pub fn check(&self) -> Result<(), RelayError> {
        let bad = |m: &str| Err(RelayError::Config(format!("relay limits: {m}")));
        if self.max_connections == 0
            || self.max_sessions == 0
            || self.max_parties < 2
            || self.conn_queue == 0
        {
            return bad("max_connections, max_sessions, conn_queue must be ≥ 1, max_parties ≥ 2");
        }
        if self.max_message < 2 || self.max_message > self.session_queue_bytes {
            return bad("max_message must be ≥ 2 and ≤ session_queue_bytes");
        }
        if self.session_queue_bytes > Semaphore::MAX_PERMITS.min(u32::MAX as usize) {
            return bad("session_queue_bytes must be < 4 GiB");
        }
        Ok(())
    }
}

use tokio::sync::Semaphore;

/// A WebSocket relay: forwards opaque messages between the parties of each session.
///
/// A party connects to `ws://HOST:PORT` + [`RelayPath`](super::RelayPath), sends binary messages
/// `[to: u8] ‖ payload` and receives `[from: u8] ‖ payload`. Payloads are never interpreted.
/// When a party disconnects, each other party receives what it sent and then an end-of-link
/// marker: the one-byte message `[from]`. A whole session (every connection, with a WebSocket
/// close reason) is closed when it idles or when a queue stays full.
///
/// ```no_run
/// use ringfence_relay::ws::{RelayLimits, RelayServer};
/// # async fn f() -> Result<(), ringfence_relay::RelayError> {
/// let relay = RelayServer::bind("127.0.0.1:0".parse().unwrap(), RelayLimits::default()).await?;
/// println!("relay on ws://{}", relay.local_addr());
/// tokio::spawn(relay.run());
/// # Ok(()) }
/// ```
pub struct RelayServer {
    listener: TcpListener,
    registry: Arc<Registry>,
}

impl core::fmt::Debug for RelayServer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RelayServer").field("addr", &self.listener.local_addr().ok()).finish()
    }
}

impl RelayServer {
    /// Binds the listener of an open relay: anyone may join any session (development and
    /// tests; see [`RelayServer::bind_trusting`]).
    pub async fn bind(addr: SocketAddr, limits: RelayLimits) -> Result<Self, RelayError> {
        Self::bind_trusting(addr, limits, Trusted::default()).await
    }

    /// Binds the listener of a relay that admits only connections with a token signed by one
    /// of the `trusted` deployments (for exactly that session and party; see
    /// [`crate::token`]). With no deployment in `trusted` the relay is open.
    pub async fn bind_trusting(
        addr: SocketAddr,
        limits: RelayLimits,
        trusted: Trusted,
    ) -> Result<Self, RelayError> {
        limits.check()?;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|e| RelayError::io(format!("binding the relay on {addr}"), e))?;
        Ok(Self { listener, registry: Arc::new(Registry::new(limits, trusted)) })
    }

    /// The bound address (e.g. to learn an ephemeral port).
    pub fn local_addr(&self) -> SocketAddr {
        // A bound TCP listener always has a local address.
        self.listener.local_addr().unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)))
    }

    /// Number of open sessions.
    pub fn sessions(&self) -> usize {
        self.registry.sessions()
    }

    /// A function counting the open sessions, usable while the server runs.
    pub fn session_counter(&self) -> impl Fn() -> usize + Send + Sync + 'static {
        let registry = self.registry.clone();
        move || registry.sessions()
    }

    /// Starts the health and metrics endpoints (`/healthz`, `/metrics` in the Prometheus
    /// text format) on their own listener at `addr`; returns its bound address.
    pub async fn serve_metrics(&self, addr: SocketAddr) -> Result<SocketAddr, RelayError> {
        let l = super::metrics::bind(addr).await?;
        let bound = l.local_addr().map_err(|e| RelayError::io("metrics listener address", e))?;
        tokio::spawn(super::metrics::serve(l, self.registry.clone()));
        Ok(bound)
    }

    /// The sessions and lobbies, for another front end of this relay ([`crate::wt`]).
    pub(crate) fn registry(&self) -> Arc<Registry> {
        self.registry.clone()
    }

    /// Serves connections until the future is dropped (or accepting fails).
    pub async fn run(self) -> Result<(), RelayError> {
        self.run_until(std::future::pending(), Duration::ZERO).await
    }

    /// Serves connections until `shutdown` resolves, then shuts down gracefully: refuses new
    /// connections, lets open sessions finish for up to `grace`, then closes the rest with the
    /// reason "relay shutting down" (their queued messages are delivered first).
    pub async fn run_until(
        self,
        shutdown: impl std::future::Future<Output = ()>,
        grace: Duration,
    ) -> Result<(), RelayError> {
        let reaper = tokio::spawn(reap(self.registry.clone()));
        let _abort = AbortOnDrop(reaper);
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let (tcp, addr) = tokio::select! {
                a = crate::listen::accept(&self.listener, "relay") => a,
                () = &mut shutdown => break,
            };
            let Some(slot) = self.registry.connection_slot() else {
                log(format_args!("{addr}: refused (too many connections)"));
                continue; // dropping `tcp` closes it
            };
            let _ = tcp.set_nodelay(true);
            let registry = self.registry.clone();
            tokio::spawn(async move {
                serve(registry, tcp, addr).await;
                drop(slot);
            });
        }
        drop(self.listener);
        let open = self.registry.sessions();
        log(format_args!(
            "shutting down: {open} sessions open, waiting up to {} s",
            grace.as_secs()
        ));
        let deadline = tokio::time::Instant::now() + grace;
        while self.registry.sessions() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let closed = self.registry.close_all("relay shutting down");
        // Give the connections' writers a moment to deliver and send their close frames.
        let flush = tokio::time::Instant::now() + Duration::from_secs(2);
        while self.registry.sessions() > 0 && tokio::time::Instant::now() < flush {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        log(format_args!("stopped ({closed} sessions closed at shutdown)"));
        Ok(())
    }
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn reap(registry: Arc<Registry>) {
    let every = reap_interval(registry.limits().idle_timeout);
    loop {
        tokio::time::sleep(every).await;
        registry.expire_idle();
    }
}

/// One connection: admission during the WebSocket handshake, then the reader loop here and
/// the writer in its own task.
async fn serve(registry: Arc<Registry>, tcp: TcpStream, addr: SocketAddr) {
    let limits = registry.limits().clone();
    let cfg = WebSocketConfig::default()
        .max_message_size(Some(limits.max_message))
        .max_frame_size(Some(limits.max_message));
    let mut admitted: Option<Admitted> = None;
    let mut refused_in_band: Option<Refusal> = None;
    let mut in_band = false;
    // tungstenite's callback signature fixes the error type (an HTTP response).
    #[allow(clippy::result_large_err)]
    let admit = |req: &tokio_tungstenite::tungstenite::handshake::server::Request,
                 mut resp: Response<()>| {
        let path = req.uri().path_and_query().map(|p| p.as_str()).unwrap_or("/");
        in_band = offers_in_band_admission(req.headers());
        if in_band {
            resp.headers_mut().insert(PROTOCOL, HeaderValue::from_static(IN_BAND_ADMISSION));
        }
        let joined = Request::parse(path).map_err(|e| (400, e)).and_then(|r| match r {
            Request::Session(p) => registry.join(&p).map(Admitted::Member),
            Request::Lobby(p) => registry.wait(&p).map(|(w, rx)| Admitted::Waiter(w, rx)),
        });
        match joined {
            Ok(a) => {
                admitted = Some(a);
                registry.count_admitted();
                Ok(resp)
            }
            Err(refusal) => {
                registry.count_refused(addr, "", &refusal);
                if in_band {
                    refused_in_band = Some(refusal);
                    return Ok(resp);
                }
                let (code, reason) = refusal;
                let mut r = Response::new(Some(reason));
                *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_REQUEST);
                Err(r)
            }
        }
    };
    let accepted = tokio::time::timeout(
        limits.handshake_timeout,
        tokio_tungstenite::accept_hdr_async_with_config(tcp, admit, Some(cfg)),
    )
    .await;
    let mut ws = match accepted {
        Ok(Ok(ws)) => ws,
        Ok(Err(e)) => {
            if admitted.is_some() {
                log(format_args!("{addr}: WebSocket handshake failed: {e}"));
            }
            return;
        }
        Err(_) => return log(format_args!("{addr}: no WebSocket handshake in time")),
    };
    if let Some(refusal) = refused_in_band {
        return refuse_in_band(ws, refusal).await;
    }
    let Some(admitted) = admitted else { return };
    if in_band && ws.send(Message::Text(ADMITTED.into())).await.is_err() {
        return;
    }
    let member = match admitted {
        Admitted::Member(m) => m,
        Admitted::Waiter(w, invites) => {
            let (d, party) = (w.deployment.clone(), w.party);
            log(format_args!("lobby {d}: {party} waiting, from {addr}"));
            let reason = run_waiter(ws, &w, invites).await;
            drop(w);
            return log(format_args!("lobby {d}: {party} left ({reason})"));
        }
    };
    let (session, party) = (member.session.clone(), member.party);
    let sid = short(&session.id);
    log(format_args!("session {sid}: {party} connected from {addr}"));
    let (sink, stream) = ws.split();
    let reason = run_member(&member, Reader(stream), Writer(sink)).await;
    log(format_args!("session {sid}: {party} left ({reason})"));
    drop(member);
}

/// What a connection was admitted as.
enum Admitted {
    Member(Member),
    Waiter(Waiter, tokio::sync::mpsc::Receiver<String>),
}

/// The WebSocket subprotocol of clients that learn of their admission in-band, for browsers:
/// a browser's WebSocket cannot read the HTTP status or body of a refused upgrade (it sees only
/// "error"). A client offering it (`Sec-WebSocket-Protocol`) is always upgraded, then either
/// receives the text message [`ADMITTED`] before anything else, or is closed with the code
/// 4000 + the HTTP status the relay would have refused it with (4401, 4403, 4404, ...; see
/// the statuses of the admission refusals in `ws::session`) and the reason.
pub const IN_BAND_ADMISSION: &str = "ringfence.admission";

/// The first message to an admitted client of [`IN_BAND_ADMISSION`].
pub const ADMITTED: &str = "admitted";

/// The header naming the WebSocket subprotocols.
const PROTOCOL: &str = "sec-websocket-protocol";

/// Whether the client offers [`IN_BAND_ADMISSION`] among its subprotocols.
fn offers_in_band_admission(headers: &tokio_tungstenite::tungstenite::http::HeaderMap) -> bool {
    headers
        .get_all(PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim() == IN_BAND_ADMISSION)
}

/// Closes an upgraded but refused connection with 4000 + the HTTP status and the reason,
/// then waits a moment for the client's close frame (a clean close handshake).
async fn refuse_in_band(mut ws: WebSocketStream<TcpStream>, (code, reason): Refusal) {
    let frame =
        CloseFrame { code: CloseCode::from(4000 + code), reason: truncate(&reason, 120).into() };
    let _ = ws.close(Some(frame)).await;
    let drained = async { while let Some(Ok(_)) = ws.next().await {} };
    let _ = tokio::time::timeout(Duration::from_secs(2), drained).await;
}

/// Writes invitations (text messages) to a waiting server party until it leaves or another
/// connection of the same party replaces it; returns why it ended. The party sends nothing
/// but pings and its refusals of invitations (`{"refused": SESSION, "reason": R}`, which
/// close that session with the reason).
async fn run_waiter(
    ws: WebSocketStream<TcpStream>,
    waiter: &Waiter,
    mut invites: tokio::sync::mpsc::Receiver<String>,
) -> String {
    let (mut sink, mut stream) = ws.split();
    let reason = loop {
        tokio::select! {
            i = invites.recv() => match i {
                Some(i) => {
                    if let Err(e) = sink.send(Message::Text(i.into())).await {
                        break e.to_string();
                    }
                }
                None => break "lobby closed (relay shutting down, or a newer connection of this party)".to_string(),
            },
            m = stream.next() => match m {
                Some(Ok(Message::Close(_))) => break "closed by the party".into(),
                None => break "connection ended without a close".into(),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                Some(Ok(Message::Text(t))) => match parse_refusal(t.as_str()) {
                    Some((session, reason)) => waiter.refused(session, &truncate(&reason, 200)),
                    None => break "a waiting party sends only refusals of invitations".into(),
                },
                Some(Ok(_)) => break "a waiting party sends only refusals of invitations".into(),
                Some(Err(e)) => break e.to_string(),
            },
        }
    };
    Writer(sink).close(reason.clone()).await;
    reason
}

/// A waiting party's refusal of an invitation: the session and the reason.
fn parse_refusal(text: &str) -> Option<(ringfence_core::net::SessionId, String)> {
    #[derive(serde::Deserialize)]
    struct Wire {
        refused: String,
        reason: String,
    }
    let w: Wire = serde_json::from_str(text).ok()?;
    Some((super::path::parse_session_hex(&w.refused).ok()?, w.reason))
}

/// A party's WebSocket, as the relay reads it.
struct Reader(futures_util::stream::SplitStream<WebSocketStream<TcpStream>>);

/// A party's WebSocket, as the relay writes to it.
struct Writer(futures_util::stream::SplitSink<WebSocketStream<TcpStream>, Message>);

impl PartyReader for Reader {
    async fn read(&mut self) -> Result<Vec<u8>, String> {
        let why = loop {
            match self.0.next().await {
                Some(Ok(Message::Binary(b))) => return Ok(Vec::from(b)),
                Some(Ok(Message::Text(_))) => break "text messages are not allowed".into(),
                Some(Ok(Message::Close(_))) => break "closed by the party".into(),
                None => break "connection ended without a close".into(),
                Some(Ok(_)) => {} // ping/pong: answered by tungstenite
                Some(Err(e)) => break e.to_string(),
            }
        };
        Err(why)
    }
}

impl PartyWriter for Writer {
    async fn write(&mut self, msg: Vec<u8>) -> Result<(), ()> {
        self.0.send(Message::Binary(msg.into())).await.map_err(drop)
    }

    async fn close(mut self, reason: String) {
        let frame = CloseFrame { code: CloseCode::Normal, reason: truncate(&reason, 120).into() };
        let _ = self.0.send(Message::Close(Some(frame))).await;
        let _ = self.0.close().await;
    }
}
