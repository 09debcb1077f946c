//! Integer plans (quantized models, `nn::quant`): a small int8 network with per-channel
//! scales, fused ReLU ranges, max and average pooling — the plaintext integer plan against the
//! model's onnxruntime-style evaluation (`Model::eval_f64` rounds to nearest, ties to even),
//! and the secure runs on rep3 and rss (3, 5 and 7 parties in Z_2^64, 3 and 5 in Z_2^32)
//! against the plaintext plan.

use ringfence_core::net::Roster;
use ringfence_core::nn::{
    argmax_rows, Conv, ConvGeom, Dense, FixedPlan, Inference, Layer, Model, Output, PoolGeom,
    Requant, StepShape, DEFAULT_FRAC_BITS,
};
use ringfence_core::ring::{IntRing, Z32, Z64};
use ringfence_core::rss::Rss;
use ringfence_core::sharing::Session;
use ringfence_core::testing::conformance::TestBase;
use ringfence_core::testing::{random_words, MemTransport};

use crate::common;
use common::*;

/// `n` pseudo-random integers in `[lo, hi]`.
fn ints(seed: u64, n: usize, lo: i64, hi: i64) -> Vec<f64> {
    random_words(seed, n).iter().map(|v| (lo + (v % (hi - lo + 1) as u64) as i64) as f64).collect()
}

fn requant(channels: usize, inner: usize, scale: Vec<f64>, min: i64, max: i64) -> Layer {
    Layer::Requant(Requant { channels, inner, scale, min, max })
}

/// Input 1×8×8 in [0, 1] (quantized as uint8 with scale 1/255), conv 1→4 3×3 pad 1 with
/// per-channel scales and a ReLU-fused range, max pool 2×2, average pool 2×2 with its own
/// requantization (int8), dense 16→10, int8 scores.
fn qnet() -> Model {
    let geom = ConvGeom {
        in_c: 1,
        in_h: 8,
        in_w: 8,
        out_c: 4,
        kernel: [3, 3],
        stride: [1, 1],
        pads: [1; 4],
        groups: 1,
    };
    let pool =
        |k: usize| PoolGeom { c: 4, in_h: 2 * k, in_w: 2 * k, kernel: [2, 2], stride: [2, 2] };
    Model {
        input_name: "x".into(),
        input_shape: vec![1, 8, 8],
        layers: vec![
            requant(1, 64, vec![255.0], 0, 255),
            Layer::Conv(Conv {
                geom,
                weights: ints(1, 36, -127, 127),
                bias: ints(2, 4, -3000, 3000),
            }),
            requant(4, 64, vec![1.1e-3, 2.3e-3, 0.9e-3, 1.7e-3], 0, 255),
            Layer::MaxPool(pool(4)),
            Layer::AvgPool(pool(2)),
            requant(4, 4, vec![0.5; 4], -128, 127),
            Layer::Dense(Dense {
                inputs: 16,
                outputs: 10,
                weights: ints(3, 160, -127, 127),
                bias: ints(4, 10, -500, 500),
            }),
            requant(1, 10, vec![4e-3], -128, 127),
        ],
        class_labels: None,
        dropped_transforms: vec![],
        input_range: None,
    }
}

/// `n` inputs in [0, 1]: random, then the edges (all 0, all 1, halves that tie on 255·x).
fn inputs(n: usize) -> Vec<f64> {
    let mut x: Vec<f64> = random_words(9, (n - 3) * 64)
        .iter()
        .map(|v| (v >> 11) as f64 / (1u64 << 53) as f64)
        .collect();
    x.extend([0.0; 64]);
    x.extend([1.0; 64]);
    x.extend((0..64).map(|i| (2 * i + 1) as f64 / 510.0));
    x
}

fn plan<R: IntRing>() -> FixedPlan<R> {
    FixedPlan::new(&qnet(), DEFAULT_FRAC_BITS).unwrap()
}

/// The plaintext integer plan against onnxruntime's arithmetic: every score within 2 steps
/// (both round to nearest, the plan with its multipliers' 2^−24 resolution and ties up where
/// onnxruntime's are to even: 1 measured) and the classes of nearly all.
#[test]
fn integer_plan_tracks_the_quantized_model() {
    let n = 200;
    let x = inputs(n);
    let exact = qnet().eval_f64(&x, n).unwrap();
    let p = plan::<Z64>();
    assert!(p.is_integer() && p.shape().is_integer());
    assert_eq!(p.shape().product_bits(), 24, "Z_2^64 takes the largest shift");
    let plain = p.decode(&p.eval_plain(&p.encode_input(&x).unwrap(), n).unwrap());
    let worst = plain.iter().zip(&exact).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    let spread = exact.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    eprintln!(
        "integer plan vs quantized model: scores within {worst} steps (scores up to {spread})"
    );
    assert!(worst <= 2.0, "{worst}");
    assert!(spread >= 20.0, "the test network's scores do not collapse");
    let agree = agreement(&argmax_rows(&plain, 10), &argmax_rows(&exact, 10));
    assert!(agree >= 0.95, "{agree}");
    // Z_2^32 fits the same network with a smaller shift.
    let p32 = plan::<Z32>();
    let shift = p32.shape().product_bits();
    assert_eq!(shift, 20, "Z_2^32: 8-bit outputs times 2^20 stay below 2^29");
    let plain32 = p32.decode(&p32.eval_plain(&p32.encode_input(&x).unwrap(), n).unwrap());
    let worst = plain32.iter().zip(&exact).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(worst <= 2.0, "Z_2^32: {worst}");
}

