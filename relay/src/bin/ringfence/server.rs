//! `ringfence party --config FILE`: a long-running server party of a deployment.
//!
//! It loads its models at start-up (a malformed one stops it with the file named), waits in
//! its deployment's lobby at the relay, and serves every client session it is invited to:
//! joins the session through the relay (Noise links to the other server parties and to
//! the client, whose key comes with the invitation), answers the client's request
//! ([`service::serve`]: refusal, or setup + online inference) and logs one line per session.
//! Sessions run concurrently, each on its own thread, up to `max_sessions`; further
//! invitations wait. If the relay goes away it reconnects with back-off. SIGTERM or Ctrl-C:
//! it leaves the lobby and lets running sessions finish (up to twice `timeout_ms`).
//!
//! The client's link holds the client to its request (see [`service::request_limit`]): until
//! the request is admitted it may send only that, then only its input; more cuts it off and
//! ends its session with the reason. The `waiting` event's `client_limit_bytes` is the most any
//! request may send ([`Catalog::client_limit`]).
//!
//! ```toml
//! party = 0                          # this server's index: 0 to N − 1
//! deployment = "acme"                # the lobby name, [a-z0-9-]{1,32}
//! relay = "ws://127.0.0.1:9000"
//! key_file = "p0.key"                # from `ringfence keygen` (relative to this file)
//! public_keys = ["…", "…", "…"]      # the N server parties' public keys, in order: 3 (rep3,
//!                                    # METEOR, mal3) or 5 or 7 (rss: no [mesh], all via the relay)
//! token_file = "p0.token"            # from `ringfence token issue` (omit on an open relay)
//! deployment_key = "…"               # the deployment's public key (`ringfence token key`)
//! max_sessions = 8                   # client sessions served at once
//! max_batch = 16                     # samples per request
//! timeout_ms = 30000                 # patience for a silent peer
//! metrics = "127.0.0.1:9101"         # optional: /healthz and /metrics here (keep it private)
//!
//! [mesh]                             # optional: direct links among the three server parties
//! peers = ["10.0.0.1:7100", "10.0.0.2:7100", "10.0.0.3:7100"]  # by party index
//! direct_sessions = true             # sessions' server-to-server frames go direct too (default)
//!
//! [[model]]
//! name = "lenet"
//! path = "../models/lenet.onnx"       # P0 (the model owner): the ONNX file, with the weights;
//!                                    # P1, P2: its shape file, without (ringfence model shape)
//! output = "class"                   # what a client may learn: "class" (default) or "scores"
//! public = false                     # true: the weights are public, P1 and P2 may load the ONNX
//! ready = { rep3 = 2, mal3 = 1 }     # runs (batch 1) per backend made ahead of demand (with
//!                                    # [mesh]); default 2 for meteor (scores models) and rep3
//! ```
//!
//! The party checks each invitation's client token itself ([`InvitationCheck`]): signed with
//! `deployment_key` for this deployment, the invited session and participant 3, bound to the
//! invited client key (`ringfence token issue --client-key`), valid for at most a day, and not
//! served before (each token opens its session once; served ones are remembered until they
//! expire). A refused invitation is logged (`invitation_refused`, with the reason), answered to
//! the relay, which closes the session with the reason, and never joined: a relay cannot open
//! sessions on its own, replay a client's, or put its own key in place of the client's.
//!
//! Only the model owner, P0, may hold the weights: P1 and P2 refuse a file with weights (ONNX)
//! unless the model is marked `public`, and take its shape file instead
//! (`ringfence model shape lenet.onnx --out lenet.rfshape`; [`ringfence_core::nn::shape`]).
//! The three compare the shape's digest for every request, so different files are a refusal
//! naming the model. `output` is the owner's choice of what a client learns: the class only
//! (the default: scores help extract the model by repeated queries) or the scores; every party
//! enforces it, and as METEOR always reveals the scores it serves only `output = "scores"`
//! models (a class-only model keeps no METEOR runs ready).
//!
//! With `[mesh]`, each session's frames among the servers leave the relay for direct links
//! ([`TcpTransport::connect_direct`]; a pair that cannot link keeps the relay, and the
//! `answered` event's `links` says so), and the three servers link up directly (TCP, Noise with
//! their identity keys) to make setup material in the background ([`super::mesh`]): the runs
//! per model and backend that `ready` names. A client's request for one sample then takes a ready run
//! of its backend, and its session runs only the online phase. Each run made is logged
//! (`prepared`, with the model, backend, runs ready and the target, seconds and bytes) — the
//! console's progress display (`prepared nn-a (meteor): 1/2 runs ready (0.16 s, 136.33 kB)` in
//! text logs).
//!
//! With `metrics`, the party serves `GET /healthz` (`ok`) and `GET /metrics` (Prometheus text:
//! sessions by outcome and running, runs ready and made per model, the mesh's state, bytes sent
//! per phase; [`super::server_metrics`]) on that address, bound at start-up. A configuration
//! key, not a flag, as everything else about a party: its one file says how it runs.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use ringfence_core::net::{Ctx, PartyId, Roster, Stats};
use ringfence_core::rep3::Rep3;
use ringfence_core::rss::Rss;
use ringfence_core::service::stock::{Shelf, Target};
use ringfence_core::service::{
    self, Catalog, Deployment, ModelPolicy, Outcome, ServiceBase, Stage,
};
use ringfence_core::spdz2k;
use ringfence_relay::config::party::PartyConfig;
use ringfence_relay::direct::{DirectLinks, Router};
use ringfence_relay::rtc::PairReport;
use ringfence_relay::token::{unix_now, DeploymentPublicKey};
use ringfence_relay::ws::{
    Invitation, InvitationCheck, Lobby, LobbyEvent, LobbyPath, RelayLinkConfig,
};
use ringfence_relay::{PrivateKey, PublicKey, Security, StaticKeypair, TcpTransport};

