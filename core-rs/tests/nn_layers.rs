//! Average pooling, BatchNormalization (standalone) and grouped convolutions in the plan and
//! both secure backends, and the paper's CIFAR-10 networks (AlexNet, VGG16): plaintext plan
//! against float, secure runs against the plaintext plan, METEOR's measured online bytes
//! against the cost model and the paper's figures (extract §7.7).

use ringfence_core::meteor::online_cost;
use ringfence_core::nn::{
    zoo, Affine, Conv, ConvGeom, Dense, FixedPlan, Layer, Model, Output, PoolGeom, StepShape,
    DEFAULT_FRAC_BITS,
};
use ringfence_core::ring::{IntRing, Z64};
use ringfence_core::testing::random_words;

use crate::common;
use common::*;

/// `n` pseudo-random reals in `[lo, hi)`.
fn reals(seed: u64, n: usize, lo: f64, hi: f64) -> Vec<f64> {
    random_words(seed, n)
        .iter()
        .map(|v| lo + (hi - lo) * (v >> 11) as f64 / (1u64 << 53) as f64)
        .collect()
}

fn conv(in_c: usize, hw: usize, out_c: usize, k: usize, p: usize, groups: usize) -> Layer {
    let geom = ConvGeom {
        in_c,
        in_h: hw,
        in_w: hw,
        out_c,
        kernel: [k, k],
        stride: [1, 1],
        pads: [p; 4],
        groups,
    };
    let n = geom.patch_len() * out_c;
    let weights = reals(n as u64 + 1, n, -0.5, 0.5);
    Layer::Conv(Conv { geom, weights, bias: reals(out_c as u64, out_c, -0.2, 0.2) })
}

fn affine(channels: usize, inner: usize) -> Layer {
    Layer::Affine(Affine {
        channels,
        inner,
        scale: reals(channels as u64 + 5, channels, -1.5, 1.5),
        shift: reals(channels as u64 + 6, channels, -0.3, 0.3),
    })
}

fn pool(c: usize, hw: usize, k: usize, s: usize) -> PoolGeom {
    PoolGeom { c, in_h: hw, in_w: hw, kernel: [k, k], stride: [s, s] }
}

fn model(input_shape: Vec<usize>, layers: Vec<Layer>) -> Model {
    Model {
        input_name: "x".into(),
        input_shape,
        layers,
        class_labels: None,
        dropped_transforms: Vec::new(),
        input_range: None,
    }
}

/// Grouped conv, ReLU, standalone BN, an average pool folded into the next (depthwise) conv
/// through a ReLU, a dense layer, ReLU and a BN over features.
fn folded_net() -> Model {
    let mut w = reals(3, 36 * 5, -0.4, 0.4);
    let bias = w.split_off(36 * 5 - 5);
    w.extend(reals(4, 5, -0.4, 0.4));
    model(
        vec![2, 6, 6],
        vec![
            conv(2, 6, 4, 3, 1, 2),
            Layer::Relu,
            affine(4, 36),
            Layer::AvgPool(pool(4, 6, 2, 2)),
            Layer::Relu,
            conv(4, 3, 4, 3, 1, 4),
            Layer::Relu,
            Layer::Dense(Dense { inputs: 36, outputs: 5, weights: w, bias }),
            Layer::Relu,
            affine(5, 1),
        ],
    )
}

/// A depthwise conv with channel multiplier 2, then average pools with no linear layer after
/// them: each becomes a sum pool and a public scale step.
fn scaled_net() -> Model {
    model(
        vec![3, 4, 4],
        vec![
            conv(3, 4, 6, 3, 1, 3),
            Layer::Relu,
            Layer::AvgPool(pool(6, 4, 2, 2)),
            Layer::AvgPool(pool(6, 2, 2, 1)),
        ],
    )
}

/// Random inputs in [−2, 2] with edge values: zeros, the bounds, and tiny values.
fn inputs(seed: u64, n: usize) -> Vec<f64> {
    let mut x = reals(seed, n, -2.0, 2.0);
    for (i, v) in x.iter_mut().enumerate() {
        match i % 7 {
            0 => *v = 0.0,
            3 => *v = if i % 2 == 0 { 2.0 } else { -2.0 },
            5 => *v = 1.0 / 8192.0,
            _ => {}
        }
    }
    x
}

fn max_ulps(a: &[Z64], b: &[Z64]) -> i64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x.to_i64() - y.to_i64()).abs()).max().unwrap_or(0)
}