/// The shape lists the requantizations (sizes and the shift only: bounds and multipliers are
/// secret weights, three per channel).
#[test]
fn shape_hides_the_scales() {
    let shape = plan::<Z64>().shape();
    let requants: Vec<_> =
        shape.steps.iter().filter(|s| matches!(s, StepShape::Requant { .. })).collect();
    assert_eq!(requants.len(), 4);
    let needs = shape.needs(2, Output::Argmax);
    assert_eq!(needs.exact, 2 * (4 * 64 + 10), "conv and dense outputs are exact products");
    assert_eq!(needs.products, 2 * (64 + 4 * 64 + 16 + 10), "one truncated product per value");
}

/// A secure run of the integer plan on scheme `S` (session `B`) in ring `R`: every score
/// within `tol` steps of the plaintext plan's (each requantization rounds stochastically where
/// the plan rounds to nearest: a step per layer at most, grown by the next layer's weights; 2
/// measured), the classes of nearly every sample.
fn secure_matches_plain<S, B, R>(roster: Roster, n: usize, tol: i64)
where
    B: TestBase,
    R: IntRing,
    S: Inference<R> + Session<B>,
{
    let p = plan::<R>();
    let x = p.encode_input(&inputs(n)).unwrap();
    let plain = p.eval_plain(&x, n).unwrap();
    let run = secure_run_on::<S, B, R>(roster, &p, &x, n, Output::Logits);
    let f = DEFAULT_FRAC_BITS;
    let worst =
        run.scores.iter().zip(&plain).map(|(a, b)| (a.to_i64() - b.to_i64()).abs() >> f).max();
    eprintln!(
        "{} n = {}: scores within {worst:?} steps of the plaintext plan",
        S::NAME,
        roster.n()
    );
    assert!(worst.unwrap() <= tol, "{worst:?}");
    // The last requantization's range is [-128, 127]: the stochastic rounding stays in it.
    let range = -128i64..=127;
    assert!(run.scores.iter().all(|v| range.contains(&(v.to_i64() >> f))), "scores out of range");
    let agree = agreement(&argmax_rows(&run.scores, 10), &argmax_rows(&plain, 10));
    assert!(agree >= 0.9, "{agree}");
    let classes = secure_run_on::<S, B, R>(roster, &p, &x, n, Output::Argmax).scores;
    let classes: Vec<usize> = classes.iter().map(|c| c.to_i64() as usize).collect();
    let agree = agreement(&classes, &argmax_rows(&plain, 10));
    assert!(agree >= 0.9, "argmax: {agree}");
}

type RssP = Rss<MemTransport>;

#[test]
fn rep3_z64() {
    secure_matches_plain::<Rep3P, Rep3P, Z64>(Roster::THREE, 40, 4);
}

#[test]
fn rss_3_z64() {
    secure_matches_plain::<RssP, RssP, Z64>(Roster::THREE, 40, 4);
}

#[test]
fn rss_5_z64() {
    secure_matches_plain::<RssP, RssP, Z64>(Roster::new(5, 2).unwrap(), 20, 4);
}

#[test]
fn rss_3_z32() {
    secure_matches_plain::<RssP, RssP, Z32>(Roster::THREE, 40, 4);
}

#[test]
fn rss_5_z32() {
    secure_matches_plain::<RssP, RssP, Z32>(Roster::new(5, 2).unwrap(), 20, 4);
}

#[test]
fn mal3_z64() {
    secure_matches_plain::<Mal3P, Rep3P, Z64>(Roster::THREE, 20, 4);
}

/// METEOR runs fixed-point plans only and says so, at every party, before any round of the
/// run (an error, not a panic: the wasm build aborts on panics).
#[test]
fn meteor_refuses_integer_plans() {
    use ringfence_core::net::PartyId;
    use ringfence_core::testing::{self, Net};
    let p = plan::<Z64>();
    let shape = p.shape();
    let net = Net::new(3);
    let outs = testing::run_base(&net, Roster::THREE, 3, 5, |me, b: Rep3P| {
        let (p, shape) = (&p, shape.clone());
        async move {
            let mut s = MeteorP::start(b);
            let model = s.share_model(PartyId(0), (me.0 == 0).then_some(p), &shape).await?;
            s.preprocess(&model, 1, Output::Logits, PartyId(1)).await.map(drop)
        }
    });
    for o in outs {
        let e = o.expect_err("METEOR must refuse").to_string();
        assert!(e.contains("METEOR runs fixed-point plans"), "{e}");
    }
}
