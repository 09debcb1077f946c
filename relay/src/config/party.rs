//! The configuration file of `ringfence party` (a long-running server party of a deployment),
//! read and checked without touching the file system: the binary then reads the key, token and
//! model files it names (relative to the configuration file's folder). The format is in the
//! `ringfence party` documentation and the README.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use ringfence_core::net::{PartyId, Roster};
use ringfence_core::nn::Output;
use ringfence_core::rep3::Comparisons;
use ringfence_core::service::{Backend, Deployment, Request};
use ringfence_link::PublicKey;
use serde::Deserialize;

use crate::token::DeploymentPublicKey;

/// Runs kept ready per model by default, with a `[mesh]`, for each backend in
/// [`READY_BY_DEFAULT`] that can serve the model's output.
pub const DEFAULT_READY: usize = 2;

/// The backends whose runs are kept ready without being asked for. mal3's are not: each run
/// carries validated triples, so it is costly to keep (`ready = { mal3 = N }` asks for them).
pub const READY_BY_DEFAULT: [&str; 2] = ["meteor", "rep3"];

/// A checked party configuration.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct PartyConfig {
    /// This server's index: 0 to `public_keys.len() − 1`.
    pub party: PartyId,
    /// The deployment (lobby) name, `[a-z0-9-]{1,32}`.
    pub deployment: String,
    /// The relay's URL.
    pub relay: String,
    /// The private key file, as written (relative paths: to the configuration file's folder).
    pub key_file: PathBuf,
    /// The server parties' public keys, in party order: 3 (rep3, METEOR, mal3), 5 or 7 (rss),
    /// 1 or 2 (spdz2k).
    pub public_keys: Vec<PublicKey>,
    /// The join token file, if the relay wants one.
    pub token_file: Option<PathBuf>,
    /// The deployment's public key, with which this party checks each client's token.
    pub deployment_key: DeploymentPublicKey,
    /// Client sessions served at once (positive).
    pub max_sessions: usize,
    /// Samples per request (positive).
    pub max_batch: usize,
    /// Patience for a silent peer (positive).
    pub timeout: Duration,
    /// Where to serve `/healthz` and `/metrics`.
    pub metrics: Option<SocketAddr>,
    /// How rep3's comparisons run (`comparisons = "fan-in"`; the three servers must agree).
    pub comparisons: Comparisons,
    /// Direct links among the three servers.
    pub mesh: Option<MeshSection>,
    /// The models served (at least one, names distinct and valid).
    pub models: Vec<ModelSection>,
}

/// The `[mesh]` section: direct links among the three server parties.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct MeshSection {
    /// The three servers' direct addresses, by party index.
    pub peers: Vec<SocketAddr>,
    /// Client sessions' traffic among the servers goes over direct links too (else the relay).
    pub direct_sessions: bool,
}

/// One `[[model]]`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ModelSection {
    /// The name clients ask for.
    pub name: String,
    /// The model file: ONNX (the owner, or a public model) or its shape file.
    pub path: PathBuf,
    /// What a client may learn: [`Output::Argmax`] (the class, the default) or
    /// [`Output::Logits`] (the scores).
    pub reveals: Output,
    /// The weights are public: any party may load the ONNX file.
    pub public: bool,
    /// Runs to keep ready (with a `[mesh]`), for every served backend in the registry's order.
    pub ready: Vec<(Backend, usize)>,
}

impl ModelSection {
    /// Runs of `backend` to keep ready.
    pub fn ready(&self, backend: Backend) -> usize {
        self.ready.iter().find(|(b, _)| *b == backend).map_or(0, |(_, n)| *n)
    }
}

impl PartyConfig {
    /// The deployment's servers: as many as `public_keys`, of which any `t` together learn
    /// nothing (1 of 3, 2 of 5, 3 of 7).
    pub fn roster(&self) -> Roster {
        self.deployment().roster()
    }

    /// Who takes part in this deployment's sessions ([`Deployment`]): one or two servers make a
    /// spdz2k deployment, whose client computes as the last party.
    pub fn deployment(&self) -> Deployment {
        Deployment::new(self.public_keys.len()).expect("checked by parse")
    }