use crate::mesh::MeshConfig;
use crate::server_metrics::{Ended, Metrics, Phase};

/// Options of `ringfence party`.
#[derive(Args, Clone)]
pub(crate) struct ServerArgs {
    /// The party's configuration file (TOML; see `ringfence party --help` and the README).
    #[arg(long)]
    config: PathBuf,
    /// Log format: text lines for people, or one JSON object per line for programs.
    #[arg(long, value_enum, default_value = "text")]
    log: LogFormat,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum LogFormat {
    Text,
    Json,
}

/// A loaded, checked configuration.
pub(crate) struct Server {
    pub(crate) me: PartyId,
    /// The deployment's compute parties (its servers, as many as its public keys, and with
    /// one server the client too).
    pub(crate) roster: Roster,
    /// Who takes part in its sessions.
    pub(crate) layout: Deployment,
    pub(crate) deployment: String,
    relay: String,
    pub(crate) keypair: StaticKeypair,
    pub(crate) public_keys: Vec<PublicKey>,
    token: Option<String>,
    /// Checks the client tokens of invitations (signed by the deployment's key).
    deployment_key: DeploymentPublicKey,
    max_sessions: usize,
    pub(crate) timeout: Duration,
    pub(crate) catalog: Catalog,
    models: Vec<String>,
    log: LogFormat,
    /// The mesh and the shelf it fills (the catalogue serves from the same shelf).
    mesh: Option<(MeshConfig, Arc<Shelf>)>,
    /// The servers' direct addresses (`[mesh] peers`) when client sessions link directly.
    direct_sessions: Vec<SocketAddr>,
    /// Where this party accepts direct links (mesh and sessions) from lower ids: bound at
    /// start-up on its `[mesh]` address (not on party 0, which only dials).
    pub(crate) router: Option<Router>,
    /// Where to serve `/healthz` and `/metrics`.
    metrics_addr: Option<SocketAddr>,
    /// Counted by the sessions and the mesh (whether `metrics` serves them or not).
    pub(crate) metrics: Metrics,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("me", &self.me).finish_non_exhaustive()
    }
}

