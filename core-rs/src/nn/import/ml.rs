//! ONNX-ML ops of the importer.

use std::collections::BTreeSet;

use super::{attr, only_attrs, str_attr, what, Chain};
use crate::nn::model::{ClassLabels, Dense, Layer};
use crate::nn::proto::NodeProto;
use crate::nn::trees::{NodeMode, TreeEnsemble, TreeNode, TreeShape};
use crate::nn::NnError;

impl Chain<'_> {
    pub(super) fn linear_classifier(&mut self, n: &NodeProto) -> Result<(), NnError> {
        only_attrs(
            n,
            &["coefficients", "intercepts", "classlabels_ints", "classlabels_strings"]
                .into_iter()
                .chain(["multi_class", "post_transform"])
                .collect::<Vec<_>>(),
        )?;
        self.act(n, 0)?;
        let labels = class_labels(n, "classlabels_ints")?;
        let coef: Vec<f64> = attr(n, "coefficients")
            .map(|a| a.floats.iter().map(|&v| f64::from(v)).collect())
            .unwrap_or_default();
        let icpt: Vec<f64> = attr(n, "intercepts")
            .map(|a| a.floats.iter().map(|&v| f64::from(v)).collect())
            .unwrap_or_default();
        let k = self.len;
        let rows = coef.len().checked_div(k).unwrap_or(0);
        if labels.len() < 2 || rows * k != coef.len() || !(icpt.is_empty() || icpt.len() == rows) {
            return Err(NnError::Shape(format!(
                "{}: {} labels, {} coefficients, {} intercepts for {k} features",
                what(n),
                labels.len(),
                coef.len(),
                icpt.len()
            )));
        }
        let icpt = if icpt.is_empty() { vec![0.0; rows] } else { icpt };
        let (weights, bias) = if rows == labels.len() {
            (coef, icpt)
        } else if rows == 1 && labels.len() == 2 {
            // Binary: class 1 iff w·x + b > 0, i.e. argmax of (−s, s) with ties to class 0.
            let neg: Vec<f64> = coef.iter().map(|v| -v).collect();
            ([neg, coef].concat(), vec![-icpt[0], icpt[0]])
        } else {
            return Err(NnError::Shape(format!(
                "{}: {rows} coefficient rows for {} classes",
                what(n),
                labels.len()
            )));
        };
        let classes = labels.len();
        self.classifier_output(
            n,
            "LinearClassifier",
            Layer::Dense(Dense { inputs: k, outputs: classes, weights, bias }),
            labels,
        )
    }
}

/// A classifier's labels: the integers of `ints` (its attribute's name differs by operator) or
/// `classlabels_strings`, whichever it has (both, or a label that is not UTF-8 or too long, is
/// refused naming it).
pub(super) fn class_labels(n: &NodeProto, ints: &str) -> Result<ClassLabels, NnError> {
    let texts = attr(n, "classlabels_strings").map_or(&[][..], |a| &a.strings[..]);
    let numbers = attr(n, ints).map(|a| a.ints.clone()).unwrap_or_default();
    let checked = |labels: ClassLabels| {
        labels.check().map_err(|e| NnError::Unsupported(format!("{}: {e}", what(n))))?;
        Ok(labels)
    };
    if texts.is_empty() {
        return checked(ClassLabels::Ints(numbers));
    }
    if !numbers.is_empty() {
        return Err(NnError::Malformed(format!(
            "{}: both {ints} and classlabels_strings",
            what(n)
        )));
    }
    let texts =
        texts
            .iter()
            .map(|t| String::from_utf8(t.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| NnError::Malformed(format!("{}: a class label is not UTF-8", what(n))))?;
    checked(ClassLabels::Strings(texts))
}

impl Chain<'_> {
    /// Ends the chain with an ONNX-ML classifier's `layer` (one score per class of `labels`):
    /// its monotone `post_transform` is left out (the argmax does not change), output 0 (the
    /// label) is the chain's label output, output 1 (the scores) its current value.
    pub(super) fn classifier_output(
        &mut self,
        n: &NodeProto,
        op: &str,
        layer: Layer,
        labels: ClassLabels,
    ) -> Result<(), NnError> {
        let classes = labels.len();
        self.layers.push(layer);
        self.len = classes;
        self.shape = vec![classes];
        self.class_labels = Some(labels);
        self.terminal = true;
        let post = str_attr(n, "post_transform").unwrap_or_else(|| "NONE".into());
        match post.as_str() {
            "NONE" => self.positive = false,
            "SOFTMAX" | "LOGISTIC" | "SOFTMAX_ZERO" => {
                self.positive = true;
                self.dropped.push(format!("{op}.post_transform={post}"));
            }
            p => return Err(NnError::Unsupported(format!("{}: post_transform {p}", what(n)))),
        }
        self.labels.extend(n.outputs.first().cloned());
        let scores = n
            .outputs
            .get(1)
            .ok_or_else(|| NnError::Malformed(format!("{}: no scores output", what(n))))?;
        self.cur = BTreeSet::from([scores.clone()]);
        Ok(())
    }
}