    /// Reads and checks the configuration text (TOML); the error says what is wrong, without
    /// the file's name (the caller adds it).
    pub fn parse(text: &str) -> Result<Self, String> {
        let c: ConfigFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let n = c.public_keys.len();
        if let Err(e) = Deployment::new(n) {
            let e = match e {
                ringfence_core::Error::ApiMisuse(m) => m,
                e => e.to_string(),
            };
            return Err(format!("public_keys has {n} keys: {e} (one key each)"));
        }
        if usize::from(c.party) >= n {
            return Err(format!(
                "party = {} (must be 0 to {}: one of public_keys)",
                c.party,
                n - 1
            ));
        }
        if !crate::token::valid_name(&c.deployment) {
            return Err("deployment must be [a-z0-9-]{1,32}".into());
        }
        if c.max_sessions == 0 || c.max_batch == 0 || c.timeout_ms == 0 {
            return Err("max_sessions, max_batch and timeout_ms must be positive".into());
        }
        let deployment_key = c
            .deployment_key
            .as_deref()
            .ok_or_else(|| {
                "no deployment_key: the deployment's public key (`ringfence token key` prints \
                 it), with which this party checks each client's token"
                    .to_string()
            })
            .and_then(|k| {
                DeploymentPublicKey::from_hex(k).map_err(|e| format!("deployment_key: {e}"))
            })?;
        let metrics = match &c.metrics {
            None => None,
            Some(a) => Some(a.parse::<SocketAddr>().map_err(|e| {
                format!("metrics = {a:?}: {e} (an IP address and port, e.g. \"127.0.0.1:9101\")")
            })?),
        };
        let public_keys = c
            .public_keys
            .iter()
            .map(|k| PublicKey::from_hex(k))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("public_keys: {e}"))?;
        let comparisons = match &c.comparisons {
            None => Comparisons::TwoInput,
            Some(v) => v.parse::<Comparisons>().map_err(|e| format!("comparisons: {e}"))?,
        };
        if c.models.is_empty() {
            return Err("no [[model]] to serve".into());
        }
        let mut models: Vec<ModelSection> = Vec::new();
        for m in c.models {
            models.push(model(m, c.mesh.is_some(), &models)?);
        }
        let mesh = match c.mesh {
            None => None,
            Some(_) if n != 3 => {
                return Err(format!(
                    "[mesh]: runs made ahead of demand and direct links are for deployments of \
                     three servers; this one has {n} (its sessions go through the relay)"
                ))
            }
            Some(mesh) => {
                if mesh.peers.len() != n {
                    return Err(format!(
                        "[mesh] peers has {} addresses; {n} needed",
                        mesh.peers.len(),
                    ));
                }
                let peers = mesh
                    .peers
                    .iter()
                    .map(|a| a.parse().map_err(|e| format!("[mesh] peers: {a:?}: {e}")))
                    .collect::<Result<Vec<SocketAddr>, _>>()?;
                Some(MeshSection { peers, direct_sessions: mesh.direct_sessions })
            }
        };
        Ok(Self {
            party: PartyId(c.party),
            deployment: c.deployment,
            relay: c.relay,
            key_file: c.key_file,
            public_keys,
            token_file: c.token_file,
            deployment_key,
            max_sessions: c.max_sessions,
            max_batch: c.max_batch,
            timeout: Duration::from_millis(c.timeout_ms),
            metrics,
            comparisons,
            mesh,
            models,
        })
    }
}

