//! [`WtServer`]: accepts WebTransport sessions, admits them into the relay's sessions, and runs
//! the WebSocket front end's reader loop and writer task on each connection's stream.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::timeout;
use wtransport::endpoint::endpoint_side::Server;
use wtransport::endpoint::IncomingSession;
use wtransport::error::StreamReadExactError;
use wtransport::quinn::{IdleTimeout, TransportConfig, VarInt};
use wtransport::{Endpoint, RecvStream, SendStream, ServerConfig};

use super::cert::WtCertificate;
use super::wire::{self, Control};
use crate::error::RelayError;
use crate::hex;
use crate::ws::{log, run_member, short, PartyReader, PartyWriter, RelayServer, Request};

/// How long the relay waits for its last bytes to be acknowledged, and then for the party to
/// close the connection, before closing it itself.
const LINGER: Duration = Duration::from_secs(5);

/// QUIC keep-alive: an admitted party may stay silent for as long as the relay's idle limit.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

/// Bytes a party may have in flight toward the relay on its stream (QUIC flow control; quinn's
/// default, enough for 12.5 MB/s at 100 ms of round trip).
const STREAM_WINDOW: u32 = 1_250_000;

/// The WebTransport (HTTP/3) front end of a [`RelayServer`]: the same sessions, admission and
/// limits, reached over QUIC.
///
/// A party opens a WebTransport session at `https://HOST:PORT` + the WebSocket relay's path
/// ([`Request::parse`](crate::ws::Request::parse)); the relay opens one bidirectional stream
/// and writes the admission answer on it, then carries the party's messages on that stream in
/// the format of [`super::wire`]. Sessions are shared with the WebSocket front end: a party
/// over WebTransport and one over WebSocket can be in one session.
///
/// Idle sessions are expired by [`RelayServer::run`], which must run too.
///
/// ```no_run
/// use ringfence_relay::wt::{WtCertificate, WtServer};
/// use ringfence_relay::ws::{RelayLimits, RelayServer};
/// # async fn f() -> Result<(), ringfence_relay::RelayError> {
/// let relay = RelayServer::bind("127.0.0.1:0".parse().unwrap(), RelayLimits::default()).await?;
/// let addr = "127.0.0.1:0".parse().unwrap();
/// let wt = WtServer::bind(addr, &relay, WtCertificate::self_signed_for(addr)).await?;
/// println!("{} (certificate sha-256 {})", wt.url(), wt.certificate_hash_hex());
/// tokio::spawn(wt.run());
/// relay.run().await
/// # }
/// ```
pub struct WtServer {
    endpoint: Endpoint<Server>,
    registry: Arc<crate::ws::Registry>,
    addr: SocketAddr,
    cert_hash: [u8; 32],
    expires: Option<String>,
}

impl core::fmt::Debug for WtServer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("WtServer").field("addr", &self.addr).finish_non_exhaustive()
    }
}

impl WtServer {
    /// Binds the UDP socket of `relay`'s WebTransport front end on `addr`, with `certificate`.
    pub async fn bind(
        addr: SocketAddr,
        relay: &RelayServer,
        certificate: WtCertificate,
    ) -> Result<Self, RelayError> {
        let registry = relay.registry();
        let (identity, expires) = certificate.identity().await?;
        let Some(leaf) = identity.certificate_chain().as_slice().first() else {
            return Err(RelayError::Config("the WebTransport certificate chain is empty".into()));
        };
        let cert_hash = *leaf.hash().as_ref();
        let config = ServerConfig::builder()
            .with_bind_address(addr)
            .with_custom_transport(identity, transport(registry.limits().idle_timeout)?)
            .build();
        let endpoint = Endpoint::server(config)
            .map_err(|e| RelayError::io(format!("binding the WebTransport relay on {addr}"), e))?;
        let addr = endpoint
            .local_addr()
            .map_err(|e| RelayError::io("reading the WebTransport socket's address", e))?;
        let expires = expires.map(|t| {
            let t = t.to_offset(wtransport::tls::self_signed::time::UtcOffset::UTC);
            format!("{} {:02}:{:02} UTC", t.date(), t.hour(), t.minute())
        });
        Ok(Self { endpoint, registry, addr, cert_hash, expires })
    }

    /// The bound UDP address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL parties connect to: `https://ADDR`.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// The SHA-256 hash of the certificate (DER), for `serverCertificateHashes`.
    pub fn certificate_hash(&self) -> [u8; 32] {
        self.cert_hash
    }

    /// [`WtServer::certificate_hash`] as 64 lower-case hex digits.
    pub fn certificate_hash_hex(&self) -> String {
        hex(&self.cert_hash)
    }

    /// When the self-signed certificate expires, e.g. `2026-01-31 12:00 UTC` (`None`: a
    /// configured certificate).
    pub fn self_signed_expiry(&self) -> Option<&str> {
        self.expires.as_deref()
    }

    /// Serves sessions until the future is dropped.
    pub async fn run(self) -> Result<(), RelayError> {
        loop {
            let incoming = self.endpoint.accept().await;
            let Some(slot) = self.registry.connection_slot() else {
                let addr = incoming.remote_address();
                log(format_args!("{addr}: refused (too many WebTransport connections)"));
                incoming.refuse();
                continue;
            };
            let registry = self.registry.clone();
            tokio::spawn(async move {
                serve(registry, incoming).await;
                drop(slot);
            });
        }
    }
}

