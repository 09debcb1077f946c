//! Helpers shared by the integration tests (each test crate uses what it needs).

#![allow(dead_code)]

use ringfence_core::meteor::Meteor;
use ringfence_core::net::{PartyId, Roster};
use ringfence_core::nn::{ClassLabels, FixedPlan, Inference, Label, Output};
use ringfence_core::rep3::Rep3;
use ringfence_core::ring::{IntRing, Z64};
use ringfence_core::sharing::Session;
use ringfence_core::testing::conformance::TestBase;
use ringfence_core::testing::{self, MemTransport};

// The committed models, held-out data and onnxruntime reference outputs.
pub(crate) const NN_A: &[u8] = include_bytes!("../../../models/nn-a.onnx");
pub(crate) const NN_B: &[u8] = include_bytes!("../../../models/nn-b.onnx");
pub(crate) const NN_C: &[u8] = include_bytes!("../../../models/nn-c.onnx");
pub(crate) const LENET: &[u8] = include_bytes!("../../../models/lenet.onnx");
pub(crate) const MINIONN: &[u8] = include_bytes!("../../../models/minionn.onnx");
pub(crate) const LOGREG: &[u8] = include_bytes!("../../../models/logreg.onnx");
pub(crate) const SVM: &[u8] = include_bytes!("../../../models/svm.onnx");
pub(crate) const TREE: &[u8] = include_bytes!("../../../models/tree.onnx");
pub(crate) const MNIST: &[u8] = include_bytes!("../../../models/data/mnist-test-1000.u8");
pub(crate) const MNIST_LABELS: &[u8] =
    include_bytes!("../../../models/data/mnist-test-1000.labels.u8");
pub(crate) const DIGITS8: &[u8] = include_bytes!("../../../models/data/digits8-test.u8");
pub(crate) const NN_A_REF: &str = include_str!("../../../models/data/nn-a.reference.json");
pub(crate) const NN_B_REF: &str = include_str!("../../../models/data/nn-b.reference.json");
pub(crate) const NN_C_REF: &str = include_str!("../../../models/data/nn-c.reference.json");
pub(crate) const LENET_REF: &str = include_str!("../../../models/data/lenet.reference.json");
pub(crate) const MINIONN_REF: &str = include_str!("../../../models/data/minionn.reference.json");
/// scikit-learn's models as skl2onnx writes them at its defaults, and LightGBM's and XGBoost's
/// as onnxmltools does, with onnxruntime's labels on held-out samples
/// (`scripts/models/exporter_cases.py`): `(name, ONNX file, reference)`.
pub(crate) const CLASSICAL_EXPORTS: [(&str, &[u8], &str); 18] = [
    (
        "iris-logreg",
        include_bytes!("../data/exported/iris-logreg.onnx"),
        include_str!("../data/exported/iris-logreg.json"),
    ),
    (
        "iris-mlp",
        include_bytes!("../data/exported/iris-mlp.onnx"),
        include_str!("../data/exported/iris-mlp.json"),
    ),
    (
        "wine-scaled-logreg",
        include_bytes!("../data/exported/wine-scaled-logreg.onnx"),
        include_str!("../data/exported/wine-scaled-logreg.json"),
    ),
    (
        "cancer-scaled-logreg",
        include_bytes!("../data/exported/cancer-scaled-logreg.onnx"),
        include_str!("../data/exported/cancer-scaled-logreg.json"),
    ),
    (
        "cancer-linearsvc",
        include_bytes!("../data/exported/cancer-linearsvc.onnx"),
        include_str!("../data/exported/cancer-linearsvc.json"),
    ),
    (
        "wine-scaled-logreg-f64",
        include_bytes!("../data/exported/wine-scaled-logreg-f64.onnx"),
        include_str!("../data/exported/wine-scaled-logreg-f64.json"),
    ),
    // Fitted on the species' names: text classes, from `classlabels_strings` (the regression)
    // and from the label branch's `classes` tensor (the MLP).
    (
        "iris-names-logreg",
        include_bytes!("../data/exported/iris-names-logreg.onnx"),
        include_str!("../data/exported/iris-names-logreg.json"),
    ),
    (
        "iris-names-mlp",
        include_bytes!("../data/exported/iris-names-mlp.onnx"),
        include_str!("../data/exported/iris-names-mlp.json"),
    ),
    // Gradient-boosted trees (onnxmltools): binary ones by onnxruntime's one-score rule.
    (
        "cancer-lightgbm",
        include_bytes!("../data/exported/cancer-lightgbm.onnx"),
        include_str!("../data/exported/cancer-lightgbm.json"),
    ),
    (
        "cancer-xgboost",
        include_bytes!("../data/exported/cancer-xgboost.onnx"),
        include_str!("../data/exported/cancer-xgboost.json"),
    ),
    (
        "iris-lightgbm",
        include_bytes!("../data/exported/iris-lightgbm.onnx"),
        include_str!("../data/exported/iris-lightgbm.json"),
    ),
    (
        "iris-xgboost",
        include_bytes!("../data/exported/iris-xgboost.onnx"),
        include_str!("../data/exported/iris-xgboost.json"),
    ),
    // SVC with a linear kernel: one-vs-one votes (the class), beside skl2onnx's one-vs-rest
    // scores, Platt's probabilities, two classes, and ten digit classes (45 pairs, a tied vote).
    (
        "iris-svc-linear",
        include_bytes!("../data/exported/iris-svc-linear.onnx"),
        include_str!("../data/exported/iris-svc-linear.json"),
    ),
    (
        "iris-svc-linear-proba",
        include_bytes!("../data/exported/iris-svc-linear-proba.onnx"),
        include_str!("../data/exported/iris-svc-linear-proba.json"),
    ),
    (
        "cancer-scaled-svc-linear",
        include_bytes!("../data/exported/cancer-scaled-svc-linear.onnx"),
        include_str!("../data/exported/cancer-scaled-svc-linear.json"),
    ),
    (
        "digits-svc-linear",
        include_bytes!("../data/exported/digits-svc-linear.onnx"),
        include_str!("../data/exported/digits-svc-linear.json"),
    ),
    // MLPs with tanh and logistic hidden layers: piecewise-linear activations within their
    // bounds.
    (
        "wine-scaled-mlp-tanh",
        include_bytes!("../data/exported/wine-scaled-mlp-tanh.onnx"),
        include_str!("../data/exported/wine-scaled-mlp-tanh.json"),
    ),
    (
        "iris-mlp-logistic",
        include_bytes!("../data/exported/iris-mlp-logistic.onnx"),
        include_str!("../data/exported/iris-mlp-logistic.json"),
    ),
];

