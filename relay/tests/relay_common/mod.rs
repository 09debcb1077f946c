//! Shared harness of the relay tests: a relay on an ephemeral loopback port, raw WebSocket
//! clients, and a tap that records every byte the relay sends to a party.

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use ringfence_core::net::SessionId;
use ringfence_relay::ws::{RelayLimits, RelayServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// Bound on every wait in these tests.
pub const WAIT: Duration = Duration::from_secs(5);

/// A raw client connection.
pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Starts a relay with `limits` on 127.0.0.1:0; returns its base URL.
pub async fn relay(limits: RelayLimits) -> String {
    let server = RelayServer::bind("127.0.0.1:0".parse().unwrap(), limits).await.unwrap();
    let url = format!("ws://{}", server.local_addr());
    tokio::spawn(server.run());
    url
}

/// `GET path` on a plain HTTP listener; returns the whole response.
pub async fn http_get(addr: SocketAddr, path: &str) -> String {
    http_request(addr, &format!("GET {path}")).await
}

/// The request `METHOD TARGET` on a plain HTTP listener; returns the whole response.
pub async fn http_request(addr: SocketAddr, request: &str) -> String {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(format!("{request} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes()).await.unwrap();
    let mut out = String::new();
    tcp.read_to_string(&mut out).await.unwrap();
    out
}

/// Asserts that the relay's `/metrics` (served on `addr`) has each of `lines`.
pub async fn assert_metrics(addr: SocketAddr, lines: &[&str]) {
    let m = http_get(addr, "/metrics").await;
    for line in lines {
        assert!(m.lines().any(|l| l == *line), "{line} missing from:\n{m}");
    }
}

/// The path of party `party` of `session` (3 parties, mode `m`).
pub fn path(session: &SessionId, party: u8, m: &str) -> String {
    let hex: String = session.0.iter().map(|b| format!("{b:02x}")).collect();
    format!("/v1/{hex}/{party}?parties=3&mode={m}")
}

/// Connects party `party` of `session` with raw WebSocket messages.
pub async fn join(url: &str, session: &SessionId, party: u8) -> Result<Ws, String> {
    let u = format!("{url}{}", path(session, party, "plain-test-seeds"));
    connect(&u).await
}

/// Connects to a full URL; the error carries the HTTP status if the relay refused.
pub async fn connect(u: &str) -> Result<Ws, String> {
    use tokio_tungstenite::tungstenite::Error;
    match tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(u)).await {
        Ok(Ok((ws, _))) => Ok(ws),
        Ok(Err(Error::Http(r))) => Err(format!(
            "HTTP {}: {}",
            r.status().as_u16(),
            String::from_utf8_lossy(r.body().as_deref().unwrap_or_default())
        )),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("timeout".into()),
    }
}

/// Sends `[to] ‖ payload`.
pub async fn send(ws: &mut Ws, to: u8, payload: &[u8]) {
    let mut m = vec![to];
    m.extend_from_slice(payload);
    ws.send(Message::Binary(m.into())).await.unwrap();
}

/// What a client saw next.
#[derive(Debug, PartialEq, Eq)]
pub enum Got {
    /// A message `[from] ‖ payload`.
    Msg(u8, Vec<u8>),
    /// The relay closed the connection with this reason.
    Closed(String),
}

/// The next message or close (ping/pong skipped), within [`WAIT`].
pub async fn next(ws: &mut Ws) -> Got {
    loop {
        let m = tokio::time::timeout(WAIT, ws.next()).await.expect("relay went silent");
        match m {
            Some(Ok(Message::Binary(b))) => return Got::Msg(b[0], b[1..].to_vec()),
            Some(Ok(Message::Close(f))) => {
                return Got::Closed(f.map(|f| f.reason.to_string()).unwrap_or_default())
            }
            Some(Ok(_)) => continue,
            Some(Err(e)) => return Got::Closed(format!("error: {e}")),
            None => return Got::Closed("eof".into()),
        }
    }
}

/// A TCP proxy in front of `relay_url`; returns the proxy's URL and every byte the relay sent
/// through it (relay → party: WebSocket frames from a server are unmasked, so this is exactly
/// what the relay saw of the parties' payloads).
pub async fn tap(relay_url: &str) -> (String, Arc<Mutex<Vec<u8>>>) {
    let target: SocketAddr = relay_url.trim_start_matches("ws://").parse().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let server = TcpStream::connect(target).await.unwrap();
            let (mut cr, mut cw) = client.into_split();
            let (mut sr, mut sw) = server.into_split();
            tokio::spawn(async move { tokio::io::copy(&mut cr, &mut sw).await });
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 << 10];
                while let Ok(n) = sr.read(&mut buf).await {
                    if n == 0 || cw.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                    log.lock().unwrap().extend_from_slice(&buf[..n]);
                }
                let _ = cw.shutdown().await;
            });
        }
    });
    (url, seen)
}

/// Runs a `ringfence` command to completion; returns its stdout (panics with stderr on failure).
pub fn cli(args: &[&str]) -> String {
    let out =
        std::process::Command::new(env!("CARGO_BIN_EXE_ringfence")).args(args).output().unwrap();
    let (so, se) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "ringfence {args:?}: {so}\n{se}");
    so.into_owned()
}

/// The value after `public key ` in a `keygen`/`token key` output.
pub fn public_key_in(out: &str) -> String {
    out.lines().find_map(|l| l.strip_prefix("public key ")).unwrap().trim().to_string()
}

/// Whether `needle` occurs in `hay`.
pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// One private classification of `input` by `model` as a client of a deployment (a
/// configuration inviting it, with a token for its session).
pub async fn classify(
    cfg: ringfence_relay::ws::RelayLinkConfig,
    model: &str,
    backend: ringfence_core::service::Backend,
    input: &[f64],
) -> Result<usize, String> {
    let request = ringfence_core::service::Request::new(model, backend, 1);
    classify_counted(cfg, &request, input).await.map(|(class, _)| class)
}

/// [`classify`] of any request, with the bytes the client's links sent and received on the
/// wire.
pub async fn classify_counted(
    cfg: ringfence_relay::ws::RelayLinkConfig,
    request: &ringfence_core::service::Request,
    input: &[f64],
) -> Result<(usize, u64), String> {
    use ringfence_core::net::{Ctx, PartyId};
    use ringfence_core::service::Client;
    use ringfence_relay::{os_seed, TcpTransport};
    // The client is the last participant, after the servers.
    let (session, me, participants) = (cfg.session, cfg.me, usize::from(cfg.parties));
    let t = TcpTransport::connect_via_relay(cfg).await.map_err(|e| e.to_string())?;
    let mut c = Client::new(Ctx::new(me, participants, session, t), os_seed().unwrap());
    let info = c.request(request).await.map_err(|e| e.to_string())?;
    let ready = c.setup(&info).await.map_err(|e| e.to_string())?;
    let out = c.run(ready, input).await.map_err(|e| e.to_string())?;
    let mut wire = 0;
    if let Some(ctx) = c.into_ctx() {
        let t = ctx.into_transport();
        t.flushed().await.map_err(|e| e.to_string())?;
        wire = (0..me.0)
            .map(|j| t.wire_stats(PartyId(j)))
            .map(|w| w.bytes_sent + w.bytes_received)
            .sum();
        t.close().await.map_err(|e| e.to_string())?;
    }
    Ok((out.classes[0], wire))
}
