//! `ringfence demo`: a private classification on an embedded local deployment
//! ([`LocalDeployment`]: a relay on 127.0.0.1 requiring signed tokens, and three long-running
//! `ringfence party` server processes in its lobby, or five or seven with `--parties`). This process is the client: it takes a
//! held-out test sample of a shipped model, opens a session inviting the deployment, asks the
//! parties to classify the sample ([`ringfence_core::service`]), and checks the answer against
//! the plaintext model's (onnxruntime's reference output, committed beside the model).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use ringfence_core::net::Ctx;
use ringfence_core::progress::Progress;
use ringfence_core::service::{self, Request};
use ringfence_relay::ws::RelayLinkConfig;
use ringfence_relay::{os_seed, TcpTransport};

use crate::bench::{self, Backend};
use crate::local::{LocalDeployment, DEPLOYMENT};
use crate::testset::TestSet;

/// Options of `ringfence demo`.
#[derive(Args, Clone)]
pub(crate) struct DemoArgs {
    /// The model: one of nn-a, nn-b, nn-c, lenet, logreg, or an ONNX file with a reference file
    /// `data/NAME.reference.json` beside it (see models/README.md).
    #[arg(long, default_value = "lenet")]
    model: PathBuf,
    /// Protocol family: meteor (the client receives the scores; the default with 3 parties),
    /// rep3 or mal3 among 3 server parties; rss among 5 or 7 (the default there); spdz2k with
    /// 1 (the default there).
    #[arg(long, value_parser = bench::backend_arg())]
    backend: Option<Backend>,
    /// The deployment's size: 3 server parties, 5 or 7 (rss: any 2, or 3, of them together
    /// learn nothing), or 1 or 2 (spdz2k: the client computes as the last party, and none
    /// trusts the others).
    #[arg(long, value_name = "N", default_value_t = 3)]
    parties: usize,
    /// Which held-out test sample to classify (0-based).
    #[arg(long, default_value_t = 0)]
    sample: usize,
    /// How long to wait for a silent party.
    #[arg(long, default_value_t = 30_000)]
    timeout_ms: u64,
}

/// A held-out sample and what the plaintext model answers for it.
struct Sample {
    pixels: Vec<f64>,
    /// Side of the square image, for drawing.
    side: usize,
    /// The reference runtime's class, and its name.
    expected: usize,
    runtime: String,
}

/// Reads sample `k` of the model's test set.
fn load_sample(model: &Path, k: usize) -> Result<Sample, String> {
    let set = TestSet::for_model(model)?;
    if k >= set.count() {
        return Err(format!(
            "--sample {k}: the test set has {} samples (0 to {})",
            set.count(),
            set.count() - 1
        ));
    }
    Ok(Sample {
        pixels: set.samples(k, 1),
        side: (set.sample_len() as f64).sqrt() as usize,
        expected: set.expected(k, 1)[0],
        runtime: set.runtime,
    })
}