/// Checks one `[[model]]` against the ones before it and fills in its defaults.
fn model(m: ModelEntry, mesh: bool, before: &[ModelSection]) -> Result<ModelSection, String> {
    if before.iter().any(|b| b.name == m.name) {
        return Err(format!("model {:?} is listed twice", m.name));
    }
    Request::new(&m.name, Backend::Rep3, 1).validate().map_err(|e| e.to_string())?;
    if m.ready_rep3.is_some() {
        return Err(format!(
            "model {:?}: ready_rep3 is now part of ready, a table of runs per backend: \
             ready = {{ rep3 = N }}",
            m.name
        ));
    }
    let asked = match m.ready {
        None => Vec::new(),
        Some(v) => ready_table(&m.name, v)?,
    };
    if !mesh && asked.iter().any(|(_, n)| *n > 0) {
        return Err(format!(
            "model {:?}: ready needs a [mesh] section (the three servers make the runs among \
             themselves over its links)",
            m.name
        ));
    }
    if let Some((b, _)) = asked.iter().find(|(b, n)| *n > 0 && !b.servers().contains(&3)) {
        return Err(format!(
            "model {:?}: ready keeps {} runs, but runs are made ahead only by a [mesh] of three \
             servers, for {}",
            m.name,
            b.name(),
            made_ahead().map(Backend::name).collect::<Vec<_>>().join(", ")
        ));
    }
    let class = m.output == Reveals::Class;
    if let Some((b, _)) = asked.iter().find(|(b, n)| *n > 0 && class && !b.reveals_class()) {
        return Err(format!(
            "model {:?}: ready keeps {} runs, but {} reveals the scores and the model reveals \
             only the class (output = \"class\"): keep {} runs, or set output = \"scores\"",
            m.name,
            b.name(),
            b.name(),
            made_ahead()
                .filter(|b| b.reveals_class())
                .map(Backend::name)
                .collect::<Vec<_>>()
                .join(" or ")
        ));
    }
    let ready = Backend::all()
        .map(|b| {
            let default =
                mesh && READY_BY_DEFAULT.contains(&b.name()) && (b.reveals_class() || !class);
            let n = asked.iter().find(|(a, _)| *a == b).map(|(_, n)| *n);
            (b, n.unwrap_or(if default { DEFAULT_READY } else { 0 }))
        })
        .collect();
    let reveals = match m.output {
        Reveals::Class => Output::Argmax,
        Reveals::Scores => Output::Logits,
    };
    Ok(ModelSection { name: m.name, path: m.path, reveals, public: m.public, ready })
}

/// The families whose runs a [mesh] makes ahead of demand: those of three servers.
fn made_ahead() -> impl Iterator<Item = Backend> {
    Backend::all().filter(|b| b.servers().contains(&3))
}

/// A model's `ready = { backend = runs, ... }`.
fn ready_table(model: &str, v: toml::Value) -> Result<Vec<(Backend, usize)>, String> {
    let toml::Value::Table(t) = v else {
        return Err(format!(
            "model {model:?}: ready is a table of runs per backend, e.g. \
             ready = {{ meteor = 2, rep3 = 2 }} (it was a number of METEOR runs)"
        ));
    };
    t.into_iter()
        .map(|(k, n)| {
            let b = k.parse::<Backend>().map_err(|e| format!("model {model:?}: ready: {e}"))?;
            let n = n.as_integer().and_then(|n| usize::try_from(n).ok()).ok_or_else(|| {
                format!("model {model:?}: ready.{k} must be a number of runs (0 or more)")
            })?;
            Ok((b, n))
        })
        .collect()
}

/// The configuration file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    party: u8,
    deployment: String,
    relay: String,
    key_file: PathBuf,
    public_keys: Vec<String>,
    token_file: Option<PathBuf>,
    deployment_key: Option<String>,
    #[serde(default = "defaults::max_sessions")]
    max_sessions: usize,
    #[serde(default = "defaults::max_batch")]
    max_batch: usize,
    #[serde(default = "defaults::timeout_ms")]
    timeout_ms: u64,
    metrics: Option<String>,
    comparisons: Option<String>,
    mesh: Option<MeshEntry>,
    #[serde(default, rename = "model")]
    models: Vec<ModelEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MeshEntry {
    peers: Vec<String>,
    #[serde(default = "defaults::direct_sessions")]
    direct_sessions: bool,
}

/// Samples per request a party takes when its config does not say (`max_batch`).
pub const DEFAULT_MAX_BATCH: usize = 16;

