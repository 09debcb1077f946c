//! A local deployment on 127.0.0.1: a relay (in this process, optionally with its WebTransport
//! front end) that requires join tokens of the deployment `local`, and three `ringfence party`
//! server processes waiting in its lobby, serving the given models, linked directly to each
//! other by a mesh on loopback ports that makes METEOR setup material ahead of demand (two
//! runs per model) — or five or seven serving rss, every frame through the relay. Used by
//! `ringfence demo` and `ringfence local-deployment` (which the SDK's tests and the demo app
//! start).
//!
//! As in a real deployment, only P0, the model owner, loads the ONNX files; P1 and P2 load
//! shape files written from them ([`ringfence_core::nn::shape`]), which hold no weight. Every
//! model is served with `output = "scores"`: the demo and the SDK's examples show the scores
//! (a deployment's default is the class only).
//!
//! Everything the deployment needs (identity keys, tokens, configuration files) is written to a
//! fresh private directory, removed when the deployment is dropped; the deployment's signing
//! key is kept there too, so a script can issue client tokens with `ringfence token issue`.
//!
//! Dropping the deployment stops it in order, so that nothing reads like a crash: the parties
//! get SIGTERM and leave the relay's lobby with a close handshake, then the relay shuts down.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use clap::Args;
use ringfence_core::net::{PartyId, SessionId};
use ringfence_core::nn::ModelFile;
use ringfence_core::service::{Backend, Deployment};
use ringfence_relay::token::{unix_now, DeploymentKey, Token, Trusted};
use ringfence_relay::ws::RelayLinkConfig;
use ringfence_relay::ws::{RelayLimits, RelayServer};
use ringfence_relay::wt::{WtCertificate, WtServer};
use ringfence_relay::{PublicKey, Security, StaticKeypair};

use crate::keygen::write_secret;

/// The deployment's name in its lobby and tokens.
pub(crate) const DEPLOYMENT: &str = "local";

/// How long the server parties may take to load their models and reach the lobby.
const STARTUP: Duration = Duration::from_secs(60);

/// How long a stopping party may take to leave (and finish a session) before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// How long client tokens of the deployment stay valid.
const CLIENT_TOKEN_LIFETIME: u64 = 600;

/// A running local deployment. Dropping it stops the parties and removes its directory.
pub(crate) struct LocalDeployment {
    /// The relay's URL.
    pub(crate) relay: String,
    /// The relay's WebTransport URL and its self-signed certificate's SHA-256 (hex), if on.
    pub(crate) webtransport: Option<(String, String)>,
    /// The server parties' public keys, in party order.
    pub(crate) public_keys: Vec<PublicKey>,
    /// Who takes part in its sessions: the server parties (1, 2, 3, 5 or 7), then the client.
    pub(crate) layout: Deployment,
    key: Arc<DeploymentKey>,
    dir: PathBuf,
    procs: Vec<Child>,
    relay_stop: Option<RelayStop>,
    events: mpsc::Receiver<(usize, Option<serde_json::Value>)>,
    /// Events read while waiting for the parties to start, handed out first by `next_event`.
    early: std::collections::VecDeque<(usize, serde_json::Value)>,
}

