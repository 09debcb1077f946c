//! Secure inference on `rep3`: what only rep3 has (its argmax's rounds, its preprocessing
//! counts, the classical models' secure labels). The checks every scheme runs (agreement with
//! onnxruntime, the client deployment) are in `nn_schemes.rs`.

use ringfence_core::bin3::{FanIn, Roles};
use ringfence_core::net::PartyId;
use ringfence_core::nn::{
    argmax_rows, import_onnx, FixedPlan, Inference, Model, Output, DEFAULT_FRAC_BITS,
};
use ringfence_core::rep3::{self, Comparisons};
use ringfence_core::ring::{IntRing, Z64};
use ringfence_core::testing;

use crate::common;
use common::*;

fn plan(bytes: &[u8]) -> (Model, FixedPlan<Z64>) {
    let m = import_onnx(bytes).unwrap();
    let p = FixedPlan::new(&m, DEFAULT_FRAC_BITS).unwrap();
    (m, p)
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
            assert_eq!(shape.needs(2, Output::Argmax).bits, 18);
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
/// NN-A's scores, plus 4 tournament levels of 9 rounds for the argmax: a bounded comparison
/// and a selection), and the preprocessing needed is exactly what the shape says.
#[test]
fn nn_a_online_rounds_are_independent_of_the_batch() {
    let (_, plan) = plan(NN_A);
    let shape = plan.shape();
    assert_eq!(shape.needs(3, Output::Argmax).products, 3 * (128 + 128 + 10));
    assert_eq!(shape.needs(3, Output::Argmax).bits, 3 * (128 + 128 + 10 + 9));
    for (batch, output, rounds) in
        [(1, Output::Logits, 30), (4, Output::Logits, 30), (1, Output::Argmax, 66)]
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
        let labels = model.class_labels.as_ref();
        let ort: Vec<i64> = json_numbers(reference, "argmax").iter().map(|&v| v as i64).collect();
        let to_labels = |idx: Vec<usize>| -> Vec<i64> {
            idx.iter().map(|&i| common::int_label(labels, i)).collect()
        };
        let float = to_labels(argmax_rows(&model.eval_f64(&x, n).unwrap(), 10));
        let xe = plan.encode_input(&x).unwrap();
        let fixed = to_labels(argmax_rows(&plan.eval_plain(&xe, n).unwrap(), 10));
        let run = secure_run::<Rep3P>(&plan, &xe, n, Output::Argmax);
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
    let run = secure_run::<Rep3P>(&plan, &x, n, Output::Logits);
    assert_eq!(run.scores, plan.eval_plain(&x, n).unwrap());
}

/// Online rounds of one inference on rep3 with the given comparisons, and P0's view of the
/// classes (`Output::Argmax`) or scores.
fn rep3_rounds(
    plan: &FixedPlan<Z64>,
    x: &[Z64],
    batch: usize,
    output: Output,
    cmp: Comparisons,
) -> (Vec<Z64>, u64) {
    let shape = plan.shape();
    let outs = testing::run_rep3(9, |mut p| {
        let (shape, x) = (shape.clone(), x.to_vec());
        async move {
            let me = p.me();
            p.set_comparisons(cmp);
            let model = p.share_model(PartyId(0), (me.0 == 0).then_some(plan), &shape).await?;
            let prep = p.preprocess(&model, batch, output, PartyId(1)).await?;
            let sx = p.input(PartyId(1), (me.0 == 1).then_some(&x[..]), x.len()).await?;
            let before = p.ctx().stats().rounds;
            let y = p.infer(&model, sx, prep).await?;
            let rounds = p.ctx().stats().rounds - before;
            Ok((p.reveal(y).await?, rounds))
        }
    });
    outs[0].clone()
}

/// Comparisons on multi-fan-in gates ([`Comparisons::FanIn`]: bin3's one-round gates of up to
/// four inputs after groups of four bits) cut the online rounds of NN-A and LeNet to half and
/// give the plaintext plan's classes.
#[test]
fn multi_fan_in_comparisons_halve_the_online_rounds_and_keep_the_classes() {
    for (name, bytes, batch, rounds) in
        [("nn-a", NN_A, 8, [66, 31]), ("lenet", LENET, 2, [112, 52])]
    {
        let (_, plan) = plan(bytes);
        let x = plan.encode_input(&mnist(batch)).unwrap();
        let plain = argmax_rows(&plan.eval_plain(&x, batch).unwrap(), 10);
        let mut seen = Vec::new();
        for cmp in [Comparisons::TwoInput, Comparisons::FanIn(FanIn::default())] {
            let (classes, r) = rep3_rounds(&plan, &x, batch, Output::Argmax, cmp);
            let classes: Vec<usize> = classes.iter().map(|v| v.to_u64() as usize).collect();
            assert_eq!(classes, plain, "{name} with {cmp:?}");
            seen.push(r);
        }
        eprintln!("{name}: online rounds with two-input / multi-fan-in comparisons: {seen:?}");
        assert_eq!(seen, rounds, "{name}");
    }
}

/// [`rep3::online_rounds`] (what `ringfence model inspect` prints) is what a run takes, for
/// every shipped model, both outputs and three ways of comparing.
#[test]
fn the_round_model_matches_every_shipped_model() {
    let fans = [
        Comparisons::TwoInput,
        Comparisons::FanIn(FanIn::default()),
        Comparisons::FanIn(FanIn::new(Roles::default(), 8, 8).unwrap()),
    ];
    for (name, bytes) in [
        ("nn-a", NN_A),
        ("nn-b", NN_B),
        ("nn-c", NN_C),
        ("lenet", LENET),
        ("logreg", LOGREG),
        ("svm", SVM),
        ("tree", TREE),
        ("minionn-q", MINIONN_Q),
        ("lenet-qdq", LENET_QDQ),
    ] {
        let (_, plan) = plan(bytes);
        let shape = plan.shape();
        let x = vec![Z64(0); shape.input_len];
        for output in [Output::Logits, Output::Argmax] {
            for cmp in fans {
                let (_, measured) = rep3_rounds(&plan, &x, 1, output, cmp);
                let model = rep3::online_rounds(&shape, output, 64, cmp);
                assert_eq!(model, measured, "{name}, {output:?}, {cmp:?}");
            }
        }
    }
}
