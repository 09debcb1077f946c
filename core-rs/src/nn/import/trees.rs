//! `TreeEnsembleClassifier` (ONNX-ML) of the importer: the trees' layout becomes a public
//! [`TreeShape`]; thresholds, leaf weights and base values become secret weights.

use std::collections::{BTreeMap, BTreeSet};

use super::ml::reals_attr;
use super::{attr, only_attrs, what, Chain};
use crate::nn::model::{Dense, Layer};
use crate::nn::proto::NodeProto;
use crate::nn::trees::{NodeMode, TreeEnsemble, TreeNode, TreeShape};
use crate::nn::NnError;

/// A node to visit: attribute index, parent (node, branch) and depth.
type Visit = (usize, Option<(usize, bool)>, usize);

/// Node count above which an ensemble is refused (bounds the work a file can ask for).
const MAX_NODES: usize = 1 << 20;

impl Chain<'_> {
    pub(super) fn tree_classifier(&mut self, n: &NodeProto) -> Result<(), NnError> {
        let allowed = [
            "base_values",
            "base_values_as_tensor",
            "class_ids",
            "class_nodeids",
            "class_treeids",
            "class_weights",
            "class_weights_as_tensor",
            "classlabels_int64s",
            "classlabels_strings",
            "nodes_falsenodeids",
            "nodes_featureids",
            "nodes_hitrates",
            "nodes_hitrates_as_tensor",
            "nodes_missing_value_tracks_true",
            "nodes_modes",
            "nodes_nodeids",
            "nodes_treeids",
            "nodes_truenodeids",
            "nodes_values",
            "nodes_values_as_tensor",
            "post_transform",
        ];
        only_attrs(n, &allowed)?;
        self.act(n, 0)?;
        let bad = |why: String| NnError::Shape(format!("{}: {why}", what(n)));
        let labels = super::ml::class_labels(n, "classlabels_int64s")?;
        let ints = |name: &str| attr(n, name).map(|a| a.ints.clone()).unwrap_or_default();
        let binary = Binary::of(n, labels.len(), &ints("class_ids"))?;
        let (tree_ids, node_ids) = (ints("nodes_treeids"), ints("nodes_nodeids"));
        let (features, trues, falses) =
            (ints("nodes_featureids"), ints("nodes_truenodeids"), ints("nodes_falsenodeids"));
        let modes: Vec<String> = attr(n, "nodes_modes")
            .map(|a| a.strings.iter().map(|s| String::from_utf8_lossy(s).into_owned()).collect())
            .unwrap_or_default();
        let values = reals_attr(n, "nodes_values")?;
        let count = tree_ids.len();
        if count == 0
            || count > MAX_NODES
            || [node_ids.len(), features.len(), trues.len(), falses.len(), modes.len()]
                .iter()
                .any(|&l| l != count)
            || !(values.is_empty() || values.len() == count)
        {
            return Err(bad(format!("{count} nodes with node attributes of unequal lengths")));
        }
        // (tree, node id) -> position in the attribute arrays.
        let mut at = BTreeMap::new();
        for i in 0..count {
            if at.insert((tree_ids[i], node_ids[i]), i).is_some() {
                return Err(bad(format!("node {} of tree {} twice", node_ids[i], tree_ids[i])));
            }
        }
        let mut is_child = BTreeSet::new();
        for i in 0..count {
            if modes[i] != "LEAF" {
                for c in [trues[i], falses[i]] {
                    if !at.contains_key(&(tree_ids[i], c)) {
                        return Err(bad(format!(
                            "node {} points to missing node {c}",
                            node_ids[i]
                        )));
                    }
                    is_child.insert((tree_ids[i], c));
                }
            }
        }
        let k = self.len;
        // The trees' sums: one per class, or the binary rule's single score.
        let classes = if binary.is_some() { 1 } else { labels.len() };
        let mut shape = TreeShape { features: k, classes, nodes: Vec::new(), leaves: Vec::new() };
        let mut thresholds = Vec::new();
        // Leaf position in `shape.leaves` by attribute index.
        let mut leaf_of = BTreeMap::new();
        let roots: Vec<usize> =
            (0..count).filter(|&i| !is_child.contains(&(tree_ids[i], node_ids[i]))).collect();
        let trees: BTreeSet<i64> = tree_ids.iter().copied().collect();
        if roots.len() != trees.len() {
            return Err(bad(format!("{} roots for {} trees", roots.len(), trees.len())));
        }
        // Breadth-first from every root: parents come before children, depth by depth.
        let mut queue: std::collections::VecDeque<Visit> =
            roots.iter().map(|&r| (r, None, 0)).collect();
        let mut seen = vec![false; count];
        while let Some((i, parent, depth)) = queue.pop_front() {
            if std::mem::replace(&mut seen[i], true) {
                return Err(bad(format!(
                    "node {} of tree {} reached twice",
                    node_ids[i], tree_ids[i]
                )));
            }
            let mode = match modes[i].as_str() {
                "LEAF" => {
                    leaf_of.insert(i, shape.leaves.len());
                    shape.leaves.push(parent);
                    continue;
                }
                "BRANCH_LT" => NodeMode::Lt,
                "BRANCH_LEQ" => NodeMode::Leq,
                "BRANCH_GT" => NodeMode::Gt,
                "BRANCH_GTE" => NodeMode::Gte,
                m => {
                    return Err(NnError::Unsupported(format!("{}: node mode {m}", what(n))));
                }
            };
            let feature =
                usize::try_from(features[i]).ok().filter(|&f| f < k).ok_or_else(|| {
                    bad(format!("node {} tests feature {} of {k}", node_ids[i], features[i]))
                })?;
            let me = shape.nodes.len();
            shape.nodes.push(TreeNode { feature, mode, parent, depth });
            thresholds.push(values.get(i).copied().unwrap_or(0.0));
            for (c, br) in [(trues[i], true), (falses[i], false)] {
                // Presence checked above.
                let ci = at.get(&(tree_ids[i], c)).copied().unwrap_or(i);
                queue.push_back((ci, Some((me, br)), depth + 1));
            }
        }
        if seen.iter().any(|s| !s) {
            return Err(bad("nodes unreachable from their tree's root".into()));
        }
        // Leaf weights.
        let (ctree, cnode, cid) = (ints("class_treeids"), ints("class_nodeids"), ints("class_ids"));
        let cw = reals_attr(n, "class_weights")?;
        if [cnode.len(), cid.len(), cw.len()].iter().any(|&l| l != ctree.len()) {
            return Err(bad("class_* attributes of unequal lengths".into()));
        }
        let mut leaf_weights = vec![0.0; shape.leaves.len() * classes];
        for j in 0..ctree.len() {
            let leaf = at.get(&(ctree[j], cnode[j])).and_then(|i| leaf_of.get(i));
            let class = match binary {
                Some(_) => Some(0),
                None => usize::try_from(cid[j]).ok().filter(|&c| c < classes),
            };
            match (leaf, class) {
                (Some(&l), Some(c)) => leaf_weights[l * classes + c] += cw[j],
                _ => {
                    return Err(bad(format!(
                        "class weight for node {} of tree {}, class {}: no such leaf or class",
                        cnode[j], ctree[j], cid[j]
                    )))
                }
            }
        }
        let base = reals_attr(n, "base_values")?;
        let base = match (binary, base.len()) {
            (None, 0) => vec![0.0; classes],
            (None, l) if l == classes => base,
            (Some(b), _) => vec![b.base(n, &base)?],
            (None, l) => return Err(bad(format!("{l} base values for {classes} classes"))),
        };
        let trees = Layer::Trees(TreeEnsemble { shape, thresholds, leaf_weights, base });
        let Some(b) = binary else {
            return self.classifier_output(n, "TreeEnsembleClassifier", trees, labels);
        };
        // Two scores (t − s, s − t) whose argmax is class 1 exactly when s > t.
        self.layers.push(trees);
        let t = b.threshold(&cw);
        let dense = Dense { inputs: 1, outputs: 2, weights: vec![-1.0, 1.0], bias: vec![t, -t] };
        self.classifier_output(n, "TreeEnsembleClassifier", Layer::Dense(dense), labels)?;
        // The two scores are signed whatever the post-transform.
        self.positive = false;
        Ok(())
    }
}

