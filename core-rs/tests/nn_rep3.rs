//! Secure inference on `rep3` of the committed models, against the plaintext fixed-point plan
//! and against onnxruntime's outputs committed in `models/data/*.reference.json`.

use std::pin::Pin;

use ringfence_core::net::{Ctx, PartyId, SessionId};
use ringfence_core::nn::{
    argmax_rows, import_onnx, FixedPlan, Inference, Model, Output, DEFAULT_FRAC_BITS,
};
use ringfence_core::prg::Seed;
use ringfence_core::rep3::client::Rep3Client;
use ringfence_core::rep3::Rep3;
use ringfence_core::ring::{IntRing, Z64};
use ringfence_core::testing::{self, Net};
use ringfence_core::Error;

mod common;
use common::*;

fn plan(bytes: &[u8]) -> (Model, FixedPlan<Z64>) {
    let m = import_onnx(bytes).unwrap();
    let p = FixedPlan::new(&m, DEFAULT_FRAC_BITS).unwrap();
    (m, p)
}

/// Runs the plan securely with P1 as the input owner and P0 as the model owner; every party
/// gets the revealed output.
fn secure_run(plan: &FixedPlan<Z64>, x: &[Z64], batch: usize, output: Output) -> Vec<Z64> {
    let shape = plan.shape();
    let outs = testing::run_rep3(7, |mut p| {
        let (shape, x) = (shape.clone(), x.to_vec());
        async move {
            let me = p.me();
            let model = p.share_model(PartyId(0), (me.0 == 0).then_some(plan), &shape).await?;
            let prep = p.preprocess(&model, batch, output, PartyId(1)).await?;
            let before = p.ctx().stats();
            let sx = p.input(PartyId(1), (me.0 == 1).then_some(&x[..]), x.len()).await?;
            let y = p.infer(&model, sx, prep).await?;
            let out = p.reveal(y).await?;
            let online = p.ctx().stats();
            Ok((out, online.rounds - before.rounds))
        }
    });
    let (out, rounds) = outs[0].clone();
    assert!(outs.iter().all(|o| o.0 == out), "parties disagree");
    eprintln!("online rounds: {rounds}");
    out
}

/// The plaintext fixed-point plan on `n_plain` digits and the secure run on `n_secure` digits
/// both agree with onnxruntime's argmax on ≥ 99.5% of the digits (and with each other).
fn check_mnist_net(
    name: &str,
    bytes: &[u8],
    reference: &str,
    (n_plain, n_secure, chunk): (usize, usize, usize),
) {
    let (model, plan) = plan(bytes);
    let ort: Vec<usize> = json_numbers(reference, "argmax").iter().map(|&v| v as usize).collect();
    let ort_scores = json_numbers(reference, "scores");
    let x = plan.encode_input(&mnist(n_plain)).unwrap();
    let fixed = plan.eval_plain(&x, n_plain).unwrap();
    let fixed_arg = argmax_rows(&fixed, 10);
    let a_plain = agreement(&fixed_arg, &ort[..n_plain]);
    let worst =
        plan.decode(&fixed).iter().zip(&ort_scores).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    eprintln!("{name}: plaintext fixed point vs onnxruntime on {n_plain} digits: argmax {a_plain}, max score error {worst}");
    assert!(a_plain >= 0.995, "{name}: plaintext argmax agreement {a_plain}");
    assert!(worst < 0.05, "{name}: score error {worst}");
    let n = n_secure.min(n_plain);
    let f64s = model.eval_f64(&mnist(n), n).unwrap();
    assert!(agreement(&argmax_rows(&f64s, 10), &ort[..n]) >= 0.995);

    // One secure session per chunk of digits (bounds memory: a convolution materialises its
    // im2col matrix of shares for the whole batch).
    let len = plan.shape().input_len;
    let mut secure = Vec::new();
    for start in (0..n).step_by(chunk) {
        let m = chunk.min(n - start);
        let xs = &x[start * len..(start + m) * len];
        secure.extend(secure_run(&plan, xs, m, Output::Argmax).iter().map(|v| v.to_u64() as usize));
    }
    let (a_fixed, a_ort) = (agreement(&secure, &fixed_arg[..n]), agreement(&secure, &ort[..n]));
    eprintln!(
        "{name}: secure argmax on {n} digits: {a_fixed} with plaintext, {a_ort} with onnxruntime"
    );
    assert!(a_fixed >= 0.995 && a_ort >= 0.995, "{name}: {a_fixed} {a_ort}");
}

#[test]
fn nn_a_secure_and_plaintext_agree_with_onnxruntime() {
    check_mnist_net("nn-a", NN_A, NN_A_REF, (1000, digits(100), 1000));
    let labels: Vec<usize> = MNIST_LABELS.iter().map(|&l| l as usize).collect();
    let ort: Vec<usize> = json_numbers(NN_A_REF, "argmax").iter().map(|&v| v as usize).collect();
    assert!(agreement(&ort, &labels) > 0.95, "the model's own accuracy");
}

#[test]
fn nn_b_secure_and_plaintext_agree_with_onnxruntime() {
    check_mnist_net("nn-b", NN_B, NN_B_REF, (digits(200), digits(20), 500));
}

