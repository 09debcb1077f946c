//! `ringfence bench`: per-operation throughput, bytes and rounds of rep3, of rss among 3, 5 or
//! 7 parties (`--backend rss --parties N`), or of spdz2k among 2 or more (`--backend spdz2k`,
//! its material made by the parties within the timed runs), over the real transport.
//!
//! Each party runs every requested operation `repeat + 1` times on random shared inputs; the
//! first run is a warm-up. Before each run the parties make its preprocessing (timed and counted
//! apart as "setup"), flush their links and pass a barrier; the run is timed from the barrier
//! to the party's own completion. The parent reports the slowest party's mean time and the
//! parties' mean bytes.
//!
//! An inference run with `--sub-batch` is several such passes on the same links, one per
//! sub-batch of consecutive samples, each its own setup then online; the run's figures are
//! the passes' sums, and the warm-up is one pass.

use std::time::Instant;

use clap::ValueEnum;
use ringfence_core::net::PartyId;
use ringfence_core::nn::{argmax_rows, Inference, Output};
use ringfence_core::rep3::Comparisons;
use ringfence_core::ring::IntRing;
pub(crate) use ringfence_core::service::Backend;
use ringfence_core::service::ServiceBase as _;
use ringfence_core::sharing;
use serde::Serialize;

use crate::bench_scheme::{BenchRing, Scheme};
use crate::msgs::{FromChild, OpReport};
use crate::party::{barrier, report, Base};
use crate::testset::TestSet;

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
    /// Equality x = y on the whole ring.
    Eq,
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
    /// rss only: elementwise product opened to every party in one round (Protocol 2, n − 1
    /// elements per product and party among n parties).
    MulPub,
    /// rss only: n random shared bits in one round (n − 1 elements of the next wider ring per
    /// bit and party among n parties).
    RandBit,
    /// rss and spdz2k: n edaBits of k bits (rss: Protocol 7, t + 1 dealers input random bits
    /// and their integer, summed by Sklansky adders; spdz2k: every party's part from TinyOT
    /// bits, summed by ripple adders, checked by cut-and-bucket).
    EdaBit,
    /// n AND gates in one batched layer, then one bit opened (mal3 verifies every AND before
    /// it), on the --gates scheme.
    And,
    /// n AES-128 blocks (Boyar–Peralta S-box, expanded keys as inputs) on the --gates scheme,
    /// checked against the plaintext circuit.
    Aes,
    /// n instances of the --circuit FILE (Bristol Fashion) on the --gates scheme, checked
    /// against its plaintext evaluation.
    Circuit,
}

impl Op {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Mul => "mul",
            Self::Lt => "lt",
            Self::LtBounded => "lt-bounded",
            Self::Eq => "eq",
            Self::Relu => "relu",
            Self::Fxmul => "fxmul",
            Self::Matmul => "matmul",
            Self::Xchg => "xchg",
            Self::MulPub => "mul-pub",
            Self::RandBit => "rand-bit",
            Self::EdaBit => "eda-bit",
            Self::Infer => "infer",
            Self::And => "and",
            Self::Aes => "aes",
            Self::Circuit => "circuit",
        }
    }

    /// The backends the op runs on, where it does not run on all.
    pub(crate) fn only_on(self) -> Option<&'static [ringfence_core::service::Backend]> {
        use ringfence_core::service::Backend::{Rss, Spdz2k};
        match self {
            Self::MulPub | Self::RandBit => Some(&[Rss]),
            Self::EdaBit => Some(&[Rss, Spdz2k]),
            _ => None,
        }
    }

    /// Whether the op is a boolean circuit on the `--gates` scheme.
    pub(crate) fn on_gates(self) -> bool {
        matches!(self, Self::And | Self::Aes | Self::Circuit)
    }
}

/// The parser of `--backend`: the served families' names (from the core's registry).
pub(crate) fn backend_arg() -> impl clap::builder::TypedValueParser<Value = Backend> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(Backend::all().map(Backend::name))
        .try_map(|name| name.parse::<Backend>())
}

/// Models that `--model` accepts by name: `models/NAME.onnx` of the repository.
pub(crate) const MODEL_NAMES: &[&str] = &[
    "nn-a",
    "nn-b",
    "nn-c",
    "lenet",
    "minionn",
    "logreg",
    "svm",
    "tree",
    "alexnet",
    "vgg16",
    "minionn-q",
    "lenet-qdq",
    "mobilenet-q",
];

/// Networks of the METEOR paper with random weights: when no generated file
/// (`scripts/models/make_cifar_nets.py`) is found, they are built in memory
/// ([`ringfence_core::nn::zoo`]) under the pseudo-path `zoo:NAME`.
const ZOO: &[&str] = &["alexnet", "vgg16"];
const ZOO_PREFIX: &str = "zoo:";
/// The seed of the in-memory networks' weights (the script's, so both give the same model).
const ZOO_SEED: u64 = 20260521;

