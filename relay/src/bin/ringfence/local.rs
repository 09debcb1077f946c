//! A local deployment on 127.0.0.1: a relay (in this process, optionally with its WebTransport
//! front end) that requires join tokens of the deployment `local`, and three `ringfence party`
//! server processes waiting in its lobby, serving the given models, linked directly to each
//! other by a mesh on loopback ports that makes METEOR setup material ahead of demand (two
//! runs per model). Used by `ringfence demo` and `ringfence local-deployment` (which the SDK's
//! tests and the demo app start).
//!
//! As in a real deployment, only P0, the model owner, loads the ONNX files; P1 and P2 load
//! shape files written from them ([`ringfence_core::nn::shape`]), which hold no weight. Every
//! model is served with `output = "scores"`: the demo and the SDK's examples show the scores
//! (a deployment's default is the class only).
//!
//! Everything the deployment needs (identity keys, tokens, configuration files) is written to a
//! fresh private directory, removed when the deployment is dropped; the deployment's signing
//! key is kept there too, so a script can issue client tokens with `ringfence token issue`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use clap::Args;
use ringfence_core::net::{PartyId, SessionId};
use ringfence_core::nn::ModelFile;
use ringfence_core::service::Backend;
use ringfence_relay::token::{unix_now, DeploymentKey, Token, Trusted};
use ringfence_relay::ws::{RelayLimits, RelayServer};
use ringfence_relay::wt::{WtCertificate, WtServer};
use ringfence_relay::{PublicKey, StaticKeypair};

use crate::keygen::write_secret;

/// The deployment's name in its lobby and tokens.
pub(crate) const DEPLOYMENT: &str = "local";

/// How long the server parties may take to load their models and reach the lobby.
const STARTUP: Duration = Duration::from_secs(60);

/// A running local deployment. Dropping it stops the parties and removes its directory.
pub(crate) struct LocalDeployment {
    /// The relay's URL.
    pub(crate) relay: String,
    /// The relay's WebTransport URL and its self-signed certificate's SHA-256 (hex), if on.
    pub(crate) webtransport: Option<(String, String)>,
    /// The server parties' public keys, P0..P2.
    pub(crate) public_keys: Vec<PublicKey>,
    key: DeploymentKey,
    dir: PathBuf,
    procs: Vec<Child>,
    events: mpsc::Receiver<(usize, Option<serde_json::Value>)>,
    /// Events read while waiting for the parties to start, handed out first by `next_event`.
    early: std::collections::VecDeque<(usize, serde_json::Value)>,
}