mod defaults {
    pub(super) fn max_sessions() -> usize {
        8
    }
    pub(super) fn max_batch() -> usize {
        super::DEFAULT_MAX_BATCH
    }
    pub(super) fn timeout_ms() -> u64 {
        30_000
    }
    pub(super) fn direct_sessions() -> bool {
        true
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelEntry {
    name: String,
    path: PathBuf,
    #[serde(default)]
    output: Reveals,
    #[serde(default)]
    public: bool,
    /// Runs per backend: `{ meteor = 2, rep3 = 2, mal3 = 1 }`.
    ready: Option<toml::Value>,
    /// The old form of `ready.rep3`, refused with the new one's spelling.
    ready_rep3: Option<toml::Value>,
}

/// A model's `output` setting, as written.
#[derive(Deserialize, Default, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Reveals {
    #[default]
    Class,
    Scores,
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: &str = r#"public_keys = ["0101010101010101010101010101010101010101010101010101010101010101", "0202020202020202020202020202020202020202020202020202020202020202", "0303030303030303030303030303030303030303030303030303030303030303"]"#;

    fn config(extra: &str, models: &str) -> String {
        let key = crate::token::DeploymentKey::from_seed([9; 32]).unwrap().public();
        format!("deployment_key = \"{key}\"\n{}", config_without_key(extra, models))
    }

    fn config_without_key(extra: &str, models: &str) -> String {
        format!(
            "party = 1\ndeployment = \"acme\"\nrelay = \"ws://127.0.0.1:9000\"\nkey_file = \
             \"p1.key\"\n{KEYS}\n{extra}\n{models}"
        )
    }

    const MODEL: &str = "[[model]]\nname = \"m\"\npath = \"m.rfshape\"\n";
    const MESH: &str = "[mesh]\npeers = [\"127.0.0.1:1\", \"127.0.0.1:2\", \"127.0.0.1:3\"]\n";

    #[test]
    fn defaults_fill_in_and_mesh_keeps_runs_ready() {
        let c = PartyConfig::parse(&config("", MODEL)).unwrap();
        assert_eq!((c.max_sessions, c.max_batch, c.timeout), (8, 16, Duration::from_secs(30)));
        assert_eq!(c.comparisons, Comparisons::TwoInput);
        let fan = PartyConfig::parse(&config("comparisons = \"fan-in:8,8\"", MODEL)).unwrap();
        assert_eq!(fan.comparisons.to_string(), "fan-in:8,8");
        let runs = |c: &PartyConfig| -> Vec<(&str, usize)> {
            c.models[0].ready.iter().map(|(b, n)| (b.name(), *n)).collect()
        };
        assert_eq!(runs(&c), [("rep3", 0), ("meteor", 0), ("mal3", 0), ("rss", 0), ("spdz2k", 0)]);
        assert_eq!(c.models[0].reveals, Output::Argmax);
        let mesh = "[mesh]\npeers = [\"127.0.0.1:1\", \"127.0.0.1:2\", \"127.0.0.1:3\"]\n";
        let scores = "[[model]]\nname = \"m\"\npath = \"m.onnx\"\noutput = \"scores\"\n";
        let c = PartyConfig::parse(&config(mesh, scores)).unwrap();
        assert_eq!(runs(&c), [("rep3", 2), ("meteor", 2), ("mal3", 0), ("rss", 0), ("spdz2k", 0)]);
        assert!(c.mesh.as_ref().unwrap().direct_sessions);
        // A class-only model keeps no METEOR runs; a table overrides the defaults it names.
        let c = PartyConfig::parse(&config(mesh, MODEL)).unwrap();
        assert_eq!(runs(&c), [("rep3", 2), ("meteor", 0), ("mal3", 0), ("rss", 0), ("spdz2k", 0)]);
        let asked = format!("{MODEL}ready = {{ mal3 = 1, rep3 = 0 }}\n");
        let c = PartyConfig::parse(&config(mesh, &asked)).unwrap();
        assert_eq!(runs(&c), [("rep3", 0), ("meteor", 0), ("mal3", 1), ("rss", 0), ("spdz2k", 0)]);
        assert_eq!(c.models[0].ready(Backend::Mal3), 1);
    }

    #[test]
    fn faults_are_named() {
        for (extra, models, want) in [
            ("", "", "no [[model]]"),
            ("max_batch = 0", MODEL, "must be positive"),
            ("metrics = \"nowhere\"", MODEL, "metrics = \"nowhere\""),
            ("", &format!("{MODEL}{MODEL}"), "listed twice"),
            ("", &format!("{MODEL}ready = {{ rep3 = 1 }}\n"), "needs a [mesh]"),
            ("", &format!("{MODEL}ready_rep3 = 1\n"), "ready = { rep3 = N }"),
            ("", &format!("{MODEL}ready = 2\n"), "a table of runs per backend"),
            ("", &format!("{MODEL}ready = {{ rep4 = 1 }}\n"), "unknown backend \"rep4\""),
            ("", &format!("{MODEL}ready = {{ rep3 = -1 }}\n"), "ready.rep3 must be"),
            (MESH, &format!("{MODEL}ready = {{ meteor = 1 }}\n"), "keep rep3 or mal3 runs"),
            ("[mesh]\npeers = [\"127.0.0.1:1\"]", MODEL, "3 needed"),
            ("colour = 3", MODEL, "unknown field"),
            ("comparisons = \"fan-in:9,4\"", MODEL, "1..=8"),
            ("comparisons = \"fast\"", MODEL, "comparisons \"fast\": expected two-input"),
            (MESH, &format!("{MODEL}ready = {{ rss = 1 }}\n"), "for rep3, meteor, mal3"),
        ] {
            let e = PartyConfig::parse(&config(extra, models)).unwrap_err();
            assert!(e.contains(want), "{e:?} should contain {want:?}");
        }
        let e = PartyConfig::parse(&config_without_key("", MODEL)).unwrap_err();
        assert!(e.contains("no deployment_key"), "{e:?}");
        let bad = format!("deployment_key = \"zz\"\n{}", config_without_key("", MODEL));
        assert!(PartyConfig::parse(&bad).unwrap_err().contains("deployment_key: "));
    }

    /// [`config`] with `n` public keys and this party's index `party`.
    fn config_of(n: usize, party: usize, extra: &str) -> String {
        let keys: Vec<String> =
            (1..=n).map(|k| format!("\"{}\"", format!("{k:02x}").repeat(32))).collect();
        let c = config(extra, MODEL).replace(KEYS, &format!("public_keys = [{}]", keys.join(", ")));
        c.replace("party = 1\n", &format!("party = {party}\n"))
    }

    #[test]
    fn five_or_seven_keys_make_an_rss_deployment_without_a_mesh() {
        for (n, t) in [(5, 2), (7, 3)] {
            let c = PartyConfig::parse(&config_of(n, n - 1, "")).unwrap();
            assert_eq!((c.roster().n(), c.roster().t()), (n, t));
            assert_eq!(c.party, PartyId(n as u8 - 1));
        }
        assert_eq!(PartyConfig::parse(&config_of(3, 2, "")).unwrap().roster().n(), 3);
        // One server: spdz2k, the client computing as the second party.
        let one = PartyConfig::parse(&config_of(1, 0, "")).unwrap();
        assert_eq!((one.roster().n(), one.roster().t(), one.deployment().client().0), (2, 1, 1));
        // Two servers: spdz2k among three, the client computing as the third party.
        let two = PartyConfig::parse(&config_of(2, 1, "")).unwrap();
        assert_eq!((two.roster().n(), two.roster().t(), two.deployment().client().0), (3, 2, 2));
        for (n, party, extra, want) in [
            (4, 0, "", "public_keys has 4 keys: a deployment has 1, 2, 3, 5 or 7 servers, not 4"),
            (6, 0, "", "public_keys has 6 keys"),
            (5, 5, "", "party = 5 (must be 0 to 4"),
            (5, 0, MESH, "[mesh]: runs made ahead of demand and direct links are for deployments of three servers; this one has 5"),
        ] {
            let e = PartyConfig::parse(&config_of(n, party, extra)).unwrap_err();
            assert!(e.contains(want), "{e:?} should contain {want:?}");
        }
    }
}