/// Residual networks on the 8x8 digits as PyTorch's TorchScript and dynamo exporters lay out
/// ResNet's basic blocks, with onnxruntime's classes on held-out samples
/// (`scripts/models/exporter_cases.py`): `(name, ONNX file, reference)`.
pub(crate) const RESNET_EXPORTS: [(&str, &[u8], &str); 2] = [
    (
        "digits-resnet",
        include_bytes!("../data/exported/digits-resnet.onnx"),
        include_str!("../data/exported/digits-resnet.json"),
    ),
    (
        "digits-resnet-dynamo",
        include_bytes!("../data/exported/digits-resnet-dynamo.onnx"),
        include_str!("../data/exported/digits-resnet-dynamo.json"),
    ),
];

pub(crate) const LOGREG_REF: &str = include_str!("../../../models/data/logreg.reference.json");
pub(crate) const SVM_REF: &str = include_str!("../../../models/data/svm.reference.json");
pub(crate) const TREE_REF: &str = include_str!("../../../models/data/tree.reference.json");
// The int8 models (onnxruntime's quantization tool; `scripts/models/quantize.py`).
pub(crate) const MINIONN_Q: &[u8] = include_bytes!("../../../models/minionn-q.onnx");
pub(crate) const LENET_QDQ: &[u8] = include_bytes!("../../../models/lenet-qdq.onnx");
pub(crate) const MOBILENET_Q: &[u8] = include_bytes!("../../../models/mobilenet-q.onnx");
pub(crate) const MINIONN_Q_REF: &str =
    include_str!("../../../models/data/minionn-q.reference.json");
pub(crate) const LENET_QDQ_REF: &str =
    include_str!("../../../models/data/lenet-qdq.reference.json");
pub(crate) const MOBILENET_Q_REF: &str =
    include_str!("../../../models/data/mobilenet-q.reference.json");
/// MobileNet's 8 reference images (3×128×128 bytes each, value p means p/255).
pub(crate) const MOBILENET_Q_INPUTS: &[u8] =
    include_bytes!("../../../models/data/mobilenet-q-inputs.u8");

/// The first `n` held-out MNIST digits, pixels scaled to [0, 1].
pub(crate) fn mnist(n: usize) -> Vec<f64> {
    MNIST[..n * 784].iter().map(|&p| f64::from(p) / 255.0).collect()
}

/// The fraction of positions where `a` and `b` agree.
pub(crate) fn agreement(a: &[usize], b: &[usize]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).filter(|(x, y)| x == y).count() as f64 / a.len() as f64
}

/// True in the core's tests compiled to wasm32-wasip1 (one thread, a debug build, 5–10× slower
/// than native). Workloads there are smaller — a few samples per model, fewer fault trials —
/// since the native run covers the rest with the same code and the wasm run is there to show
/// that the compiled core answers as it does natively (`scripts/test.mjs` prints this).
pub(crate) const UNDER_WASM: bool = cfg!(target_family = "wasm");

/// How many of `n` samples a model test classifies here: all natively, 4 under wasm.
pub(crate) fn samples_here(n: usize) -> usize {
    if UNDER_WASM {
        n.min(4)
    } else {
        n
    }
}

/// Digits a secure run checks: `debug` in debug builds, all 1000 in release builds
/// (`cargo test --release`).
pub(crate) fn digits(debug: usize) -> usize {
    if cfg!(debug_assertions) {
        debug
    } else {
        1000
    }
}

