//! `ringfence relay`: the WebSocket relay server ([`ringfence_relay::ws::RelayServer`]), and
//! with `--webtransport` its WebTransport front end ([`ringfence_relay::wt::WtServer`]).
//!
//! Prints `ringfence relay listening on ws://ADDR` on stdout once bound (so a script that asked
//! for port 0 learns the port), then `ringfence relay webtransport on https://ADDR (certificate
//! sha-256 HEX)` when WebTransport is on, then logs connects and disconnects on stderr until
//! SIGTERM or Ctrl-C, which shut it down gracefully (`--grace-ms`).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use ringfence_relay::token::{valid_name, DeploymentPublicKey, Trusted};
use ringfence_relay::ws::{RelayLimits, RelayServer};
use ringfence_relay::wt::{WtCertificate, WtServer};

/// Options of `ringfence relay`.
#[derive(Args, Clone)]
pub(crate) struct RelayArgs {
    /// Address to listen on, e.g. 127.0.0.1:9000 (port 0 picks a free port).
    #[arg(long)]
    listen: SocketAddr,
    /// Connections at once, WebSocket and WebTransport together.
    #[arg(long, default_value_t = RelayLimits::default().max_connections)]
    max_connections: usize,
    /// Sessions open at once.
    #[arg(long, default_value_t = RelayLimits::default().max_sessions)]
    max_sessions: usize,
    /// Parties (connections) per session.
    #[arg(long, default_value_t = RelayLimits::default().max_parties)]
    max_parties: u8,
    /// Largest message in bytes (the 1-byte address included).
    #[arg(long, default_value_t = RelayLimits::default().max_message)]
    max_message_bytes: usize,
    /// Messages queued toward one party.
    #[arg(long, default_value_t = RelayLimits::default().conn_queue)]
    queue_messages: usize,
    /// Bytes queued in one session.
    #[arg(long, default_value_t = RelayLimits::default().session_queue_bytes)]
    session_queue_bytes: usize,
    /// How long a sender may wait for queue room before the session is closed.
    #[arg(long, default_value_t = 10_000)]
    stall_timeout_ms: u64,
    /// Sessions without traffic for this long are closed.
    #[arg(long, default_value_t = 300_000)]
    idle_timeout_ms: u64,
    /// Trust the join tokens of deployment NAME, signed by the key whose public half is
    /// PUBLIC_KEY (64 hex digits, from `ringfence token key`); repeatable. With none, the relay
    /// is open: anyone may join any session (development only).
    #[arg(long = "deployment", value_name = "NAME=PUBLIC_KEY", value_parser = parse_trust)]
    deployments: Vec<(String, DeploymentPublicKey)>,
    /// Also serve WebTransport (HTTP/3) on this UDP address, e.g. 127.0.0.1:9001 (port 0 picks
    /// a free port): the same sessions, for browsers. Without --webtransport-cert the relay
    /// generates a self-signed certificate (valid 14 days) that pages accept by the hash it
    /// prints.
    #[arg(long, value_name = "ADDR")]
    webtransport: Option<SocketAddr>,
    /// The WebTransport certificate chain (PEM), instead of a self-signed one.
    #[arg(long, value_name = "FILE", requires_all = ["webtransport", "webtransport_key"])]
    webtransport_cert: Option<PathBuf>,
    /// The private key (PEM) of --webtransport-cert.
    #[arg(long, value_name = "FILE", requires = "webtransport_cert")]
    webtransport_key: Option<PathBuf>,
    /// Serve /healthz and /metrics (Prometheus text format) on this address, e.g.
    /// 127.0.0.1:9100 (keep it private).
    #[arg(long, value_name = "ADDR")]
    metrics: Option<SocketAddr>,
    /// On SIGTERM or Ctrl-C: how long open sessions may run on before they are closed.
    #[arg(long, default_value_t = 10_000)]
    grace_ms: u64,
    /// Log format on stderr: text lines, or one JSON object per line.
    #[arg(long, value_enum, default_value = "text")]
    log: crate::server::LogFormat,
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
pub(crate) async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

fn parse_trust(s: &str) -> Result<(String, DeploymentPublicKey), String> {
    let (name, key) = s.split_once('=').ok_or("expected NAME=PUBLIC_KEY")?;
    if !valid_name(name) {
        return Err(format!("deployment name {name:?} must be [a-z0-9-]{{1,32}}"));
    }
    Ok((name.to_string(), DeploymentPublicKey::from_hex(key).map_err(|e| e.to_string())?))
}

impl RelayArgs {
    fn limits(&self) -> RelayLimits {
        let mut l = RelayLimits::default();
        l.max_connections = self.max_connections;
        l.max_sessions = self.max_sessions;
        l.max_parties = self.max_parties;
        l.max_message = self.max_message_bytes;
        l.conn_queue = self.queue_messages;
        l.session_queue_bytes = self.session_queue_bytes;
        l.stall_timeout = Duration::from_millis(self.stall_timeout_ms);
        l.idle_timeout = Duration::from_millis(self.idle_timeout_ms);
        l
    }

