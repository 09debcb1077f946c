//! `ringfence load`: bounded load tests on loopback, printing figures.
//!
//! - `--clients N`: a local deployment ([`LocalDeployment`]: relay + three (or `--parties` 5 or
//!   7) `ringfence party` servers) and N native clients that all open their session at once and classify one
//!   held-out sample each; every answer is checked against onnxruntime's class. Prints
//!   throughput, latency percentiles and the server parties' peak memory.
//! - `--relay-sessions N`: N sessions of three native parties each (in this process), all at
//!   once through one relay, each computing a small rep3 product checked against plaintext:
//!   how many concurrent sessions the relay carries, and how fast.

use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

use clap::Args;
use futures_util::future::join_all;
use ringfence_core::net::{Ctx, PartyId, SessionId};
use ringfence_core::rep3::Rep3;
use ringfence_core::ring::{IntRing, Z64};
use ringfence_core::service::{self, Request};
use ringfence_relay::ws::{RelayLimits, RelayLinkConfig, RelayServer};
use ringfence_relay::{os_seed, Security, StaticKeypair, TcpTransport};

use crate::bench::{self, Backend};
use crate::local::LocalDeployment;
use crate::testset::TestSet;

/// Options of `ringfence load`.
#[derive(Args, Clone)]
pub(crate) struct LoadArgs {
    /// Concurrent clients of a local deployment, one classification each.
    #[arg(long, conflicts_with = "relay_sessions", required_unless_present = "relay_sessions")]
    clients: Option<usize>,
    /// Concurrent 3-party sessions through one relay (small rep3 products).
    #[arg(long)]
    relay_sessions: Option<usize>,
    /// The model the clients ask for.
    #[arg(long, default_value = "lenet")]
    model: std::path::PathBuf,
    /// The protocol family of the clients' requests (default: meteor among 3 servers, rss
    /// among 5 or 7).
    #[arg(long, value_parser = bench::backend_arg())]
    backend: Option<Backend>,
    /// With --clients: the deployment's server parties, 3, 5 or 7.
    #[arg(long, value_name = "N", default_value_t = 3)]
    parties: usize,
    /// Elements of each relay session's product.
    #[arg(long, default_value_t = 1000)]
    elements: usize,
    /// Patience for a silent peer.
    #[arg(long, default_value_t = 120_000)]
    timeout_ms: u64,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// With --clients: the servers' frames to each other go through the relay too (by default
    /// they take direct links), to compare the two.
    #[arg(long)]
    relay_only: bool,
}

/// Runs the load test; `Err` if any answer is wrong or any session failed.
pub(crate) fn run(a: &LoadArgs) -> Result<(), String> {
    let rt = crate::runtime(2)?;
    let figures = match (a.clients, a.relay_sessions) {
        (Some(n), _) => clients(&rt, a, n)?,
        (None, Some(n)) => relay_sessions(&rt, a, n)?,
        (None, None) => return Err("give --clients N or --relay-sessions N".into()),
    };
    if a.json {
        println!("{figures}");
    } else {
        let o = figures.as_object().cloned().unwrap_or_default();
        for (k, v) in o {
            println!("  {k:<28} {v}");
        }
    }
    Ok(())
}

/// Latency percentile `p` (0..=100) of sorted seconds.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// Runs `jobs` all at once on `rt`; returns each result with the seconds from its start to its
/// end, in order, and the seconds of the whole batch.
fn timed_all<T>(
    rt: &tokio::runtime::Runtime,
    jobs: impl IntoIterator<Item = impl Future<Output = T>>,
) -> (Vec<(T, f64)>, f64) {
    let t0 = Instant::now();
    let results = rt.block_on(join_all(jobs.into_iter().map(|job| async {
        let t = Instant::now();
        let r = job.await;
        (r, t.elapsed().as_secs_f64())
    })));
    (results, t0.elapsed().as_secs_f64())
}

fn latency_fields(mut lat: Vec<f64>, wall: f64) -> serde_json::Value {
    lat.sort_by(f64::total_cmp);
    serde_json::json!({
        "wall_seconds": wall,
        "throughput_per_second": lat.len() as f64 / wall,
        "latency_p50_seconds": percentile(&lat, 50.0),
        "latency_p99_seconds": percentile(&lat, 99.0),
        "latency_max_seconds": lat.last().copied().unwrap_or(f64::NAN),
    })
}