impl Chain<'_> {
    /// `ArrayFeatureExtractor` of a binary classifier's scores at index 1: skl2onnx's binary
    /// `LinearSVC` outputs the positive class's score `z` of the two scores `(−z, z)`. The class
    /// is the argmax of the two either way, so it is left out like an output transform.
    pub(super) fn positive_column(&mut self, n: &NodeProto) -> Result<(), NnError> {
        only_attrs(n, &[])?;
        self.act(n, 0)?;
        let idx = self.int_input(n, 1)?;
        let binary = self.class_labels.as_ref().is_some_and(|l| l.len() == 2);
        if !(binary && self.len == 2 && idx == [1]) {
            return Err(NnError::Unsupported(format!(
                "{}: selecting scores {idx:?} of {} (only the positive class's score of a \
                 binary classifier)",
                what(n),
                self.len
            )));
        }
        let pos = self.positive;
        self.output_transform(n, "ArrayFeatureExtractor(positive class)", pos)
    }
}

/// A float-list attribute, or the same list given as a tensor attribute (`<name>_as_tensor`,
/// ONNX-ML opset 3).
pub(super) fn reals_attr(n: &NodeProto, name: &str) -> Result<Vec<f64>, NnError> {
    if let Some(a) = attr(n, &format!("{name}_as_tensor")) {
        let t = a.t.as_ref().ok_or_else(|| {
            NnError::Malformed(format!("{}: {name}_as_tensor holds no tensor", what(n)))
        })?;
        return t.reals();
    }
    Ok(attr(n, name).map(|a| a.floats.iter().map(|&v| f64::from(v)).collect()).unwrap_or_default())
}

