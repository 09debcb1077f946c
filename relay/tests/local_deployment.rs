//! `ringfence local-deployment` as a user runs it: it keeps running with stdin closed (started
//! with `&`, nohup, Docker, systemd), stops cleanly on SIGTERM (exit 0, nothing alarming on
//! stderr), or when stdin closes only if asked (`--stop-on-stdin-eof`), ends quietly when its
//! stdout goes away (`| head -1`), and with `--dev` hands out sessions whose tokens the relay
//! accepts, over HTTP on loopback only.

use crate::testset;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use ringfence_core::net::SessionId;
use ringfence_core::service::{Backend, CLIENT};
use ringfence_relay::ws::{parse_session_hex, RelayLinkConfig};
use ringfence_relay::{PublicKey, Security, StaticKeypair};

use crate::relay_common::{classify, http_get, http_request};

const EXE: &str = env!("CARGO_BIN_EXE_ringfence");

/// A running `ringfence local-deployment ARGS`, once it printed its ready line.
struct Local {
    child: Child,
    /// Its stdout after the ready line (`None` once closed).
    stdout: Option<BufReader<ChildStdout>>,
    ready: serde_json::Value,
    /// Its stderr (the relay's log and the parties'), read to the end by a thread.
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Local {
    /// Started with its stdin closed.
    fn start(args: &[&str]) -> Self {
        Self::start_with(args, Stdio::null())
    }

    fn start_with(args: &[&str], stdin: Stdio) -> Self {
        let mut child = Command::new(EXE)
            .arg("local-deployment")
            .args(args)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let ready = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
        Self { child, stdout: Some(stdout), ready, stderr: Some(stderr) }
    }

    /// The exit status within `wait`, if it exited.
    fn exited_within(&mut self, wait: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return Some(s);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGTERM.
    fn terminate(&self) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    }

    /// Its stderr, once it exited.
    fn stderr(mut self) -> String {
        self.stdout = None;
        self.stderr.take().unwrap().join().unwrap()
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.terminate();
            if self.exited_within(Duration::from_secs(10)).is_none() {
                let _ = self.child.kill();
            }
        }
    }
}

/// The body of an HTTP response, after checking its status line and that it has `headers`.
fn body_of<'a>(response: &'a str, status: &str, headers: &[&str]) -> &'a str {
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or_else(|| panic!("{response}"));
    assert!(head.starts_with(&format!("HTTP/1.1 {status}\r\n")), "{response}");
    let lower = head.to_ascii_lowercase();
    for h in headers {
        assert!(lower.lines().any(|l| l == *h), "{h} missing from:\n{head}");
    }
    body
}

/// A client with keypair `me` of the session `GET /session?key=` (its public key) handed out.
fn client_of(session: &serde_json::Value, me: StaticKeypair) -> RelayLinkConfig {
    let parties = session["parties"].as_array().unwrap().iter();
    let mut keys: Vec<PublicKey> =
        parties.map(|k| PublicKey::from_hex(k.as_str().unwrap()).unwrap()).collect();
    keys.push(me.public);
    let id: SessionId = parse_session_hex(session["session"].as_str().unwrap()).unwrap();
    let relay = session["relay"].as_str().unwrap().to_string();
    let security = Security::Noise { keypair: me, public_keys: keys };
    let mut cfg = RelayLinkConfig::new(relay, CLIENT, 4, security, id)
        .inviting(session["deployment"].as_str().unwrap())
        .unwrap();
    cfg.token = Some(session["token"].as_str().unwrap().to_string());
    cfg.recv_timeout = Duration::from_secs(60);
    cfg.connect_timeout = Duration::from_secs(20);
    cfg
}

