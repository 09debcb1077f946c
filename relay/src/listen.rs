//! Accept loops that survive running out of descriptors or memory.
//!
//! `accept(2)` fails for two kinds of reasons: one connection went away before it was accepted
//! (skip it), or the process is out of something (`EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`) — then
//! the same call fails again at once, and a loop that just retries spins a core. Pausing lets
//! connections in flight finish and free what they hold; ending the listener would turn a burst
//! of connections into an outage.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};

/// How long an exhausted listener waits before trying again.
const PAUSE: Duration = Duration::from_millis(100);

/// The next connection of `listener`; `what` names the listener in the log line printed when
/// accepting starts failing (once per run of failures, with the error).
pub async fn accept(listener: &TcpListener, what: &str) -> (TcpStream, SocketAddr) {
    let mut failing = 0u64;
    loop {
        match listener.accept().await {
            Ok(accepted) => {
                if failing > 0 {
                    eprintln!("ringfence: {what}: accepting again after {failing} failed attempts");
                }
                return accepted;
            }
            Err(e) if concerns_one_connection(&e) => {}
            Err(e) => {
                if failing == 0 {
                    eprintln!(
                        "ringfence: {what}: cannot accept connections ({e}); retrying every {} ms",
                        PAUSE.as_millis()
                    );
                }
                failing += 1;
                tokio::time::sleep(PAUSE).await;
            }
        }
    }
}

fn concerns_one_connection(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), ConnectionAborted | ConnectionReset | Interrupted | WouldBlock)
}
