//! `ringfence`: the native side of ringfence in one binary: the relay (`relay`), long-running
//! server parties of a deployment (`party`), their keys and join tokens (`keygen`, `token`), a
//! whole deployment on loopback for development (`local-deployment`), an end-to-end private
//! classification (`demo`), benchmarks and load tests (`bench`, `load`), and model inspection
//! (`model`).
//!
//! `bench` runs its parties as processes: the parent generates their Noise keypairs, spawns
//! one child of this executable per party (hidden subcommands: three, or with `--backend rss`
//! 3, 5 or 7), hands each its private key on stdin,
//! collects the ports they bound, tells them their peers, and gathers their JSON-line reports
//! from stdout. Children exit when their stdin closes, and the parent kills them if anything
//! fails.

mod bench;
mod bench_gates;
mod bench_scheme;
mod children;
mod circuit;
mod classify;
mod demo;
mod dev;
mod inspect;
mod join;
mod keygen;
mod load;
mod local;
mod mesh;
mod msgs;
mod party;
pub(crate) mod relay;
mod server;
mod server_metrics;
mod session_party;
mod testset;
mod token;
mod webrtc;

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use ringfence_core::net::Roster;
use ringfence_core::ring::{Z32, Z64};
use ringfence_core::rss::Rss;
use ringfence_core::service;
use ringfence_core::spdz2k::Spdz2k;
use ringfence_relay::netem::{LinkShape, ShapedProxy};
use ringfence_relay::{StaticKeypair, TcpTransport};

use crate::bench::Op;
use crate::bench_scheme::Scheme;
use crate::children::Children;
use crate::msgs::FromChild;

/// Who takes part in this binary's sessions: the three compute parties of rep3 and METEOR
/// (the children it spawns, the servers of a deployment) and, in a classification session, the
/// client after them.
pub(crate) const ROSTER: Roster = service::ROSTER;
/// Participants of a session of the compute parties alone, as the relay counts them.
pub(crate) const PARTIES: u8 = count(ROSTER.n());

/// A participant count as the relay's `u8` (checked when the constants are compiled).
const fn count(n: usize) -> u8 {
    assert!(n <= u8::MAX as usize, "more participants than party ids");
    n as u8
}

/// Secure 3-party computation over Z_2^k: the relay, server parties of a deployment, their keys
/// and join tokens, a local deployment for development, a demo, benchmarks and load tests.
#[derive(Parser)]
#[command(name = "ringfence", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Benchmark rep3 or mal3 operations between three local party processes, rss's among 3, 5 or 7
    /// (--backend rss --parties N), or spdz2k's among 2 or more, their material made by the
    /// parties as the operations run (--backend spdz2k --parties N).
    Bench(BenchArgs),
    /// Classify your own input with your own model privately on a local deployment (relay and
    /// server parties on 127.0.0.1): JSON, .npy or CSV samples; prints each class (the model's
    /// label where it has labels) beside the plaintext model's.
    Classify(classify::ClassifyArgs),
    /// Classify a held-out sample privately on a local deployment (relay, 3 server parties or
    /// --parties 5|7, client) and check the answer against the plaintext model's.
    Demo(demo::DemoArgs),
    /// Run the WebSocket relay that parties anywhere (native, Node, browser) connect through.
    Relay(relay::RelayArgs),
    /// Run a long-running server party of a deployment (config file: models, keys, relay).
    Party(server::ServerArgs),
    /// Deployment signing keys and join tokens for a relay that requires them.
    #[command(subcommand)]
    Token(token::TokenCmd),
    /// (internal) Join a 3-party session through a relay and run the interoperability check
    /// program.
    #[command(hide = true)]
    InteropParty(join::JoinArgs),
    /// Make a party's identity key pair (Noise static key).
    Keygen(keygen::KeygenArgs),
    /// Work with model files.
    #[command(subcommand)]
    Model(inspect::ModelCmd),
    /// Boolean circuits: generate the multi-fan-in paper's circuits as Bristol Fashion files,
    /// and summarise any circuit file (ANDs by fan-in, depth, bits per party).
    #[command(subcommand)]
    Circuit(circuit::CircuitCmd),
    /// (internal) One party of `bench`.
    #[command(hide = true)]
    BenchParty(PartyArgs),
    /// Run a local deployment (a relay and three server parties on 127.0.0.1, or --parties 5|7,
    /// serving the shipped models) until Ctrl-C or SIGTERM; prints its address and keys as one
    /// JSON line.
    /// With --dev, also hands out sessions and join tokens over HTTP (development only).
    LocalDeployment(local::LocalArgs),
    /// Bounded load tests on loopback: concurrent clients of a local deployment, or concurrent
    /// sessions through one relay; prints throughput, latency percentiles and memory.
    Load(load::LoadArgs),
    /// (internal) One native party serving one client session (SDK tests).
    #[command(hide = true)]
    SessionParty(PartyArgs),
}

