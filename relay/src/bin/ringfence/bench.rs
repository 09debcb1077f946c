//! `ringfence bench`: per-operation throughput, bytes and rounds of rep3 over the real transport.
//!
//! Each party runs every requested operation `repeat + 1` times on random shared inputs; the
//! first run is a warm-up. Before each run the parties make its preprocessing (timed and counted
//! apart as "setup"), flush their links and pass a barrier; the run is timed from the barrier
//! to the party's own completion. The parent reports the slowest party's mean time and the
//! parties' mean bytes.

use std::time::Instant;

use clap::ValueEnum;
use ringfence_core::net::PartyId;
use ringfence_core::ring::IntRing;
use serde::Serialize;

use crate::msgs::{FromChild, OpReport};
use crate::party::{barrier, report, Session};

/// Fractional bits of the fixed-point benchmark.
const FRAC_BITS: u32 = 16;

/// A benchmarked operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Op {
    /// Elementwise product (1 round).
    Mul,
    /// Signed comparison x < y, exact on the whole ring (3 MSBs + 1 AND round).
    Lt,
    /// Signed comparison x < y for |x − y| < 2^(k−1), e.g. fixed-point data (1 MSB).
    LtBounded,
    /// max(x, 0), one daBit per element from setup.
    Relu,
    /// Fixed-point product truncated by 16 bits, one truncation pair per element from setup.
    Fxmul,
    /// Square matrix product d×d·d×d, d from --matmul-dim (d² outputs).
    Matmul,
    /// Secure inference of the --model ONNX file (batch from --batch), argmax to P1.
    Infer,
    /// Transport only: each party sends n elements to the next party and receives n from the
    /// previous one (one round, no computation beyond encoding).
    Xchg,
}

impl Op {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Mul => "mul",
            Self::Lt => "lt",
            Self::LtBounded => "lt-bounded",
            Self::Relu => "relu",
            Self::Fxmul => "fxmul",
            Self::Matmul => "matmul",
            Self::Xchg => "xchg",
            Self::Infer => "infer",
        }
    }
}

/// Sizes of a benchmark run.
#[derive(Clone, Copy)]
pub(crate) struct Sizes {
    /// Elements per batched operation.
    pub(crate) n: usize,
    /// Timed runs per operation.
    pub(crate) repeat: usize,
    /// d of the d×d·d×d matrix product.
    pub(crate) matmul_dim: usize,
    /// Samples per inference run.
    pub(crate) batch: usize,
}

/// A model to benchmark: its name and the imported graph.
pub(crate) struct ModelBench {
    name: String,
    model: ringfence_core::nn::Model,
}

/// Reads and imports an ONNX file (errors name the file and the reason).
pub(crate) fn load_model(path: &std::path::Path) -> Result<ModelBench, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let model =
        ringfence_core::nn::import_onnx(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let name = path.file_stem().map_or("model".into(), |s| s.to_string_lossy().into_owned());
    Ok(ModelBench { name, model })
}

/// Runs every op of `ops` and reports each to the parent.
pub(crate) async fn run_ops<R: IntRing>(
    mut p: Session,
    ops: &[Op],
    sizes: Sizes,
    model: Option<&ModelBench>,
) -> Result<Session, String> {
    for &op in ops {
        if op == Op::Infer {
            let mb = model.ok_or("infer needs --model FILE")?;
            report(&FromChild::Op(bench_infer::<R>(&mut p, mb, sizes).await?));
            continue;
        }
        let r =
            bench_op::<R>(&mut p, op, sizes).await.map_err(|e| format!("{}: {e}", op.name()))?;
        report(&FromChild::Op(r));
    }
    Ok(p)
}

async fn bench_op<R: IntRing>(p: &mut Session, op: Op, sizes: Sizes) -> Result<OpReport, String> {
    let Sizes { repeat, matmul_dim: d, .. } = sizes;
    let n = if op == Op::Matmul { d * d } else { sizes.n };
    let e = |e: ringfence_core::Error| e.to_string();
    let x = p.random::<R>(n);
    let y = p.random::<R>(n);
    let mut m = Meter::new(op, n);
    for run in 0..=repeat {
        let warm = run == 0;
        match op {
            Op::Mul => {
                m.start(p).await?;
                p.mul(&x, &y).await.map_err(e)?;
            }
            Op::Lt => {
                m.start(p).await?;
                p.lt(&x, &y).await.map_err(e)?;
            }
            Op::LtBounded => {
                m.start(p).await?;
                p.lt_bounded(&x, &y).await.map_err(e)?;
            }
            Op::Relu => {
                m.setup_start(p);
                let r = p.dabits::<R>(n).await.map_err(e)?;
                m.setup_end(p, warm);
                m.start(p).await?;
                p.relu(&x, r).await.map_err(e)?;
            }
            Op::Fxmul => {
                m.setup_start(p);
                let pairs = p.trunc_pairs::<R>(n, FRAC_BITS).await.map_err(e)?;
                m.setup_end(p, warm);
                m.start(p).await?;
                p.mul_fixed(&x, &y, pairs).await.map_err(e)?;
            }
            Op::Matmul => {
                m.shape = Some(format!("{d}x{d}x{d}"));
                m.start(p).await?;
                p.matmul(&x, &y, d, d, d).await.map_err(e)?;
            }
            Op::Infer => return Err("inference runs in bench_infer, not as an operation".into()),
            Op::Xchg => {
                let data = vec![R::ONE; n];
                m.start(p).await?;
                let ctx = p.ctx_mut();
                let me = ctx.me().0;
                ctx.round();
                ctx.send(PartyId((me + 1) % 3), &data).map_err(e)?;
                ctx.recv::<R>(PartyId((me + 2) % 3), n).await.map_err(e)?;
            }
        }
        m.stop(p, warm).await?;
    }
    Ok(m.finish(repeat))
}

