//! The relay's health and metrics endpoints, on their own listener (keep it off the public
//! interface): `GET /healthz` answers `ok`, `GET /metrics` the counters and gauges in the
//! Prometheus text format. A minimal HTTP/1.1 responder: one request per connection.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::session::{log, Registry};

/// Serves `/healthz` and `/metrics` on `listener` until the future is dropped.
pub(crate) async fn serve(listener: TcpListener, registry: Arc<Registry>) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else { continue };
        let registry = registry.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(Duration::from_secs(5), answer(tcp, &registry)).await;
        });
    }
}

async fn answer(mut tcp: TcpStream, registry: &Registry) -> std::io::Result<()> {
    let mut buf = vec![0u8; 4096];
    let mut n = 0;
    while !buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
        if n == buf.len() {
            return reply(&mut tcp, "431 Request Header Fields Too Large", "").await;
        }
        let got = tcp.read(&mut buf[n..]).await?;
        if got == 0 {
            return Ok(());
        }
        n += got;
    }
    let head = String::from_utf8_lossy(&buf[..n]);
    let target = head.lines().next().unwrap_or("").split(' ').take(2).collect::<Vec<_>>();
    match target[..] {
        ["GET", "/healthz"] => reply(&mut tcp, "200 OK", "ok\n").await,
        ["GET", "/metrics"] => reply(&mut tcp, "200 OK", &render(registry)).await,
        _ => reply(&mut tcp, "404 Not Found", "GET /healthz or /metrics\n").await,
    }
}

async fn reply(tcp: &mut TcpStream, status: &str, body: &str) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; version=0.0.4\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n",
        body.len()
    );
    tcp.write_all(head.as_bytes()).await?;
    tcp.write_all(body.as_bytes()).await?;
    tcp.shutdown().await
}

/// The metrics in the Prometheus text exposition format.
pub(crate) fn render(r: &Registry) -> String {
    let c = &r.counters;
    let (waiting, complete) = r.lobby_gauges();
    let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let rows: [(&str, &str, &str, u64); 10] = [
        (
            "ringfence_relay_connections_total",
            "counter",
            "Connections admitted (sessions and lobbies).",
            get(&c.connections),
        ),
        (
            "ringfence_relay_refused_total",
            "counter",
            "Connections refused at admission (bad path, token, limits).",
            get(&c.refused),
        ),
        (
            "ringfence_relay_sessions_opened_total",
            "counter",
            "Sessions created.",
            get(&c.sessions_opened),
        ),
        (
            "ringfence_relay_sessions_closed_early_total",
            "counter",
            "Sessions closed by the relay (idle, stalled queue).",
            get(&c.sessions_closed_early),
        ),
        (
            "ringfence_relay_invitations_total",
            "counter",
            "Clients' invitations sent to deployment lobbies.",
            get(&c.invitations),
        ),
        (
            "ringfence_relay_messages_total",
            "counter",
            "Messages forwarded between parties.",
            get(&c.messages),
        ),
        (
            "ringfence_relay_bytes_total",
            "counter",
            "Bytes forwarded between parties (address byte included).",
            get(&c.bytes),
        ),
        ("ringfence_relay_sessions", "gauge", "Sessions open now.", r.sessions() as u64),
        (
            "ringfence_relay_lobby_parties",
            "gauge",
            "Server parties waiting in lobbies now.",
            waiting as u64,
        ),
        (
            "ringfence_relay_lobbies_complete",
            "gauge",
            "Deployments with every server party in the lobby.",
            complete as u64,
        ),
    ];
    let mut out = String::new();
    for (name, kind, help, v) in rows {
        out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}\n"));
    }
    out
}

/// Binds the metrics listener; logs where it is.
pub(crate) async fn bind(addr: std::net::SocketAddr) -> Result<TcpListener, crate::RelayError> {
    let l = TcpListener::bind(addr)
        .await
        .map_err(|e| crate::RelayError::io(format!("binding the metrics listener on {addr}"), e))?;
    if let Ok(a) = l.local_addr() {
        log(format_args!("metrics on http://{a}/metrics, health on http://{a}/healthz"));
    }
    Ok(l)
}