impl LocalDeployment {
    /// Starts the relay on `listen` (on `rt`; WebTransport too on `webtransport`) and the
    /// `roster`'s server parties serving `models` (name, ONNX file), each up to `max_sessions`
    /// sessions at once; three have a mesh, and their sessions' frames among them go on direct
    /// links (or all through the relay without `direct_sessions`); returns once all wait in the
    /// lobby.
    pub(crate) fn start(
        rt: &tokio::runtime::Runtime,
        listen: std::net::SocketAddr,
        webtransport: Option<std::net::SocketAddr>,
        layout: Deployment,
        models: &[(String, PathBuf)],
        max_sessions: usize,
        direct_sessions: bool,
    ) -> Result<Self, String> {
        let key = Arc::new(DeploymentKey::generate().map_err(|e| e.to_string())?);
        let mut trusted = Trusted::default();
        trusted.add(DEPLOYMENT, key.public());
        let server = rt
            .block_on(RelayServer::bind_trusting(listen, RelayLimits::default(), trusted))
            .map_err(|e| e.to_string())?;
        let relay = format!("ws://{}", server.local_addr());
        let webtransport = match webtransport {
            Some(addr) => {
                let cert = WtCertificate::self_signed_for(addr);
                let wt =
                    rt.block_on(WtServer::bind(addr, &server, cert)).map_err(|e| e.to_string())?;
                let announced = (wt.url(), wt.certificate_hash_hex());
                rt.spawn(wt.run());
                Some(announced)
            }
            None => None,
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let running = rt.spawn(server.run_until(
            async {
                let _ = stopped.await;
            },
            Duration::ZERO,
        ));
        let relay_stop = Some(RelayStop { stop, running, rt: rt.handle().clone() });
        let dir = private_dir()?;
        let mut me = Self {
            relay,
            webtransport,
            public_keys: Vec::new(),
            layout,
            key,
            dir,
            procs: Vec::new(),
            relay_stop,
            events: mpsc::channel().1,
            early: Default::default(),
        };
        write_secret(&me.dir.join("deployment.key"), &me.key.to_hex(), false)?;
        let keys =
            (0..layout.servers()).map(|_| StaticKeypair::generate()).collect::<Result<Vec<_>, _>>();
        let keys = keys.map_err(|e| e.to_string())?;
        me.public_keys = keys.iter().map(|k| k.public).collect();
        let exe = std::env::current_exe().map_err(|e| format!("locating this executable: {e}"))?;
        let (tx, events) = mpsc::channel();
        me.events = events;
        // The mesh is for three servers (see `ringfence party`).
        let mesh = match layout.servers() == 3 {
            true => Some(free_ports(3)?),
            false => None,
        };
        let shapes = me.write_shapes(models)?;
        for (i, k) in keys.iter().enumerate() {
            let files = if i == 0 { models } else { &shapes[..] };
            let config =
                me.write_party(i, k, files, max_sessions, mesh.as_deref(), direct_sessions)?;
            let mut child = Command::new(&exe)
                .args(["party", "--log", "json", "--config"])
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|e| format!("starting server party P{i}: {e}"))?;
            let stdout = child.stdout.take().ok_or("party stdout missing")?;
            me.procs.push(child);
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    let event = serde_json::from_str(&line).unwrap_or(serde_json::Value::Null);
                    if tx.send((i, Some(event))).is_err() {
                        return;
                    }
                }
                let _ = tx.send((i, None));
            });
        }
        let deadline = Instant::now() + STARTUP;
        let mut waiting = vec![false; layout.servers()];
        while !waiting.iter().all(|&w| w) {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some((i, e)) = me.recv_event(left)? else {
                return Err(format!(
                    "the server parties did not reach the relay within {} s",
                    STARTUP.as_secs()
                ));
            };
            waiting[i] |= e["event"] == "waiting";
            me.early.push_back((i, e));
        }
        Ok(me)
    }

    /// Writes the shape file of each of `models` (name, ONNX file) into the deployment's
    /// directory; returns them as (name, shape file).
    fn write_shapes(&self, models: &[(String, PathBuf)]) -> Result<Vec<(String, PathBuf)>, String> {
        models
            .iter()
            .map(|(name, path)| {
                let at = |e: String| format!("{}: {e}", path.display());
                let bytes = std::fs::read(path).map_err(|e| at(e.to_string()))?;
                let shape = ModelFile::parse(&bytes).map_err(|e| at(e.to_string()))?;
                let file = self.dir.join(format!("{name}.rfshape"));
                std::fs::write(&file, shape.shape().encode())
                    .map_err(|e| format!("{}: {e}", file.display()))?;
                Ok((name.clone(), file))
            })
            .collect()
    }

    /// Writes party `i`'s key, token and configuration serving `models` (name, model file: the
    /// ONNX file at P0, the shape file at the others), with a `[mesh]` at `mesh` if given;
    /// returns the configuration's path.
    fn write_party(
        &self,
        i: usize,
        k: &StaticKeypair,
        models: &[(String, PathBuf)],
        max_sessions: usize,
        mesh: Option<&[std::net::SocketAddr]>,
        direct_sessions: bool,
    ) -> Result<PathBuf, String> {
        write_secret(&self.dir.join(format!("p{i}.key")), &k.private.to_hex(), false)?;
        let token = Token {
            deployment: DEPLOYMENT.into(),
            session: None,
            party: PartyId(i as u8),
            client_key: None,
            expires: unix_now() + 7 * 24 * 3600,
        };
        write_secret(&self.dir.join(format!("p{i}.token")), &token.sign(&self.key), false)?;
        let keys: Vec<String> =
            self.public_keys.iter().map(|p| format!("{:?}", p.to_hex())).collect();
        let mut cfg = format!(
            "party = {i}\ndeployment = {DEPLOYMENT:?}\nrelay = {:?}\nkey_file = \"p{i}.key\"\n\
             token_file = \"p{i}.token\"\ndeployment_key = \"{}\"\npublic_keys = [{}]\n\
             max_sessions = {max_sessions}\n",
            self.relay,
            self.key.public(),
            keys.join(", ")
        );
        if let Some(mesh) = mesh {
            let peers: Vec<String> = mesh.iter().map(|a| format!("{:?}", a.to_string())).collect();
            cfg.push_str(&format!(
                "\n[mesh]\npeers = [{}]\ndirect_sessions = {direct_sessions}\n",
                peers.join(", ")
            ));
        }
        for (name, path) in models {
            let path =
                std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
            cfg.push_str(&format!(
                "\n[[model]]\nname = {name:?}\npath = {:?}\noutput = \"scores\"\n",
                path.display().to_string()
            ));
        }
        let file = self.dir.join(format!("p{i}.toml"));
        std::fs::write(&file, cfg).map_err(|e| format!("{}: {e}", file.display()))?;
        Ok(file)
    }

    /// A client's link for a new session with this deployment: its own Noise key, a token the
    /// deployment signed, the deployment invited.
    pub(crate) fn client_link(&self, wait: Duration) -> Result<RelayLinkConfig, String> {
        let layout = self.layout;
        let me = StaticKeypair::generate().map_err(|e| e.to_string())?;
        let client_key = me.public;
        let mut public_keys = self.public_keys.clone();
        public_keys.push(me.public);
        let security = Security::Noise { keypair: me, public_keys };
        let sid = SessionId(crate::random_bytes::<16>()?);
        let with_client = u8::try_from(layout.participants()).map_err(|_| "too many parties")?;
        let mut cfg =
            RelayLinkConfig::new(self.relay.clone(), layout.client(), with_client, security, sid)
                .inviting(DEPLOYMENT)
                .map_err(|e| e.to_string())?;
        cfg.token = Some(self.client_token(sid, client_key));
        cfg.recv_timeout = wait;
        cfg.connect_timeout = wait;
        Ok(cfg)
    }

    /// A token for the client (the participant after the servers) of `session` with the Noise
    /// public key `client_key`, valid for ten minutes.
    pub(crate) fn client_token(&self, session: SessionId, client_key: PublicKey) -> String {
        client_token(&self.key, session, self.layout.client(), client_key)
    }

    /// What `--dev` hands out: the deployment's addresses and keys, and its signing key for a
    /// fresh client token per session.
    pub(crate) fn dev_sessions(&self) -> crate::dev::DevSessions {
        crate::dev::DevSessions {
            relay: self.relay.clone(),
            webtransport: self.webtransport.clone(),
            deployment: DEPLOYMENT,
            parties: self.public_keys.iter().map(|k| k.to_hex()).collect(),
            key: self.key.clone(),
        }
    }

    /// Each server party's peak resident memory in bytes (0 where unknown).
    pub(crate) fn peak_rss(&self) -> Vec<u64> {
        let status = |c: &Child| PathBuf::from(format!("/proc/{}/status", c.id()));
        self.procs.iter().map(|c| crate::load::rss_of(&status(c))).collect()
    }

    /// The deployment's signing key file (for `ringfence token issue --key`).
    pub(crate) fn key_file(&self) -> PathBuf {
        self.dir.join("deployment.key")
    }

    /// The next event a party logged (`ringfence party --log json`), or `None` if none came
    /// within `wait`. A party that exits is an error naming it.
    pub(crate) fn next_event(
        &mut self,
        wait: Duration,
    ) -> Result<Option<(usize, serde_json::Value)>, String> {
        match self.early.pop_front() {
            Some(e) => Ok(Some(e)),
            None => self.recv_event(wait),
        }
    }

    /// The next event from a party's output (none of the early ones).
    fn recv_event(&mut self, wait: Duration) -> Result<Option<(usize, serde_json::Value)>, String> {
        match self.events.recv_timeout(wait) {
            Ok((i, Some(e))) => Ok(Some((i, e))),
            Ok((i, None)) => {
                let status = self.procs[i].wait().map(|s| s.to_string()).unwrap_or_default();
                Err(format!("server party P{i} exited ({status})"))
            }
            Err(_) => Ok(None),
        }
    }
}

