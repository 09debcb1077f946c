//! The relay's health and metrics endpoints, on their own listener (keep it off the public
//! interface): `GET /healthz` answers `ok`, `GET /metrics` the counters and gauges in the
//! Prometheus text format (served by [`crate::metrics`], which the server parties share).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::net::TcpListener;

use super::session::{log, Registry};
use crate::metrics::{Kind, TextFormat};

/// Serves `/healthz` and `/metrics` on `listener` until the future is dropped.
pub(crate) async fn serve(listener: TcpListener, registry: Arc<Registry>) {
    crate::metrics::serve(listener, move || render(&registry)).await;
}

/// The metrics in the Prometheus text exposition format.
fn render(r: &Registry) -> String {
    let c = &r.counters;
    let (waiting, complete) = r.lobby_gauges();
    let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let rows: [(&str, Kind, &str, u64); 10] = [
        (
            "ringfence_relay_connections_total",
            Kind::Counter,
            "Connections admitted (sessions and lobbies).",
            get(&c.connections),
        ),
        (
            "ringfence_relay_refused_total",
            Kind::Counter,
            "Connections refused at admission (bad path, token, limits).",
            get(&c.refused),
        ),
        (
            "ringfence_relay_sessions_opened_total",
            Kind::Counter,
            "Sessions created.",
            get(&c.sessions_opened),
        ),
        (
            "ringfence_relay_sessions_closed_early_total",
            Kind::Counter,
            "Sessions closed by the relay (idle, stalled queue).",
            get(&c.sessions_closed_early),
        ),
        (
            "ringfence_relay_invitations_total",
            Kind::Counter,
            "Clients' invitations sent to deployment lobbies.",
            get(&c.invitations),
        ),
        (
            "ringfence_relay_messages_total",
            Kind::Counter,
            "Messages forwarded between parties.",
            get(&c.messages),
        ),
        (
            "ringfence_relay_bytes_total",
            Kind::Counter,
            "Bytes forwarded between parties (address byte included).",
            get(&c.bytes),
        ),
        ("ringfence_relay_sessions", Kind::Gauge, "Sessions open now.", r.sessions() as u64),
        (
            "ringfence_relay_lobby_parties",
            Kind::Gauge,
            "Server parties waiting in lobbies now.",
            waiting as u64,
        ),
        (
            "ringfence_relay_lobbies_complete",
            Kind::Gauge,
            "Deployments with every server party in the lobby.",
            complete as u64,
        ),
    ];
    let mut t = TextFormat::new();
    for (name, kind, help, v) in rows {
        t.single(name, kind, help, v);
    }
    t.finish()
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