/// Runs the demo; `Ok` only if the private answer equals the plaintext model's.
pub(crate) fn parent(a: &DemoArgs) -> Result<(), String> {
    let model = bench::resolve_model(&a.model)?;
    let name = model.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let sample = load_sample(&model, a.sample)?;
    let what = format!("held-out test sample #{} of {name}'s test set", a.sample);
    let layout = crate::local::servers(a.parties)?;
    let backend = crate::local::client_backend(layout, a.backend)?;
    let rt = crate::runtime(2)?;
    let n = layout.servers();
    println!("ringfence demo: private classification on a local deployment");
    println!("  starting a relay and {n} server parties (ringfence party) on 127.0.0.1 ...");
    let started = Instant::now();
    let listen = "127.0.0.1:0".parse().map_err(|e| format!("{e}"))?;
    let models = [(name.clone(), model.clone())];
    let mut d = LocalDeployment::start(&rt, listen, None, layout, &models, 1, true)?;
    println!(
        "  relay    {} (embedded; admits signed tokens only; forwards Noise frames it cannot read)",
        d.relay
    );
    let ids: Vec<String> = (0..n).map(|p| format!("P{p}")).collect();
    println!(
        "  parties  {}: long-running server processes, waiting in deployment {DEPLOYMENT:?}'s lobby",
        ids.join(", ")
    );
    let roster = layout.roster();
    if layout.client_computes() {
        println!(
            "           the server(s) and this client make every part of the preprocessing \
             together; none trusts the others"
        );
    } else if roster.t() > 1 {
        println!(
            "           any {} of them together learn nothing of the input or the answer",
            roster.t()
        );
    }
    let role = if layout.client_computes() {
        format!(", computes as party P{}", layout.client().0)
    } else {
        String::new()
    };
    println!(
        "  client   this process: holds the input, alone sees the answer{role} ({} backend, model {name})",
        backend.name()
    );
    println!("  input    {what}");
    let wait = Duration::from_millis(a.timeout_ms);
    if n == 3 {
        // The parties' mesh makes setup material in the background as soon as they start; a
        // client arriving once it is ready runs only the online phase.
        match d.wait_prepared(&name, backend, wait)? {
            Some(s) => println!(
                "  setup    made ahead of demand by the parties among themselves ({:.0} ms, before any input)",
                s * 1e3
            ),
            None => println!("  setup    nothing made ahead of demand; the session makes its own"),
        }
    }
    let cfg = d.client_link(wait)?;
    let request = Request::new(&name, backend, 1);
    let (got, timeline) = rt.block_on(classify(cfg, request, &sample.pixels, started))?;
    let views = party_reports(&mut d, n, wait)?;
    drop(d);
    draw(&sample, &got.masked_view);
    for (stage, t) in &timeline {
        println!("  {stage:<24} {:>8.1} ms", t * 1e3);
    }
    for (i, e) in &views {
        let f = |k: &str| e[k].as_f64().unwrap_or(f64::NAN);
        let stocked = if e["stocked"] == true { " (run made ahead)" } else { "" };
        println!(
            "  P{i}: setup {:>7.1} ms, {:>9} B sent{stocked}; online {:>7.1} ms, {:>9} B sent, {} rounds",
            f("setup_seconds") * 1e3,
            f("setup_bytes"),
            f("online_seconds") * 1e3,
            f("online_bytes"),
            f("online_rounds")
        );
    }
    let scores = got.scores.iter().map(|s| format!("{s:.2}")).collect::<Vec<_>>().join(" ");
    if !scores.is_empty() {
        println!("  scores   {scores}");
    }
    let class = got.classes.first().copied().ok_or("client: no class in the answer")?;
    println!(
        "  answer   class {class} (the plaintext model, run by {}: class {})",
        sample.runtime, sample.expected
    );
    if class == sample.expected {
        println!("OK: the private answer equals the plaintext model's");
        Ok(())
    } else {
        Err(format!(
            "the private answer {class} differs from the plaintext model's {}",
            sample.expected
        ))
    }
}

/// The `n` server parties' reports of the session (each logs its figures once it has closed
/// it), by party; an error when one reports a failure or they stay silent for `wait`.
pub(crate) fn party_reports(
    d: &mut LocalDeployment,
    n: usize,
    wait: Duration,
) -> Result<Vec<(usize, serde_json::Value)>, String> {
    let mut views = Vec::new();
    let deadline = Instant::now() + wait;
    while views.len() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        match d.next_event(left)? {
            Some((i, e)) if e["event"] == "answered" => views.push((i, e)),
            Some((i, e)) if e["event"] == "session_failed" || e["event"] == "refused" => {
                return Err(format!("P{i}: {e}"));
            }
            Some(_) => {}
            None => return Err("the server parties did not report the session".into()),
        }
    }
    views.sort_by_key(|(i, _)| *i);
    Ok(views)
}

/// What the client got, and what it sent to the parties (the masked input, as they saw it).
#[derive(Default)]
pub(crate) struct Answer {
    /// The class index of each sample.
    pub(crate) classes: Vec<usize>,
    /// The class label of each sample, as the model owner names its classes.
    pub(crate) labels: Vec<ringfence_core::nn::Label>,
    /// All scores, `batch × classes` (empty when only the classes were asked for).
    pub(crate) scores: Vec<f64>,
    masked_view: Option<Vec<u64>>,
}