/// Reads and checks the configuration and loads the models; every error names the file.
fn load(a: &ServerArgs) -> Result<Server, String> {
    let path = &a.config;
    let at = |e: String| format!("{}: {e}", path.display());
    let text = std::fs::read_to_string(path).map_err(|e| at(e.to_string()))?;
    let c = PartyConfig::parse(&text).map_err(at)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let rel = |p: &Path| if p.is_absolute() { p.to_path_buf() } else { dir.join(p) };
    let key_file = rel(&c.key_file);
    let private = std::fs::read_to_string(&key_file)
        .map_err(|e| format!("{}: {e}", key_file.display()))
        .and_then(|s| {
            PrivateKey::from_hex(s.trim()).map_err(|e| format!("{}: {e}", key_file.display()))
        })?;
    let keypair = StaticKeypair::from_private(private);
    let me = c.party;
    if keypair.public != c.public_keys[me.index()] {
        return Err(at(format!(
            "the key in {} is not public_keys[{}] (this party's)",
            key_file.display(),
            me.0
        )));
    }
    let token = match &c.token_file {
        None => None,
        Some(t) => {
            let t = rel(t);
            let s = std::fs::read_to_string(&t).map_err(|e| format!("{}: {e}", t.display()))?;
            Some(s.trim().to_string())
        }
    };
    let mut catalog = Catalog::new(c.max_batch).with_comparisons(c.comparisons);
    let mut targets = Vec::new();
    for m in &c.models {
        let file = rel(&m.path);
        let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        catalog
            .load(me, &m.name, &bytes, ModelPolicy { public: m.public, reveals: m.reveals })
            .map_err(|e| format!("{}: {e}", file.display()))?;
        // A quantized model's integer plan runs on the families that take one: METEOR's runs
        // (kept ready by default) are left out for it, as METEOR refuses its requests.
        let integer = catalog.shape(&m.name).is_some_and(|s| s.is_integer());
        for &(backend, runs) in &m.ready {
            if !integer || backend.runs_integer_plans() {
                targets.push(Target { model: m.name.clone(), backend, runs });
            }
        }
    }
    let models = c.models.iter().map(|m| m.name.clone()).collect();
    let mut direct_sessions = Vec::new();
    let mesh = match &c.mesh {
        None => None,
        Some(mesh) => {
            let shelf = Arc::new(Shelf::new());
            catalog = catalog.with_shelf(shelf.clone());
            if mesh.direct_sessions {
                direct_sessions = mesh.peers.clone();
            }
            Some((MeshConfig { peers: mesh.peers.clone(), targets: targets.clone() }, shelf))
        }
    };
    let metrics = Metrics::new(&targets, mesh.as_ref().map(|(_, shelf)| shelf.clone()));
    Ok(Server {
        me,
        roster: c.roster(),
        layout: c.deployment(),
        deployment: c.deployment,
        relay: c.relay,
        keypair,
        public_keys: c.public_keys,
        token,
        deployment_key: c.deployment_key,
        max_sessions: c.max_sessions,
        timeout: c.timeout,
        catalog,
        models,
        log: a.log,
        mesh,
        direct_sessions,
        router: None,
        metrics_addr: c.metrics,
        metrics,
    })
}

/// Runs the server until it is killed (or its configuration is bad).
pub(crate) fn run(a: &ServerArgs) -> Result<(), String> {
    let mut server = load(a)?;
    let rt = crate::runtime(2)?;
    if let Some((mesh, _)) = &server.mesh {
        let me = server.me.index();
        if me > 0 {
            let r = rt
                .block_on(Router::bind(mesh.peers[me]))
                .map_err(|e| format!("{}: [mesh]: {e}", a.config.display()))?;
            server.router = Some(r);
        }
    }
    let server = Arc::new(server);
    if let Some(addr) = server.metrics_addr {
        let l = rt
            .block_on(tokio::net::TcpListener::bind(addr))
            .map_err(|e| format!("{}: metrics: binding {addr}: {e}", a.config.display()))?;
        let bound = l.local_addr().map_err(|e| format!("metrics listener address: {e}"))?;
        server.event_as(
            "metrics",
            &[("address", bound.to_string().into())],
            format!("metrics on http://{bound}/metrics, health on http://{bound}/healthz"),
        );
        let s = server.clone();
        rt.spawn(ringfence_relay::metrics::serve(l, move || s.metrics.render()));
    }
    if let Some((mesh, shelf)) = server.mesh.clone() {
        let s = server.clone();
        std::thread::Builder::new()
            .name("mesh".into())
            .spawn(move || crate::mesh::run(s, mesh, shelf))
            .map_err(|e| format!("starting the mesh thread: {e}"))?;
    }
    let slots = Arc::new(tokio::sync::Semaphore::new(server.max_sessions));
    rt.block_on(async {
        let mut stop = std::pin::pin!(crate::relay::terminated());
        lobby_loop(server.clone(), slots.clone(), stop.as_mut()).await?;
        // Out of the lobby (no new sessions): let the running ones finish.
        let running = server.max_sessions - slots.available_permits();
        server.event("stopping", &[("running_sessions", running.into())]);
        let all = u32::try_from(server.max_sessions).unwrap_or(u32::MAX);
        let drained = tokio::time::timeout(server.timeout * 2, slots.acquire_many(all)).await;
        server.event("stopped", &[("drained", drained.is_ok().into())]);
        Ok(())
    })
}