impl LocalDeployment {
    /// Starts the relay on `listen` (on `rt`; WebTransport too on `webtransport`) and the three
    /// parties serving `models` (name, ONNX file), each up to `max_sessions` sessions at once,
    /// their sessions' frames among them on direct links (or all through the relay without
    /// `direct_sessions`); returns once all three wait in the lobby.
    pub(crate) fn start(
        rt: &tokio::runtime::Runtime,
        listen: std::net::SocketAddr,
        webtransport: Option<std::net::SocketAddr>,
        models: &[(String, PathBuf)],
        max_sessions: usize,
        direct_sessions: bool,
    ) -> Result<Self, String> {
        let key = DeploymentKey::generate().map_err(|e| e.to_string())?;
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
        rt.spawn(server.run());
        let dir = private_dir()?;
        let mut me = Self {
            relay,
            webtransport,
            public_keys: Vec::new(),
            key,
            dir,
            procs: Vec::new(),
            events: mpsc::channel().1,
            early: Default::default(),
        };
        write_secret(&me.dir.join("deployment.key"), &me.key.to_hex(), false)?;
        let keys = (0..3).map(|_| StaticKeypair::generate()).collect::<Result<Vec<_>, _>>();
        let keys = keys.map_err(|e| e.to_string())?;
        me.public_keys = keys.iter().map(|k| k.public).collect();
        let exe = std::env::current_exe().map_err(|e| format!("locating this executable: {e}"))?;
        let (tx, events) = mpsc::channel();
        me.events = events;
        let mesh = free_ports(3)?;
        let shapes = me.write_shapes(models)?;
        for (i, k) in keys.iter().enumerate() {
            let files = if i == 0 { models } else { &shapes[..] };
            let config = me.write_party(i, k, files, max_sessions, &mesh, direct_sessions)?;
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
        let mut waiting = [false; 3];
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
    /// ONNX file at P0, the shape file at P1 and P2); returns the configuration's path.
    fn write_party(
        &self,
        i: usize,
        k: &StaticKeypair,
        models: &[(String, PathBuf)],
        max_sessions: usize,
        mesh: &[std::net::SocketAddr],
        direct_sessions: bool,
    ) -> Result<PathBuf, String> {
        write_secret(&self.dir.join(format!("p{i}.key")), &k.private.to_hex(), false)?;
        let token = Token {
            deployment: DEPLOYMENT.into(),
            session: None,
            party: PartyId(i as u8),
            expires: unix_now() + 7 * 24 * 3600,
        };
        write_secret(&self.dir.join(format!("p{i}.token")), &token.sign(&self.key), false)?;
        let keys: Vec<String> =
            self.public_keys.iter().map(|p| format!("{:?}", p.to_hex())).collect();
        let mut cfg = format!(
            "party = {i}\ndeployment = {DEPLOYMENT:?}\nrelay = {:?}\nkey_file = \"p{i}.key\"\n\
             token_file = \"p{i}.token\"\npublic_keys = [{}]\nmax_sessions = {max_sessions}\n",
            self.relay,
            keys.join(", ")
        );
        let peers: Vec<String> = mesh.iter().map(|a| format!("{:?}", a.to_string())).collect();
        cfg.push_str(&format!(
            "\n[mesh]\npeers = [{}]\ndirect_sessions = {direct_sessions}\n",
            peers.join(", ")
        ));
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

    /// A token for the client (participant 3) of `session`, valid for ten minutes.
    pub(crate) fn client_token(&self, session: SessionId) -> String {
        let expires = unix_now() + 600;
        Token { deployment: DEPLOYMENT.into(), session: Some(session), party: PartyId(3), expires }
            .sign(&self.key)
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
        let mut ready = [false; 3];
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

impl Drop for LocalDeployment {
    fn drop(&mut self) {
        for c in &mut self.procs {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
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
    ["nn-a", "nn-b", "nn-c", "lenet", "logreg", "svm", "tree"]
        .iter()
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
}

/// `ringfence local-deployment`: starts a local deployment serving the shipped models, prints
/// one JSON line `{"relay", "webtransport", "cert_sha256", "deployment", "public_keys",
/// "signing_key_file"}` once it is ready (`webtransport`: the `https://` URL of the relay's
/// WebTransport front end, `cert_sha256`: its certificate's hash for `serverCertificateHashes`;
/// both `null` with `--no-webtransport`),
/// then the parties' events (JSON lines, each with its `party`), until stdin closes or the
/// process is killed.
pub(crate) fn run(a: &LocalArgs) -> Result<(), String> {
    let rt = crate::runtime(2)?;
    let models = shipped_models();
    if models.is_empty() {
        return Err("no shipped model found (run from the repository, see models/README.md)".into());
    }
    eprintln!(
        "ringfence local-deployment: starting a relay and 3 server parties serving {}",
        models.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")
    );
    let wt = (!a.no_webtransport).then_some(a.webtransport);
    let mut d = LocalDeployment::start(&rt, a.listen, wt, &models, 16, true)?;
    let (webtransport, cert_sha256) = d.webtransport.clone().unzip();
    let ready = serde_json::json!({
        "relay": d.relay,
        "webtransport": webtransport,
        "cert_sha256": cert_sha256,
        "deployment": DEPLOYMENT,
        "public_keys": d.public_keys.iter().map(|k| k.to_hex()).collect::<Vec<_>>(),
        "signing_key_file": d.key_file(),
    });
    println!("{ready}");
    // Stop (and clean up) when the parent closes our stdin.
    let (stop_tx, stop) = mpsc::channel();
    std::thread::spawn(move || {
        let mut sink = String::new();
        while matches!(std::io::stdin().read_line(&mut sink), Ok(n) if n > 0) {
            sink.clear();
        }
        let _ = stop_tx.send(());
    });
    loop {
        if stop.try_recv().is_ok() {
            return Ok(());
        }
        if let Some((_, e)) = d.next_event(Duration::from_millis(200))? {
            println!("{e}");
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn shipped_models_resolve_from_the_repository() {
        assert!(super::shipped_models().iter().any(|(n, _)| n == "lenet"));
    }
}
