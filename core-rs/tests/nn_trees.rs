//! Tree ensembles on both backends: random ensembles with every node mode, ties (features equal
//! to thresholds), zeros and negative values against the plaintext plan and the float model;
//! the shipped scikit-learn tree on METEOR against onnxruntime on its test set; and METEOR's
//! online communication against its cost formula (`meteor::online_cost`), exactly.

use ringfence_core::meteor::online_cost;
use ringfence_core::nn::trees::{NodeMode, TreeEnsemble, TreeNode, TreeShape};
use ringfence_core::nn::{
    argmax_rows, import_onnx, FixedPlan, Layer, Model, Output, StepShape, DEFAULT_FRAC_BITS,
};
use ringfence_core::ring::Z64;
use ringfence_core::testing::random_words;

use crate::common;
use common::*;

const MODES: [NodeMode; 4] = [NodeMode::Lt, NodeMode::Leq, NodeMode::Gt, NodeMode::Gte];
/// Thresholds and features share this grid, so ties are frequent; every value is exact in
/// fixed point.
const GRID: [f64; 7] = [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0];

/// A deterministic stream of words for building ensembles.
struct Words(std::vec::IntoIter<u64>);

impl Words {
    fn new(seed: u64) -> Self {
        Self(random_words(seed, 100_000).into_iter())
    }

    fn below(&mut self, n: usize) -> usize {
        (self.0.next().expect("enough words") % n as u64) as usize
    }
}

/// Grows one tree in pre-order: internal nodes to `max_depth`, a leaf early with chance 1/4.
fn grow(
    shape: &mut TreeShape,
    thresholds: &mut Vec<f64>,
    w: &mut Words,
    parent: Option<(usize, bool)>,
    depth: usize,
    max_depth: usize,
) {
    if depth == max_depth || (depth > 0 && w.below(4) == 0) {
        shape.leaves.push(parent);
        return;
    }
    let i = shape.nodes.len();
    // Modes in turn, so every ensemble of four nodes or more has all of them.
    let (feature, mode) = (w.below(shape.features), MODES[i % MODES.len()]);
    shape.nodes.push(TreeNode { feature, mode, parent, depth });
    thresholds.push(GRID[w.below(GRID.len())]);
    grow(shape, thresholds, w, Some((i, true)), depth + 1, max_depth);
    grow(shape, thresholds, w, Some((i, false)), depth + 1, max_depth);
}

/// `trees` random trees of depth up to `max_depth` plus `stumps` single-leaf trees; leaf weights
/// and base values are multiples of 1/8 in [−2, 2).
fn ensemble(
    seed: u64,
    features: usize,
    classes: usize,
    trees: usize,
    max_depth: usize,
    stumps: usize,
) -> TreeEnsemble {
    let mut w = Words::new(seed);
    let mut shape = TreeShape { features, classes, nodes: Vec::new(), leaves: Vec::new() };
    let mut thresholds = Vec::new();
    for _ in 0..trees {
        grow(&mut shape, &mut thresholds, &mut w, None, 0, max_depth);
    }
    shape.leaves.extend(std::iter::repeat_n(None, stumps));
    let mut eighths =
        |n: usize| -> Vec<f64> { (0..n).map(|_| (w.below(32) as f64 - 16.0) / 8.0).collect() };
    let leaf_weights = eighths(shape.leaves.len() * classes);
    let base = eighths(classes);
    TreeEnsemble { shape, thresholds, leaf_weights, base }
}

fn model(te: TreeEnsemble) -> Model {
    Model {
        input_name: "x".into(),
        input_shape: vec![te.shape.features],
        layers: vec![Layer::Trees(te)],
        class_labels: None,
        dropped_transforms: Vec::new(),
        input_range: None,
    }
}

/// The cost formula written out for ℓ = 64 (module doc of `nn::trees`): 87 + 8 bytes per node
/// (MSB, multiplexer) and 8 per class, per sample; 6 rounds for the MSB, one per level, one for
/// the leaf weights (the comparisons vanish with the nodes).
fn tree_cost(s: &TreeShape, batch: usize) -> (u64, u64) {
    let (n, c) = (s.nodes.len() as u64, s.classes as u64);
    let levels = s.nodes.iter().map(|nd| nd.depth as u64 + 1).max().unwrap_or(0);
    let rounds = if n == 0 { 1 } else { 6 + levels + 1 };
    (batch as u64 * (95 * n + 8 * c), rounds)
}