/// Waits in the lobby (reconnecting with back-off) and starts a session per invitation,
/// holding one of `slots` while it runs; returns once `stop` resolves, having left the lobby
/// with a close handshake.
async fn lobby_loop(
    s: Arc<Server>,
    slots: Arc<tokio::sync::Semaphore>,
    mut stop: std::pin::Pin<&mut impl std::future::Future<Output = ()>>,
) -> Result<(), String> {
    let path = LobbyPath {
        deployment: s.deployment.clone(),
        party: s.me,
        parties: u8::try_from(s.layout.servers()).map_err(|_| "too many servers")?,
        mode: "noise-aesgcm".into(),
        token: s.token.clone(),
    };
    let mut check = InvitationCheck::new(&s.deployment, s.deployment_key);
    let mut backoff = Duration::from_millis(200);
    loop {
        let connected = tokio::select! {
            c = Lobby::connect(&s.relay, &path, s.timeout) => c,
            () = &mut stop => return Ok(()),
        };
        let mut lobby = match connected {
            Ok(l) => l,
            Err(e) => {
                s.event("relay_unreachable", &[("error", e.to_string().into())]);
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    () = &mut stop => return Ok(()),
                }
                backoff = (backoff * 2).min(Duration::from_secs(10));
                continue;
            }
        };
        backoff = Duration::from_millis(200);
        let models = s.models.join(", ");
        s.event(
            "waiting",
            &[
                ("relay", s.relay.clone().into()),
                ("deployment", s.deployment.clone().into()),
                ("models", models.into()),
                ("client_limit_bytes", s.catalog.client_limit(s.roster, s.me).max_unread.into()),
            ],
        );
        loop {
            let next = tokio::select! {
                n = lobby.next() => n,
                () = &mut stop => {
                    lobby.close().await;
                    return Ok(());
                }
            };
            match next {
                Ok(LobbyEvent::Invited(inv)) => {
                    if let Err(why) = check.check(&inv, unix_now()) {
                        s.event(
                            "invitation_refused",
                            &[("session", short_id(&inv).into()), ("reason", why.clone().into())],
                        );
                        if let Err(e) = lobby.refuse(inv.session, &why).await {
                            s.event("lobby_lost", &[("error", e.to_string().into())]);
                            break;
                        }
                        continue;
                    }
                    let Ok(slot) = slots.clone().acquire_owned().await else {
                        return Err("the session limit was closed".into());
                    };
                    let s = s.clone();
                    std::thread::spawn(move || {
                        serve_session(&s, &inv);
                        drop(slot);
                    });
                }
                Ok(LobbyEvent::Malformed(why)) => {
                    s.event("bad_invitation", &[("error", why.into())])
                }
                Err(e) => {
                    s.event("lobby_lost", &[("error", e.to_string().into())]);
                    break;
                }
            }
        }
    }
}

/// Serves one invited session on this thread, counts it and logs how it ended (counters first,
/// so that whoever reads the event finds them updated).
fn serve_session(s: &Server, inv: &Invitation) {
    let running = s.metrics.session_started();
    let (how, what, fields) = session_report(s, inv);
    drop(running);
    s.metrics.session_ended(how);
    s.event(what, &fields);
}