#[test]
fn nn_c_secure_and_plaintext_agree_with_onnxruntime() {
    check_mnist_net("nn-c", NN_C, NN_C_REF, (digits(50), digits(2), 200));
}

#[test]
fn lenet_secure_and_plaintext_agree_with_onnxruntime() {
    check_mnist_net("lenet", LENET, LENET_REF, (digits(20), digits(2), 50));
}

#[test]
fn nn_a_secure_logits_track_the_plaintext_fixed_point_plan() {
    let (_, plan) = plan(NN_A);
    let n = 40;
    let x = plan.encode_input(&mnist(n)).unwrap();
    let secure = secure_run(&plan, &x, n, Output::Logits);
    let fixed = plan.eval_plain(&x, n).unwrap();
    let worst = secure.iter().zip(&fixed).map(|(a, b)| (a.to_i64() - b.to_i64()).abs()).max();
    eprintln!("NN-A secure vs plaintext fixed point: max {worst:?} ulps");
    // Each truncation may be one lower than the floor; that ulp then grows through the next
    // layers' weights (measured: 9 ulps at most on these 40 digits).
    let ulps = worst.unwrap();
    assert!(ulps < 64, "{ulps} ulps");
    let ort = json_numbers(NN_A_REF, "scores");
    let err = plan.decode(&secure).iter().zip(&ort).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(err < plan.error_bound(1.0), "secure logits off onnxruntime by {err}");
}

#[test]
fn logreg_secure_argmax_agrees_with_onnxruntime_on_its_test_set() {
    let (model, plan) = plan(LOGREG);
    let x = digits8();
    let n = x.len() / 64;
    let x = plan.encode_input(&x).unwrap();
    let labels = model.class_labels.clone().unwrap();
    let secure: Vec<i64> = secure_run(&plan, &x, n, Output::Argmax)
        .iter()
        .map(|v| labels[v.to_u64() as usize])
        .collect();
    let fixed: Vec<i64> =
        argmax_rows(&plan.eval_plain(&x, n).unwrap(), 10).iter().map(|&i| labels[i]).collect();
    let ort: Vec<i64> = json_numbers(LOGREG_REF, "argmax").iter().map(|&v| v as i64).collect();
    let agree = |a: &[i64], b: &[i64]| {
        a.iter().zip(b).filter(|(x, y)| x == y).count() as f64 / a.len() as f64
    };
    let (a_fixed, a_ort) = (agree(&secure, &fixed), agree(&secure, &ort));
    eprintln!(
        "logreg secure argmax on {n} digits: {a_fixed} with plaintext, {a_ort} with onnxruntime"
    );
    assert!(a_fixed >= 0.995 && a_ort >= 0.995);
}

/// Deployment 1: an external client shares the digits and alone receives the logits; P0 owns
/// the weights. Two digits in one batch.
#[test]
fn client_input_and_output_with_nn_a() {
    let (_, plan) = plan(NN_A);
    let batch = 2;
    let x = plan.encode_input(&mnist(batch)).unwrap();
    let shape = plan.shape();
    let net = Net::new(4);
    let client = PartyId(3);
    type Fut<'a> = Pin<Box<dyn std::future::Future<Output = Result<Option<Vec<Z64>>, Error>> + 'a>>;
    let mut futs: Vec<Fut<'_>> = Vec::new();
    for (i, seeds) in testing::rep3_seeds(11).into_iter().enumerate() {
        let me = PartyId(i as u8);
        let ctx = Ctx::new(me, 4, SessionId([1; 16]), net.transport(me));
        let (plan, shape) = (&plan, shape.clone());
        futs.push(Box::pin(async move {
            let mut p = Rep3::setup(ctx, seeds).await?;
            let model = p.share_model(PartyId(0), (i == 0).then_some(plan), &shape).await?;
            let prep = p.preprocess(&model, batch, Output::Logits, PartyId(1)).await?;
            let sx = p.input_from_client::<Z64>(client, batch * shape.input_len).await?;
            let y = p.infer(&model, sx, prep).await?;
            p.reveal_to_client(client, y).await?;
            Ok(None)
        }));
    }
    let ctx = Ctx::new(client, 4, SessionId([1; 16]), net.transport(client));
    let xc = x.clone();
    futs.push(Box::pin(async move {
        let mut c = Rep3Client::new(ctx, Seed::from_bytes([9; 32]));
        c.share(&xc)?;
        Ok(Some(c.reconstruct::<Z64>(batch * 10).await?))
    }));
    let outs = net.run(futs);
    let got = outs[3].clone().unwrap().unwrap();
    let fixed = plan.eval_plain(&x, batch).unwrap();
    assert_eq!(argmax_rows(&got, 10), argmax_rows(&fixed, 10));
    let ort: Vec<usize> = json_numbers(NN_A_REF, "argmax").iter().map(|&v| v as usize).collect();
    assert_eq!(argmax_rows(&got, 10), ort[..batch]);
}