/// Secure inference: the weights are shared once (not timed), then each run makes its setup
/// (timed as setup), shares `batch` samples from P1, infers and opens the argmax to P1.
async fn bench_infer<R: IntRing>(
    p: &mut Session,
    mb: &ModelBench,
    sizes: Sizes,
) -> Result<OpReport, String> {
    use ringfence_core::nn::{
        infer, preprocess, share_model, FixedPlan, Output, DEFAULT_FRAC_BITS,
    };
    let e = |e: ringfence_core::Error| e.to_string();
    let plan = FixedPlan::<R>::new(&mb.model, DEFAULT_FRAC_BITS).map_err(|e| e.to_string())?;
    let shape = plan.shape();
    let owner = PartyId(0);
    let shared =
        share_model(p, owner, (p.me() == owner).then_some(&plan), &shape).await.map_err(e)?;
    let batch = sizes.batch.max(1);
    let len = batch * shape.input_len;
    // Deterministic pixel-like inputs in [0, 1); only P1 (the input owner) encodes them.
    let pixels: Vec<f64> = (0..len).map(|i| ((i * 37 + 11) % 256) as f64 / 256.0).collect();
    let input = PartyId(1);
    let encoded = if p.me() == input {
        Some(plan.encode_input(&pixels).map_err(|e| e.to_string())?)
    } else {
        None
    };
    let mut m = Meter::new(Op::Infer, batch);
    m.shape = Some(format!("{} batch {batch}", mb.name));
    for run in 0..=sizes.repeat {
        let warm = run == 0;
        m.setup_start(p);
        let prep = preprocess::<_, R>(p, &shape, batch, Output::Argmax).await.map_err(e)?;
        m.setup_end(p, warm);
        m.start(p).await?;
        let x = p.input(input, encoded.as_deref(), len).await.map_err(e)?;
        let y = infer(p, &shared, x, prep).await.map_err(e)?;
        p.reveal_to(input, y).await.map_err(e)?;
        m.stop(p, warm).await?;
    }
    Ok(m.finish(sizes.repeat))
}

/// Accumulates the timed runs of one operation.
struct Meter {
    op: Op,
    n: usize,
    shape: Option<String>,
    seconds: f64,
    frame_bytes: u64,
    wire_bytes: u64,
    rounds: u64,
    setup: Option<(f64, u64)>,
    mark: Option<(Instant, ringfence_core::net::Stats, u64)>,
}

impl Meter {
    fn new(op: Op, n: usize) -> Self {
        Self {
            op,
            n,
            shape: None,
            seconds: 0.0,
            frame_bytes: 0,
            wire_bytes: 0,
            rounds: 0,
            setup: None,
            mark: None,
        }
    }

    fn setup_start(&mut self, p: &Session) {
        self.mark = Some((Instant::now(), p.ctx().stats(), 0));
    }

    fn setup_end(&mut self, p: &Session, warm: bool) {
        if let (Some((t, s, _)), false) = (self.mark.take(), warm) {
            let (secs, bytes) = self.setup.unwrap_or_default();
            let spent = t.elapsed().as_secs_f64();
            self.setup = Some((secs + spent, bytes + (p.ctx().stats() - s).bytes_sent));
        }
    }

    /// Flushes, passes a barrier and starts the clock.
    async fn start(&mut self, p: &mut Session) -> Result<(), String> {
        p.ctx().transport().flushed().await.map_err(|e| e.to_string())?;
        barrier(p).await?;
        p.ctx().transport().flushed().await.map_err(|e| e.to_string())?;
        let wire = p.ctx().transport().wire_bytes_sent();
        self.mark = Some((Instant::now(), p.ctx().stats(), wire));
        Ok(())
    }