/// Runs the session; returns how it ended, the event and its fields.
fn session_report(
    s: &Server,
    inv: &Invitation,
) -> (Ended, &'static str, Vec<(&'static str, serde_json::Value)>) {
    let sid = short_id(inv);
    let t0 = Instant::now();
    // The protocol runs on this thread; the links' encryption and socket I/O on one worker
    // beside it (as in `ringfence session-party`), so the two overlap.
    let rt = match crate::runtime(1) {
        Ok(rt) => rt,
        Err(e) => {
            let f = vec![("session", sid.into()), ("error", e.into())];
            return (Ended::Failed, "session_failed", f);
        }
    };
    let r = match rt.block_on(session(s, inv)) {
        Ok(r) => r,
        Err(e) => {
            return (
                Ended::Failed,
                "session_failed",
                vec![("session", sid.into()), ("error", e.into())],
            )
        }
    };
    s.metrics.sent(Phase::Setup, r.sent.0);
    s.metrics.sent(Phase::Online, r.sent.1);
    let mut f = vec![
        ("session", sid.into()),
        ("model", r.model.into()),
        ("backend", r.backend.into()),
        ("batch", r.batch.into()),
        ("seconds", t0.elapsed().as_secs_f64().into()),
        ("links", links_field(&r.links)),
    ];
    match r.outcome {
        Outcome::Answered => {
            f.extend([
                ("stocked", r.stocked.into()),
                ("setup_seconds", r.setup.0.into()),
                ("setup_bytes", r.setup.1.bytes_sent.into()),
                ("online_seconds", r.online.0.into()),
                ("online_bytes", r.online.1.bytes_sent.into()),
                ("online_rounds", r.online.1.rounds.into()),
            ]);
            (Ended::Answered, "answered", f)
        }
        Outcome::Refused(why) => {
            f.push(("reason", why.into()));
            (Ended::Refused, "refused", f)
        }
        // An outcome newer than this binary: neither answered nor a refusal.
        _ => (Ended::Failed, "ended", f),
    }
}

/// The first 8 hex digits of the invited session's id, for logs.
fn short_id(inv: &Invitation) -> String {
    ringfence_relay::hex(&inv.session.0[..4])
}

/// How long a session's servers try to link directly before a pair keeps the relay.
const DIRECT_TIMEOUT: Duration = Duration::from_secs(5);

/// `"P1 direct, P2 relay (why)"`: where the frames to each other server went.
fn links_field(links: &[PairReport]) -> serde_json::Value {
    let said: Vec<String> = links.iter().map(PairReport::to_string).collect();
    said.join(", ").into()
}

/// What one served session did.
struct Served {
    model: String,
    backend: String,
    batch: usize,
    outcome: Outcome,
    setup: (f64, Stats),
    online: (f64, Stats),
    /// The setup material was made ahead of demand (the mesh).
    stocked: bool,
    /// Bytes sent up to the end of setup (or of the session, if it ended before) and after.
    sent: (u64, u64),
    /// Where the frames to the other two servers went.
    links: Vec<PairReport>,
}

async fn session(s: &Server, inv: &Invitation) -> Result<Served, String> {
    let (client, participants) = (s.layout.client(), s.layout.participants());
    if usize::from(inv.parties) != participants || inv.client != client {
        return Err(format!(
            "invitation for P{} of {} participants; this deployment's client is {client} of \
             {participants}",
            inv.client.0, inv.parties
        ));
    }
    let mut keys = s.public_keys.clone();
    keys.push(inv.client_key);
    let security = Security::Noise { keypair: s.keypair.clone(), public_keys: keys };
    let mut cfg =
        RelayLinkConfig::new(s.relay.clone(), s.me, inv.parties, security.clone(), inv.session);
    cfg.token = s.token.clone();
    // The client is untrusted: until serve admits its request it may send only that.
    cfg.recv_limits = vec![(client, service::request_limit())];
    cfg.recv_timeout = s.timeout;
    cfg.connect_timeout = s.timeout;
    let mut t = TcpTransport::connect_via_relay(cfg).await.map_err(|e| e.to_string())?;
    if s.layout.client_computes() {
        // spdz2k: this server and the client, every frame through the relay; the material is
        // made by the two in the session.
        let own = ringfence_relay::os_seed().map_err(|e| e.to_string())?;
        let ctx = Ctx::new(s.me, participants, inv.session, t);
        let p = spdz2k::Mesh::new(ctx, s.roster, own, spdz2k::Source::parties())
            .map_err(|e| e.to_string())?;
        return serve_on(s, p, Vec::new()).await;
    }
    if s.roster != Roster::THREE {
        // rss among 5 or 7: no mesh, every frame through the relay.
        let own = ringfence_relay::os_seed().map_err(|e| e.to_string())?;
        let ctx = Ctx::new(s.me, participants, inv.session, t);
        let p = Rss::setup(ctx, s.roster, own).await.map_err(|e| e.to_string())?;
        return serve_on(s, p, Vec::new()).await;
    }
    // Every server takes part, with or without direct addresses, so that the three agree.
    let direct = DirectLinks {
        addrs: &s.direct_sessions,
        router: s.router.as_ref().filter(|_| !s.direct_sessions.is_empty()),
        security: &security,
        session: inv.session,
        timeout: s.timeout.min(DIRECT_TIMEOUT),
    };
    let links = t.connect_direct(&direct).await.map_err(|e| e.to_string())?;
    let seeds = t.rep3_seeds().map_err(|e| e.to_string())?;
    let ctx = Ctx::new(s.me, participants, inv.session, t);
    let p = Rep3::setup(ctx, seeds).await.map_err(|e| e.to_string())?;
    serve_on(s, p, links).await
}