/// QUIC settings that bound what one connection can make the relay buffer: quinn's defaults
/// allow 100 streams of each kind and no limit over all of them, while a party needs its
/// session's request stream, the three HTTP/3 streams it opens, and the stream the relay opens.
fn transport(idle: Duration) -> Result<TransportConfig, RelayError> {
    let idle = idle.max(2 * KEEP_ALIVE);
    let idle = IdleTimeout::try_from(idle)
        .map_err(|_| RelayError::Config(format!("idle timeout {idle:?} is out of range")))?;
    let mut t = TransportConfig::default();
    t.max_concurrent_bidi_streams(VarInt::from_u32(2))
        .max_concurrent_uni_streams(VarInt::from_u32(4))
        .stream_receive_window(VarInt::from_u32(STREAM_WINDOW))
        .receive_window(VarInt::from_u32(2 * STREAM_WINDOW))
        // WebTransport needs datagram support announced; the relay reads none.
        .datagram_receive_buffer_size(Some(4096))
        .keep_alive_interval(Some(KEEP_ALIVE))
        .max_idle_timeout(Some(idle));
    Ok(t)
}

/// One connection: the handshake, admission, the answer on the relay's stream, then the
/// member's loops.
async fn serve(registry: Arc<crate::ws::Registry>, incoming: IncomingSession) {
    let addr = incoming.remote_address();
    let limits = registry.limits().clone();
    let request = match timeout(limits.handshake_timeout, incoming).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return log(format_args!("{addr}: WebTransport handshake failed: {e}")),
        Err(_) => return log(format_args!("{addr}: no WebTransport handshake in time")),
    };
    let admitted = match Request::parse(request.path()) {
        Err(e) => Err((400, e)),
        Ok(Request::Session(p)) => registry.join(&p),
        Ok(Request::Lobby(_)) => {
            Err((400, "server parties wait in a lobby over WebSocket, not WebTransport".into()))
        }
    };
    match &admitted {
        Ok(_) => registry.count_admitted(),
        Err(refusal) => registry.count_refused(addr, " over WebTransport", refusal),
    }
    // The session is accepted either way: a browser sees no HTTP status or body, so the answer
    // (a refusal's reason too) goes on the stream.
    let opened = timeout(limits.handshake_timeout, async {
        let connection = request.accept().await.map_err(|e| e.to_string())?;
        let opening = connection.open_bi().await.map_err(|e| e.to_string())?;
        let (send, recv) = opening.await.map_err(|e| e.to_string())?;
        Ok::<_, String>((connection, send, recv))
    })
    .await;
    let (connection, mut send, recv) = match opened {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => return log(format_args!("{addr}: WebTransport session failed: {e}")),
        Err(_) => return log(format_args!("{addr}: no WebTransport session in time")),
    };
    match admitted {
        Err((code, reason)) => {
            let _ = timeout(LINGER, send.write_all(&Control::refused(code, &reason).to_message()))
                .await;
            let _ = timeout(LINGER, send.finish()).await;
        }
        Ok(member) => {
            let (session, party) = (member.session.clone(), member.party);
            let sid = short(&session.id);
            log(format_args!("session {sid}: {party} connected over WebTransport from {addr}"));
            let reason = match send.write_all(&Control::admitted().to_message()).await {
                Ok(()) => {
                    let reader = Reader { recv, max: limits.max_message };
                    run_member(&member, reader, Writer(send)).await
                }
                Err(e) => e.to_string(),
            };
            log(format_args!("session {sid}: {party} left ({reason})"));
            drop(member);
        }
    }
    // The party closes once it has read everything; then (or after LINGER) the connection goes.
    let _ = timeout(LINGER, connection.closed()).await;
}

/// A party's stream, as the relay reads it: messages of at most `max` bytes.
struct Reader {
    recv: RecvStream,
    max: usize,
}

/// A party's stream, as the relay writes to it.
struct Writer(SendStream);

impl PartyReader for Reader {
    async fn read(&mut self) -> Result<Vec<u8>, String> {
        let mut prefix = [0u8; wire::LEN_BYTES];
        match self.recv.read_exact(&mut prefix).await {
            Ok(()) => {}
            Err(StreamReadExactError::FinishedEarly(0)) => return Err("closed by the party".into()),
            Err(e) => return Err(ended(e)),
        }
        let mut body = vec![0; wire::body_len(prefix, self.max)?];
        self.recv.read_exact(&mut body).await.map_err(ended)?;
        Ok(body)
    }
}

impl PartyWriter for Writer {
    async fn write(&mut self, msg: Vec<u8>) -> Result<(), ()> {
        self.0.write_all(&wire::prefix(msg.len())).await.map_err(drop)?;
        self.0.write_all(&msg).await.map_err(drop)
    }

    /// Sends the closing message, then finishes the stream.
    async fn close(mut self, reason: String) {
        if self.0.write_all(&Control::closing(&reason).to_message()).await.is_ok() {
            let _ = timeout(LINGER, self.0.finish()).await;
        }
    }
}

/// Why the stream ended inside a read.
fn ended(e: StreamReadExactError) -> String {
    match e {
        StreamReadExactError::FinishedEarly(_) => "the stream ended inside a message".into(),
        StreamReadExactError::Read(e) => format!("connection lost ({e})"),
    }
}