#[derive(Args, Clone)]
struct CommonArgs {
    /// INSECURE, for benchmarking only: plaintext links, unauthenticated pairwise seeds.
    #[arg(long)]
    plain: bool,
    /// How long a party waits for a peer's message before giving up.
    #[arg(long, default_value_t = 30_000)]
    timeout_ms: u64,
    /// Link the parties through this relay (`ringfence relay`, e.g. ws://127.0.0.1:9000)
    /// instead of direct TCP; the links stay end-to-end Noise (or plain with --plain).
    #[arg(long, value_name = "URL")]
    relay: Option<String>,
    #[command(flatten)]
    webrtc: webrtc::WebrtcArgs,
}

#[derive(Args, Clone)]
struct BenchArgs {
    /// Print one JSON object per operation instead of a table.
    #[arg(long)]
    json: bool,
    /// Simulated WAN between the parties: every link goes through a user-space emulator with
    /// the METEOR paper's setting (70 ms RTT, 320 Mbit/s each way; see --rtt-ms, --mbit).
    #[arg(long)]
    wan: bool,
    /// Round-trip time of the --wan links, in milliseconds.
    #[arg(long, default_value_t = 70, requires = "wan")]
    rtt_ms: u64,
    /// Rate of the --wan links in each direction, in Mbit/s.
    #[arg(long, default_value_t = 320.0, requires = "wan")]
    mbit: f64,
    #[command(flatten)]
    work: Workload,
    #[command(flatten)]
    common: CommonArgs,
}