impl LocalDeployment {
    /// Waits until every party has a run of `model` on `backend` made ahead of demand (the
    /// mesh's `prepared` events); returns how long that took, or `None` if none comes within
    /// `wait`.
    pub(crate) fn wait_prepared(
        &mut self,
        model: &str,
        backend: Backend,
        wait: Duration,
    ) -> Result<Option<f64>, String> {
        let t0 = Instant::now();
        let mut ready = vec![false; self.layout.servers()];
        while !ready.iter().all(|&r| r) {
            let left = (t0 + wait).saturating_duration_since(Instant::now());
            match self.next_event(left)? {
                Some((i, e))
                    if e["event"] == "prepared"
                        && e["model"] == model
                        && e["backend"] == backend.name() =>
                {
                    ready[i] = true
                }
                Some(_) => {}
                None => return Ok(None),
            }
        }
        Ok(Some(t0.elapsed().as_secs_f64()))
    }
}

/// A token for `client` (the participant after the servers) of `session` of the local
/// deployment, bound to its Noise public key `client_key` (the server parties check both).
pub(crate) fn client_token(
    key: &DeploymentKey,
    session: SessionId,
    client: PartyId,
    client_key: PublicKey,
) -> String {
    let expires = unix_now() + CLIENT_TOKEN_LIFETIME;
    Token {
        deployment: DEPLOYMENT.into(),
        session: Some(session),
        party: client,
        client_key: Some(client_key),
        expires,
    }
    .sign(key)
}

