//! ONNX-ML ops of the importer.

use std::collections::BTreeSet;

use super::{attr, only_attrs, str_attr, what, Chain};
use crate::nn::model::{Dense, Layer};
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
        if attr(n, "classlabels_strings").is_some() {
            return Err(NnError::Unsupported(format!("{}: string class labels", what(n))));
        }
        let labels = attr(n, "classlabels_ints").map(|a| a.ints.clone()).unwrap_or_default();
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
        self.layers.push(Layer::Dense(Dense { inputs: k, outputs: classes, weights, bias }));
        self.len = classes;
        self.shape = vec![classes];
        self.class_labels = Some(labels);
        self.terminal = true;
        let post = str_attr(n, "post_transform").unwrap_or_else(|| "NONE".into());
        match post.as_str() {
            "NONE" => self.positive = false,
            "SOFTMAX" | "LOGISTIC" | "SOFTMAX_ZERO" => {
                self.positive = true;
                self.dropped.push(format!("LinearClassifier.post_transform={post}"));
            }
            p => {
                return Err(NnError::Unsupported(format!("{}: post_transform {p}", what(n))));
            }
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