/// What `bench` measures; the parent forwards it to every party unchanged
/// ([`Workload::to_args`]), so both sides parse the same arguments.
#[derive(Args, Clone)]
struct Workload {
    /// Elements per batched operation (not for matmul: see --matmul-dim).
    #[arg(long, default_value_t = 1_000_000)]
    n: usize,
    /// Operations to run, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "mul,lt,lt-bounded,relu,fxmul,matmul"
    )]
    ops: Vec<Op>,
    /// Ring width in bits.
    #[arg(long, value_enum, default_value = "64")]
    ring: RingBits,
    /// Timed runs per operation (after one warm-up run).
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Dimension d of the square matrix product d×d·d×d benchmarked by `matmul`.
    #[arg(long, default_value_t = 128)]
    matmul_dim: usize,
    /// Benchmark secure inference of a model instead of the operations: a path to an ONNX
    /// file, or one of nn-a, nn-b, nn-c, lenet, logreg (the repository's `models/NAME.onnx`).
    /// P0 shares the weights once, P1 inputs the samples and learns the result; setup is timed
    /// separately from the online run.
    #[arg(long)]
    model: Option<std::path::PathBuf>,
    /// Samples per inference run (with --model).
    #[arg(long, default_value_t = 1)]
    batch: usize,
    /// Run each --batch as consecutive sub-batches of this many samples on the same links, for
    /// batches whose setup does not fit in memory at once: each sub-batch makes its own setup
    /// (no mask is reused), then runs online on the next samples of the test set; setup and
    /// online stay sequential. The figures are sums over the sub-batches (time, bytes, rounds),
    /// agreement is over the whole batch, and the warm-up run is one sub-batch. Must divide
    /// --batch.
    #[arg(long, value_name = "SAMPLES", requires = "model")]
    sub_batch: Option<usize>,
    /// Protocol family: for --model, rep3 (the argmax is computed securely), meteor (the
    /// scores go to P1, as in the METEOR paper), mal3, rss or spdz2k; for the operations, rep3,
    /// rss (threshold replicated sharing among --parties parties, which adds the mul-pub and
    /// rand-bit ops) or spdz2k (a dishonest majority among --parties parties; mul, lt,
    /// lt-bounded, eq, eda-bit and matmul are timed end to end, the OT-based generation of
    /// their material included).
    #[arg(long, value_parser = bench::backend_arg(), default_value = "rep3")]
    backend: service::Backend,
    /// Compute parties, one process each: rss runs among 3, 5 or 7 (threshold t = (N − 1) / 2,
    /// any t of them learn nothing); spdz2k among 2 or more (any N − 1 may be corrupt); every
    /// other family among 3.
    #[arg(long, value_name = "N", default_value_t = ROSTER.n())]
    parties: usize,
    /// Scheme of the boolean-circuit ops (and, aes): rep3, mal3 (every AND verified),
    /// mal3-on-demand (the same with Protocol 3.9's buckets of 2), mal3-baseline (the paper's
    /// Protocol A.1 runs: whole-array shuffles), or bin3 (ANDs of up to eight inputs in one
    /// round). With --backend mal3, mal3-on-demand and mal3-baseline also choose the triples
    /// of the arithmetic ops (not of --model runs, which start their own sessions).
    #[arg(long, value_enum, default_value = "rep3")]
    gates: bench_gates::Engine,
    /// A Bristol Fashion circuit file for the circuit op (AND lines of 3 to 8 inputs allowed):
    /// input group g comes from party g mod 3; --n instances, checked against the plaintext
    /// evaluation.
    #[arg(long, value_name = "FILE")]
    circuit: Option<std::path::PathBuf>,
    /// The circuit op's inputs instead of generated ones: one value per input group,
    /// comma-separated (0x hex, 0b binary or decimal; bit i is wire i of the group), the same
    /// in every instance; P0 reports the first instance's outputs (`ringfence circuit run`).
    #[arg(long, value_name = "VALUES", requires = "circuit")]
    circuit_inputs: Option<String>,
    /// S-box circuit of the aes op: bp (Boyar–Peralta, depth 4), depth3 or depth2 (fewer
    /// rounds, more ANDs).
    #[arg(long, value_enum, default_value = "bp")]
    sbox: bench_gates::SboxArg,
    /// How rep3 computes comparisons (the lt, lt-bounded and relu ops, and ReLU, max pooling
    /// and argmax in --model runs): two-input (rep3's ANDs, 8 rounds per 64-bit comparison),
    /// fan-in (bin3's multi-fan-in gates, groups and gates of 4: 3 rounds), or fan-in:R,L
    /// (first-round groups of R bits, 1..=8, then gates of up to L inputs, 2..=8).
    #[arg(long, default_value = "two-input")]
    comparisons: ringfence_core::rep3::Comparisons,
    /// Where rss's comparisons and truncation material get the random value and bits that
    /// mask their opening: eda-bits (t + 1 dealers and an adder tree) or rand-bits (k random
    /// bits by multiply-and-open: fewer rounds, many more bytes).
    #[arg(long, default_value = "eda-bits")]
    bit_source: ringfence_core::rss::BitSource,
    /// spdz2k: make each timed run's material in its setup (timed apart: the amounts the
    /// warm-up run drew), so that the op's time is its online phase alone, the setting of the
    /// paper's Table I; without it the ops are timed end to end.
    #[arg(long)]
    ahead: bool,
}

impl Workload {
    /// The sizes a party runs with.
    fn sizes(&self) -> bench::Sizes {
        bench::Sizes {
            n: self.n,
            repeat: self.repeat,
            matmul_dim: self.matmul_dim,
            batch: self.batch,
            sub_batch: self.sub_batch,
            backend: self.backend,
            parties: self.parties,
            engine: self.gates,
            sbox: self.sbox,
            comparisons: self.comparisons,
            bit_source: self.bit_source,
            ahead: self.ahead,
        }
    }

    /// The operations actually run: `infer` alone when a model is given.
    fn ops(&self) -> Vec<Op> {
        if self.model.is_some() {
            vec![Op::Infer]
        } else {
            self.ops.clone()
        }
    }