/// A wrong input length or reused/mismatched preprocessing fails before any round runs.
#[test]
fn shape_mismatch_fails_before_any_round() {
    let (_, plan) = plan(LOGREG);
    let shape = plan.shape();
    let outs = testing::run_rep3(5, |mut p| {
        let shape = shape.clone();
        let plan = &plan;
        async move {
            let me = p.me();
            let model = p.share_model(PartyId(0), (me.0 == 0).then_some(plan), &shape).await?;
            let prep = p.preprocess(&model, 2, Output::Argmax, PartyId(1)).await?;
            assert_eq!(shape.needs(2, Output::Argmax).dabits, 18);
            let x = p.random::<Z64>(3 * 64);
            let before = p.ctx().stats().rounds;
            let e = p.infer(&model, x, prep).await.unwrap_err();
            assert_eq!(p.ctx().stats().rounds, before);
            Ok(e.to_string())
        }
    });
    assert!(outs[0].contains("192 values"), "{}", outs[0]);
}

/// Online rounds do not depend on the batch (3 dense layers + 3 ReLU layers of 9 rounds for
/// NN-A's scores, plus 4 tournament levels of 10 rounds for the argmax), and the preprocessing
/// needed is exactly what the shape says.
#[test]
fn nn_a_online_rounds_are_independent_of_the_batch() {
    let (_, plan) = plan(NN_A);
    let shape = plan.shape();
    assert_eq!(shape.needs(3, Output::Argmax).trunc_pairs, 3 * (128 + 128 + 10));
    assert_eq!(shape.needs(3, Output::Argmax).dabits, 3 * (128 + 128 + 10 + 9));
    for (batch, output, rounds) in
        [(1, Output::Logits, 30), (4, Output::Logits, 30), (1, Output::Argmax, 70)]
    {
        let x = plan.encode_input(&mnist(batch)).unwrap();
        let outs = testing::run_rep3(3, |mut p| {
            let (shape, x) = (shape.clone(), x.clone());
            let plan = &plan;
            async move {
                let me = p.me();
                let model = p.share_model(PartyId(0), (me.0 == 0).then_some(plan), &shape).await?;
                let prep = p.preprocess(&model, batch, output, PartyId(1)).await?;
                let sx = p.input(PartyId(1), (me.0 == 1).then_some(&x[..]), x.len()).await?;
                let before = p.ctx().stats().rounds;
                let y = p.infer(&model, sx, prep).await?;
                Ok((p.ctx().stats().rounds - before, y.len()))
            }
        });
        let want_len = if output == Output::Logits { batch * 10 } else { batch };
        assert!(outs.iter().all(|o| *o == (rounds, want_len)), "{outs:?}");
    }
}

/// The classical 8×8-digit models (linear SVM, decision tree): the float model, the plaintext
/// fixed-point plan and the secure argmax on all 450 held-out digits give onnxruntime's labels;
/// the tree's path stays secret (every node is compared, every leaf indicator computed).
#[test]
fn svm_and_tree_secure_labels_agree_with_onnxruntime_on_their_test_set() {
    for (name, bytes, reference) in [("svm", SVM, SVM_REF), ("tree", TREE, TREE_REF)] {
        let (model, plan) = plan(bytes);
        let x = digits8();
        let n = x.len() / 64;
        let labels = model.class_labels.clone().unwrap();
        let ort: Vec<i64> = json_numbers(reference, "argmax").iter().map(|&v| v as i64).collect();
        let to_labels = |idx: Vec<usize>| -> Vec<i64> { idx.iter().map(|&i| labels[i]).collect() };
        let float = to_labels(argmax_rows(&model.eval_f64(&x, n).unwrap(), 10));
        let xe = plan.encode_input(&x).unwrap();
        let fixed = to_labels(argmax_rows(&plan.eval_plain(&xe, n).unwrap(), 10));
        let run = rep3_run(&plan, &xe, n, Output::Argmax);
        let secure = to_labels(run.scores.iter().map(|v| v.to_u64() as usize).collect());
        let agree = |a: &[i64], b: &[i64]| {
            a.iter().zip(b).filter(|(x, y)| x == y).count() as f64 / a.len() as f64
        };
        let (a_float, a_fixed, a_ort) =
            (agree(&float, &ort), agree(&secure, &fixed), agree(&secure, &ort));
        eprintln!(
            "{name}: on {n} digits float/onnxruntime {a_float}, secure/plaintext {a_fixed}, \
             secure/onnxruntime {a_ort} ({} B from the busiest party, {} rounds online)",
            run.online_bytes, run.online_rounds
        );
        assert!(a_float >= 0.995 && a_fixed >= 0.995 && a_ort >= 0.995, "{name}");
    }
}

/// The tree's secure scores are exactly the plaintext plan's (comparisons and sums are exact).
#[test]
fn tree_secure_scores_equal_the_plaintext_plan() {
    let (_, plan) = plan(TREE);
    let n = 40;
    let x = plan.encode_input(&digits8()[..n * 64]).unwrap();
    let run = rep3_run(&plan, &x, n, Output::Logits);
    assert_eq!(run.scores, plan.eval_plain(&x, n).unwrap());
}