/// The embedded relay's shutdown switch.
struct RelayStop {
    stop: tokio::sync::oneshot::Sender<()>,
    running: tokio::task::JoinHandle<Result<(), ringfence_relay::RelayError>>,
    rt: tokio::runtime::Handle,
}

impl Drop for LocalDeployment {
    fn drop(&mut self) {
        for c in &mut self.procs {
            terminate(c);
        }
        let deadline = Instant::now() + STOP_GRACE;
        for c in &mut self.procs {
            while matches!(c.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
        if let Some(r) = self.relay_stop.take() {
            let _ = r.stop.send(());
            // Bounded by the relay's own flush of its last close frames (2 s).
            let _ = r
                .rt
                .block_on(async { tokio::time::timeout(Duration::from_secs(3), r.running).await });
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Asks a party to stop (SIGTERM: it leaves the lobby cleanly and lets its sessions finish);
/// where there is no SIGTERM, stops it at once.
fn terminate(c: &mut Child) {
    // Already reaped (it exited): its pid may belong to another process by now.
    if !matches!(c.try_wait(), Ok(None)) {
        return;
    }
    #[cfg(target_os = "linux")]
    if let Ok(pid) = libc::pid_t::try_from(c.id()) {
        #[allow(unsafe_code)]
        // SAFETY: kill(2) takes two integers and touches no memory of ours; `pid` is our own
        // child, not reaped (checked above), so it cannot have been reused by another process.
        let sent = unsafe { libc::kill(pid, libc::SIGTERM) } == 0;
        if sent {
            return;
        }
    }
    let _ = c.kill();
}

/// A new directory only this user can enter, under the system's temporary directory.
fn private_dir() -> Result<PathBuf, String> {
    let b = crate::random_bytes::<8>()?;
    let tag: String = b.iter().map(|x| format!("{x:02x}")).collect();
    let dir = std::env::temp_dir().join(format!("ringfence-local-{tag}"));
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

/// `n` loopback addresses free right now (the mesh's: the parties bind them a moment later).
fn free_ports(n: usize) -> Result<Vec<std::net::SocketAddr>, String> {
    let held = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("finding free loopback ports: {e}"))?;
    held.iter().map(|l| l.local_addr().map_err(|e| e.to_string())).collect()
}

/// The shipped models a local deployment serves: every `models/NAME.onnx` the bench knows.
pub(crate) fn shipped_models() -> Vec<(String, PathBuf)> {
    let names = ["nn-a", "nn-b", "nn-c", "lenet", "minionn", "logreg", "svm", "tree"];
    // The int8 models (served on rep3, mal3 and rss; METEOR refuses them by name).
    names
        .into_iter()
        .chain(["minionn-q", "lenet-qdq", "mobilenet-q"])
        .filter_map(|n| crate::bench::resolve_model(Path::new(n)).ok().map(|p| (n.to_string(), p)))
        .collect()
}

/// Options of `ringfence local-deployment`.
#[derive(Args, Clone)]
pub(crate) struct LocalArgs {
    /// Where the relay listens.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: std::net::SocketAddr,
    /// Where the relay's WebTransport front end listens (UDP; self-signed certificate).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    webtransport: std::net::SocketAddr,
    /// Serve WebSocket only.
    #[arg(long)]
    no_webtransport: bool,
    /// Also stop when stdin closes (for a parent process that holds the pipe as a lifeline);
    /// without it, only SIGINT (Ctrl-C) or SIGTERM stop the deployment.
    #[arg(long)]
    stop_on_stdin_eof: bool,
    /// Development only: also serve a fresh session and its join token to anyone who asks, at
    /// `GET http://<--dev-http>/session` (JSON with the keys of the SDK's ClientOptions).
    #[arg(long)]
    dev: bool,
    /// The deployment's size: 3 server parties (rep3, METEOR, mal3; with a mesh making setup
    /// ahead of demand), 5 or 7 (rss: any 2, or 3, of them together learn nothing), or 1 or 2
    /// (spdz2k: the client computes as the last party; none trusts the others).
    #[arg(long, value_name = "N", default_value_t = 3)]
    parties: usize,
    /// Where --dev serves sessions (a loopback address: it hands tokens to anyone).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8787", requires = "dev")]
    dev_http: std::net::SocketAddr,
}

/// `ringfence local-deployment`: starts a local deployment serving the shipped models, prints
/// one JSON line `{"relay", "webtransport", "cert_sha256", "deployment", "public_keys",
/// "signing_key_file"}` once it is ready (`webtransport`: the `https://` URL of the relay's
/// WebTransport front end, `cert_sha256`: its certificate's hash for `serverCertificateHashes`;
/// both `null` with `--no-webtransport`; with `--dev` also `"dev"`, the URL of its sessions),
/// then the parties' events (JSON lines, each with its `party`), until SIGINT or SIGTERM (or
/// stdin closing, with `--stop-on-stdin-eof`, or stdout closing), and stops cleanly.
pub(crate) fn run(a: &LocalArgs) -> Result<(), String> {
    // Refused before anything starts: the address is the one thing a user may get wrong here.
    if a.dev {
        crate::dev::check_loopback(a.dev_http)?;
    }
    let rt = crate::runtime(2)?;
    let models = shipped_models();
    if models.is_empty() {
        return Err("no shipped model found (run from the repository, see models/README.md)".into());
    }
    // Every reason to stop ends up here; the signal handlers are in place before the parties
    // start, so that a signal during start-up still stops them.
    let (stop_tx, stop) = mpsc::channel::<()>();
    let on_signal = stop_tx.clone();
    rt.spawn(async move {
        crate::relay::terminated().await;
        let _ = on_signal.send(());
    });
    if a.stop_on_stdin_eof {
        std::thread::spawn(move || {
            let mut sink = String::new();
            while matches!(std::io::stdin().read_line(&mut sink), Ok(n) if n > 0) {
                sink.clear();
            }
            let _ = stop_tx.send(());
        });
    }
    let layout = servers(a.parties)?;
    eprintln!(
        "ringfence local-deployment: starting a relay and {} server parties serving {} ({})",
        layout.servers(),
        models.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", "),
        served_families(layout)
    );
    let wt = (!a.no_webtransport).then_some(a.webtransport);
    let mut d = LocalDeployment::start(&rt, a.listen, wt, layout, &models, 16, true)?;
    let (webtransport, cert_sha256) = d.webtransport.clone().unzip();
    let mut ready = serde_json::json!({
        "relay": d.relay,
        "webtransport": webtransport,
        "cert_sha256": cert_sha256,
        "deployment": DEPLOYMENT,
        "public_keys": d.public_keys.iter().map(|k| k.to_hex()).collect::<Vec<_>>(),
        "signing_key_file": d.key_file(),
    });
    if a.dev {
        let url = rt.block_on(crate::dev::serve(a.dev_http, d.dev_sessions()))?;
        ready["dev"] = url.clone().into();
        eprintln!(
            "ringfence local-deployment: session tokens for anyone at {url} (development only: \
             never expose it)\nringfence local-deployment: ready; Ctrl-C stops it"
        );
    }
    if !emit(&ready.to_string()) {
        return Ok(());
    }
    loop {
        if stop.try_recv().is_ok() {
            return Ok(());
        }
        match d.next_event(Duration::from_millis(200)) {
            Ok(Some((_, e))) => {
                if !emit(&e.to_string()) {
                    return Ok(());
                }
            }
            Ok(None) => {}
            // A party stopped by the same signal as this process (a terminal's Ctrl-C reaches
            // the whole process group, systemd signals every process of the unit) is a stop.
            Err(_) if stop.recv_timeout(Duration::from_secs(1)).is_ok() => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// A deployment of `n` server parties (`--parties N`): 1 or 2 (spdz2k, the client computing
/// too), 3, 5 or 7, as some family is served among them.
pub(crate) fn servers(n: usize) -> Result<Deployment, String> {
    Deployment::new(n).map_err(|_| {
        format!(
            "--parties {n}: a deployment has 1 or 2 server parties (spdz2k, with the client \
             computing as the last party), 3 (rep3, meteor, mal3) or 5 or 7 (rss)"
        )
    })
}

/// The family a client of `layout`'s servers asks for: `chosen`, which must run among that
/// many servers, else METEOR among three, rss among five or seven and spdz2k with one.
pub(crate) fn client_backend(
    layout: Deployment,
    chosen: Option<Backend>,
) -> Result<Backend, String> {
    let n = layout.servers();
    let served: Vec<Backend> = Backend::all().filter(|b| b.servers().contains(&n)).collect();
    let backend = match chosen {
        Some(b) => b,
        None if n == 3 => Backend::Meteor,
        None => *served.first().ok_or("no family runs here")?,
    };
    if !served.contains(&backend) {
        return Err(format!(
            "--backend {}: it runs among {} server parties, not {n} (--parties {n} serves {})",
            backend.name(),
            backend.servers().iter().map(usize::to_string).collect::<Vec<_>>().join(" or "),
            served_families(layout)
        ));
    }
    Ok(backend)
}

/// The families a deployment of `layout`'s servers serves, for messages: "rep3, meteor, mal3".
pub(crate) fn served_families(layout: Deployment) -> String {
    let names: Vec<&str> = Backend::all()
        .filter(|b| b.servers().contains(&layout.servers()))
        .map(Backend::name)
        .collect();
    names.join(", ")
}

/// Writes one line to stdout; `false` once stdout is gone (a closed pipe, e.g. `| head -1`:
/// then there is nobody left to tell, and the deployment stops quietly).
fn emit(line: &str) -> bool {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).is_ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn shipped_models_resolve_from_the_repository() {
        assert!(super::shipped_models().iter().any(|(n, _)| n == "lenet"));
    }
}
