//! The parent side: spawning the party processes of the same executable (one per compute
//! party) and talking to them over their stdin/stdout.

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ringfence_relay::StaticKeypair;

use crate::msgs::{FromChild, ToChild};

/// How long children may take to bind and report their ports.
const STARTUP: Duration = Duration::from_secs(20);

/// Running party processes. Dropping this kills any that are still running.
pub(crate) struct Children {
    procs: Vec<Child>,
    stdins: Vec<Option<ChildStdin>>,
    lines: mpsc::Receiver<(usize, Option<String>)>,
    /// Children that reported `Done` (their end of stdout is expected).
    done: Vec<bool>,
}

impl Children {
    /// Spawns `n` children `<this exe> <sub> --id i <args>`; stderr is inherited.
    pub(crate) fn spawn(n: usize, sub: &str, args: &[String]) -> Result<Self, String> {
        let exe = std::env::current_exe().map_err(|e| format!("locating this executable: {e}"))?;
        let (tx, lines) = mpsc::channel();
        let mut me = Self { procs: Vec::new(), stdins: Vec::new(), lines, done: vec![false; n] };
        for i in 0..n {
            let mut child = Command::new(&exe)
                .arg(sub)
                .arg("--id")
                .arg(i.to_string())
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|e| format!("spawning party {i}: {e}"))?;
            let stdout = child.stdout.take().ok_or("child stdout missing")?;
            me.stdins.push(child.stdin.take());
            me.procs.push(child);
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if tx.send((i, Some(line))).is_err() {
                        return;
                    }
                }
                let _ = tx.send((i, None));
            });
        }
        Ok(me)
    }

    /// Sends one message to child `i`.
    pub(crate) fn send(&mut self, i: usize, msg: &ToChild) -> Result<(), String> {
        let mut line = serde_json::to_string(msg).map_err(|e| e.to_string())?;
        line.push('\n');
        let stdin = self.stdins[i].as_mut().ok_or("stdin closed")?;
        stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("writing to P{i}: {e}"))
    }

    /// The next message from any child, within `wait`. A child that exits or reports an error
    /// is an `Err` naming it.
    pub(crate) fn next(&mut self, wait: Duration) -> Result<(usize, FromChild), String> {
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let (i, line) = self
                .lines
                .recv_timeout(left)
                .map_err(|_| format!("no word from the parties within {} s", wait.as_secs()))?;
            let Some(line) = line else {
                if self.done[i] {
                    continue;
                }
                let status = self.procs[i].wait().map(|s| s.to_string()).unwrap_or_default();
                return Err(format!("P{i} exited early ({status})"));
            };
            return match serde_json::from_str(&line) {
                Ok(FromChild::Error { message }) => Err(format!("P{i} failed: {message}")),
                Ok(FromChild::Done) => {
                    self.done[i] = true;
                    Ok((i, FromChild::Done))
                }
                Ok(m) => Ok((i, m)),
                Err(e) => Err(format!("P{i} sent an unreadable line ({e}): {line}")),
            };
        }
    }

    /// Sends setup, collects ports, sends peer addresses; returns the session id (hex).
    /// `participants` is the number of children (the compute parties), or one more when a
    /// client (the next id, with the last key) joins too. `route` maps
    /// the parties' listening addresses to the ones their peers dial (e.g. through an emulated
    /// WAN link).
    pub(crate) fn introduce(
        &mut self,
        keys: Option<&[StaticKeypair]>,
        participants: u8,
        route: impl FnOnce(Vec<SocketAddr>) -> Result<Vec<SocketAddr>, String>,
    ) -> Result<String, String> {
        let n = self.procs.len();
        let session = session_hex()?;
        for i in 0..n {
            let msg = ToChild::Setup {
                private_key: keys.map(|k| k[i].private.to_hex()),
                public_keys: keys
                    .map(|k| k.iter().map(|k| k.public.to_hex()).collect())
                    .unwrap_or_default(),
                session: session.clone(),
                participants,
            };
            self.send(i, &msg)?;
        }
        let mut ports = vec![None; n];
        let deadline = Instant::now() + STARTUP;
        while ports.iter().any(Option::is_none) {
            let wait = deadline.saturating_duration_since(Instant::now());
            match self.next(wait)? {
                (i, FromChild::Port { port }) => ports[i] = Some(port),
                (i, other) => return Err(format!("P{i} sent {other:?} before its port")),
            }
        }
        let listening = ports.iter().flatten().map(|&p| SocketAddr::from(([127, 0, 0, 1], p)));
        let addrs: Vec<String> =
            route(listening.collect())?.iter().map(|a| a.to_string()).collect();
        for i in 0..n {
            self.send(i, &ToChild::Peers { addrs: addrs.clone() })?;
        }
        Ok(session)
    }

    /// Waits for every child to exit successfully (after their `Done`).
    pub(crate) fn finish(mut self) -> Result<(), String> {
        for (i, c) in self.procs.iter_mut().enumerate() {
            let status = c.wait().map_err(|e| format!("waiting for P{i}: {e}"))?;
            if !status.success() {
                return Err(format!("P{i} exited with {status}"));
            }
        }
        Ok(())
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        self.stdins.clear();
        for c in &mut self.procs {
            if matches!(c.try_wait(), Ok(None)) {
                let _ = c.kill();
            }
            let _ = c.wait();
        }
    }
}

/// A fresh random session id as 32 hex digits.
fn session_hex() -> Result<String, String> {
    let b = crate::random_bytes::<16>()?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}
