//! The server parties' mesh: direct, Noise-encrypted TCP links among the three server parties
//! of a deployment, over which they make setup material (METEOR and rep3) ahead of demand
//! ([`ringfence_core::service::stock`]) so that a client's session runs only its online phase.
//!
//! Each party listens on its own `[mesh] peers` address; P0 dials P1 and P2, P1 dials P2
//! ([`TcpTransport::connect`]), every link authenticated with the parties' identity keys and
//! bound to the deployment. When a peer is missing or a link fails, the party logs it, empties
//! its shelf (the next epoch does that on every party) and reconnects with back-off; client
//! sessions meanwhile make their own setup, as without a mesh.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ringfence_core::net::{Ctx, SessionId};
use ringfence_core::rep3::Rep3;
use ringfence_core::service::stock::{Mesh, Shelf, Step, Target};
use ringfence_relay::{Security, TcpTransport, TransportConfig};

use super::server::Server;
use crate::server_metrics::Phase;

/// What `[mesh]` in a party's configuration says.
#[derive(Debug, Clone)]
pub(crate) struct MeshConfig {
    /// The three parties' mesh addresses, by party index; this party listens on its own.
    pub(crate) peers: Vec<SocketAddr>,
    /// Runs to keep ready per model and backend.
    pub(crate) targets: Vec<Target>,
}

/// How long P0 waits before looking at its shelf again when every target is met.
const IDLE: Duration = Duration::from_millis(200);
/// Longest pause between two connection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// The mesh's session id: bound into every link's handshake, so a mesh link of one
/// deployment is never accepted by another's.
fn mesh_session(deployment: &str) -> SessionId {
    let d = ring::digest::digest(
        &ring::digest::SHA256,
        format!("ringfence mesh v1\0{deployment}").as_bytes(),
    );
    let mut id = [0u8; 16];
    id.copy_from_slice(&d.as_ref()[..16]);
    SessionId(id)
}

/// Runs the mesh forever on this thread: connect, fill the shelf, and start again after a
/// failure.
pub(crate) fn run(server: Arc<Server>, mesh: MeshConfig, shelf: Arc<Shelf>) {
    let mut backoff = Duration::from_millis(250);
    loop {
        let started = Instant::now();
        let err = match crate::runtime(1) {
            Ok(rt) => {
                let Err(e) = rt.block_on(epoch(&server, &mesh, &shelf));
                e
            }
            Err(e) => e,
        };
        // A peer may have lost its runs (a restart): none of these can be named any more.
        shelf.clear();
        server.metrics.set_mesh_up(false);
        server.event("mesh_down", &[("error", err.into())]);
        if started.elapsed() > MAX_BACKOFF * 3 {
            backoff = Duration::from_millis(250);
        }
        std::thread::sleep(backoff);
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// One mesh epoch; it ends only by failing, with the reason.
async fn epoch(
    server: &Server,
    mesh: &MeshConfig,
    shelf: &Shelf,
) -> Result<std::convert::Infallible, String> {
    let me = server.me;
    let security = Security::Noise {
        keypair: server.keypair.clone(),
        public_keys: server.public_keys.clone(),
    };
    let session = mesh_session(&server.deployment);
    let mut cfg = TransportConfig::new(me, mesh.peers.clone(), security, session);
    cfg.recv_timeout = server.timeout;
    cfg.connect_timeout = server.timeout;
    let t = TcpTransport::connect_routed(cfg, server.router.as_ref())
        .await
        .map_err(|e| e.to_string())?;
    let seeds = t.rep3_seeds().map_err(|e| e.to_string())?;
    let ctx = Ctx::new(me, crate::ROSTER.n(), session, t);
    let p = Rep3::setup(ctx, seeds).await.map_err(|e| e.to_string())?;
    let epoch_seed = u32::from_le_bytes(crate::random_bytes::<4>()?);
    let mut state = Mesh::start(p, &server.catalog, &mesh.targets, shelf, epoch_seed)
        .await
        .map_err(|e| e.to_string())?;
    let epoch = format!("{:08x}", state.epoch());
    let keep: Vec<String> = mesh
        .targets
        .iter()
        .filter(|t| t.runs > 0)
        .map(|t| format!("{} ({}) ×{}", t.model, t.backend.name(), t.runs))
        .collect();
    server.event_as(
        "mesh_up",
        &[("epoch", epoch.clone().into())],
        format!("mesh up (epoch {epoch}), keeping runs ready: {}", keep.join(", ")),
    );
    server.metrics.set_mesh_up(true);
    // Bytes sent in the mesh so far (its start: links, keys, the models shared), counted after
    // each step.
    let mut counted = 0;
    let mut count = |m: &Mesh<TcpTransport>| -> Result<(), String> {
        let sent = m.session().map_err(|e| e.to_string())?.ctx().stats().bytes_sent;
        server.metrics.sent(Phase::Mesh, sent.saturating_sub(counted));
        counted = sent;
        Ok(())
    };
    count(&state)?;
    loop {
        let t0 = Instant::now();
        // No run is made while a client session runs here: it would take CPU from that
        // session's online phase (P0 decides for all three).
        let quiet = server.metrics.running() == 0;
        let step = state.step(shelf, quiet).await.map_err(|e| e.to_string())?;
        count(&state)?;
        match step {
            Step::Idle => {
                if me.index() == 0 {
                    tokio::time::sleep(IDLE).await;
                }
            }
            Step::Made { model, backend, ready, target, cost } => {
                server.metrics.prepared(&model, backend);
                let seconds = t0.elapsed().as_secs_f64();
                let text = format!(
                    "prepared {model} ({}): {ready}/{target} runs ready ({seconds:.2} s, {})",
                    backend.name(),
                    crate::bench::bytes(cost.bytes_sent as f64)
                );
                server.event_as(
                    "prepared",
                    &[
                        ("model", model.into()),
                        ("backend", backend.name().into()),
                        ("ready", ready.into()),
                        ("target", target.into()),
                        ("seconds", seconds.into()),
                        ("bytes", cost.bytes_sent.into()),
                    ],
                    text,
                );
            }
        }
    }
}