/// `--model` as given: a path to an ONNX file, or one of [`MODEL_NAMES`], looked up in
/// `$RINGFENCE_MODELS`, then in `models/` of the current directory and of its ancestors, then
/// next to the executable's ancestors (a checkout's `target/release/ringfence`).
pub(crate) fn resolve_model(arg: &std::path::Path) -> Result<std::path::PathBuf, String> {
    if arg.is_file() {
        return std::fs::canonicalize(arg).map_err(|e| format!("{}: {e}", arg.display()));
    }
    let name = arg.to_string_lossy();
    if !MODEL_NAMES.contains(&name.as_ref()) {
        return Err(format!(
            "--model {name}: no such file, and not a model name ({})",
            MODEL_NAMES.join(", ")
        ));
    }
    let file = format!("{name}.onnx");
    let mut dirs: Vec<std::path::PathBuf> =
        std::env::var_os("RINGFENCE_MODELS").map(Into::into).into_iter().collect();
    let mut roots = Vec::new();
    roots.extend(std::env::current_dir().ok());
    roots.extend(std::env::current_exe().ok());
    for root in &roots {
        dirs.extend(root.ancestors().map(|a| a.join("models")));
    }
    let found = dirs.iter().map(|d| d.join(&file)).find(|f| f.is_file());
    if found.is_none() && ZOO.contains(&name.as_ref()) {
        return Ok(format!("{ZOO_PREFIX}{name}").into());
    }
    found.ok_or_else(|| {
            format!("--model {name}: {file} not found in $RINGFENCE_MODELS or any models/ above the current directory or the executable")
        })
}

/// Reads a Bristol Fashion file (errors name the file, the line and the reason).
pub(crate) fn load_circuit(
    path: &std::path::Path,
) -> Result<ringfence_core::circuit::Circuit, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    ringfence_core::circuit::bristol::read(&text).map_err(|e| format!("{}: {e}", path.display()))
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
    /// Samples per setup + online pass of an inference run (`--sub-batch`); `None`: the whole
    /// batch in one pass.
    pub(crate) sub_batch: Option<usize>,
    /// The protocol family: of inference runs, and rep3 or rss for the operations.
    pub(crate) backend: Backend,
    /// Compute parties (one process each).
    pub(crate) parties: usize,
    /// The scheme of the boolean-circuit ops (`and`, `aes`).
    pub(crate) engine: crate::bench_gates::Engine,
    /// The S-box circuit of `aes`.
    pub(crate) sbox: crate::bench_gates::SboxArg,
    /// How rep3 computes comparisons.
    pub(crate) comparisons: Comparisons,
    /// Where rss's comparisons get their random bits.
    pub(crate) bit_source: ringfence_core::rss::BitSource,
    /// spdz2k: each timed run's material made in its setup, so that its time is online only.
    pub(crate) ahead: bool,
}

impl Sizes {
    /// How an inference run covers its batch: `(passes, samples per pass)`, each pass making
    /// its own setup, then running online on the next samples.
    pub(crate) fn passes(&self) -> Result<(usize, usize), String> {
        let batch = self.batch.max(1);
        match self.sub_batch {
            None => Ok((1, batch)),
            Some(0) => Err("--sub-batch 0: a sub-batch needs at least one sample".into()),
            Some(sub) if !batch.is_multiple_of(sub) => Err(format!(
                "--sub-batch {sub} does not divide --batch {batch}: every sub-batch has the same \
                 size, so pick a divisor of {batch}"
            )),
            Some(sub) => Ok((batch / sub, sub)),
        }
    }
}

/// A model to benchmark: its name, the imported graph, and its test set when it has one.
pub(crate) struct ModelBench {
    pub(crate) name: String,
    pub(crate) model: ringfence_core::nn::Model,
    tests: Option<TestSet>,
}

impl ModelBench {
    /// Whether the model has a test set (its runs then use its samples and report agreement).
    pub(crate) fn has_test_set(&self) -> bool {
        self.tests.is_some()
    }
}

