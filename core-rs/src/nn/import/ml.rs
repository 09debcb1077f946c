//! ONNX-ML ops of the importer.

use std::collections::BTreeSet;

use super::{attr, only_attrs, str_attr, what, Chain};
use crate::nn::model::{ClassLabels, Dense, Layer};
use crate::nn::proto::NodeProto;
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

    /// `SVMClassifier` in its linear mode (one coefficient row per class, no support vectors),
    /// with onnxruntime's semantics: score_c = w_c·x + rho[0], label = the first largest score.
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
                "{}: kernel_type {kernel} (only LINEAR)",
                what(n)
            )));
        }
        if attr(n, "vectors_per_class").is_some_and(|a| !a.ints.is_empty())
            || attr(n, "support_vectors").is_some_and(|a| !a.floats.is_empty())
        {
            return Err(NnError::Unsupported(format!(
                "{}: support vectors (one-vs-one voting mode); only the linear mode with one \
                 coefficient row per class",
                what(n)
            )));
        }
        if attr(n, "prob_a").is_some_and(|a| !a.floats.is_empty()) {
            return Err(NnError::Unsupported(format!("{}: attribute prob_a (Platt)", what(n))));
        }
        let labels = class_labels(n, "classlabels_ints")?;
        let coef = reals_attr(n, "coefficients")?;
        let rho = reals_attr(n, "rho")?;
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
}
