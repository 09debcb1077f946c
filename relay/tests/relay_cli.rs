//! The `ringfence` binary through `ringfence relay`: three `ringfence interop-party` processes
//! running the interoperability check program. (Server parties: `deployment.rs`.)

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const EXE: &str = env!("CARGO_BIN_EXE_ringfence");

/// A `ringfence relay` process on an ephemeral port, killed on drop.
struct Relay {
    child: Child,
    url: String,
}

impl Relay {
    fn start() -> Self {
        let mut child = Command::new(EXE)
            .args(["relay", "--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(Duration::from_secs(20)).expect("relay did not start");
        let url = line.trim().rsplit(' ').next().unwrap().to_string();
        assert!(url.starts_with("ws://127.0.0.1:"), "{line}");
        Self { child, url }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for `child` at most `secs` seconds (killing it after that).
fn wait(mut child: Child, secs: u64) -> Output {
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    let watchdog = std::thread::spawn(move || {
        if rx.recv_timeout(Duration::from_secs(secs)).is_err() {
            // Still running: end that one process (its own pid only).
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    });
    child.stdin.take();
    let out = child.wait_with_output().unwrap();
    let _ = tx.send(());
    let _ = watchdog.join();
    out
}

#[test]
fn three_party_processes_agree_with_plaintext_through_the_relay() {
    let relay = Relay::start();
    let session = "5e".repeat(16);
    let inputs: [[i64; 4]; 3] = [[3, -5, i64::MIN, 7], [4, -9, 1, 7], [2, 0, -1, 10]];
    let kids: Vec<Child> = (0..3)
        .map(|i| {
            let values: Vec<String> = inputs[i].iter().map(i64::to_string).collect();
            Command::new(EXE)
                .args(["interop-party", "--relay", &relay.url, "--session", &session])
                .args(["--id", &i.to_string(), "--matmul-dim", "2"])
                .arg(format!("--values={}", values.join(",")))
                .args(["--danger-insecure-test-seeds", "cli-test", "--timeout-ms", "10000"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<String> = kids
        .into_iter()
        .map(|c| {
            let o = wait(c, 60);
            let (so, se) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
            assert!(o.status.success(), "{so}\n{se}");
            so.trim().to_string()
        })
        .collect();
    assert_eq!(outs[0], outs[1]);
    assert_eq!(outs[0], outs[2]);
    let [x0, x1, x2] = inputs;
    let mul: Vec<String> = (0..4).map(|i| x0[i].wrapping_mul(x1[i]).to_string()).collect();
    let lt: Vec<u8> = (0..4).map(|i| u8::from(x0[i] < x1[i])).collect();
    let mm: Vec<String> = (0..2)
        .flat_map(|r| (0..2).map(move |c| (r, c)))
        .map(|(r, c)| {
            let v =
                (0..2).fold(0i64, |a, k| a.wrapping_add(x0[r * 2 + k].wrapping_mul(x2[k * 2 + c])));
            v.to_string()
        })
        .collect();
    let want = serde_json::json!({ "mul": mul, "lt": lt, "matmul": mm }).to_string();
    assert_eq!(outs[0], want);
}

#[test]
fn an_oversized_or_misaddressed_message_is_logged_and_other_sessions_carry_on() {
    use crate::relay_common::{join, next, send, Got};
    use ringfence_core::net::SessionId;
    let mut child = Command::new(EXE)
        .args(["relay", "--listen", "127.0.0.1:0", "--log", "json", "--max-message-bytes", "1025"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().rsplit(' ').next().unwrap().to_string();
    let (tx, log) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for l in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (a, b) = (SessionId([1; 16]), SessionId([2; 16]));
        let mut a0 = join(&url, &a, 0).await.unwrap();
        let _a1 = join(&url, &a, 1).await.unwrap();
        let mut b0 = join(&url, &b, 0).await.unwrap();
        let mut b1 = join(&url, &b, 1).await.unwrap();
        send(&mut a0, 1, &[0; 2000]).await;
        assert!(matches!(next(&mut a0).await, Got::Closed(_)));
        send(&mut b0, 1, b"unaffected").await;
        assert_eq!(next(&mut b1).await, Got::Msg(0, b"unaffected".to_vec()));
    });
    let mut logged = Vec::new();
    let found = loop {
        let Ok(l) = log.recv_timeout(Duration::from_secs(10)) else { break false };
        let v: serde_json::Value =
            serde_json::from_str(&l).unwrap_or_else(|_| panic!("not JSON: {l}"));
        logged.push(l);
        let m = v["msg"].as_str().unwrap_or("");
        if m.contains("P0 left") && m.contains("too") {
            break true;
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(found, "no logged reason for the oversized message in {logged:#?}");
}