/// The numbers of the JSON array that follows `"key": [` in a reference file written by
/// `scripts/models/reference.py` (nested rows flattened), without a JSON dependency.
/// Class `i`'s integer label under `labels` (its index without labels); a text label fails.
pub(crate) fn int_label(labels: Option<&ClassLabels>, i: usize) -> i64 {
    match Label::of(labels, i) {
        Label::Int(v) => v,
        t => panic!("class {i} has the text label {t:?}"),
    }
}

/// The labels of the array `key` in a reference: numbers as integers, quoted ones as text
/// (the exported references' labels hold no comma or escape).
pub(crate) fn json_labels(doc: &str, key: &str) -> Vec<Label> {
    let start = doc.find(&format!("\"{key}\": [")).expect("key") + key.len() + 5;
    let end = start + doc[start..].find(']').expect("end of the array");
    doc[start..end]
        .split(',')
        .map(str::trim)
        .map(|v| match v.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
            Some(t) => Label::Text(t.to_string()),
            None => Label::Int(v.parse::<f64>().expect("number") as i64),
        })
        .collect()
}

pub(crate) fn json_numbers(doc: &str, key: &str) -> Vec<f64> {
    let start = doc.find(&format!("\"{key}\": [")).expect("key") + key.len() + 5;
    let mut depth = 0;
    let mut end = start;
    for (i, c) in doc[start..].char_indices() {
        match c {
            '[' => depth += 1,
            ']' if depth == 0 => {
                end = start + i;
                break;
            }
            ']' => depth -= 1,
            _ => {}
        }
    }
    doc[start..end]
        .split(|c: char| c == ',' || c == '[' || c == ']' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().expect("number"))
        .collect()
}

/// What a secure run gives back: P1's output and the online cost per party.
pub(crate) struct Run<R = Z64> {
    pub(crate) scores: Vec<R>,
    /// The most payload bytes any party sent during `infer`.
    pub(crate) online_bytes: u64,
    /// Each party's payload bytes during `infer`, P0 first.
    pub(crate) online_bytes_each: Vec<u64>,
    pub(crate) online_rounds: u64,
}

/// The 3-party schemes' parties on the in-memory network.
pub(crate) type Rep3P = Rep3<MemTransport>;
pub(crate) type MeteorP = Meteor<MemTransport>;
pub(crate) type Mal3P = ringfence_core::mal3::Mal3<MemTransport>;

/// A secure run on scheme `S`: P0 owns the weights, P1 owns the input and alone receives the
/// output. The online counters cover `infer` only (no input sharing, no opening), as the
/// papers' tables do.
pub(crate) fn secure_run<S>(plan: &FixedPlan<Z64>, x: &[Z64], batch: usize, output: Output) -> Run
where
    S: Inference<Z64> + Session<Rep3P>,
{
    secure_run_on::<S, Rep3P, Z64>(Roster::THREE, plan, x, batch, output)
}

/// [`secure_run`] for a scheme on base session `B` among the parties of `roster`.
pub(crate) fn secure_run_on<S, B, R>(
    roster: Roster,
    plan: &FixedPlan<R>,
    x: &[R],
    batch: usize,
    output: Output,
) -> Run<R>
where
    B: TestBase,
    R: IntRing,
    S: Inference<R> + Session<B>,
{
    let shape = plan.shape();
    let net = testing::Net::new(roster.n());
    let outs = testing::run_base(&net, roster, roster.n(), 7, |me, b: B| {
        let (shape, x) = (shape.clone(), x.to_vec());
        async move {
            let mut s = S::start(b);
            let model = s.share_model(PartyId(0), (me.0 == 0).then_some(plan), &shape).await?;
            let mut prep = s.preprocess(&model, batch, output, PartyId(1)).await?;
            let input = S::take_input(&mut prep)?;
            let sx = s.input(PartyId(1), (me.0 == 1).then_some(&x[..]), input).await?;
            let before = s.base().stats();
            let y = s.infer(&model, sx, prep).await?;
            let cost = s.base().stats() - before;
            Ok((s.open_to(PartyId(1), y).await?, cost))
        }
    });
    let outs: Vec<_> = outs
        .into_iter()
        .enumerate()
        .map(|(i, o)| o.unwrap_or_else(|e| panic!("P{i} failed: {e}")))
        .collect();
    for (i, o) in outs.iter().enumerate() {
        assert_eq!(o.0.is_some(), i == 1, "only P1 gets the output");
    }
    let each: Vec<u64> = outs.iter().map(|o| o.1.payload_bytes_sent).collect();
    Run {
        scores: outs[1].0.clone().expect("P1's output"),
        online_bytes: each.iter().copied().max().unwrap_or(0),
        online_bytes_each: each,
        online_rounds: outs.iter().map(|o| o.1.rounds).max().unwrap_or(0),
    }
}

/// The 450 held-out 8×8 digits as reals (pixel counts 0..16).
pub(crate) fn digits8() -> Vec<f64> {
    DIGITS8.iter().map(|&p| f64::from(p)).collect()
}
