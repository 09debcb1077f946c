//! `ringfence demo`: a private classification on an embedded local deployment. The parent starts
//! a relay on 127.0.0.1, spawns the three compute parties (separate processes, Noise KK links
//! through the relay), and is itself the client: it takes a held-out test sample of a shipped
//! model, asks the parties to classify it ([`ringfence_core::service`]), and checks the answer
//! against the plaintext model's (onnxruntime's reference output, committed beside the model).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use ringfence_core::net::{Ctx, Stats};
use ringfence_core::nn::{FixedPlan, DEFAULT_FRAC_BITS};
use ringfence_core::service::{self, Catalog, Request, Stage, CLIENT};
use ringfence_relay::ws::{parse_session_hex, RelayLimits, RelayLinkConfig, RelayServer};
use ringfence_relay::{os_seed, Security, StaticKeypair, TcpTransport};

use crate::bench::{self, Backend};
use crate::children::Children;
use crate::msgs::{DemoReport, FromChild};
use crate::party::{report, Session};
use crate::testset::TestSet;
use crate::CommonArgs;

/// Options of `ringfence demo`.
#[derive(Args, Clone)]
pub(crate) struct DemoArgs {
    /// The model: one of nn-a, nn-b, nn-c, lenet, logreg, or an ONNX file with a reference file
    /// `data/NAME.reference.json` beside it (see models/README.md).
    #[arg(long, default_value = "lenet")]
    model: PathBuf,
    /// Protocol family: meteor (the client receives the scores) or rep3.
    #[arg(long, value_enum, default_value = "meteor")]
    backend: Backend,
    /// Which held-out test sample to classify (0-based).
    #[arg(long, default_value_t = 0)]
    sample: usize,
    #[command(flatten)]
    common: CommonArgs,
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
    let keys = if a.common.plain {
        None
    } else {
        let k = (0..4).map(|_| StaticKeypair::generate()).collect::<Result<Vec<_>, _>>();
        Some(k.map_err(|e| e.to_string())?)
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("starting tokio: {e}"))?;
    let (url, embedded) = match &a.common.relay {
        Some(url) => (url.clone(), false),
        None => {
            let addr = "127.0.0.1:0".parse().map_err(|e| format!("{e}"))?;
            let server = rt
                .block_on(RelayServer::bind(addr, RelayLimits::default()))
                .map_err(|e| e.to_string())?;
            let url = format!("ws://{}", server.local_addr());
            rt.spawn(server.run());
            (url, true)
        }
    };
    let security_name = if keys.is_some() { "Noise KK" } else { "plain (INSECURE)" };
    println!("ringfence demo: private classification on a local deployment");
    println!(
        "  relay    {url} ({}; forwards {} frames it cannot read)",
        if embedded { "embedded" } else { "external" },
        security_name
    );
    println!("  parties  P0, P1, P2: three processes on 127.0.0.1, linked through the relay");
    println!(
        "  client   this process: holds the input, alone sees the answer ({} backend, model {name})",
        a.backend.name()
    );
    println!("  input    {what}");
    let mut common = a.common.clone();
    common.relay = Some(url.clone());
    let mut args = crate::common_args(&common);
    args.extend(["--model".into(), model.display().to_string()]);
    let started = Instant::now();
    let mut kids = Children::spawn(3, "demo-party", &args)?;
    let session = kids.introduce(keys.as_deref(), 4, Ok)?;
    let security = match &keys {
        None => Security::DangerInsecurePlain,
        Some(k) => Security::Noise {
            keypair: k[3].clone(),
            public_keys: k.iter().map(|k| k.public).collect(),
        },
    };
    let sid = parse_session_hex(&session)?;
    let mut cfg = RelayLinkConfig::new(url, CLIENT, 4, security, sid);
    cfg.recv_timeout = Duration::from_millis(a.common.timeout_ms);
    cfg.connect_timeout = Duration::from_millis(a.common.timeout_ms);
    let backend = match a.backend {
        Backend::Meteor => service::Backend::Meteor,
        Backend::Rep3 => service::Backend::Rep3,
    };
    let request = Request::new(&name, backend, 1);
    let client = rt.block_on(classify(cfg, request, &sample.pixels, started));
    // Gather the parties' reports even when the client failed: their errors say more.
    let mut views = Vec::new();
    let mut done = 0;
    let mut party_err = None;
    while done < 3 {
        match kids.next(crate::patience(&a.common)) {
            Ok((_, FromChild::Done)) => done += 1,
            Ok((i, FromChild::Demo(r))) => views.push((i, r)),
            Ok((i, other)) => return Err(format!("P{i} sent an unexpected {other:?}")),
            Err(e) => {
                party_err = Some(e);
                break;
            }
        }
    }
    let (got, timeline) = match (client, party_err) {
        (Ok(c), None) => c,
        (Err(e), Some(p)) => return Err(format!("{e}; {p}")),
        (Err(e), None) | (Ok(_), Some(e)) => return Err(e),
    };
    kids.finish()?;
    views.sort_by_key(|(i, _)| *i);
    draw(&sample, &got.masked_view);
    for (stage, t) in &timeline {
        println!("  {stage:<24} {:>8.1} ms", t * 1e3);
    }
    for (i, r) in &views {
        println!(
            "  P{i}: setup {:>7.1} ms, {:>9} B sent; online {:>7.1} ms, {:>9} B sent, {} rounds",
            r.setup_seconds * 1e3,
            r.setup_bytes,
            r.online_seconds * 1e3,
            r.online_bytes,
            r.online_rounds
        );
    }
    let scores = got.scores.iter().map(|s| format!("{s:.2}")).collect::<Vec<_>>().join(" ");
    if !scores.is_empty() {
        println!("  scores   {scores}");
    }
    println!(
        "  answer   class {} (the plaintext model, run by {}: class {})",
        got.class, sample.runtime, sample.expected
    );
    if got.class == sample.expected {
        println!("OK: the private answer equals the plaintext model's");
        Ok(())
    } else {
        Err(format!(
            "the private answer {} differs from the plaintext model's {}",
            got.class, sample.expected
        ))
    }
}