fn clients(
    rt: &tokio::runtime::Runtime,
    a: &LoadArgs,
    n: usize,
) -> Result<serde_json::Value, String> {
    if n == 0 || n > 256 {
        return Err("--clients must be 1..=256".into());
    }
    let layout = crate::local::servers(a.parties)?;
    let backend = crate::local::client_backend(layout, a.backend)?;
    let model = bench::resolve_model(&a.model)?;
    let name = model.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let set = TestSet::for_model(&model)?;
    eprintln!(
        "ringfence load: starting a local deployment of {} servers serving {name} ...",
        layout.servers()
    );
    let listen = "127.0.0.1:0".parse().map_err(|e| format!("{e}"))?;
    let models = [(name.clone(), model.clone())];
    let d = LocalDeployment::start(rt, listen, None, layout, &models, n, !a.relay_only)?;
    let timeout = Duration::from_millis(a.timeout_ms);
    let mut jobs = Vec::new();
    for k in 0..n {
        let cfg = d.client_link(timeout)?;
        jobs.push((cfg, set.samples(k, 1), set.expected(k, 1)[0]));
    }
    eprintln!("ringfence load: {n} clients classify with {name} ({}) at once ...", backend.name());
    let (results, wall) = timed_all(
        rt,
        jobs.iter().map(|(cfg, x, _)| classify(cfg.clone(), Request::new(&name, backend, 1), x)),
    );
    let mut lat = Vec::new();
    let mut wrong = 0;
    for ((_, _, want), (got, secs)) in jobs.iter().zip(results) {
        match got {
            Ok(c) if c == *want => lat.push(secs),
            Ok(_) => wrong += 1,
            Err(e) => return Err(format!("a client failed: {e}")),
        }
    }
    if wrong > 0 {
        return Err(format!("{wrong} of {n} answers differ from onnxruntime's"));
    }
    let mut f = latency_fields(lat, wall);
    f["test"] = "deployment_clients".into();
    f["clients"] = n.into();
    f["model"] = name.into();
    f["backend"] = backend.name().into();
    f["servers"] = layout.servers().into();
    // Only three servers link directly (the mesh); five or seven exchange through the relay.
    let direct = !a.relay_only && layout.servers() == crate::ROSTER.n();
    f["server_links"] = if direct { "direct" } else { "relay" }.into();
    f["correct"] = n.into();
    f["party_peak_rss_bytes"] = d.peak_rss().into_iter().collect::<Vec<_>>().into();
    Ok(f)
}

async fn classify(cfg: RelayLinkConfig, request: Request, input: &[f64]) -> Result<usize, String> {
    let (session, me, participants) = (cfg.session, cfg.me, usize::from(cfg.parties));
    let t = TcpTransport::connect_via_relay(cfg).await.map_err(|e| e.to_string())?;
    let own = os_seed().map_err(|e| e.to_string())?;
    let mut c = service::Client::new(Ctx::new(me, participants, session, t), own);
    let e = |e: ringfence_core::Error| e.to_string();
    let info = c.request(&request).await.map_err(e)?;
    let ready = c.setup(&info).await.map_err(e)?;
    let out = c.run(ready, input).await.map_err(e)?;
    if let Some(ctx) = c.into_ctx() {
        ctx.into_transport().close().await.map_err(|e| e.to_string())?;
    }
    out.classes.first().copied().ok_or_else(|| "no class".into())
}

