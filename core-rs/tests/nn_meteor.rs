//! Secure inference on the METEOR backend: the committed MNIST models against onnxruntime and
//! the plaintext fixed-point plan, and the online communication against the paper's cost model
//! (extract §7.7) — exact bytes and rounds per party.

use ringfence_core::meteor::{online_cost, Meteor};
use ringfence_core::net::PartyId;
use ringfence_core::nn::{
    argmax_rows, import_onnx, ConvGeom, Dense, FixedPlan, Inference, Layer, Model, Output,
    PoolGeom, DEFAULT_FRAC_BITS,
};
use ringfence_core::ring::{IntRing, Z64};
use ringfence_core::testing::{self, random_words};

mod common;
use common::*;

/// Secure METEOR argmax agrees with onnxruntime's and with the plaintext plan's on ≥ 99.5% of
/// the digits, the scores are within a few ulps of the plaintext plan, and the online
/// communication is exactly the cost model's.
fn check_net(name: &str, bytes: &[u8], reference: &str, n: usize, chunk: usize) {
    let plan = FixedPlan::<Z64>::new(&import_onnx(bytes).unwrap(), DEFAULT_FRAC_BITS).unwrap();
    let ort: Vec<usize> = json_numbers(reference, "argmax").iter().map(|&v| v as usize).collect();
    let classes = plan.shape().output_len();
    let x = plan.encode_input(&mnist(n)).unwrap();
    let fixed = plan.eval_plain(&x, n).unwrap();
    let len = plan.shape().input_len;
    let mut secure = Vec::new();
    let mut worst = 0;
    for start in (0..n).step_by(chunk) {
        let m = chunk.min(n - start);
        let run = meteor_run(&plan, &x[start * len..(start + m) * len], m);
        let (bytes, rounds) = online_cost(&plan.shape(), 64, m);
        assert_eq!((run.online_bytes, run.online_rounds), (bytes, rounds), "{name}: cost model");
        for (s, f) in run.scores.iter().zip(&fixed[start * classes..]) {
            worst = worst.max((s.to_i64() - f.to_i64()).abs());
        }
        secure.extend(argmax_rows(&run.scores, classes));
    }
    let fixed_arg = argmax_rows(&fixed, classes);
    let (a_fixed, a_ort) = (agreement(&secure, &fixed_arg), agreement(&secure, &ort[..n]));
    eprintln!("{name}: METEOR argmax on {n} digits: {a_fixed} with plaintext, {a_ort} with onnxruntime; scores within {worst} ulps");
    assert!(a_fixed >= 0.995 && a_ort >= 0.995, "{name}: {a_fixed} {a_ort}");
    assert!(worst < 64, "{name}: {worst} ulps from the plaintext plan");
}

#[test]
fn nn_a_meteor_agrees_with_onnxruntime() {
    check_net("nn-a", NN_A, NN_A_REF, digits(100), 500);
}

#[test]
fn nn_b_meteor_agrees_with_onnxruntime() {
    check_net("nn-b", NN_B, NN_B_REF, digits(20), 250);
}

#[test]
fn nn_c_meteor_agrees_with_onnxruntime() {
    check_net("nn-c", NN_C, NN_C_REF, digits(2), 50);
}

#[test]
fn lenet_meteor_agrees_with_onnxruntime() {
    check_net("lenet", LENET, LENET_REF, digits(2), 25);
}

#[test]
fn logreg_meteor_agrees_with_onnxruntime_on_its_test_set() {
    let model = import_onnx(LOGREG).unwrap();
    let plan = FixedPlan::<Z64>::new(&model, DEFAULT_FRAC_BITS).unwrap();
    let x: Vec<f64> = DIGITS8.iter().map(|&p| f64::from(p)).collect();
    let n = x.len() / 64;
    let run = meteor_run(&plan, &plan.encode_input(&x).unwrap(), n);
    let ort: Vec<usize> = json_numbers(LOGREG_REF, "argmax").iter().map(|&v| v as usize).collect();
    let labels = model.class_labels.clone().unwrap();
    let secure: Vec<usize> =
        argmax_rows(&run.scores, 10).iter().map(|&i| labels[i] as usize).collect();
    let a = agreement(&secure, &ort);
    eprintln!("logreg: METEOR argmax on {n} digits agrees with onnxruntime on {a}");
    assert!(a >= 0.995);
}

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
        let run = meteor_run(&plan, &x, 1);
        assert_eq!(run.online_bytes, paper, "{name}: measured online bytes");
        let want = plan.eval_plain(&x, 1).unwrap();
        for (s, f) in run.scores.iter().zip(&want) {
            assert!((s.to_i64() - f.to_i64()).abs() < 64, "{name}: {s:?} vs {f:?}");
        }
        eprintln!("{name}: measured {} bytes in {} rounds", run.online_bytes, run.online_rounds);
    }
}