#[test]
fn average_pools_fold_into_the_next_linear_layer_or_become_a_scale_step() {
    let a = FixedPlan::<Z64>::new(&folded_net(), DEFAULT_FRAC_BITS).unwrap().shape();
    assert!(matches!(a.steps[3], StepShape::SumPool(_)));
    assert!(!a.steps.iter().any(|s| matches!(s, StepShape::Scale { .. })), "folded: {a:?}");
    assert!(matches!(a.steps[2], StepShape::Conv(g) if g.groups == 4 && g.kernel == [1, 1]));
    let b = FixedPlan::<Z64>::new(&scaled_net(), DEFAULT_FRAC_BITS).unwrap().shape();
    let kinds: Vec<String> = b.steps.iter().map(|s| format!("{s:?}")).collect();
    assert!(matches!(b.steps[3], StepShape::Scale { len: 24, divisor: 4 }), "{kinds:?}");
    assert!(matches!(b.steps[5], StepShape::Scale { len: 6, divisor: 4 }), "{kinds:?}");
}

#[test]
fn the_plaintext_plan_tracks_float_evaluation() {
    for (name, m) in [("folded", folded_net()), ("scaled", scaled_net())] {
        let plan = FixedPlan::<Z64>::new(&m, DEFAULT_FRAC_BITS).unwrap();
        let n = 20;
        let x = inputs(9, n * m.input_len());
        let want = m.eval_f64(&x, n).unwrap();
        let got = plan.decode(&plan.eval_plain(&plan.encode_input(&x).unwrap(), n).unwrap());
        let worst = got.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        let bound = plan.error_bound(2.0);
        eprintln!("{name}: plaintext plan within {worst} of float (bound {bound})");
        assert!(worst < 0.01 && worst <= bound, "{name}: {worst} (bound {bound})");
    }
}

/// Both backends agree with the plaintext plan to a few ulps; METEOR sends exactly the cost
/// model's bytes, which are the paper's per-element costs: 8 B per conv/dense/BN/scale output,
/// 95 B per ReLU, nothing for a sum pool.
#[test]
fn secure_runs_agree_with_the_plaintext_plan_and_meteor_sends_the_cost_model() {
    for (name, m, paper_bytes) in [
        (
            "folded",
            folded_net(),
            144 * 8 + 144 * 95 + 144 * 8 + 36 * 95 + 36 * 8 + 36 * 95 + 5 * 8 + 5 * 95 + 5 * 8,
        ),
        ("scaled", scaled_net(), 96 * 8 + 96 * 95 + 24 * 8 + 6 * 8),
    ] {
        let plan = FixedPlan::<Z64>::new(&m, DEFAULT_FRAC_BITS).unwrap();
        let batch = 3;
        let x = plan.encode_input(&inputs(21, batch * m.input_len())).unwrap();
        let want = plan.eval_plain(&x, batch).unwrap();
        let r = secure_run::<Rep3P>(&plan, &x, batch, Output::Logits);
        let mr = secure_run::<MeteorP>(&plan, &x, batch, Output::Logits);
        let (bytes, rounds) = online_cost(&plan.shape(), 64, batch);
        eprintln!(
            "{name}: rep3 within {} ulps ({} B, {} rounds online); METEOR within {} ulps \
             ({} B, {} rounds; model {bytes} B, {rounds} rounds)",
            max_ulps(&r.scores, &want),
            r.online_bytes,
            r.online_rounds,
            max_ulps(&mr.scores, &want),
            mr.online_bytes,
            mr.online_rounds
        );
        assert!(max_ulps(&r.scores, &want) < 64, "{name}: rep3");
        assert!(max_ulps(&mr.scores, &want) < 64, "{name}: METEOR");
        assert_eq!((mr.online_bytes, mr.online_rounds), (bytes, rounds), "{name}: cost model");
        assert_eq!(bytes, paper_bytes * batch as u64, "{name}: per-element costs");
    }
}

/// A standalone BN costs, online per party: METEOR 8 B per value (one reveal); rep3 one
/// fixed-point multiplication round (its truncated reshare: 16 B per value from P1, 8 B from
/// P0 and P2).
#[test]
fn standalone_batch_norm_costs() {
    let m = model(vec![4, 5, 5], vec![affine(4, 25)]);
    let plan = FixedPlan::<Z64>::new(&m, DEFAULT_FRAC_BITS).unwrap();
    let x = plan.encode_input(&inputs(5, 100)).unwrap();
    let want = plan.eval_plain(&x, 1).unwrap();
    let r = secure_run::<Rep3P>(&plan, &x, 1, Output::Logits);
    let mr = secure_run::<MeteorP>(&plan, &x, 1, Output::Logits);
    eprintln!(
        "BN over 100 values: rep3 {} B (busiest party) in {} round(s), METEOR {} B in {}",
        r.online_bytes, r.online_rounds, mr.online_bytes, mr.online_rounds
    );
    assert!(max_ulps(&r.scores, &want) < 4 && max_ulps(&mr.scores, &want) < 4);
    assert_eq!((mr.online_bytes, mr.online_rounds), (800, 1));
    assert_eq!((r.online_bytes, r.online_rounds), (1600, 1));
}

