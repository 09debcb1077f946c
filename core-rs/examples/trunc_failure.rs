//! How often probabilistic truncation can fail on the shipped models, from the real models and
//! the held-out data the onnxruntime agreement tests use:
//! `cargo run -p ringfence-core --example trunc_failure` (seconds once built).
//!
//! A truncation of an encoded product z (twice the fractional bits) fails with probability
//! about |z| / 2^k on rep3 and |z| / 2^(k−1) on METEOR (`core-rs/src/rep3/trunc.rs`,
//! `core-rs/src/meteor/mult.rs`); failures add up at most. For each model this evaluates the
//! plaintext fixed-point plan (k = 64, the default fractional bits) one sample at a time,
//! records every value a secure run truncates, and prints a Markdown table: truncations per
//! inference, the largest |z| over the data, and the bound per inference Σ|z| / 2^64 for the
//! worst sample, and count × max|z| / 2^64.

use ringfence_core::nn::{import_onnx, FixedPlan, Output, DEFAULT_FRAC_BITS};
use ringfence_core::ring::{IntRing, Z64};

const MNIST: &[u8] = include_bytes!("../../models/data/mnist-test-1000.u8");
const DIGITS8: &[u8] = include_bytes!("../../models/data/digits8-test.u8");

/// The figures of one model over its test set.
struct Figures {
    samples: usize,
    per_inference: usize,
    max_z: u64,
    worst_sum: f64,
}

fn measure(onnx: &[u8], inputs: &[f64]) -> Figures {
    let plan =
        FixedPlan::<Z64>::new(&import_onnx(onnx).expect("model"), DEFAULT_FRAC_BITS).expect("plan");
    let shape = plan.shape();
    let len = shape.input_len;
    let samples = inputs.len() / len;
    let mut f = Figures { samples, per_inference: 0, max_z: 0, worst_sum: 0.0 };
    for x in inputs.chunks_exact(len) {
        let (mut count, mut sum) = (0, 0.0);
        let enc = plan.encode_input(x).expect("input in range");
        plan.eval_plain_observed(&enc, 1, |z| {
            count += z.len();
            for v in z {
                let a = v.to_i64().unsigned_abs();
                f.max_z = f.max_z.max(a);
                sum += a as f64;
            }
        })
        .expect("evaluation");
        f.per_inference = count;
        f.worst_sum = f.worst_sum.max(sum / 2f64.powi(64));
    }
    // The same count the secure runs take truncation pairs for.
    assert_eq!(f.per_inference, shape.needs(1, Output::Logits).products);
    f
}

fn main() {
    let mnist: Vec<f64> = MNIST.iter().map(|&p| f64::from(p) / 255.0).collect();
    let digits: Vec<f64> = DIGITS8.iter().map(|&p| f64::from(p)).collect();
    let models: [(&str, &[u8], &[f64], &str); 7] = [
        ("NN-A", include_bytes!("../../models/nn-a.onnx"), &mnist, "MNIST"),
        ("NN-B", include_bytes!("../../models/nn-b.onnx"), &mnist, "MNIST"),
        ("NN-C", include_bytes!("../../models/nn-c.onnx"), &mnist, "MNIST"),
        ("LeNet", include_bytes!("../../models/lenet.onnx"), &mnist, "MNIST"),
        ("logreg", include_bytes!("../../models/logreg.onnx"), &digits, "digits8"),
        ("svm", include_bytes!("../../models/svm.onnx"), &digits, "digits8"),
        ("tree", include_bytes!("../../models/tree.onnx"), &digits, "digits8"),
    ];
    println!("k = 64, {DEFAULT_FRAC_BITS} fractional bits");
    println!();
    println!("| model | test set | truncations per inference | max \\|z\\| | Σ\\|z\\|/2^64, worst sample | count × max\\|z\\|/2^64 |");
    println!("|---|---|---:|---:|---:|---:|");
    for (name, onnx, inputs, set) in models {
        let f = measure(onnx, inputs);
        let exp =
            if f.max_z == 0 { "0".into() } else { format!("2^{:.1}", (f.max_z as f64).log2()) };
        let cap = f.per_inference as f64 * f.max_z as f64 / 2f64.powi(64);
        println!(
            "| {name} | {set} ({}) | {} | {exp} | {} | {} |",
            f.samples,
            f.per_inference,
            power(f.worst_sum),
            power(cap)
        );
    }
}

/// `p` as `2^e` (or 0).
fn power(p: f64) -> String {
    if p == 0.0 {
        "0".into()
    } else {
        format!("2^{:.1}", p.log2())
    }
}
