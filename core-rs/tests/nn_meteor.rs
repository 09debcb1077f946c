//! Secure inference on METEOR: the online communication against the paper's cost model
//! (extract §7.7), exact bytes and rounds per party, on the paper's networks. The checks every
//! scheme runs (agreement with onnxruntime, the client deployment) are in `nn_schemes.rs`.

use ringfence_core::meteor::online_cost;
use ringfence_core::nn::{
    argmax_rows, import_onnx, ConvGeom, Dense, FixedPlan, Layer, Model, Output, PoolGeom,
    DEFAULT_FRAC_BITS,
};
use ringfence_core::ring::{IntRing, Z64};
use ringfence_core::testing::random_words;

use crate::common;
use common::*;

// The paper's architectures (extract §7.2), random weights: the cost model must give the
// paper's communication figures exactly (§7.7), and a secure run must send exactly that.

/// `len` small pseudo-random weights in [−0.05, 0.05] from `seed`.
fn small_weights(seed: u64, len: usize) -> Vec<f64> {
    random_words(seed, len).iter().map(|v| ((v % 2001) as f64 - 1000.0) / 20000.0).collect()
}

fn dense(inputs: usize, outputs: usize) -> Layer {
    let mut weights = small_weights(inputs as u64 * 7 + outputs as u64, inputs * outputs + outputs);
    let bias = weights.split_off(inputs * outputs);
    Layer::Dense(Dense { inputs, outputs, weights, bias })
}

fn conv(in_c: usize, hw: usize, out_c: usize, k: usize, s: usize, p: usize) -> Layer {
    let geom = ConvGeom {
        in_c,
        in_h: hw,
        in_w: hw,
        out_c,
        kernel: [k, k],
        stride: [s, s],
        pads: [p; 4],
        groups: 1,
    };
    let n = geom.patch_len() * out_c;
    let mut weights = small_weights(n as u64, n + out_c);
    let bias = weights.split_off(n);
    Layer::Conv(ringfence_core::nn::Conv { geom, weights, bias })
}

fn pool(c: usize, hw: usize, k: usize, s: usize) -> Layer {
    Layer::MaxPool(PoolGeom { c, in_h: hw, in_w: hw, kernel: [k, k], stride: [s, s] })
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

fn paper_nets() -> Vec<(&'static str, Model, u64)> {
    use Layer::Relu;
    vec![
        (
            "NN-A",
            model(
                vec![784],
                vec![dense(784, 128), Relu, dense(128, 128), Relu, dense(128, 10), Relu],
            ),
            27_398,
        ),
        (
            "NN-B",
            model(
                vec![1, 28, 28],
                vec![conv(1, 28, 5, 5, 2, 2), Relu, dense(980, 100), Relu, dense(100, 10)],
            ),
            111_320,
        ),
        (
            "NN-C",
            model(
                vec![1, 28, 28],
                vec![
                    conv(1, 28, 16, 5, 1, 0),
                    pool(16, 24, 2, 2),
                    Relu,
                    conv(16, 12, 16, 5, 1, 0),
                    pool(16, 8, 2, 2),
                    Relu,
                    dense(256, 100),
                    Relu,
                    dense(100, 10),
                    Relu,
                ],
            ),
            1_066_050,
        ),
        (
            "LeNet",
            model(
                vec![1, 28, 28],
                vec![
                    conv(1, 28, 20, 5, 1, 0),
                    pool(20, 24, 2, 2),
                    Relu,
                    conv(20, 12, 50, 5, 1, 0),
                    pool(50, 8, 2, 2),
                    Relu,
                    dense(800, 500),
                    Relu,
                    dense(500, 10),
                    Relu,
                ],
            ),
            1_568_690,
        ),
    ]
}

#[test]
fn the_cost_model_gives_the_papers_communication_for_its_networks() {
    for (name, m, paper) in paper_nets() {
        let plan = FixedPlan::<Z64>::new(&m, DEFAULT_FRAC_BITS).unwrap();
        let (bytes, rounds) = online_cost(&plan.shape(), 64, 1);
        eprintln!("{name}: {bytes} bytes, {rounds} rounds per party online");
        assert_eq!(bytes, paper, "{name}");
    }
}

#[test]
fn a_secure_run_of_the_papers_nn_a_and_nn_c_sends_exactly_the_papers_bytes() {
    for (name, m, paper) in paper_nets().into_iter().filter(|n| n.0 == "NN-A" || n.0 == "NN-C") {
        let plan = FixedPlan::<Z64>::new(&m, DEFAULT_FRAC_BITS).unwrap();
        let x = plan.encode_input(&mnist(1)).unwrap();
        let run = secure_run::<MeteorP>(&plan, &x, 1, Output::Logits);
        assert_eq!(run.online_bytes, paper, "{name}: measured online bytes");
        let want = plan.eval_plain(&x, 1).unwrap();
        for (s, f) in run.scores.iter().zip(&want) {
            assert!((s.to_i64() - f.to_i64()).abs() < 64, "{name}: {s:?} vs {f:?}");
        }
        eprintln!("{name}: measured {} bytes in {} rounds", run.online_bytes, run.online_rounds);
    }
}

/// The linear SVM is a dense layer: it runs on METEOR (8 B per score). (Tree ensembles:
/// `tests/nn_trees.rs`.)
#[test]
fn svm_runs_on_meteor() {
    let model = import_onnx(SVM).unwrap();
    let plan = FixedPlan::<Z64>::new(&model, DEFAULT_FRAC_BITS).unwrap();
    let x: Vec<f64> = DIGITS8.iter().map(|&p| f64::from(p)).collect();
    let n = x.len() / 64;
    let run = secure_run::<MeteorP>(&plan, &plan.encode_input(&x).unwrap(), n, Output::Logits);
    assert_eq!((run.online_bytes, run.online_rounds), online_cost(&plan.shape(), 64, n));
    assert_eq!(run.online_bytes, 8 * 10 * n as u64);
    let ort: Vec<usize> = json_numbers(SVM_REF, "argmax").iter().map(|&v| v as usize).collect();
    let labels = model.class_labels.as_ref();
    let secure: Vec<usize> = argmax_rows(&run.scores, 10)
        .iter()
        .map(|&i| common::int_label(labels, i) as usize)
        .collect();
    let a = agreement(&secure, &ort);
    eprintln!("svm: METEOR label on {n} digits agrees with onnxruntime on {a}");
    assert!(a >= 0.995);
}