/// Reads and imports an ONNX file (errors name the file and the reason), or builds a `zoo:`
/// network.
pub(crate) fn load_model(path: &std::path::Path) -> Result<ModelBench, String> {
    if let Some(name) = path.to_str().and_then(|p| p.strip_prefix(ZOO_PREFIX)) {
        let model = ringfence_core::nn::zoo::paper_model(name, ZOO_SEED)
            .ok_or_else(|| format!("no built-in network {name:?}"))?;
        return Ok(ModelBench { name: name.into(), model, tests: None });
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let model =
        ringfence_core::nn::import_onnx(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let name = path.file_stem().map_or("model".into(), |s| s.to_string_lossy().into_owned());
    let tests = TestSet::if_any(path).map_err(|e| format!("{}: test set: {e}", path.display()))?;
    if let Some(t) = &tests {
        if t.sample_len() != model.input_len() {
            return Err(format!(
                "{}: its test set's samples have {} values, the model takes {}: fix or remove \
                 the reference file rather than benchmark on other inputs",
                path.display(),
                t.sample_len(),
                model.input_len()
            ));
        }
    }
    Ok(ModelBench { name, model, tests })
}

/// Runs every op of `ops` on scheme `S` started on the session `b` and reports each to the
/// parent; gives the session back.
pub(crate) async fn run_ops<R: BenchRing, S: Scheme<R>>(
    b: S::On,
    ops: &[Op],
    sizes: Sizes,
    model: Option<&ModelBench>,
    circuit: Option<&crate::bench_gates::CircuitJob>,
) -> Result<S::On, String> {
    let mut p = S::start(b);
    Scheme::<R>::configure(&mut p, &sizes).map_err(|e| e.to_string())?;
    for &op in ops {
        if op.on_gates() {
            let (q, r) =
                p.circuit(op, sizes, circuit).await.map_err(|e| format!("{}: {e}", op.name()))?;
            p = q;
            report(&FromChild::Op(r));
            continue;
        }
        if op == Op::Infer {
            let mb = model.ok_or("infer needs --model FILE")?;
            let (q, r) = p.infer(mb, sizes).await?;
            p = q;
            report(&FromChild::Op(r));
            continue;
        }
        let r =
            bench_op::<R, S>(&mut p, op, sizes).await.map_err(|e| format!("{}: {e}", op.name()))?;
        report(&FromChild::Op(r));
    }
    let mut b = p.finish();
    // No party closes its links while another still measures.
    barrier(&mut b).await?;
    Ok(b)
}

/// One arithmetic op on random shared inputs: a warm-up run, then `repeat` timed ones, each
/// after its setup (timed apart) and a barrier.
async fn bench_op<R: BenchRing, S: Scheme<R>>(
    p: &mut S,
    op: Op,
    sizes: Sizes,
) -> Result<OpReport, String> {
    let Sizes { repeat, matmul_dim: d, .. } = sizes;
    let n = if op == Op::Matmul { d * d } else { sizes.n };
    let e = |e: ringfence_core::Error| e.to_string();
    let x = p.random(n).await.map_err(e)?;
    let y = p.random(n).await.map_err(e)?;
    let mut m = Meter::new(op, n);
    // With --ahead: what the warm-up run drew, made in every timed run's setup.
    let mut per_run = None;
    for run in 0..=repeat {
        let warm = run == 0;
        let before = p.drawn();
        if let (true, Some(material)) = (sizes.ahead, per_run) {
            m.setup_start(p.base());
            p.make_ahead(material).await.map_err(e)?;
            m.setup_end(p.base(), warm);
        }
        let on_demand = p.made_on_demand();
        match op {
            Op::Mul => {
                m.start(p.base_mut()).await?;
                p.product(&x, &y).await.map_err(e)?;
            }
            Op::MulPub => {
                m.start(p.base_mut()).await?;
                p.product_opened(&x, &y).await?;
            }
            Op::RandBit => {
                m.start(p.base_mut()).await?;
                p.random_bits(n).await?;
            }
            Op::EdaBit => {
                m.start(p.base_mut()).await?;
                p.eda_bits(n).await?;
            }
            Op::Lt => {
                m.start(p.base_mut()).await?;
                p.lt(&x, &y).await.map_err(e)?;
            }
            Op::Eq => {
                m.start(p.base_mut()).await?;
                p.eq(&x, &y).await.map_err(e)?;
            }
            Op::LtBounded => {
                m.start(p.base_mut()).await?;
                p.lt_bounded(&x, &y).await.map_err(e)?;
            }
            Op::Relu => {
                m.setup_start(p.base());
                let r = p.bit_prep(n).await.map_err(e)?;
                m.setup_end(p.base(), warm);
                m.start(p.base_mut()).await?;
                p.relu(&x, r).await.map_err(e)?;
            }
            Op::Fxmul => {
                m.setup_start(p.base());
                let pairs = p.trunc_material(n, FRAC_BITS).await.map_err(e)?;
                m.setup_end(p.base(), warm);
                m.start(p.base_mut()).await?;
                p.fixed_product(&x, &y, pairs).await.map_err(e)?;
            }
            Op::Matmul => {
                m.shape = Some(format!("{d}x{d}x{d}"));
                m.start(p.base_mut()).await?;
                p.matrix_product(&x, &y, (d, d, d)).await.map_err(e)?;
            }
            Op::Infer | Op::And | Op::Aes | Op::Circuit => {
                return Err(format!("{} does not run as an arithmetic operation", op.name()))
            }
            Op::Xchg => {
                let data = vec![R::ONE; n];
                m.start(p.base_mut()).await?;
                let roster = p.base().roster();
                let ctx = p.base_mut().ctx_mut();
                let me = ctx.me();
                ctx.round();
                ctx.send(roster.next(me), &data).map_err(e)?;
                ctx.recv::<R>(roster.prev(me), n).await.map_err(e)?;
            }
        }
        p.settle().await.map_err(e)?;
        m.stop(p.base_mut(), warm).await?;
        if warm {
            per_run = p.drawn().zip(before).map(|(after, before)| after.since(&before));
        } else if sizes.ahead && p.made_on_demand() != on_demand {
            return Err("the timed run drew material that its setup had not made".into());
        }
    }
    Ok(m.finish(repeat))
}

/// What an inference benchmark needs at every party: the plan, its shape and (at the input
/// owner P1) the encoded samples of the whole batch and the reference classes, when the model
/// has a test set.
struct InferInputs<R> {
    plan: ringfence_core::nn::FixedPlan<R>,
    shape: ringfence_core::nn::PlanShape,
    batch: usize,
    /// Setup + online passes per timed run, and samples per pass (`--sub-batch`).
    passes: usize,
    sub: usize,
    encoded: Option<Vec<R>>,
    expected: Option<Vec<usize>>,
}

const INPUT_OWNER: PartyId = PartyId(1);
const MODEL_OWNER: PartyId = PartyId(0);

impl<R: IntRing> InferInputs<R> {
    fn new(me: PartyId, mb: &ModelBench, sizes: Sizes) -> Result<Self, String> {
        use ringfence_core::nn::{FixedPlan, DEFAULT_FRAC_BITS};
        let plan = FixedPlan::<R>::new(&mb.model, DEFAULT_FRAC_BITS).map_err(|e| e.to_string())?;
        let shape = plan.shape();
        let batch = sizes.batch.max(1);
        let (passes, sub) = sizes.passes()?;
        let len = batch * shape.input_len;
        // The first `batch` test samples when the model has a test set (agreement with the
        // reference runtime is then reported), else deterministic pixel-like values in [0, 1).
        let (pixels, expected) = match &mb.tests {
            Some(t) => (t.samples(0, batch), Some(t.expected(0, batch))),
            None => ((0..len).map(|i| ((i * 37 + 11) % 256) as f64 / 256.0).collect(), None),
        };
        let mine = me == INPUT_OWNER;
        let encoded =
            mine.then(|| plan.encode_input(&pixels)).transpose().map_err(|e| e.to_string())?;
        Ok(Self { plan, shape, batch, passes, sub, encoded, expected: expected.filter(|_| mine) })
    }

    /// Values of one pass's input.
    fn pass_len(&self) -> usize {
        self.sub * self.shape.input_len
    }

    /// The encoded samples of pass `k` (at the input owner): the `k`-th sub-batch of the batch.
    fn pass_input(&self, k: usize) -> Option<&[R]> {
        let len = self.pass_len();
        self.encoded.as_deref().map(|e| &e[k * len..(k + 1) * len])
    }

    /// The fraction of `classes` equal to the reference runtime's (at the input owner), once
    /// they cover the whole batch.
    fn agreement(&self, classes: &[usize]) -> Option<f64> {
        let want = self.expected.as_ref().filter(|w| w.len() == classes.len())?;
        let same = classes.iter().zip(want).filter(|(a, b)| a == b).count();
        Some(same as f64 / want.len().max(1) as f64)
    }

    fn meter(&self, mb: &ModelBench) -> Meter {
        let mut m = Meter::new(Op::Infer, self.batch);
        m.shape = Some(format!("{} batch {}", mb.name, self.batch));
        m
    }

    /// The warm-up and the `repeat` timed runs: each timed run is `passes` calls of
    /// `pass(k, warm, meter)` (pass `k`'s setup, then its online phase on sub-batch `k`, which
    /// returns the input owner's classes); the warm-up is pass 0 only: the same code and sizes as
    /// every pass, without doubling a long benchmark.
    async fn runs(
        &self,
        m: &mut Meter,
        repeat: usize,
        mut pass: impl AsyncFnMut(usize, bool, &mut Meter) -> Result<Option<Vec<usize>>, String>,
    ) -> Result<(), String> {
        for run in 0..=repeat {
            let warm = run == 0;
            let mut classes = Vec::new();
            let passes = if warm { 1 } else { self.passes };
            for k in 0..passes {
                classes.extend(pass(k, warm, m).await?.into_iter().flatten());
                if self.passes > 1 {
                    report(&FromChild::Pass { run, pass: k + 1, passes });
                }
            }
            if let Some(a) = self.agreement(&classes) {
                m.agreement = Some(a);
            }
        }
        Ok(())
    }
}

/// Secure inference on scheme `S` started on the session `p` (rep3's for rep3, METEOR and mal3;
/// rss's own): the weights are shared once (not timed), then each run
/// (each pass of a run split in sub-batches) makes its setup (timed as setup: rep3's
/// truncation pairs and daBits; METEOR's input and layer masks, mask products and ReLU
/// material; rss's random bits); online is P1 sharing its samples, the layers, and the result
/// opened to P1: the class where the scheme reveals it, else the scores (P1 then takes the
/// argmax in the clear, within the online time).
pub(crate) async fn bench_infer<R: IntRing, B: Base, S: Inference<R> + sharing::Session<B>>(
    p: B,
    mb: &ModelBench,
    sizes: Sizes,
    output: Output,
) -> Result<(B, OpReport), String> {
    let e = |e: ringfence_core::Error| e.to_string();
    let io = InferInputs::<R>::new(p.ctx().me(), mb, sizes)?;
    let mut s = S::start(p);
    let me = s.me();
    let shared = s
        .share_model(MODEL_OWNER, (me == MODEL_OWNER).then_some(&io.plan), &io.shape)
        .await
        .map_err(e)?;
    let mut m = io.meter(mb);
    io.runs(&mut m, sizes.repeat, async |k, warm, m: &mut Meter| {
        m.setup_start(s.base());
        let mut prep = s.preprocess(&shared, io.sub, output, INPUT_OWNER).await.map_err(e)?;
        m.setup_end(s.base(), warm);
        m.start(s.base_mut()).await?;
        let input = S::take_input(&mut prep).map_err(e)?;
        let x = s.input(INPUT_OWNER, io.pass_input(k), input).await.map_err(e)?;
        let y = s.infer(&shared, x, prep).await.map_err(e)?;
        let opened = s.open_to(INPUT_OWNER, y).await.map_err(e)?;
        let classes = opened.map(|v| match output {
            Output::Argmax => v.iter().map(|c| c.to_i64() as usize).collect(),
            _ => argmax_rows(&v, io.shape.output_len()),
        });
        m.stop(s.base_mut(), warm).await?;
        Ok(classes)
    })
    .await?;
    Ok((s.finish(), m.finish(sizes.repeat)))
}

/// Accumulates the timed runs of one operation.
pub(crate) struct Meter {
    op: Op,
    n: usize,
    pub(crate) shape: Option<String>,
    seconds: f64,
    frame_bytes: u64,
    payload_bytes: u64,
    wire_bytes: u64,
    rounds: u64,
    setup: Option<(f64, u64)>,
    mark: Option<(Instant, ringfence_core::net::Stats, u64)>,
    /// Inference at the input owner: agreement of the last run's classes with the reference.
    agreement: Option<f64>,
    /// A circuit run on given inputs, at P0: the first instance's outputs.
    pub(crate) outputs: Option<Vec<String>>,
}

impl Meter {
    pub(crate) fn new(op: Op, n: usize) -> Self {
        Self {
            op,
            n,
            shape: None,
            seconds: 0.0,
            frame_bytes: 0,
            payload_bytes: 0,
            wire_bytes: 0,
            rounds: 0,
            setup: None,
            mark: None,
            agreement: None,
            outputs: None,
        }
    }

    fn setup_start<B: Base>(&mut self, p: &B) {
        self.mark = Some((Instant::now(), p.ctx().stats(), 0));
    }

    fn setup_end<B: Base>(&mut self, p: &B, warm: bool) {
        if let (Some((t, s, _)), false) = (self.mark.take(), warm) {
            let (secs, bytes) = self.setup.unwrap_or_default();
            let spent = t.elapsed().as_secs_f64();
            self.setup = Some((secs + spent, bytes + (p.ctx().stats() - s).bytes_sent));
        }
    }

    /// Flushes, passes a barrier and starts the clock.
    pub(crate) async fn start<B: Base>(&mut self, p: &mut B) -> Result<(), String> {
        p.ctx().transport().flushed().await.map_err(|e| e.to_string())?;
        barrier(p).await?;
        p.ctx().transport().flushed().await.map_err(|e| e.to_string())?;
        let wire = p.ctx().transport().wire_bytes_sent();
        self.mark = Some((Instant::now(), p.ctx().stats(), wire));
        Ok(())
    }

    pub(crate) async fn stop<B: Base>(&mut self, p: &mut B, warm: bool) -> Result<(), String> {
        let Some((t, s, w)) = self.mark.take() else { return Ok(()) };
        let secs = t.elapsed().as_secs_f64();
        let d = p.ctx().stats() - s;
        p.ctx().transport().flushed().await.map_err(|e| e.to_string())?;
        let wire = p.ctx().transport().wire_bytes_sent() - w;
        if !warm {
            self.seconds += secs;
            self.frame_bytes += d.bytes_sent;
            self.payload_bytes += d.payload_bytes_sent;
            self.wire_bytes += wire;
            self.rounds += d.rounds;
        }
        Ok(())
    }

    pub(crate) fn finish(self, repeat: usize) -> OpReport {
        let r = repeat.max(1) as f64;
        OpReport {
            op: self.op.name().into(),
            n: self.n,
            shape: self.shape,
            seconds: self.seconds / r,
            frame_bytes: self.frame_bytes as f64 / r,
            payload_bytes: self.payload_bytes as f64 / r,
            wire_bytes: self.wire_bytes as f64 / r,
            rounds: self.rounds as f64 / r,
            setup_seconds: self.setup.map(|(s, _)| s / r),
            setup_frame_bytes: self.setup.map(|(_, b)| b as f64 / r),
            agreement: self.agreement,
            outputs: self.outputs,
        }
    }
}

/// One line of `--json` output: the figures of one operation over the parties.
#[derive(Serialize)]
pub(crate) struct Summary {
    op: String,
    n: usize,
    ring_bits: u32,
    /// Compute parties (processes); bytes are means over them.
    parties: usize,
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
    /// Inference only: the model's name, the batch, and the online figures under the names
    /// the inference benchmarks use (`seconds`/`bytes_per_party` are the same run).
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    batch: Option<usize>,
    /// `--sub-batch`: the batch ran as `batch / sub_batch` passes of this many samples, each
    /// its own setup then online; times, bytes and rounds are their sums.
    #[serde(skip_serializing_if = "Option::is_none")]
    sub_batch: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    online_seconds: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    online_bytes_per_party: Option<f64>,
    /// Payload bytes (no frame headers) per party: what the protocols' cost models count.
    payload_bytes_per_party: f64,
    /// Inference on a model with a test set: the fraction of the batch's classes equal to the
    /// reference runtime's (onnxruntime) on the same samples.
    #[serde(skip_serializing_if = "Option::is_none")]
    accuracy_agreement: Option<f64>,
    /// Payload bytes each party sent, by party index (the seats of a scheme differ: bin3's P3
    /// sends far less).
    payload_bytes_by_party: Vec<f64>,
    /// A circuit run on given inputs: the first instance's output groups, in hex.
    #[serde(skip_serializing_if = "Option::is_none")]
    outputs: Option<Vec<String>>,
    /// The links between the parties: `loopback`, or the emulated WAN.
    network: String,
    /// With an emulated WAN: rounds × one-way delay, the time no implementation with this
    /// round count can beat on that link. (A round here is one message from each party to its
    /// peers, received one one-way delay later: half an RTT, not a whole one.)
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_floor_seconds: Option<f64>,
}

impl Summary {
    /// Names the network the figures were measured on; `delay`: an emulated WAN's one-way
    /// delay in seconds.
    pub(crate) fn on_network(mut self, network: &str, delay: Option<f64>) -> Self {
        self.network = network.into();
        self.latency_floor_seconds = delay.map(|t| t * self.rounds);
        self
    }

    /// Records that an inference batch ran in sub-batches of `sub` samples (`--sub-batch`).
    pub(crate) fn in_sub_batches(mut self, sub: Option<usize>) -> Self {
        self.sub_batch = sub.filter(|_| self.batch.is_some());
        self
    }
}

/// Combines the parties' reports of one op (one from each of the `parties`): slowest time, mean
/// bytes, most rounds.
pub(crate) fn summarize(
    reports: &[OpReport],
    ring_bits: u32,
    transport: &'static str,
    repeat: usize,
    backend: Backend,
) -> Summary {
    let k = reports.len().max(1) as f64;
    let max = |f: fn(&OpReport) -> f64| reports.iter().map(f).fold(0.0, f64::max);
    let mean = |f: fn(&OpReport) -> f64| reports.iter().map(f).sum::<f64>() / k;
    let first = &reports[0];
    let seconds = max(|r| r.seconds);
    let infer = first.op == Op::Infer.name();
    Summary {
        op: first.op.clone(),
        n: first.n,
        ring_bits,
        parties: reports.len(),
        seconds,
        ops_per_s: if seconds > 0.0 { first.n as f64 / seconds } else { 0.0 },
        bytes_per_party: mean(|r| r.frame_bytes),
        wire_bytes_per_party: mean(|r| r.wire_bytes),
        rounds: max(|r| r.rounds),
        backend: backend.name(),
        transport,
        setup_seconds: first.setup_seconds.map(|_| max(|r| r.setup_seconds.unwrap_or(0.0))),
        setup_bytes_per_party: first
            .setup_frame_bytes
            .map(|_| mean(|r| r.setup_frame_bytes.unwrap_or(0.0))),
        repeat,
        shape: first.shape.clone(),
        model: infer.then(|| {
            first.shape.as_deref().and_then(|s| s.split(' ').next()).unwrap_or("").to_string()
        }),
        batch: infer.then_some(first.n),
        sub_batch: None,
        online_seconds: infer.then_some(seconds),
        online_bytes_per_party: infer.then(|| mean(|r| r.frame_bytes)),
        payload_bytes_per_party: mean(|r| r.payload_bytes),
        accuracy_agreement: reports.iter().find_map(|r| r.agreement),
        payload_bytes_by_party: reports.iter().map(|r| r.payload_bytes).collect(),
        outputs: reports.iter().find_map(|r| r.outputs.clone()),
        network: "loopback".into(),
        latency_floor_seconds: None,
    }
}

/// Prints the header of the human-readable table.
pub(crate) fn print_header(
    sizes: &Sizes,
    ring_bits: u32,
    transport: &str,
    repeat: usize,
    network: &str,
) {
    let how = match sizes.backend {
        Backend::Rep3 => format!(" ({} comparisons)", sizes.comparisons),
        Backend::Rss => format!(
            " among {} parties (t = {}, {})",
            sizes.parties,
            sizes.parties.saturating_sub(1) / 2,
            sizes.bit_source
        ),
        _ => String::new(),
    };
    println!(
        "ringfence bench: {}{how}, Z_2^{ring_bits}, n = {}, transport {transport}, \
         {} processes on 127.0.0.1 ({network}), mean of {repeat} runs after a warm-up",
        sizes.backend.name(),
        sizes.n,
        sizes.parties
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
    let n = match s.sub_batch {
        Some(sub) => format!("{} ({} × {sub})", s.n, s.n / sub.max(1)),
        None => s.n.to_string(),
    };
    println!(
        "{:<7} {:>9} {:>13.4e} {:>10} {:>12} {:>9.2} {:>12} {:>7} {:>18}",
        s.op,
        n,
        s.ops_per_s,
        secs(s.seconds),
        bytes(s.bytes_per_party),
        s.bytes_per_party / s.n.max(1) as f64,
        bytes(s.wire_bytes_per_party),
        s.rounds,
        setup
    );
    if let Some(shape) = &s.shape {
        if let Some(sub) = s.sub_batch {
            println!(
                "        ({shape} in {} sub-batches of {sub}, each its own setup then online; \
                 n counts samples, time is online, setup beside it, both summed)",
                s.n / sub.max(1)
            );
        } else if s.op == "infer" {
            println!("        ({shape}; n counts samples, time is online, setup beside it)");
        } else if s.op == "matmul" {
            println!("        ({shape} = m x k x n; n counts outputs)");
        } else {
            println!("        ({shape})");
        }
    }
    if let Some(a) = s.accuracy_agreement {
        println!(
            "        (classes equal to the reference runtime's on {:.1} % of the batch)",
            a * 100.0
        );
    }
    if let Some(floor) = s.latency_floor_seconds {
        println!(
            "        (latency floor on this link: {} rounds x one-way delay = {})",
            s.rounds,
            secs(floor)
        );
    }
}

fn secs(t: f64) -> String {
    if t < 1.0 {
        format!("{:.2} ms", t * 1e3)
    } else {
        format!("{t:.3} s")
    }
}

/// `b` bytes for people: B, kB or MB (decimal), two decimals.
pub(crate) fn bytes(b: f64) -> String {
    if b >= 1e6 {
        format!("{:.2} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.2} kB", b / 1e3)
    } else {
        format!("{b:.0} B")
    }
}

#[cfg(test)]
mod tests {
    use ringfence_core::ring::Z64;

    use super::*;

    fn sizes(batch: usize, sub_batch: Option<usize>) -> Sizes {
        Sizes {
            n: 1,
            repeat: 1,
            matmul_dim: 1,
            batch,
            sub_batch,
            backend: Backend::Rep3,
            parties: crate::ROSTER.n(),
            engine: crate::bench_gates::Engine::Rep3,
            sbox: crate::bench_gates::SboxArg::Bp,
            comparisons: Comparisons::TwoInput,
            bit_source: ringfence_core::rss::BitSource::default(),
            ahead: false,
        }
    }

    #[test]
    fn comparisons_parse_and_print_back() {
        for v in ["two-input", "fan-in:4,4", "fan-in:8,8", "fan-in:1,2"] {
            assert_eq!(v.parse::<Comparisons>().unwrap().to_string(), v);
        }
        assert_eq!("fan-in".parse::<Comparisons>().unwrap().to_string(), "fan-in:4,4");
        for bad in ["fan-in:9,4", "fan-in:4,1", "fan-in:4", "fan-out", "fan-in:a,b"] {
            let e = bad.parse::<Comparisons>().unwrap_err();
            assert!(e.contains("1..=8") || e.contains("expected"), "{bad}: {e}");
        }
    }

    #[test]
    fn bench_backends_are_the_served_families() {
        let cmd = clap::Command::new("t")
            .arg(clap::Arg::new("b").long("backend").value_parser(backend_arg()));
        let parse = |name: &str| {
            let m = cmd.clone().try_get_matches_from(["t", "--backend", name])?;
            Ok::<_, clap::Error>(*m.get_one::<Backend>("b").expect("given"))
        };
        for b in Backend::all() {
            assert_eq!(parse(b.name()).unwrap(), b);
        }
        assert_eq!(parse("rss").unwrap(), Backend::Rss);
        assert!(parse("rep4").is_err());
    }

    #[test]
    fn a_batch_splits_only_into_equal_nonempty_sub_batches() {
        assert_eq!(sizes(128, None).passes(), Ok((1, 128)));
        assert_eq!(sizes(128, Some(16)).passes(), Ok((8, 16)));
        assert_eq!(sizes(128, Some(128)).passes(), Ok((1, 128)));
        let err = sizes(128, Some(24)).passes().unwrap_err();
        assert!(err.contains("--sub-batch 24 does not divide --batch 128"), "{err}");
        assert!(sizes(128, Some(0)).passes().unwrap_err().contains("at least one sample"));
    }

    /// A model copied with a reference file next to it (`data/NAME.reference.json`) whose
    /// samples are `sample_len` bytes, or none; returns the model's path.
    fn model_with_reference(tag: &str, reference: Option<(&str, usize)>) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ringfence-bench-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("models/data")).unwrap();
        let model = dir.join("models/nn-a.onnx");
        let src = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/nn-a.onnx");
        std::fs::copy(src, &model).unwrap();
        if let Some((scale, len)) = reference {
            std::fs::write(dir.join("models/data/s.u8"), vec![7u8; 2 * len]).unwrap();
            let json = format!(
                r#"{{"inputs": "models/data/s.u8", "input_scale": "{scale}", "runtime": "x",
                    "argmax": [1, 2]}}"#
            );
            std::fs::write(dir.join("models/data/nn-a.reference.json"), json).unwrap();
        }
        model
    }

    #[test]
    fn a_test_set_that_cannot_be_used_is_an_error_not_other_inputs() {
        let none = load_model(&model_with_reference("none", None)).unwrap();
        assert!(!none.has_test_set());
        let fits = load_model(&model_with_reference("fits", Some(("1/255", 784)))).unwrap();
        assert!(fits.has_test_set());
        let Err(e) = load_model(&model_with_reference("len", Some(("1/255", 100)))) else {
            panic!("a test set of 100-value samples for a 784-value model was used");
        };
        assert!(e.contains("samples have 100 values, the model takes 784"), "{e}");
        let Err(e) = load_model(&model_with_reference("scale", Some(("1/3", 784)))) else {
            panic!("a test set with an unknown input scale was used");
        };
        assert!(e.contains("input_scale"), "{e}");
    }

    #[test]
    fn each_sub_batch_takes_the_next_test_samples() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/nn-a.onnx");
        let mb = load_model(std::path::Path::new(path)).unwrap();
        let tests = mb.tests.as_ref().expect("nn-a has a test set");
        let io = InferInputs::<Z64>::new(INPUT_OWNER, &mb, sizes(6, Some(2))).unwrap();
        assert_eq!((io.passes, io.sub), (3, 2));
        for k in 0..3 {
            let want = io.plan.encode_input(&tests.samples(2 * k, 2)).unwrap();
            assert_eq!(io.pass_input(k), Some(&want[..]), "sub-batch {k}");
        }
        assert_ne!(io.pass_input(0), io.pass_input(1));
        // Agreement is over the whole batch: one sub-batch's classes are not enough.
        let want = tests.expected(0, 6);
        assert_eq!(io.agreement(&want[..2]), None);
        assert_eq!(io.agreement(&want), Some(1.0));
        // Only the input owner holds samples.
        let other = InferInputs::<Z64>::new(MODEL_OWNER, &mb, sizes(6, Some(2))).unwrap();
        assert_eq!(other.pass_input(1), None);
    }
}