fn relay_sessions(
    rt: &tokio::runtime::Runtime,
    a: &LoadArgs,
    n: usize,
) -> Result<serde_json::Value, String> {
    if n == 0 || n > 2000 {
        return Err("--relay-sessions must be 1..=2000".into());
    }
    let mut limits = RelayLimits::default();
    limits.max_sessions = limits.max_sessions.max(n);
    limits.max_connections = limits.max_connections.max(crate::ROSTER.n() * n + 16);
    let listen = "127.0.0.1:0".parse().map_err(|e| format!("{e}"))?;
    let server = rt.block_on(RelayServer::bind(listen, limits)).map_err(|e| e.to_string())?;
    let url = format!("ws://{}", server.local_addr());
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = server.session_counter();
    let watch = peak.clone();
    rt.spawn(server.run());
    rt.spawn(async move {
        loop {
            watch.fetch_max(counter(), std::sync::atomic::Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    let timeout = Duration::from_millis(a.timeout_ms);
    let m = a.elements;
    eprintln!("ringfence load: {n} sessions × 3 parties through one relay, a {m}-element product each ...");
    let mut parties = Vec::new();
    for _ in 0..n {
        let keys = crate::ROSTER
            .parties()
            .map(|_| StaticKeypair::generate())
            .collect::<Result<Vec<_>, _>>();
        let keys = keys.map_err(|e| e.to_string())?;
        let sid = SessionId(crate::random_bytes::<16>()?);
        let x: Vec<Z64> = crate::random_bytes::<16>()?
            .iter()
            .cycle()
            .take(m)
            .map(|&b| Z64::from_i64(i64::from(b) - 100))
            .collect();
        let y: Vec<Z64> = crate::random_bytes::<16>()?
            .iter()
            .cycle()
            .take(m)
            .map(|&b| Z64::from_i64(i64::from(b) * 3))
            .collect();
        for i in crate::ROSTER.parties() {
            let security = Security::Noise {
                keypair: keys[i.index()].clone(),
                public_keys: keys.iter().map(|k| k.public).collect(),
            };
            let mut cfg = RelayLinkConfig::new(url.clone(), i, crate::PARTIES, security, sid);
            cfg.recv_timeout = timeout;
            cfg.connect_timeout = timeout;
            parties.push((cfg, x.clone(), y.clone()));
        }
    }
    let (results, wall) =
        timed_all(rt, parties.iter().map(|(cfg, x, y)| product(cfg.clone(), x, y)));
    let mut lat = Vec::new();
    for ((_, x, y), (got, secs)) in parties.iter().zip(results) {
        let got = got.map_err(|e| format!("a session failed: {e}"))?;
        let want: Vec<Z64> = x.iter().zip(y).map(|(a, b)| *a * *b).collect();
        if got != want {
            return Err("a product differs from plaintext".into());
        }
        lat.push(secs);
    }
    let mut f = latency_fields(lat, wall);
    // Per party: a session's latency is its slowest party's; throughput counts sessions.
    f["throughput_per_second"] = (n as f64 / wall).into();
    f["test"] = "relay_sessions".into();
    f["sessions"] = n.into();
    f["parties"] = (crate::ROSTER.n() * n).into();
    f["elements"] = m.into();
    f["peak_concurrent_sessions"] = peak.load(std::sync::atomic::Ordering::Relaxed).into();
    f["process_peak_rss_bytes"] = rss_of(Path::new("/proc/self/status")).into();
    Ok(f)
}

/// One party of a relay session: shares, multiplies and reveals.
async fn product(cfg: RelayLinkConfig, x: &[Z64], y: &[Z64]) -> Result<Vec<Z64>, String> {
    let (me, session) = (cfg.me, cfg.session);
    let e = |e: ringfence_core::Error| e.to_string();
    let t = TcpTransport::connect_via_relay(cfg).await.map_err(|e| e.to_string())?;
    let seeds = t.rep3_seeds().map_err(|e| e.to_string())?;
    let mut p = Rep3::setup(Ctx::new(me, crate::ROSTER.n(), session, t), seeds).await.map_err(e)?;
    let xs = p.input(PartyId(0), Some(x).filter(|_| me.0 == 0), x.len()).await.map_err(e)?;
    let ys = p.input(PartyId(1), Some(y).filter(|_| me.0 == 1), y.len()).await.map_err(e)?;
    let z = p.mul(&xs, &ys).await.map_err(e)?;
    let z = p.reveal(z).await.map_err(e)?;
    p.into_ctx().into_transport().close().await.map_err(|e| e.to_string())?;
    Ok(z)
}

/// Peak resident memory (`VmHWM`) in bytes from a `/proc/PID/status` file, or 0.
pub(crate) fn rss_of(status: &Path) -> u64 {
    std::fs::read_to_string(status)
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("VmHWM:")?.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()
            })
        })
        .map_or(0, |kb| kb * 1024)
}