#[test]
fn the_cost_model_gives_the_papers_communication_for_alexnet_and_vgg16() {
    let alex = zoo::paper_shape("alexnet", DEFAULT_FRAC_BITS).unwrap();
    let plan = FixedPlan::<Z64>::new(&zoo::alexnet(1), DEFAULT_FRAC_BITS).unwrap();
    assert_eq!(plan.shape(), alex, "the zoo's shape is the plan's");
    let vgg = zoo::paper_shape("vgg16", DEFAULT_FRAC_BITS).unwrap();
    assert_eq!(vgg.output_len(), 1000);
    for (name, shape, paper) in [("AlexNet", &alex, 2_562_726), ("VGG16", &vgg, 29_424_216)] {
        let (bytes, rounds) = online_cost(shape, 64, 1);
        eprintln!("{name}: {bytes} bytes, {rounds} rounds per party online");
        assert_eq!(bytes, paper, "{name}");
    }
}

/// One random CIFAR-sized input through AlexNet on both backends: the scores agree with the
/// plaintext plan and METEOR sends exactly the paper's 2,562,726 bytes per party.
#[test]
fn alexnet_secure_runs_agree_with_the_plaintext_plan() {
    let m = zoo::alexnet(7);
    let plan = FixedPlan::<Z64>::new(&m, DEFAULT_FRAC_BITS).unwrap();
    let xf = reals(33, m.input_len(), 0.0, 1.0);
    let x = plan.encode_input(&xf).unwrap();
    let want = plan.eval_plain(&x, 1).unwrap();
    let float = m.eval_f64(&xf, 1).unwrap();
    let worst =
        plan.decode(&want).iter().zip(&float).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    eprintln!("AlexNet: plaintext plan within {worst} of float; scores {:?}", plan.decode(&want));
    assert!(worst < 0.05, "{worst}");
    let mr = secure_run::<MeteorP>(&plan, &x, 1, Output::Logits);
    eprintln!("AlexNet METEOR: {} B in {} rounds online", mr.online_bytes, mr.online_rounds);
    assert_eq!(mr.online_bytes, 2_562_726);
    assert!(max_ulps(&mr.scores, &want) < 256, "METEOR {}", max_ulps(&mr.scores, &want));
    let r = secure_run::<Rep3P>(&plan, &x, 1, Output::Logits);
    eprintln!(
        "AlexNet rep3: {} B (busiest party) in {} rounds online",
        r.online_bytes, r.online_rounds
    );
    assert!(max_ulps(&r.scores, &want) < 256, "rep3 {}", max_ulps(&r.scores, &want));
}

/// `models/alexnet.onnx` and `models/vgg16.onnx` (written by
/// `scripts/models/make_cifar_nets.py`, not committed) import as the zoo's networks. Run with
/// `cargo test -p ringfence-core --test all nn_layers:: -- --ignored` after making them.
#[test]
#[ignore = "needs the generated models/alexnet.onnx and models/vgg16.onnx"]
fn generated_onnx_files_import_as_the_zoo_networks() {
    for (name, zoo_model) in [("alexnet", zoo::alexnet(0)), ("vgg16", zoo::vgg16(0))] {
        let path = format!("{}/../models/{name}.onnx", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let m = ringfence_core::nn::import_onnx(&bytes).unwrap();
        assert_eq!(m.summary(), zoo_model.summary(), "{name}");
        assert_eq!(m.input_shape, zoo_model.input_shape, "{name}");
    }
}

/// Hand-built models with inconsistent geometry are errors, never panics.
#[test]
fn inconsistent_hand_built_layers_are_errors() {
    let bad_groups = model(vec![4, 3, 3], vec![conv(4, 3, 4, 3, 1, 4)]);
    let mut m = bad_groups.clone();
    if let Layer::Conv(c) = &mut m.layers[0] {
        c.geom.groups = 3;
    }
    let bad_pool = model(vec![1, 2, 2], vec![Layer::AvgPool(pool(1, 2, 3, 1))]);
    let bad_affine = model(vec![4], vec![affine(3, 1)]);
    let zero_inner = model(vec![4], vec![affine(4, 0)]);
    for m in [m, bad_pool, bad_affine, zero_inner] {
        assert!(FixedPlan::<Z64>::new(&m, DEFAULT_FRAC_BITS).is_err(), "{m:?}");
        assert!(m.eval_f64(&vec![0.5; m.input_len().max(1)], 1).is_err(), "{m:?}");
    }
}