    /// The command-line arguments that reproduce this workload in a party process.
    fn to_args(&self) -> Result<Vec<String>, String> {
        let ops: Vec<&str> = self.ops().iter().map(|o| o.name()).collect();
        let mut args = vec![
            "--n".into(),
            self.n.to_string(),
            "--ops".into(),
            ops.join(","),
            "--ring".into(),
            self.ring.bits().to_string(),
            "--repeat".into(),
            self.repeat.to_string(),
            "--matmul-dim".into(),
            self.matmul_dim.to_string(),
            "--batch".into(),
            self.batch.to_string(),
        ];
        if let Some(sub) = self.sub_batch {
            args.extend(["--sub-batch".into(), sub.to_string()]);
        }
        if let Some(path) = &self.model {
            let abs = bench::resolve_model(path)?;
            args.extend(["--model".into(), abs.display().to_string()]);
        }
        args.extend(["--backend".into(), self.backend.name().into()]);
        args.extend(["--parties".into(), self.parties.to_string()]);
        args.extend(["--gates".into(), self.gates.name().into()]);
        args.extend(["--sbox".into(), self.sbox.name().into()]);
        args.extend(["--comparisons".into(), self.comparisons.to_string()]);
        args.extend(["--bit-source".into(), self.bit_source.to_string()]);
        if self.ahead {
            args.push("--ahead".into());
        }
        if let Some(path) = &self.circuit {
            let abs =
                std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
            args.extend(["--circuit".into(), abs.display().to_string()]);
        }
        if let Some(values) = &self.circuit_inputs {
            args.extend(["--circuit-inputs".into(), values.clone()]);
        }
        Ok(args)
    }
}

/// Ring width.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum RingBits {
    /// Z_2^64.
    #[value(name = "64")]
    R64,
    /// Z_2^32.
    #[value(name = "32")]
    R32,
}

impl RingBits {
    fn bits(self) -> u32 {
        match self {
            Self::R64 => 64,
            Self::R32 => 32,
        }
    }
}

