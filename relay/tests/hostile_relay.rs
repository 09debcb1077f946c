//! A relay that lies to the server parties. `ringfence party` checks every invitation's client
//! token itself (signed by its deployment, for that session and participant, bound to the
//! invited client key, unexpired, served once), so a relay can neither open sessions without a
//! client's token nor put its own key in place of the client's nor replay an invitation.
//!
//! The relay here is hostile: a small WebSocket server speaking the lobby protocol, which
//! invites three real `ringfence party` processes as it likes. Each bad invitation is refused
//! by every party (a logged reason, a refusal on the lobby socket, no join); the genuine one
//! is joined, once.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use ringfence_core::net::{PartyId, SessionId};
use ringfence_relay::token::{unix_now, DeploymentKey, Token};
use ringfence_relay::{hex, PublicKey, StaticKeypair};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use crate::relay_common::{cli, public_key_in};

type ServerWs = WebSocketStream<tokio::net::TcpStream>;

/// An invitation for a given session.
type MakeInvitation<'a> = Box<dyn Fn(SessionId) -> String + 'a>;

/// Bound on each wait for a party.
const PATIENCE: Duration = Duration::from_secs(20);

/// The hostile relay: the lobby connections it holds (by party) and the session joins it sees.
struct Hostile {
    url: String,
    lobbies: mpsc::UnboundedReceiver<(usize, ServerWs)>,
    joins: mpsc::UnboundedReceiver<String>,
}

impl Hostile {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}", listener.local_addr().unwrap());
        let (lobby_tx, lobbies) = mpsc::unbounded_channel();
        let (join_tx, joins) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            loop {
                let (tcp, _) = listener.accept().await.unwrap();
                let (lobby_tx, join_tx) = (lobby_tx.clone(), join_tx.clone());
                tokio::spawn(async move {
                    let mut path = String::new();
                    // tungstenite's callback signature fixes the error type (an HTTP response).
                    #[allow(clippy::result_large_err)]
                    let seen = |req: &Request, resp: Response| {
                        path = req.uri().to_string();
                        Ok(resp)
                    };
                    let Ok(ws) = tokio_tungstenite::accept_hdr_async(tcp, seen).await else {
                        return;
                    };
                    match path.strip_prefix("/v1/lobby/acme/") {
                        Some(rest) => {
                            let party = rest.split('?').next().unwrap().parse().unwrap();
                            let _ = lobby_tx.send((party, ws));
                        }
                        // A join: noted, then dropped (the party's session fails; no matter).
                        None => {
                            let _ = join_tx.send(path);
                        }
                    }
                });
            }
        });
        Self { url, lobbies, joins }
    }
}

/// Three `ringfence party` processes of deployment `acme` at `relay`, their JSON events, and
/// the deployment's signing key.
struct Parties {
    dir: PathBuf,
    procs: Vec<Child>,
    events: std_mpsc::Receiver<(usize, serde_json::Value)>,
    key: DeploymentKey,
}

impl Parties {
    fn start(relay: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("ringfence-hostile-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let p = |f: &str| dir.join(f).display().to_string();
        let deploy_pub = public_key_in(&cli(&["token", "key", "--out", &p("deploy.key")]));
        let key =
            DeploymentKey::from_hex(&std::fs::read_to_string(p("deploy.key")).unwrap()).unwrap();
        let keys: Vec<String> = (0..3)
            .map(|i| public_key_in(&cli(&["keygen", "--out", &p(&format!("p{i}.key"))])))
            .collect();
        let onnx = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/nn-a.onnx");
        let (tx, events) = std_mpsc::channel();
        let mut procs = Vec::new();
        for i in 0..3 {
            // No token_file: the hostile relay asks for none. The model is public, so that
            // every party may load the ONNX file (the shapes are not what this is about).
            let cfg = format!(
                "party = {i}\ndeployment = \"acme\"\nrelay = \"{relay}\"\nkey_file = \"p{i}.key\"\n\
                 deployment_key = \"{deploy_pub}\"\npublic_keys = {keys:?}\ntimeout_ms = 3000\n\
                 [[model]]\nname = \"nn-a\"\npath = {:?}\npublic = true\n",
                onnx.display().to_string()
            );
            std::fs::write(p(&format!("p{i}.toml")), cfg).unwrap();
            let mut child = Command::new(env!("CARGO_BIN_EXE_ringfence"))
                .args(["party", "--log", "json", "--config", &p(&format!("p{i}.toml"))])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let stdout = child.stdout.take().unwrap();
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    if tx.send((i, serde_json::from_str(&line).unwrap())).is_err() {
                        return;
                    }
                }
            });
            procs.push(child);
        }
        Self { dir, procs, events, key }
    }

    /// Waits for each party's next `invitation_refused` event (skipping their other events);
    /// returns the reasons by party.
    fn refusal_reasons(&self) -> Vec<String> {
        let deadline = std::time::Instant::now() + PATIENCE;
        let mut reasons = vec![None; 3];
        while reasons.iter().any(Option::is_none) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let (i, e) = self.events.recv_timeout(left).expect("no invitation_refused event");
            if e["event"] == "invitation_refused" {
                assert!(reasons[i].is_none(), "P{i} refused twice: {e}");
                reasons[i] = Some(e["reason"].as_str().unwrap().to_string());
            }
        }
        reasons.into_iter().map(Option::unwrap).collect()
    }
}