/// What the client got, and what it sent to the parties (the masked input, as they saw it).
struct Answer {
    class: usize,
    scores: Vec<f64>,
    masked_view: Option<Vec<u64>>,
}

/// The client: joins through the relay, asks, takes part in the setup, sends the input and
/// reconstructs the answer. Returns the answer and the time of each stage since `t0`.
async fn classify(
    cfg: RelayLinkConfig,
    request: Request,
    input: &[f64],
    t0: Instant,
) -> Result<(Answer, Vec<(&'static str, f64)>), String> {
    let e = |e: ringfence_core::Error| format!("client: {e}");
    let session = cfg.session;
    let mut timeline = Vec::new();
    let mut mark =
        |what: &'static str, since: Instant| timeline.push((what, since.elapsed().as_secs_f64()));
    let t = TcpTransport::connect_via_relay(cfg).await.map_err(|e| format!("client: {e}"))?;
    mark("parties up and linked", t0);
    let ctx = Ctx::new(CLIENT, 4, session, t);
    let mut c = service::Client::new(ctx, os_seed().map_err(|e| e.to_string())?);
    let t1 = Instant::now();
    let info = c.request(&request).await.map_err(e)?;
    mark("request accepted", t1);
    let t2 = Instant::now();
    let ready = c.setup(&info).await.map_err(e)?;
    mark("setup (weights, masks)", t2);
    let t3 = Instant::now();
    let out = c.run(ready, input).await.map_err(e)?;
    mark("online (input to answer)", t3);
    if let Some(ctx) = c.into_ctx() {
        ctx.into_transport().close().await.map_err(|e| format!("client: {e}"))?;
    }
    let class = out.classes.first().copied().ok_or("client: no class in the answer")?;
    Ok((
        Answer {
            class,
            scores: out.scores.unwrap_or_default(),
            masked_view: out.sent.into_iter().next(),
        },
        timeline,
    ))
}

/// Prints the input and what every party received for it side by side.
fn draw(s: &Sample, sent: &Option<Vec<u64>>) {
    const SHADES: &[u8] = b" .:-=+*#%@";
    let side = s.side.max(1);
    let max = s.pixels.iter().cloned().fold(0.0, f64::max).max(1e-9);
    let shade = |v: f64| SHADES[((v / max) * 9.0).round().clamp(0.0, 9.0) as usize] as char;
    println!("  {:<w$}  what each party received", "your input", w = side);
    for row in (0..side).step_by(if side > 16 { 2 } else { 1 }) {
        let line: String = (0..side).map(|c| shade(s.pixels[row * side + c])).collect();
        let noise: String = match sent {
            Some(m) => {
                (0..side).map(|c| SHADES[(m[row * side + c] >> 60) as usize % 10] as char).collect()
            }
            None => "(secret shares: two random-looking components per value)"
                .chars()
                .take(side)
                .collect(),
        };
        println!("  {line}  {noise}");
    }
}

/// The party side: serves one classification request of the client.
pub(crate) async fn serve(p: Session, model: &Path) -> Result<Session, String> {
    let me = p.me();
    let bytes = std::fs::read(model).map_err(|e| format!("{}: {e}", model.display()))?;
    let m =
        ringfence_core::nn::import_onnx(&bytes).map_err(|e| format!("{}: {e}", model.display()))?;
    let plan = FixedPlan::new(&m, DEFAULT_FRAC_BITS).map_err(|e| e.to_string())?;
    let name = model.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut catalog = Catalog::new(1);
    catalog.add(&name, plan.shape(), (me == service::MODEL_OWNER).then_some(plan));
    let mut marks: Vec<(Instant, Stats)> = Vec::new();
    let (p, outcome) =
        service::serve(p, CLIENT, &catalog, |_: &Stage, s| marks.push((Instant::now(), s)))
            .await
            .map_err(|e| e.to_string())?;
    if let service::Outcome::Refused(reason) = outcome {
        // Close cleanly so the refusal reaches the client before this process exits.
        p.into_ctx().into_transport().close().await.map_err(|e| e.to_string())?;
        return Err(format!("refused the client's request: {reason}"));
    }
    let [(t0, s0), (t1, s1), (t2, s2)] = marks[..] else {
        return Err("the session ended before its stages".into());
    };
    let (setup, online): (Stats, Stats) = (s1 - s0, s2 - s1);
    report(&FromChild::Demo(DemoReport {
        setup_seconds: (t1 - t0).as_secs_f64(),
        setup_bytes: setup.bytes_sent,
        online_seconds: (t2 - t1).as_secs_f64(),
        online_bytes: online.bytes_sent,
        online_rounds: online.rounds,
    }));
    Ok(p)
}