#[derive(Args)]
struct PartyArgs {
    #[arg(long)]
    id: u8,
    #[command(flatten)]
    work: Workload,
    #[command(flatten)]
    common: CommonArgs,
}

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Turns transparent huge pages off for this process (and the party processes it starts),
/// unless `RINGFENCE_HUGE_PAGES=1`.
///
/// mimalloc asks for huge pages on its arenas, so the first touch of any part of a 2 MiB region
/// made the kernel clear all of it: a protocol's buffers are large, short-lived and spread over
/// many regions, and `clear_page` was half of the CPU time of `ringfence bench --model lenet
/// --backend meteor` (`perf record`), which ran slower and less predictably for it. Models whose
/// weights run to gigabytes gain from huge pages (fewer TLB misses: VGG16 ~8 % faster online,
/// ~17 % in setup), hence the switch (BENCHMARKS.md, "Huge pages"). Failure (an old kernel) only
/// costs that speed.
#[allow(unsafe_code)]
fn no_huge_pages() {
    if std::env::var_os("RINGFENCE_HUGE_PAGES").is_some_and(|v| v == "1") {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments only and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// Keeps memory the allocator has freed for 10 s before returning it to the OS (mimalloc's
/// default is 1 s).
///
/// mimalloc purges every range freed since the last purge once the delay runs out, so under a
/// steady load of large, short-lived buffers (the OT-based preprocessing allocates and frees
/// megabytes per batch) each second the buffers' pages went back and were faulted in and
/// cleared again: spdz2k products between two processes ran 14 % slower with the default
/// (`ringfence bench --backend spdz2k --parties 2 --ops mul`, BENCHMARKS.md). An idle process
/// still returns its memory, 10 s later.
#[allow(unsafe_code)]
fn allocator_options() {
    // `mi_option_purge_delay` in mimalloc v3's `mi_option_t` (include/mimalloc.h); the Rust
    // bindings do not name it.
    const PURGE_DELAY: core::ffi::c_int = 15;
    extern "C" {
        fn mi_option_set(option: core::ffi::c_int, value: core::ffi::c_long);
    }
    // SAFETY: plain integer arguments; mimalloc reads its options atomically.
    unsafe { mi_option_set(PURGE_DELAY, 10_000) }
}

fn main() -> ExitCode {
    no_huge_pages();
    allocator_options();
    let cli = Cli::parse();
    if let Cmd::BenchParty(a) | Cmd::SessionParty(a) = &cli.cmd {
        party::set_relay(a.common.relay.clone(), a.common.webrtc.clone());
    }
    match cli.cmd {
        Cmd::Bench(a) => exit(bench_parent(&a)),
        Cmd::Demo(a) => exit(demo::parent(&a)),
        Cmd::Classify(a) => exit(classify::parent(&a)),
        Cmd::BenchParty(a) => {
            let w = &a.work;
            let sizes = w.sizes();
            let model = match w.model.as_deref().map(bench::load_model).transpose() {
                Ok(m) => m,
                Err(e) => {
                    eprintln!("ringfence bench-party: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let load =
                |p: &std::path::Path| bench_gates::CircuitJob::load(p, w.circuit_inputs.as_deref());
            let circuit = match w.circuit.as_deref().map(load).transpose() {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("ringfence bench-party: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let job = BenchJob { ops: w.ops(), sizes, model, circuit };
            match w.backend {
                service::Backend::Rss => bench_party::<_, Rss<TcpTransport>>(&a, job),
                service::Backend::Spdz2k => bench_party::<_, Spdz2k<TcpTransport>>(&a, job),
                service::Backend::Mal3 => {
                    bench_party::<_, ringfence_core::mal3::Mal3<TcpTransport>>(&a, job)
                }
                _ => bench_party::<_, party::Session>(&a, job),
            }
        }
        Cmd::Relay(a) => exit(relay::run(&a)),
        Cmd::Party(a) => exit(server::run(&a)),
        Cmd::Token(c) => exit(token::run(&c)),
        Cmd::InteropParty(a) => exit(join::run(&a)),
        Cmd::Keygen(a) => exit(keygen::run(&a)),
        Cmd::Model(c) => exit(inspect::run(&c)),
        Cmd::Circuit(c) => exit(circuit::run(&c)),
        Cmd::LocalDeployment(a) => exit(local::run(&a)),
        Cmd::Load(a) => exit(load::run(&a)),
        Cmd::SessionParty(a) => {
            let Some(model) = a.work.model.clone() else {
                eprintln!("ringfence session-party: --model is required");
                return ExitCode::FAILURE;
            };
            let (id, plain, timeout_ms) = (a.id, a.common.plain, a.common.timeout_ms);
            match a.work.parties {
                n if n == ROSTER.n() => party::run(id, plain, timeout_ms, async move |p| {
                    session_party::serve(p, &model).await
                }),
                n => party::run_as::<Rss<TcpTransport>, _, _>(
                    id,
                    n,
                    plain,
                    timeout_ms,
                    async move |p| session_party::serve(p, &model).await,
                ),
            }
        }
    }
}

/// What a bench party runs, read from its command line.
struct BenchJob {
    ops: Vec<Op>,
    sizes: bench::Sizes,
    model: Option<bench::ModelBench>,
    circuit: Option<bench_gates::CircuitJob>,
}

/// Runs the bench party `a` on a session of kind `S`, in the ring of its workload.
fn bench_party<B: party::Base, S: Scheme<Z32, On = B> + Scheme<Z64, On = B>>(
    a: &PartyArgs,
    job: BenchJob,
) -> ExitCode {
    let BenchJob { ops, sizes, model, circuit } = job;
    let (id, parties) = (a.id, a.work.parties);
    let (plain, timeout_ms) = (a.common.plain, a.common.timeout_ms);
    match a.work.ring {
        RingBits::R32 => party::run_as::<B, _, _>(id, parties, plain, timeout_ms, async move |p| {
            bench::run_ops::<Z32, S>(p, &ops, sizes, model.as_ref(), circuit.as_ref()).await
        }),
        RingBits::R64 => party::run_as::<B, _, _>(id, parties, plain, timeout_ms, async move |p| {
            bench::run_ops::<Z64, S>(p, &ops, sizes, model.as_ref(), circuit.as_ref()).await
        }),
    }
}

/// A multi-thread tokio runtime with `workers` worker threads.
pub(crate) fn runtime(workers: usize) -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .map_err(|e| format!("starting tokio: {e}"))
}

/// `N` bytes from the OS random source (session ids, directory names).
pub(crate) fn random_bytes<const N: usize>() -> Result<[u8; N], String> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).map_err(|e| format!("OS random source: {e}"))?;
    Ok(b)
}

fn exit(r: Result<(), String>) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ringfence: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One Noise keypair per party of `roster` (none with `--plain`).
fn keys(plain: bool, roster: Roster) -> Result<Option<Vec<StaticKeypair>>, String> {
    if plain {
        return Ok(None);
    }
    let k = roster.parties().map(|_| StaticKeypair::generate()).collect::<Result<Vec<_>, _>>();
    k.map(Some).map_err(|e| e.to_string())
}

fn common_args(c: &CommonArgs) -> Vec<String> {
    let mut v = vec!["--timeout-ms".to_string(), c.timeout_ms.to_string()];
    if c.plain {
        v.push("--plain".into());
    }
    if let Some(url) = &c.relay {
        v.extend(["--relay".into(), url.clone()]);
    }
    if let Some(bind) = &c.webrtc.webrtc {
        v.push(format!("--webrtc={bind}"));
        v.extend(["--webrtc-timeout-ms".into(), c.webrtc.webrtc_timeout_ms.to_string()]);
        if c.webrtc.webrtc_between_natives {
            v.push("--webrtc-between-natives".into());
        }
    }
    v
}

/// Longest silence tolerated from the children: their own timeouts fire well before.
fn patience(c: &CommonArgs) -> Duration {
    Duration::from_millis(c.timeout_ms.saturating_mul(4)).max(Duration::from_secs(600))
}

/// The parties of a bench run: rss's roster of `--parties`, spdz2k's (2 or more), the
/// binary's for every other family. Combinations no party could run are refused here, with the
/// reason, rather than in N children.
fn bench_roster(a: &BenchArgs) -> Result<Roster, String> {
    let w = &a.work;
    let roster = match w.backend {
        service::Backend::Rss => party::rss_roster(w.parties)?,
        service::Backend::Spdz2k => party::spdz2k_roster(w.parties)?,
        b if w.parties != ROSTER.n() => {
            return Err(format!(
                "--parties {}: {} runs among {} parties; other counts need --backend rss or \
                 spdz2k",
                w.parties,
                b.name(),
                ROSTER.n()
            ))
        }
        _ => ROSTER,
    };
    let ops = w.ops();
    let elsewhere = |o: &&Op| o.only_on().is_some_and(|on| !on.contains(&w.backend));
    if let Some(op) = ops.iter().find(elsewhere) {
        let on: Vec<&str> = op.only_on().unwrap_or_default().iter().map(|b| b.name()).collect();
        return Err(format!(
            "--ops {}: runs with --backend {}, not {}",
            op.name(),
            on.join(" or "),
            w.backend.name()
        ));
    }
    let own_session = matches!(w.backend, service::Backend::Rss | service::Backend::Spdz2k);
    if own_session {
        if let Some(op) = ops.iter().find(|o| o.on_gates()) {
            return Err(format!(
                "--ops {}: boolean circuits run on the --gates schemes (rep3, mal3, bin3) among \
                 {} parties, not with --backend {}",
                op.name(),
                ROSTER.n(),
                w.backend.name()
            ));
        }
        if a.common.webrtc.webrtc.is_some() {
            return Err(format!(
                "--webrtc links three parties; --backend {} runs over direct links or --relay",
                w.backend.name()
            ));
        }
    }
    Ok(roster)
}

fn bench_parent(a: &BenchArgs) -> Result<(), String> {
    let transport = if a.common.plain { "plain" } else { "noise-aesgcm" };
    let w = &a.work;
    let roster = bench_roster(a)?;
    let parties = roster.n();
    if let Some(path) = &w.model {
        // Fail here, with the reason, rather than in the children.
        w.sizes().passes()?;
        if matches!(w.gates, bench_gates::Engine::Mal3OnDemand | bench_gates::Engine::Mal3Baseline)
        {
            return Err(format!(
                "--gates {} chooses the triples of the operation benchmark; --model runs on \
                 mal3 use Protocol 3.1's runs",
                w.gates.name()
            ));
        }
        let resolved = bench::resolve_model(path)?;
        if !bench::load_model(&resolved)?.has_test_set() {
            eprintln!(
                "ringfence: {} has no reference outputs (models/data/NAME.reference.json): \
                 timing on generated inputs; agreement with a reference runtime is not measured",
                resolved.display()
            );
        }
    } else if !matches!(
        w.backend,
        service::Backend::Rep3
            | service::Backend::Rss
            | service::Backend::Spdz2k
            | service::Backend::Mal3
    ) {
        return Err(format!(
            "--backend {} benchmarks models (--model NAME); the operation benchmark runs rep3, \
             mal3, rss or spdz2k",
            w.backend.name()
        ));
    }
    if w.comparisons != ringfence_core::rep3::Comparisons::TwoInput
        && w.backend != service::Backend::Rep3
    {
        return Err(format!(
            "--comparisons applies to rep3; {} computes its comparisons its own way",
            w.backend.name()
        ));
    }
    if w.bit_source != ringfence_core::rss::BitSource::default()
        && w.backend != service::Backend::Rss
    {
        return Err(format!("--bit-source applies to rss, not to {}", w.backend.name()));
    }
    if w.ahead && (w.backend != service::Backend::Spdz2k || w.model.is_some()) {
        return Err(format!(
            "--ahead applies to spdz2k's operations (--model runs time setup and online apart \
             already), not to {}",
            if w.model.is_some() { "--model" } else { w.backend.name() }
        ));
    }
    // A circuit file is read here first, so a malformed one is refused once, with its line.
    match (&w.circuit, w.ops().contains(&Op::Circuit)) {
        (Some(path), _) => drop(bench_gates::CircuitJob::load(path, w.circuit_inputs.as_deref())?),
        (None, true) => return Err("--ops circuit needs --circuit FILE (Bristol Fashion)".into()),
        (None, false) => {}
    }
    let ops: Vec<&str> = w.ops().iter().map(|o| o.name()).collect();
    let mut args = common_args(&a.common);
    args.extend(w.to_args()?);
    let keys = keys(a.common.plain, roster)?;
    if a.wan && a.common.relay.is_some() {
        return Err("--wan shapes the direct links between the parties; drop --relay".into());
    }
    let shape = a.wan.then(|| LinkShape::new(Duration::from_millis(a.rtt_ms), a.mbit));
    let rt = runtime(1)?;
    let mut proxies = Vec::new();
    let mut kids = Children::spawn(parties, "bench-party", &args)?;
    let participants = count(roster.participants(0));
    kids.introduce(keys.as_deref(), participants, |addrs| match shape {
        None => Ok(addrs),
        Some(shape) => addrs
            .into_iter()
            .map(|a| {
                let p = rt.block_on(ShapedProxy::start(a, shape)).map_err(|e| e.to_string())?;
                let addr = p.addr();
                proxies.push(p);
                Ok(addr)
            })
            .collect(),
    })?;
    let network = match shape {
        None => "loopback".to_string(),
        Some(s) => format!("wan {} ms rtt, {} Mbit/s", a.rtt_ms, s.rate_bps / 1e6),
    };
    if !a.json {
        bench::print_header(&w.sizes(), w.ring.bits(), transport, w.repeat, &network);
    }
    // By party index, whatever order they arrive in.
    let mut per_op: Vec<Vec<(usize, msgs::OpReport)>> = vec![Vec::new(); ops.len()];
    let mut done = 0;
    while done < parties {
        match kids.next(patience(&a.common))? {
            (_, FromChild::Done) => done += 1,
            // Said on the party's stderr too.
            (_, FromChild::Links { .. }) => {}
            (0, FromChild::Pass { run, pass, passes }) => {
                let run = if run == 0 { "warm-up".into() } else { format!("run {run}") };
                eprintln!("ringfence: {run}: sub-batch {pass} of {passes} done");
            }
            (_, FromChild::Pass { .. }) => {}
            (i, FromChild::Op(r)) => {
                let k = ops.iter().position(|o| *o == r.op).ok_or_else(|| {
                    format!("P{i} reported an op that was not asked for: {}", r.op)
                })?;
                per_op[k].push((i, r));
                if per_op[k].len() == parties {
                    per_op[k].sort_by_key(|&(i, _)| i);
                    let reports: Vec<msgs::OpReport> =
                        per_op[k].drain(..).map(|(_, r)| r).collect();
                    let s =
                        bench::summarize(&reports, w.ring.bits(), transport, w.repeat, w.backend)
                            .on_network(&network, shape.map(|s| s.delay.as_secs_f64()))
                            .in_sub_batches(w.sub_batch);
                    if a.json {
                        println!("{}", serde_json::to_string(&s).map_err(|e| e.to_string())?);
                    } else {
                        bench::print_row(&s);
                    }
                }
            }
            (i, other) => return Err(format!("P{i} sent an unexpected {other:?}")),
        }
    }
    kids.finish()
}
