//! The relay's integration tests, as one test binary: each file here is a module of it, so the
//! crate and its dependencies are linked once instead of once per file. Run one file's tests with
//! `cargo test -p ringfence-relay --all-features --test relay FILE::`, e.g. `tamper::`.
//! `accept_exhaustion.rs` stays a binary of its own: it lowers the process's descriptor limit.

mod common;
mod relay_common;
/// The reference inputs of the shipped models, as the binary reads them.
#[path = "../src/bin/ringfence/testset.rs"]
#[allow(dead_code)]
mod testset;

mod admission;
mod cli;
mod deployment;
mod direct;
mod disconnect;
mod exchange;
mod hostile_relay;
mod link_version;
mod local_deployment;
mod netem;
mod redaction;
mod relay_cli;
mod relay_links;
mod relay_server;
mod replay;
mod seeds;
mod tamper;
mod webrtc;
mod webtransport;
mod wrong_key;