    async fn stop(&mut self, p: &mut Session, warm: bool) -> Result<(), String> {
        let Some((t, s, w)) = self.mark.take() else { return Ok(()) };
        let secs = t.elapsed().as_secs_f64();
        let d = p.ctx().stats() - s;
        p.ctx().transport().flushed().await.map_err(|e| e.to_string())?;
        let wire = p.ctx().transport().wire_bytes_sent() - w;
        if !warm {
            self.seconds += secs;
            self.frame_bytes += d.bytes_sent;
            self.wire_bytes += wire;
            self.rounds += d.rounds;
        }
        Ok(())
    }

    fn finish(self, repeat: usize) -> OpReport {
        let r = repeat.max(1) as f64;
        OpReport {
            op: self.op.name().into(),
            n: self.n,
            shape: self.shape,
            seconds: self.seconds / r,
            frame_bytes: self.frame_bytes as f64 / r,
            wire_bytes: self.wire_bytes as f64 / r,
            rounds: self.rounds as f64 / r,
            setup_seconds: self.setup.map(|(s, _)| s / r),
            setup_frame_bytes: self.setup.map(|(_, b)| b as f64 / r),
        }
    }
}

/// One line of `--json` output: the figures of one operation over the three parties.
#[derive(Serialize)]
pub(crate) struct Summary {
    op: String,
    n: usize,
    ring_bits: u32,
    seconds: f64,
    ops_per_s: f64,
    bytes_per_party: f64,
    wire_bytes_per_party: f64,
    rounds: f64,
    backend: &'static str,
    transport: &'static str,
    setup_seconds: Option<f64>,
    setup_bytes_per_party: Option<f64>,
    repeat: usize,
    shape: Option<String>,
}

/// Combines the three parties' reports of one op: slowest time, mean bytes, most rounds.
pub(crate) fn summarize(
    reports: &[OpReport],
    ring_bits: u32,
    transport: &'static str,
    repeat: usize,
) -> Summary {
    let k = reports.len().max(1) as f64;
    let max = |f: fn(&OpReport) -> f64| reports.iter().map(f).fold(0.0, f64::max);
    let mean = |f: fn(&OpReport) -> f64| reports.iter().map(f).sum::<f64>() / k;
    let first = &reports[0];
    let seconds = max(|r| r.seconds);
    Summary {
        op: first.op.clone(),
        n: first.n,
        ring_bits,
        seconds,
        ops_per_s: if seconds > 0.0 { first.n as f64 / seconds } else { 0.0 },
        bytes_per_party: mean(|r| r.frame_bytes),
        wire_bytes_per_party: mean(|r| r.wire_bytes),
        rounds: max(|r| r.rounds),
        backend: "rep3",
        transport,
        setup_seconds: first.setup_seconds.map(|_| max(|r| r.setup_seconds.unwrap_or(0.0))),
        setup_bytes_per_party: first
            .setup_frame_bytes
            .map(|_| mean(|r| r.setup_frame_bytes.unwrap_or(0.0))),
        repeat,
        shape: first.shape.clone(),
    }
}

/// Prints the header of the human-readable table.
pub(crate) fn print_header(n: usize, ring_bits: u32, transport: &str, repeat: usize) {
    println!(
        "ringfence bench: rep3, Z_2^{ring_bits}, n = {n}, transport {transport}, \
         3 processes on 127.0.0.1, mean of {repeat} runs after a warm-up"
    );
    println!(
        "{:<7} {:>9} {:>13} {:>10} {:>12} {:>9} {:>12} {:>7} {:>18}",
        "op",
        "n",
        "ops/s",
        "time",
        "bytes/party",
        "B/elem",
        "wire/party",
        "rounds",
        "setup (time, B/party)"
    );
}

/// Prints one row of the human-readable table.
pub(crate) fn print_row(s: &Summary) {
    let setup = match (s.setup_seconds, s.setup_bytes_per_party) {
        (Some(t), Some(b)) => format!("{}, {}", secs(t), bytes(b)),
        _ => "-".into(),
    };
    println!(
        "{:<7} {:>9} {:>13.4e} {:>10} {:>12} {:>9.2} {:>12} {:>7} {:>18}",
        s.op,
        s.n,
        s.ops_per_s,
        secs(s.seconds),
        bytes(s.bytes_per_party),
        s.bytes_per_party / s.n.max(1) as f64,
        bytes(s.wire_bytes_per_party),
        s.rounds,
        setup
    );
    if let Some(shape) = &s.shape {
        if s.op == "infer" {
            println!("        ({shape}; n counts samples, time is online, setup beside it)");
        } else {
            println!("        ({shape} = m x k x n; n counts outputs)");
        }
    }
}

fn secs(t: f64) -> String {
    if t < 1.0 {
        format!("{:.2} ms", t * 1e3)
    } else {
        format!("{t:.3} s")
    }
}

fn bytes(b: f64) -> String {
    if b >= 1e6 {
        format!("{:.2} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.2} kB", b / 1e3)
    } else {
        format!("{b:.0} B")
    }
}