    fn certificate(&self, addr: SocketAddr) -> WtCertificate {
        match (&self.webtransport_cert, &self.webtransport_key) {
            (Some(cert), Some(key)) => WtCertificate::Pem { cert: cert.clone(), key: key.clone() },
            _ => WtCertificate::self_signed_for(addr),
        }
    }
}

/// The line `ringfence relay` prints about its WebTransport front end (and, on stderr, when a
/// self-signed certificate expires).
fn announce_webtransport(wt: &WtServer) -> String {
    if let Some(t) = wt.self_signed_expiry() {
        eprintln!("ringfence relay: self-signed WebTransport certificate, valid until {t}");
    }
    format!(
        "ringfence relay webtransport on {} (certificate sha-256 {})",
        wt.url(),
        wt.certificate_hash_hex()
    )
}

/// Runs the relay until the process is killed.
pub(crate) fn run(a: &RelayArgs) -> Result<(), String> {
    let rt = crate::runtime(2)?;
    ringfence_relay::ws::set_log_json(a.log == crate::server::LogFormat::Json);
    rt.block_on(async {
        let mut trusted = Trusted::default();
        for (name, key) in &a.deployments {
            trusted.add(name, *key);
        }
        if !trusted.required() {
            ringfence_relay::ws::log(format_args!(
                "open relay (no --deployment): anyone may join any session"
            ));
        }
        let server = RelayServer::bind_trusting(a.listen, a.limits(), trusted)
            .await
            .map_err(|e| e.to_string())?;
        let metrics = match a.metrics {
            Some(addr) => Some(server.serve_metrics(addr).await.map_err(|e| e.to_string())?),
            None => None,
        };
        let mut lines = vec![format!("ringfence relay listening on ws://{}", server.local_addr())];
        if let Some(m) = metrics {
            lines.push(format!("ringfence relay metrics on http://{m}/metrics"));
        }
        let wt = match a.webtransport {
            Some(addr) => {
                let wt = WtServer::bind(addr, &server, a.certificate(addr))
                    .await
                    .map_err(|e| e.to_string())?;
                lines.push(announce_webtransport(&wt));
                Some(wt)
            }
            None => None,
        };
        let mut out = std::io::stdout().lock();
        lines
            .iter()
            .try_for_each(|l| writeln!(out, "{l}"))
            .and_then(|()| out.flush())
            .map_err(|e| format!("writing to stdout: {e}"))?;
        drop(out);
        let wt = async {
            match wt {
                Some(wt) => wt.run().await,
                None => std::future::pending().await,
            }
        };
        let grace = Duration::from_millis(a.grace_ms);
        tokio::select! {
            r = server.run_until(terminated(), grace) => r,
            r = wt => r,
        }
        .map_err(|e| e.to_string())
    })
}