impl Chain<'_> {
    /// `LinearRegressor`: `targets` outputs `coefficients·x + intercepts` (a dense layer).
    pub(super) fn linear_regressor(&mut self, n: &NodeProto) -> Result<(), NnError> {
        only_attrs(n, &["coefficients", "intercepts", "targets", "post_transform"])?;
        self.act(n, 0)?;
        let post = str_attr(n, "post_transform").unwrap_or_else(|| "NONE".into());
        if post != "NONE" {
            return Err(NnError::Unsupported(format!("{}: post_transform {post}", what(n))));
        }
        let targets = attr(n, "targets").and_then(|a| a.i).unwrap_or(1);
        let k = self.len;
        let coef = reals_attr(n, "coefficients")?;
        let icpt = reals_attr(n, "intercepts")?;
        let m = usize::try_from(targets)
            .ok()
            .filter(|&m| m > 0 && m.checked_mul(k) == Some(coef.len()));
        let Some(m) = m.filter(|&m| icpt.is_empty() || icpt.len() == m) else {
            return Err(NnError::Shape(format!(
                "{}: {targets} targets, {} coefficients, {} intercepts for {k} features",
                what(n),
                coef.len(),
                icpt.len()
            )));
        };
        let bias = if icpt.is_empty() { vec![0.0; m] } else { icpt };
        self.layers.push(Layer::Dense(Dense { inputs: k, outputs: m, weights: coef, bias }));
        self.len = m;
        self.shape = vec![m];
        self.terminal = true;
        self.positive = false;
        self.rebind(n)
    }

    /// `SVMClassifier`, with onnxruntime's semantics. In its linear mode (one coefficient row
    /// per class, no support vectors): score_c = w_c·x + rho[0], label = the first largest
    /// score. In its SVC mode (support vectors, one-vs-one): see [`Chain::svc_votes`].
    pub(super) fn svm_classifier(&mut self, n: &NodeProto) -> Result<(), NnError> {
        only_attrs(
            n,
            &["classlabels_ints", "classlabels_strings", "coefficients", "kernel_params"]
                .into_iter()
                .chain(["kernel_type", "post_transform", "prob_a", "prob_b", "rho"])
                .chain(["support_vectors", "vectors_per_class"])
                .collect::<Vec<_>>(),
        )?;
        self.act(n, 0)?;
        let kernel = str_attr(n, "kernel_type").unwrap_or_else(|| "LINEAR".into());
        if kernel != "LINEAR" {
            return Err(NnError::Unsupported(format!(
                "{}: kernel_type {kernel} (only LINEAR: the {} kernel is not linear in the input \
                 and has no exact secure form here; scikit-learn's SVC(kernel=\"linear\") and \
                 LinearSVC export the linear one)",
                what(n),
                kernel.to_lowercase()
            )));
        }
        let labels = class_labels(n, "classlabels_ints")?;
        let coef = reals_attr(n, "coefficients")?;
        let rho = reals_attr(n, "rho")?;
        if attr(n, "vectors_per_class").is_some_and(|a| !a.ints.is_empty()) {
            return self.svc_votes(n, labels, coef, rho);
        }
        if attr(n, "prob_a").is_some_and(|a| !a.floats.is_empty()) {
            return Err(NnError::Unsupported(format!("{}: attribute prob_a (Platt)", what(n))));
        }
        let (k, classes) = (self.len, labels.len());
        if classes == 2 {
            return Err(NnError::Unsupported(format!(
                "{}: two classes (onnxruntime's binary label rule depends on the weights' signs)",
                what(n)
            )));
        }
        if classes < 2 || classes.checked_mul(k) != Some(coef.len()) || rho.is_empty() {
            return Err(NnError::Shape(format!(
                "{}: {classes} labels, {} coefficients, {} rho for {k} features",
                what(n),
                coef.len(),
                rho.len()
            )));
        }
        if rho.iter().any(|&r| r != rho[0]) {
            return Err(NnError::Unsupported(format!(
                "{}: attribute rho with one value per class (onnxruntime adds rho[0] to every \
                 class)",
                what(n)
            )));
        }
        let dense =
            Dense { inputs: k, outputs: classes, weights: coef, bias: vec![rho[0]; classes] };
        self.classifier_output(n, "SVMClassifier", Layer::Dense(dense), labels)
    }

    /// `SVMClassifier` in its SVC mode, as libsvm and scikit-learn's `SVC` decide: for every
    /// pair of classes `i < j` (in that order, `P = m(m−1)/2` pairs) the decision
    /// `d = Σ_{s of i} coef[j−1][s]·K(x, s) + Σ_{s of j} coef[i][s]·K(x, s) + rho[p]` votes
    /// for `i` when `d > 0`, else for `j`; the label is the first class with the most votes
    /// (onnxruntime's, also with two classes and with Platt's `prob_a`/`prob_b`, which change
    /// only the scores).
    ///
    /// With the linear kernel `K(x, s) = x·s` every decision is linear in `x`, so the support
    /// vectors fold into one `P`-output dense layer (`w_p = Σ coef·s`), and the votes are a
    /// tree ensemble of `P` one-node trees (`d_p > 0`: a vote for `i`, else for `j`): one
    /// comparison per pair, the scores being the vote counts. onnxruntime's scores (the
    /// decisions, Platt's probabilities, or what the graph computes from them, such as
    /// skl2onnx's one-vs-rest decision function) are not computed: that side branch builds
    /// nothing ([`super::ImportReport::score_branch`]).
    fn svc_votes(
        &mut self,
        n: &NodeProto,
        labels: ClassLabels,
        coef: Vec<f64>,
        rho: Vec<f64>,
    ) -> Result<(), NnError> {
        let per_class = attr(n, "vectors_per_class").map(|a| a.ints.clone()).unwrap_or_default();
        let sv = reals_attr(n, "support_vectors")?;
        let (k, m) = (self.len, labels.len());
        let pairs = m * m.saturating_sub(1) / 2;
        let counts: Option<Vec<usize>> =
            per_class.iter().map(|&c| usize::try_from(c).ok()).collect();
        let total =
            counts.as_ref().and_then(|c| c.iter().try_fold(0usize, |a, &v| a.checked_add(v)));
        let fits = |v: usize| {
            counts.as_ref().is_some_and(|c| c.len() == m)
                && m >= 2
                && v > 0
                && v.checked_mul(k) == Some(sv.len())
                && (m - 1).checked_mul(v) == Some(coef.len())
                && rho.len() == pairs
        };
        let (Some(counts), Some(v)) = (counts.clone(), total.filter(|&v| fits(v))) else {
            return Err(NnError::Shape(format!(
                "{}: {m} labels, vectors_per_class {per_class:?}, {} support vector values, {} \
                 coefficients, {} rho for {k} features (want m ≥ 2 counts summing to V > 0, \
                 V·{k} values, (m − 1)·V coefficients, m(m − 1)/2 rho)",
                what(n),
                sv.len(),
                coef.len(),
                rho.len()
            )));
        };
        // Platt's parameters change onnxruntime's scores, not its label (the votes').
        let pa = attr(n, "prob_a").map_or(0, |a| a.floats.len());
        let pb = attr(n, "prob_b").map_or(0, |a| a.floats.len());
        if pa != pb || !(pa == 0 || pa == pairs) {
            return Err(NnError::Shape(format!(
                "{}: {pa} prob_a and {pb} prob_b for {pairs} class pairs",
                what(n)
            )));
        }
        let start: Vec<usize> = counts
            .iter()
            .scan(0, |acc, &c| {
                let s = *acc;
                *acc += c;
                Some(s)
            })
            .collect();
        let mut weights = Vec::with_capacity(pairs * k);
        for (i, j) in (0..m).flat_map(|i| (i + 1..m).map(move |j| (i, j))) {
            let mut w = vec![0.0; k];
            // Class i's vectors weighted by coefficient row j − 1, class j's by row i.
            for (class, row) in [(i, j - 1), (j, i)] {
                for s in start[class]..start[class] + counts[class] {
                    let c = coef[row * v + s];
                    for (wf, &xf) in w.iter_mut().zip(&sv[s * k..(s + 1) * k]) {
                        *wf += c * xf;
                    }
                }
            }
            weights.extend(w);
        }
        self.layers.push(Layer::Dense(Dense { inputs: k, outputs: pairs, weights, bias: rho }));
        self.len = pairs;
        let votes = vote_stumps(m);
        self.classifier_output(n, "SVMClassifier", Layer::Trees(votes), labels)?;
        // The scores are the votes, not onnxruntime's: what reads them is not computed.
        self.scores.extend(core::mem::take(&mut self.cur));
        self.positive = true;
        Ok(())
    }
}

/// One-node trees voting over the `m(m−1)/2` decisions `d_p` of the class pairs `i < j`:
/// `d_p > 0` scores one vote for `i`, else one for `j`.
fn vote_stumps(m: usize) -> TreeEnsemble {
    let pairs: Vec<(usize, usize)> = (0..m).flat_map(|i| (i + 1..m).map(move |j| (i, j))).collect();
    let node = |p| TreeNode { feature: p, mode: NodeMode::Gt, parent: None, depth: 0 };
    let mut leaf_weights = vec![0.0; 2 * pairs.len() * m];
    let mut leaves = Vec::with_capacity(2 * pairs.len());
    for (p, &(i, j)) in pairs.iter().enumerate() {
        for (branch, class) in [(true, i), (false, j)] {
            leaf_weights[leaves.len() * m + class] = 1.0;
            leaves.push(Some((p, branch)));
        }
    }
    TreeEnsemble {
        shape: TreeShape {
            features: pairs.len(),
            classes: m,
            nodes: (0..pairs.len()).map(node).collect(),
            leaves,
        },
        thresholds: vec![0.0; pairs.len()],
        leaf_weights,
        base: vec![0.0; m],
    }
}