/// Runs `te` on `x` on both backends: the scores equal the plaintext plan's exactly, which
/// equals the float model's (every value is exact in fixed point), and METEOR sends exactly
/// its cost formula.
fn check_both_backends(te: TreeEnsemble, x: &[f64], batch: usize) {
    let want_cost = tree_cost(&te.shape, batch);
    let m = model(te);
    let plan = FixedPlan::<Z64>::new(&m, DEFAULT_FRAC_BITS).unwrap();
    let xe = plan.encode_input(x).unwrap();
    let plain = plan.eval_plain(&xe, batch).unwrap();
    assert_eq!(plan.decode(&plain), m.eval_f64(x, batch).unwrap(), "fixed point vs float");
    let meteor = secure_run::<MeteorP>(&plan, &xe, batch, Output::Logits);
    assert_eq!(meteor.scores, plain, "METEOR vs plaintext");
    let cost = (meteor.online_bytes, meteor.online_rounds);
    assert_eq!(cost, online_cost(&plan.shape(), 64, batch), "METEOR vs online_cost");
    assert_eq!(cost, want_cost, "METEOR vs the written-out formula");
    let rep3 = secure_run::<Rep3P>(&plan, &xe, batch, Output::Logits);
    assert_eq!(rep3.scores, plain, "rep3 vs plaintext");
}

/// Random ensembles (every node mode, ties, zeros, negative features and thresholds, a
/// single-leaf tree) on random inputs from the thresholds' grid, and the grid's corners.
#[test]
fn random_ensembles_with_ties_agree_with_the_plaintext_plan_on_both_backends() {
    let (features, batch) = (3, 24);
    for seed in [1, 2, 3] {
        let te = ensemble(seed, features, 3, 3, 4, 1);
        let mut w = Words::new(seed + 100);
        let mut x: Vec<f64> =
            (0..(batch - 2) * features).map(|_| GRID[w.below(GRID.len())]).collect();
        x.extend([0.0; 3]);
        x.extend([-2.0; 3]);
        // The run covers ties for every mode (a tie is where Lt/Gt and Leq/Gte differ).
        for mode in MODES {
            let tie = te.shape.nodes.iter().zip(&te.thresholds).any(|(nd, &t)| {
                nd.mode == mode && x.chunks(features).any(|row| row[nd.feature] == t)
            });
            assert!(tie, "seed {seed}: no tie under {mode:?}");
        }
        check_both_backends(te, &x, batch);
    }
}

/// Edges of the shape: a single node (one level), and an ensemble of single leaves (no
/// comparison: the scores are the sum of the leaves plus the base, one reveal).
#[test]
fn a_single_node_and_an_ensemble_without_nodes_run_on_both_backends() {
    let stump = TreeEnsemble {
        shape: TreeShape {
            features: 2,
            classes: 2,
            nodes: vec![TreeNode { feature: 1, mode: NodeMode::Leq, parent: None, depth: 0 }],
            leaves: vec![Some((0, true)), Some((0, false))],
        },
        thresholds: vec![-0.5],
        leaf_weights: vec![1.0, 0.0, 0.0, 1.0],
        base: vec![0.25, -0.25],
    };
    let x = [0.0, -0.5, 0.0, -1.0, 0.0, 0.0, 5.0, -0.25];
    check_both_backends(stump, &x, 4);
    let leaves = ensemble(9, 2, 3, 0, 0, 2);
    assert!(leaves.shape.nodes.is_empty());
    check_both_backends(leaves, &x, 4);
}

/// The shipped scikit-learn tree on METEOR: on all 450 held-out digits its labels are
/// onnxruntime's, its scores are the plaintext plan's exactly and onnxruntime's probabilities
/// up to the encoding, and the online communication is the cost formula's.
#[test]
fn the_shipped_tree_on_meteor_agrees_with_onnxruntime_on_its_test_set() {
    let m = import_onnx(TREE).unwrap();
    let plan = FixedPlan::<Z64>::new(&m, DEFAULT_FRAC_BITS).unwrap();
    let Some(StepShape::Trees(shape)) = plan.shape().steps.first().cloned() else {
        panic!("the tree model is one tree ensemble");
    };
    let x = digits8();
    let n = x.len() / 64;
    let xe = plan.encode_input(&x).unwrap();
    let run = secure_run::<MeteorP>(&plan, &xe, n, Output::Logits);
    assert_eq!(run.scores, plan.eval_plain(&xe, n).unwrap());
    let labels = m.class_labels.as_ref();
    let secure: Vec<i64> =
        argmax_rows(&run.scores, 10).iter().map(|&i| common::int_label(labels, i)).collect();
    let ort: Vec<i64> = json_numbers(TREE_REF, "argmax").iter().map(|&v| v as i64).collect();
    let agree = secure.iter().zip(&ort).filter(|(a, b)| a == b).count() as f64 / n as f64;
    let probs = json_numbers(TREE_REF, "probabilities");
    let worst =
        plan.decode(&run.scores).iter().zip(&probs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    let cost = (run.online_bytes, run.online_rounds);
    eprintln!(
        "tree ({} nodes): METEOR on {n} digits agrees with onnxruntime on {agree}, scores within \
         {worst}; {} B, {} rounds online per party",
        shape.nodes.len(),
        cost.0,
        cost.1
    );
    assert!(agree >= 0.995, "{agree}");
    assert!(worst < 1e-3, "{worst}");
    assert_eq!(cost, online_cost(&plan.shape(), 64, n));
    assert_eq!(cost, tree_cost(&shape, n));
}