/// Serves the client's request on session `p` and closes it; `links` says where the frames to
/// the other servers went.
async fn serve_on<B: ServiceBase<TcpTransport>>(
    s: &Server,
    p: B,
    links: Vec<PairReport>,
) -> Result<Served, String> {
    let mut request = None;
    let mut stocked = false;
    let mut marks: Vec<(Instant, Stats)> = Vec::new();
    let mut setup_sent = None;
    let observe = |stage: &Stage, st: Stats| {
        match stage {
            Stage::Accepted { request: r } => request = Some(r.clone()),
            Stage::SetupDone { stocked: from_shelf } => {
                stocked = *from_shelf;
                setup_sent = Some(st.bytes_sent);
                if stocked {
                    // Counted now: the run left the shelf whatever happens next.
                    s.metrics.setup_stocked();
                }
            }
            _ => {}
        }
        marks.push((Instant::now(), st));
    };
    let client = s.layout.client();
    let (p, outcome) =
        service::serve(p, client, &s.catalog, observe).await.map_err(|e| e.to_string())?;
    let total = p.ctx().stats().bytes_sent;
    let setup_sent = setup_sent.unwrap_or(total);
    let sent = (setup_sent, total.saturating_sub(setup_sent));
    p.into_ctx().into_transport().close().await.map_err(|e| e.to_string())?;
    let span = |a: usize, b: usize| match (marks.get(a), marks.get(b)) {
        (Some((ta, sa)), Some((tb, sb))) => ((*tb - *ta).as_secs_f64(), *sb - *sa),
        _ => (0.0, Stats::default()),
    };
    let (setup, online) = (span(0, 1), span(1, 2));
    let (model, backend, batch) = match &request {
        Some(r) => (r.model.clone(), r.backend.name().to_string(), r.batch),
        None => (String::new(), String::new(), 0),
    };
    Ok(Served { model, backend, batch, outcome, setup, online, stocked, sent, links })
}

impl Server {
    /// Logs one event: a text line on stderr (`what`, then the fields as `key=value`), or a
    /// JSON object on stdout (`--log json`).
    pub(crate) fn event(&self, what: &str, fields: &[(&str, serde_json::Value)]) {
        self.log(what, fields, None);
    }

    /// Logs one event whose text line is `text` (for people); JSON has the fields as usual.
    pub(crate) fn event_as(&self, what: &str, fields: &[(&str, serde_json::Value)], text: String) {
        self.log(what, fields, Some(text));
    }

    fn log(&self, what: &str, fields: &[(&str, serde_json::Value)], text: Option<String>) {
        use std::io::Write;
        match (self.log, text) {
            (LogFormat::Json, _) => {
                let mut o = serde_json::Map::new();
                o.insert("event".into(), what.into());
                o.insert("party".into(), self.me.0.into());
                for (k, v) in fields {
                    o.insert((*k).into(), v.clone());
                }
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", serde_json::Value::Object(o));
                let _ = out.flush();
            }
            (LogFormat::Text, Some(text)) => eprintln!("ringfence party {}: {text}", self.me),
            (LogFormat::Text, None) => {
                let rest: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| match v {
                        serde_json::Value::String(s) => format!("{k}={s}"),
                        v => format!("{k}={v}"),
                    })
                    .collect();
                eprintln!("ringfence party {}: {what} {}", self.me, rest.join(" "));
            }
        }
    }
}