fn hex_of(v: &serde_json::Value, len: usize) -> bool {
    v.as_str().is_some_and(|s| s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[test]
fn dev_serves_sessions_the_relay_admits_and_sigterm_stops_it_cleanly() {
    let mut d = Local::start(&["--dev", "--dev-http", "127.0.0.1:0"]);
    // Its stdin is closed: it keeps running all the same.
    assert!(d.exited_within(Duration::from_millis(1500)).is_none(), "exited with stdin closed");
    let dev = d.ready["dev"].as_str().unwrap().to_string();
    let addr = dev.strip_prefix("http://").and_then(|a| a.strip_suffix("/session")).unwrap();
    let addr = addr.parse().unwrap_or_else(|e| panic!("{e}: {dev}"));
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let cors = "access-control-allow-origin: *";
    // The client's key comes first: the session's token is bound to it.
    let missing_key = rt.block_on(http_get(addr, "/session"));
    assert!(body_of(&missing_key, "400 Bad Request", &[cors]).contains("key=HEX"), "{missing_key}");
    let (me, other) = (StaticKeypair::generate().unwrap(), StaticKeypair::generate().unwrap());
    let for_key = |k: &StaticKeypair| format!("/session?key={}", k.public.to_hex());
    let got = rt.block_on(http_get(addr, &for_key(&me)));
    let headers = [cors, "content-type: application/json", "cache-control: no-store"];
    let body = body_of(&got, "200 OK", &headers);
    let s: serde_json::Value = serde_json::from_str(body).unwrap();
    // The documented keys, in the documented order (those of the SDK's ClientOptions).
    let keys: Vec<&str> = ["relay", "webTransport", "deployment", "session", "token", "parties"]
        .into_iter()
        .filter(|k| body.contains(&format!("\"{k}\":")))
        .collect();
    assert_eq!(keys.len(), 6, "{body}");
    let at = |k: &str| body.find(&format!("\"{k}\":")).unwrap();
    assert!(keys.windows(2).all(|w| at(w[0]) < at(w[1])), "{body}");
    assert_eq!(s["relay"], d.ready["relay"]);
    assert_eq!(s["webTransport"]["url"], d.ready["webtransport"]);
    assert!(hex_of(&s["webTransport"]["certificateHash"], 64), "{body}");
    assert_eq!(s["deployment"], "local");
    assert!(hex_of(&s["session"], 32), "{body}");
    assert_eq!(s["parties"], d.ready["public_keys"]);
    assert!(s["token"].as_str().unwrap().contains(&me.public.to_hex()), "{body}");
    // Each request is a fresh session.
    let again: serde_json::Value = serde_json::from_str(body_of(
        &rt.block_on(http_get(addr, &for_key(&other))),
        "200 OK",
        &[],
    ))
    .unwrap();
    assert_ne!(again["session"], s["session"]);
    assert_ne!(again["token"], s["token"]);
    // The token admits a client of that session, which gets the plaintext model's class.
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/nn-a.onnx");
    let set = testset::TestSet::for_model(&model).unwrap();
    let got = rt.block_on(classify(client_of(&s, me), "nn-a", Backend::Meteor, &set.samples(3, 1)));
    assert_eq!(got, Ok(set.expected(3, 1)[0]));
    // ... and no other session.
    let mut stolen = client_of(&again, other);
    stolen.token = Some(s["token"].as_str().unwrap().into());
    let err = rt.block_on(classify(stolen, "nn-a", Backend::Meteor, &[0.0; 784])).unwrap_err();
    assert!(err.contains("403") && err.contains("another session"), "{err}");
    // CORS preflight, help, and anything else.
    let pre = rt.block_on(http_request(addr, "OPTIONS /session"));
    let allow = ["access-control-allow-methods: get", "access-control-allow-headers: *"];
    body_of(&pre, "204 No Content", &[&[cors][..], &allow[..]].concat());
    let help = rt.block_on(http_get(addr, "/"));
    assert!(body_of(&help, "200 OK", &[cors]).contains("GET /session"), "{help}");
    let missing = rt.block_on(http_get(addr, "/token"));
    assert!(body_of(&missing, "404 Not Found", &[cors]).contains("/session"), "{missing}");
    // SIGTERM: the relay and the parties stop in order, exit 0, nothing that reads like a crash.
    d.terminate();
    let status = d.exited_within(Duration::from_secs(20)).expect("still running after SIGTERM");
    assert!(status.success(), "{status}");
    let log = d.stderr();
    for alarming in ["reset", "protocol error", "without a close", "panicked", "exited"] {
        assert!(!log.contains(alarming), "{alarming:?} in:\n{log}");
    }
    assert!(log.contains("Ctrl-C stops it") && log.contains("development only"), "{log}");
}

#[test]
fn a_closed_stdout_ends_it_quietly() {
    let mut d = Local::start(&["--no-webtransport"]);
    // `| head -1`: the reader goes away after the first line; the next event has nowhere to go.
    d.stdout = None;
    let status = d.exited_within(Duration::from_secs(120)).expect("still running");
    assert!(status.success(), "{status}");
    let log = d.stderr();
    assert!(!log.contains("panicked"), "{log}");
}

#[test]
fn with_stop_on_stdin_eof_it_stops_cleanly_when_its_parent_closes_stdin() {
    let mut d = Local::start_with(&["--no-webtransport", "--stop-on-stdin-eof"], Stdio::piped());
    let stdin = d.child.stdin.take().unwrap();
    assert!(d.exited_within(Duration::from_millis(500)).is_none(), "stopped with stdin open");
    drop(stdin);
    let status = d.exited_within(Duration::from_secs(20)).expect("still running");
    assert!(status.success(), "{status}");
    let log = d.stderr();
    for alarming in ["reset", "protocol error", "without a close", "panicked"] {
        assert!(!log.contains(alarming), "{alarming:?} in:\n{log}");
    }
    assert!(log.contains("left (closed by the party)"), "{log}");
}

#[test]
fn dev_refuses_a_non_loopback_address_and_says_why() {
    let out = Command::new(EXE)
        .args(["local-deployment", "--dev", "--dev-http", "0.0.0.0:8787"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("not a loopback address") && err.contains("to anyone"), "{err}");
    assert!(out.stdout.is_empty());
}