/// onnxruntime's rule for a two-class ensemble whose weights all vote for one class `class`
/// (LightGBM's and XGBoost's binary exports, through onnxmltools): one score `s`, the trees'
/// sum (plus `base_values[0]` when that class is 0, as onnxruntime adds it), and the label
/// is class 1 exactly when `s > t`, `t` = 0.5 when every weight is non-negative (summed
/// probabilities) and 0 otherwise (margins). Applied before the post-transform, which is
/// monotone.
#[derive(Debug, Clone, Copy)]
struct Binary {
    class: i64,
}

impl Binary {
    /// The rule for an ensemble of `classes` classes whose weights vote for `ids`; `None` for
    /// three classes or more. Two classes both voted for follow another onnxruntime rule
    /// (the label is 1 when the second score is positive, whatever the labels): refused.
    fn of(n: &NodeProto, classes: usize, ids: &[i64]) -> Result<Option<Self>, NnError> {
        let voted: BTreeSet<i64> = ids.iter().copied().collect();
        match (classes, voted.len()) {
            (3.., _) => Ok(None),
            (2, 1) => match voted.first() {
                Some(&class @ (0 | 1)) => Ok(Some(Self { class })),
                c => Err(NnError::Shape(format!("{}: weights for class {c:?} of 2", what(n)))),
            },
            _ => Err(NnError::Unsupported(format!(
                "{}: {classes} classes with weights for {} of them (two classes are taken \
                 with weights for one, as LightGBM and XGBoost write them; otherwise 3 or more \
                 classes)",
                what(n),
                voted.len()
            ))),
        }
    }

    /// The score's base value from `base_values`, as onnxruntime adds it.
    fn base(self, n: &NodeProto, base: &[f64]) -> Result<f64, NnError> {
        match (self.class, base) {
            (_, []) => Ok(0.0),
            (0, [b] | [b, _]) => Ok(*b),
            // onnxruntime ignores a single base value when class 1 is voted for.
            (1, [_]) => Ok(0.0),
            _ => Err(NnError::Unsupported(format!(
                "{}: {} base values with the weights for class {} (onnxruntime then drops \
                 the trees' votes)",
                what(n),
                base.len(),
                self.class
            ))),
        }
    }

    /// The threshold `t` of the rule for these weights.
    fn threshold(self, weights: &[f64]) -> f64 {
        if weights.iter().all(|&w| w >= 0.0) {
            0.5
        } else {
            0.0
        }
    }
}