/// The client: joins through the relay, asks, takes part in the setup, sends the input and
/// reconstructs the answer. Returns the answer and the time of each stage since `t0`.
pub(crate) async fn classify(
    cfg: RelayLinkConfig,
    request: Request,
    input: &[f64],
    t0: Instant,
) -> Result<(Answer, Vec<(&'static str, f64)>), String> {
    let e = |e: ringfence_core::Error| format!("client: {e}");
    let (session, cfg_me, participants) = (cfg.session, cfg.me, usize::from(cfg.parties));
    let mut timeline = Vec::new();
    let mut mark =
        |what: &'static str, since: Instant| timeline.push((what, since.elapsed().as_secs_f64()));
    let t = TcpTransport::connect_via_relay(cfg).await.map_err(|e| format!("client: {e}"))?;
    mark("deployment up, linked", t0);
    let ctx = Ctx::new(cfg_me, participants, session, t);
    let mut c = service::Client::new(ctx, os_seed().map_err(|e| e.to_string())?);
    let t1 = Instant::now();
    let info = c.request(&request).await.map_err(e)?;
    mark("request accepted", t1);
    let t2 = Instant::now();
    let progress = c.progress();
    let ready = reporting(c.setup(&info), &progress, t2).await.map_err(e)?;
    mark("setup (weights, masks)", t2);
    let t3 = Instant::now();
    let out = c.run(ready, input).await.map_err(e)?;
    mark("online (input to answer)", t3);
    if let Some(ctx) = c.into_ctx() {
        ctx.into_transport().close().await.map_err(|e| format!("client: {e}"))?;
    }
    Ok((
        Answer {
            classes: out.classes,
            labels: out.labels,
            scores: out.scores.unwrap_or_default(),
            masked_view: out.sent.into_iter().next(),
        },
        timeline,
    ))
}

/// How often a long setup says how far it has come.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// Runs `setup`, saying every [`PROGRESS_EVERY`] what it is making and how much of it is made
/// (a spdz2k setup makes millions of triples for a convolutional network: minutes).
async fn reporting<F: std::future::Future>(
    setup: F,
    progress: &Progress,
    since: Instant,
) -> F::Output {
    tokio::pin!(setup);
    let start = tokio::time::Instant::now() + PROGRESS_EVERY;
    let mut tick = tokio::time::interval_at(start, PROGRESS_EVERY);
    loop {
        tokio::select! {
            r = &mut setup => return r,
            _ = tick.tick() => {
                let r = progress.report();
                if r.total > 0 {
                    eprintln!(
                        "  setup: {:.0} s, making {}: {} of {} ({:.0} %)",
                        since.elapsed().as_secs_f64(),
                        r.making,
                        r.done,
                        r.total,
                        100.0 * r.done as f64 / r.total as f64
                    );
                }
            }
        }
    }
}

/// Prints the input and what every party received for it side by side (below it, where the
/// client does not know what they received).
fn draw(s: &Sample, sent: &Option<Vec<u64>>) {
    const SHADES: &[u8] = b" .:-=+*#%@";
    let side = s.side.max(1);
    let max = s.pixels.iter().cloned().fold(0.0, f64::max).max(1e-9);
    let shade = |v: f64| SHADES[((v / max) * 9.0).round().clamp(0.0, 9.0) as usize] as char;
    let title = if sent.is_some() { "  what each party received" } else { "" };
    println!("  {:<w$}{title}", "your input", w = side);
    for row in (0..side).step_by(if side > 16 { 2 } else { 1 }) {
        let line: String = (0..side).map(|c| shade(s.pixels[row * side + c])).collect();
        let noise: String = match sent {
            Some(m) => {
                (0..side).map(|c| SHADES[(m[row * side + c] >> 60) as usize % 10] as char).collect()
            }
            None => String::new(),
        };
        println!("  {line}  {noise}");
    }
    if sent.is_none() {
        println!(
            "  what the parties received: secret shares and masked values, random-looking to each"
        );
    }
}