/// Deployment 1 on METEOR: an external client receives its input's mask in setup, sends the
/// masked digits, and alone reconstructs the scores; P0 owns the weights.
#[test]
fn client_input_and_output_with_nn_a_on_meteor() {
    use ringfence_core::meteor::client::MeteorClient;
    use ringfence_core::net::{Ctx, SessionId};
    use ringfence_core::rep3::Rep3;
    use std::pin::Pin;
    type Fut<'a> = Pin<
        Box<dyn std::future::Future<Output = Result<Option<Vec<Z64>>, ringfence_core::Error>> + 'a>,
    >;
    let plan = FixedPlan::<Z64>::new(&import_onnx(NN_A).unwrap(), DEFAULT_FRAC_BITS).unwrap();
    let shape = plan.shape();
    let batch = 2;
    let x = plan.encode_input(&mnist(batch)).unwrap();
    let client = PartyId(3);
    let net = testing::Net::new(4);
    let mut futs: Vec<Fut<'_>> = Vec::new();
    for (i, seeds) in testing::rep3_seeds(5).into_iter().enumerate() {
        let me = PartyId(i as u8);
        let ctx = Ctx::new(me, 4, SessionId([2; 16]), net.transport(me));
        let (plan, shape) = (&plan, &shape);
        futs.push(Box::pin(async move {
            let mut p = Meteor::new(Rep3::setup(ctx, seeds).await?);
            let model = p.share_model(PartyId(0), (i == 0).then_some(plan), shape).await?;
            let mut prep = p.preprocess(&model, batch, Output::Logits, client).await?;
            p.deliver_mask(prep.input_mask()?).await?;
            let mask = prep.take_input_mask()?;
            let sx = p.share(client, None, mask).await?;
            let y = p.infer(&model, sx, prep).await?;
            p.reveal_to_client(client, y).await?;
            Ok(None)
        }));
    }
    let ctx = Ctx::new(client, 4, SessionId([2; 16]), net.transport(client));
    let x2 = x.clone();
    futs.push(Box::pin(async move {
        let mut c = MeteorClient::new(ctx);
        let mask = c.receive_mask::<Z64>(x2.len()).await?;
        c.share(&x2, mask)?;
        Ok(Some(c.reconstruct::<Z64>(batch * 10).await?))
    }));
    let outs = net.run(futs);
    let scores = outs[3].as_ref().unwrap().clone().unwrap();
    let fixed = plan.eval_plain(&x, batch).unwrap();
    for (s, f) in scores.iter().zip(&fixed) {
        assert!((s.to_i64() - f.to_i64()).abs() < 64, "{s:?} vs {f:?}");
    }
    assert_eq!(argmax_rows(&scores, 10), argmax_rows(&fixed, 10));
    for o in &outs[..3] {
        assert!(matches!(o, Ok(None)), "servers learn nothing: {o:?}");
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
    let run = meteor_run(&plan, &plan.encode_input(&x).unwrap(), n);
    assert_eq!((run.online_bytes, run.online_rounds), online_cost(&plan.shape(), 64, n));
    assert_eq!(run.online_bytes, 8 * 10 * n as u64);
    let ort: Vec<usize> = json_numbers(SVM_REF, "argmax").iter().map(|&v| v as usize).collect();
    let labels = model.class_labels.clone().unwrap();
    let secure: Vec<usize> =
        argmax_rows(&run.scores, 10).iter().map(|&i| labels[i] as usize).collect();
    let a = agreement(&secure, &ort);
    eprintln!("svm: METEOR label on {n} digits agrees with onnxruntime on {a}");
    assert!(a >= 0.995);
}