impl Drop for Parties {
    fn drop(&mut self) {
        for c in &mut self.procs {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A client token of deployment `name` for `session` and `client_key`, valid `ttl` seconds.
fn token(
    key: &DeploymentKey,
    name: &str,
    session: SessionId,
    client_key: Option<PublicKey>,
    ttl: i64,
) -> String {
    let expires = unix_now().saturating_add_signed(ttl);
    Token {
        deployment: name.into(),
        session: Some(session),
        party: PartyId(3),
        client_key,
        expires,
    }
    .sign(key)
}

/// The lobby message inviting the parties into `session` for `client_key` with `token`.
fn invitation(session: SessionId, client_key: &PublicKey, token: Option<&str>) -> String {
    serde_json::json!({
        "session": hex(&session.0),
        "parties": 4,
        "client": 3,
        "client_key": client_key.to_hex(),
        "token": token,
    })
    .to_string()
}

/// Sends `msg` to every party's lobby; each must answer with a refusal of `session` whose
/// reason holds `why`, and log it.
async fn all_refuse(
    lobbies: &mut [ServerWs],
    parties: &Parties,
    msg: &str,
    session: SessionId,
    why: &str,
) {
    for ws in lobbies.iter_mut() {
        ws.send(Message::Text(msg.into())).await.unwrap();
    }
    for (i, ws) in lobbies.iter_mut().enumerate() {
        let answer = loop {
            match tokio::time::timeout(PATIENCE, ws.next()).await {
                Ok(Some(Ok(Message::Text(t)))) => break t.to_string(),
                Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
                other => panic!("P{i} did not refuse ({why}): {other:?}"),
            }
        };
        let r: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(r["refused"], hex(&session.0), "P{i}: {answer}");
        assert!(r["reason"].as_str().unwrap().contains(why), "P{i}: {why:?} not in {answer}");
    }
    // Logged before it was answered.
    let logged = tokio::task::block_in_place(|| parties.refusal_reasons());
    for (i, reason) in logged.iter().enumerate() {
        assert!(reason.contains(why), "P{i} logged {reason:?}, not {why:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_parties_refuse_what_a_hostile_relay_invites_them_to() {
    let mut relay = Hostile::start().await;
    let parties = tokio::task::block_in_place(|| Parties::start(&relay.url));
    let mut lobbies: Vec<Option<ServerWs>> = vec![None, None, None];
    for _ in 0..3 {
        let (i, ws) = tokio::time::timeout(Duration::from_secs(60), relay.lobbies.recv())
            .await
            .expect("the parties did not reach the lobby")
            .unwrap();
        lobbies[i] = Some(ws);
    }
    let mut lobbies: Vec<ServerWs> = lobbies.into_iter().map(Option::unwrap).collect();
    let client = StaticKeypair::generate().unwrap().public;
    let relays_own = StaticKeypair::generate().unwrap().public;
    let key = &parties.key;
    let fresh = || {
        let mut s = [0u8; 16];
        getrandom::fill(&mut s).unwrap();
        SessionId(s)
    };
    let other_deployment = DeploymentKey::generate().unwrap();
    let refusals: Vec<(&str, MakeInvitation)> = vec![
        ("carries no client token", Box::new(|s| invitation(s, &client, None))),
        (
            "signature",
            Box::new(|s| {
                invitation(s, &client, Some(&token(&other_deployment, "acme", s, Some(client), 60)))
            }),
        ),
        (
            "unknown deployment",
            Box::new(|s| invitation(s, &client, Some(&token(key, "evil", s, Some(client), 60)))),
        ),
        (
            "expired",
            Box::new(|s| invitation(s, &client, Some(&token(key, "acme", s, Some(client), -60)))),
        ),
        (
            "not bound to a client key",
            Box::new(|s| invitation(s, &client, Some(&token(key, "acme", s, None, 60)))),
        ),
        // A genuine client's token, with the relay's own key in place of the client's.
        (
            "bound to another key",
            Box::new(|s| {
                invitation(s, &relays_own, Some(&token(key, "acme", s, Some(client), 60)))
            }),
        ),
        // A genuine token for another session.
        (
            "another session",
            Box::new(|s| {
                invitation(s, &client, Some(&token(key, "acme", fresh(), Some(client), 60)))
            }),
        ),
    ];
    for (why, make) in &refusals {
        let s = fresh();
        all_refuse(&mut lobbies, &parties, &make(s), s, why).await;
    }
    // No party joined any of those sessions.
    assert_eq!(relay.joins.try_recv().ok(), None);
    // A genuine invitation is joined by all three ...
    let s = fresh();
    let genuine = invitation(s, &client, Some(&token(key, "acme", s, Some(client), 60)));
    for ws in &mut lobbies {
        ws.send(Message::Text(genuine.clone().into())).await.unwrap();
    }
    let mut joined = Vec::new();
    for _ in 0..3 {
        let path =
            tokio::time::timeout(PATIENCE, relay.joins.recv()).await.expect("no join").unwrap();
        assert!(path.starts_with(&format!("/v1/{}/", hex(&s.0))), "{path}");
        joined.push(path);
    }
    joined.sort();
    assert!((0..3).all(|i| joined[i].contains(&format!("/{i}?parties=4"))), "{joined:?}");
    // ... once: the same invitation again is a replay.
    all_refuse(&mut lobbies, &parties, &genuine, s, "replayed").await;
    assert_eq!(relay.joins.try_recv().ok(), None);
}
