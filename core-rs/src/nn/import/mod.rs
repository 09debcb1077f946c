//! The ONNX importer: maps a graph of supported ops to a [`Model`].
//!
//! Supported (domain `ai.onnx`, opsets 7–22): `Gemm` (alpha and beta folded, `transB`),
//! `MatMul` by a constant, `Add` of a constant right after a linear layer (folded into the bias),
//! `Conv` (2-D, any `group` that divides the channels, no dilation, explicit pads), `MaxPool`
//! (2-D, no padding, floor mode), `AveragePool` (likewise) and `GlobalAveragePool`,
//! `BatchNormalization` (inference; folded into a directly preceding Conv/Gemm/MatMul, else a
//! per-channel affine layer), `Relu`, `Flatten` (axis 1), `Reshape` keeping the batch axis,
//! `Identity`, `Dropout` (inference), and at the end `Softmax`, `LogSoftmax`, `Sigmoid`, `Tanh`
//! (a single score before them becomes the two columns `(−z, z)`) and `ArgMax`; `Sigmoid` and
//! `Tanh` that a layer reads, `LeakyRelu`, `HardSigmoid` and a float `Clip` are piecewise-linear
//! layers ([`crate::nn::spline`]). Domain
//! `ai.onnx.ml`: `LinearClassifier` (multinomial, or binary with one coefficient row),
//! `LinearRegressor`, `SVMClassifier` (linear kernel: one coefficient row per class, or support
//! vectors and one-vs-one votes), `TreeEnsembleClassifier`, and `Normalizer` after a probability
//! transform; `ReduceMean` over the last axes (an average pool). Every op reads the running activation, except that a value
//! read again later is kept and an `Add` of two activations joins two branches (residual
//! connections, `graph.rs`). Anything else is an [`NnError::Unsupported`] naming the op,
//! attribute or shape.
//!
//! What exporters compute from constants and static shapes is folded as it is read
//! (`fold.rs`): `Constant`, `Shape` of the running activation (the batch size kept symbolic),
//! `Gather`, `Unsqueeze`, `Squeeze`, `Concat`, `Slice`, integer `Cast`, `ConstantOfShape` and
//! integer arithmetic — PyTorch's `x.view(x.size(0), -1)` becomes a `Reshape` to
//! `[batch, -1]`. A `Reshape` to a literal batch of 1 keeps the batch axis when the graph's
//! input has a batch axis of 1 (exporters that trace static shapes write it).
//!
//! What scikit-learn's exporter adds at its default settings is read too: the class label's
//! side branch (any node whose inputs are labels and constants: `Cast`, `ArrayFeatureExtractor`
//! of the classes, `Reshape`) builds nothing, `ZipMap` is an output transform like `Softmax`, a
//! `Cast` of the float activation to float is an identity, and a pipeline's `Scaler` is a
//! per-feature affine layer.

use std::collections::{BTreeMap, BTreeSet};

use super::model::{ClassLabels, Dense, InputRange, Layer, Model, Spline, INPUT_RANGE_KEY};
use super::proto::{self, Attribute, Dim, NodeProto, TensorProto};
use super::NnError;

mod fold;
mod graph;
mod ml;
mod norm;
mod quant;
mod trees;
mod window;

/// Imports a serialized ONNX `ModelProto`.
///
/// ```
/// use ringfence_core::nn::import_onnx;
/// assert!(import_onnx(b"\x08\x07\x3a\xff").is_err()); // a graph field running past the end
/// ```
pub fn import_onnx(bytes: &[u8]) -> Result<Model, NnError> {
    import_onnx_report(bytes).map(|(m, _)| m)
}

/// What the importer did with the graph's nodes besides building layers (op types, in graph
/// order), as `ringfence model inspect` prints it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportReport {
    /// Computed from constants and static shapes while the file was read.
    pub folded: Vec<String>,
    /// The class label's side branch: nothing built.
    pub label_branch: Vec<String>,
    /// The scores' side branch of a classifier whose scores the model replaces (an SVC's
    /// pairwise decisions and what the graph computes from them; the model's scores are the
    /// decisions' votes, which give the class): nothing built.
    pub score_branch: Vec<String>,
    /// Only rename or reshape the activation (`Identity`, `Dropout`, `Cast`, `Flatten`,
    /// `Reshape`): nothing built.
    pub views: Vec<String>,
    /// Merged into the layer before (a `BatchNormalization` into a convolution, an `Add` into a
    /// bias, consecutive affine operations into one).
    pub merged: Vec<String>,
}

impl ImportReport {
    /// One line per non-empty list, keyed `folded`, `labels`, `scores`, `views`, `merged`:
    /// `("folded", "Shape, Gather ×2, Concat")`, op types counted.
    pub fn lines(&self) -> Vec<(&'static str, String)> {
        let count = |ops: &[String]| {
            let mut seen: Vec<(&str, usize)> = Vec::new();
            for o in ops {
                match seen.iter_mut().find(|(s, _)| s == o) {
                    Some((_, k)) => *k += 1,
                    None => seen.push((o, 1)),
                }
            }
            let each =
                seen.iter().map(|(o, k)| if *k > 1 { format!("{o} ×{k}") } else { o.to_string() });
            each.collect::<Vec<_>>().join(", ")
        };
        [
            ("folded", &self.folded),
            ("labels", &self.label_branch),
            ("scores", &self.score_branch),
            ("views", &self.views),
            ("merged", &self.merged),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (k, count(v)))
        .collect()
    }
}

/// [`import_onnx`], with what the importer did with the nodes that built no layer.
///
/// ```
/// use ringfence_core::nn::import_onnx_report;
/// assert!(import_onnx_report(b"").is_err());
/// ```
pub fn import_onnx_report(bytes: &[u8]) -> Result<(Model, ImportReport), NnError> {
    let m = proto::decode_model(bytes)?;
    if m.opsets.is_empty() {
        return Err(NnError::Malformed("model declares no opset_import".into()));
    }
    for (domain, version) in &m.opsets {
        match domain.as_str() {
            "" | "ai.onnx" if !(7..=22).contains(version) => {
                return Err(NnError::Unsupported(format!("opset ai.onnx version {version}")))
            }
            "" | "ai.onnx" | "ai.onnx.ml" | "com.microsoft" => {}
            d => return Err(NnError::Unsupported(format!("opset domain {d:?}"))),
        }
    }
    let input_range = match m.metadata.iter().find(|(k, _)| k == INPUT_RANGE_KEY) {
        Some((_, v)) => Some(InputRange::parse(v).ok_or_else(|| {
            NnError::Malformed(format!("metadata {INPUT_RANGE_KEY} = {v:?}: expected \"MIN,MAX\""))
        })?),
        None => None,
    };
    let g = m.graph.ok_or_else(|| NnError::Malformed("model has no graph".into()))?;
    if g.has_sparse_initializers {
        return Err(NnError::Unsupported("sparse initializers".into()));
    }
    let consts: BTreeMap<&str, &TensorProto> =
        g.initializers.iter().map(|t| (t.name.as_str(), t)).collect();
    let inputs: Vec<_> =
        g.inputs.iter().filter(|i| !consts.contains_key(i.name.as_str())).collect();
    let [input] = inputs[..] else {
        return Err(NnError::Unsupported(format!(
            "{} graph inputs (exactly one is supported)",
            inputs.len()
        )));
    };
    // A double input (skl2onnx's `to_onnx` with a float64 sample) is taken as reals like a
    // float one: the parties compute in fixed point either way.
    let real = [proto::dtype::FLOAT, proto::dtype::DOUBLE].map(Some);
    if input.non_tensor || !real.contains(&input.elem_type) {
        return Err(NnError::Unsupported(format!(
            "input {:?} of {} (float or double tensors only)",
            input.name,
            proto::dtype::name(input.elem_type)
        )));
    }
    let dims = input.shape.as_deref().unwrap_or_default();
    if dims.len() < 2 {
        return Err(NnError::Shape(format!(
            "input {:?} has rank {} (need a batch axis and at least one more)",
            input.name,
            dims.len()
        )));
    }
    let input_shape = dims[1..]
        .iter()
        .map(|d| match d {
            Dim::Value(v) if *v > 0 => usize::try_from(*v).ok(),
            _ => None,
        })
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| {
            NnError::Shape(format!("input {:?}: dims {:?} must be known", input.name, &dims[1..]))
        })?;
    let len = input_shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    let len = len.filter(|&n| n <= crate::nn::geom::MAX_LAYER_VALUES).ok_or_else(|| {
        NnError::Shape(format!(
            "input {:?}: dims {input_shape:?} hold more than {} values per sample",
            input.name,
            crate::nn::geom::MAX_LAYER_VALUES
        ))
    })?;

    let mut st = Chain {
        consts,
        cur: BTreeSet::from([input.name.clone()]),
        labels: BTreeSet::new(),
        scores: BTreeSet::new(),
        len,
        shape: input_shape.clone(),
        layers: Vec::new(),
        class_labels: None,
        dropped: Vec::new(),
        terminal: false,
        positive: false,
        fresh_linear: false,
        quant: quant::Quant::default(),
        folded: fold::Values::new(),
        tensors: BTreeMap::new(),
        affine_out: None,
        batch_one: matches!(dims.first(), Some(Dim::Value(1))),
        uses: graph::reads(&g.nodes),
        readers: graph::readers(&g.nodes),
        kept: BTreeMap::new(),
        report: ImportReport::default(),
    };
    for n in &g.nodes {
        st.node(n)?;
    }
    st.finish_quantized()?;
    for o in &g.outputs {
        if ![&st.cur, &st.labels, &st.scores].iter().any(|s| s.contains(&o.name)) {
            return Err(NnError::Unsupported(format!(
                "graph output {:?} is not computed by the supported chain",
                o.name
            )));
        }
    }
    let model = Model {
        input_name: input.name.clone(),
        input_shape,
        layers: st.layers,
        class_labels: st.class_labels,
        dropped_transforms: st.dropped,
        input_range,
    };
    Ok((model, st.report))
}

/// Import state: the names bound to the running activation and what has been built.
struct Chain<'g> {
    consts: BTreeMap<&'g str, &'g TensorProto>,
    cur: BTreeSet<String>,
    labels: BTreeSet<String>,
    /// Values on a classifier's score side branch (see [`ImportReport::score_branch`]).
    scores: BTreeSet<String>,
    len: usize,
    /// Per-sample shape of the running activation (product `len`).
    shape: Vec<usize>,
    layers: Vec<Layer>,
    class_labels: Option<ClassLabels>,
    dropped: Vec<String>,
    /// An output transform was seen: only more output transforms may follow.
    terminal: bool,
    /// The running activation is known to be positive (after a probability transform).
    positive: bool,
    /// The running activation is the direct output of the last layer, a Dense or Conv (a
    /// BatchNormalization here folds into it).
    fresh_linear: bool,
    /// A quantized model's state (`quant.rs`).
    quant: quant::Quant,
    /// Values folded from constants and static shapes (`fold.rs`), and those of them that are
    /// plain tensors, for the layers that read constants.
    folded: fold::Values,
    tensors: BTreeMap<String, TensorProto>,
    /// The activation an affine layer made by [`Chain::elementwise`] computed (the next one
    /// merges into it while it is still the running activation).
    affine_out: Option<String>,
    /// The graph's input has a batch axis of 1 (exporters that trace static shapes write
    /// reshapes to a literal batch of 1).
    batch_one: bool,
    /// Reads of each value by the nodes not read yet (`graph.rs`).
    uses: BTreeMap<String, usize>,
    /// The nodes that read each value (`graph.rs`).
    readers: BTreeMap<&'g str, Vec<&'g NodeProto>>,
    /// Values held in registers for later readers, by name (`graph.rs`).
    kept: BTreeMap<String, graph::Kept>,
    /// What became of the nodes that built no layer.
    report: ImportReport,
}

fn what(n: &NodeProto) -> String {
    if n.name.is_empty() {
        n.op_type.clone()
    } else {
        format!("{} ({:?})", n.op_type, n.name)
    }
}

fn attr<'n>(n: &'n NodeProto, name: &str) -> Option<&'n Attribute> {
    n.attributes.iter().find(|a| a.name == name)
}

fn int_attr(n: &NodeProto, name: &str, default: i64) -> i64 {
    attr(n, name).and_then(|a| a.i).unwrap_or(default)
}

fn str_attr(n: &NodeProto, name: &str) -> Option<String> {
    attr(n, name).and_then(|a| a.s.as_ref()).map(|s| String::from_utf8_lossy(s).into_owned())
}

/// Fails on any attribute outside `allowed`, and on an attribute given twice.
fn only_attrs(n: &NodeProto, allowed: &[&str]) -> Result<(), NnError> {
    if let Some(a) = n.attributes.iter().find(|a| !allowed.contains(&a.name.as_str())) {
        return Err(NnError::Unsupported(format!("{}: attribute {:?}", what(n), a.name)));
    }
    let mut seen = BTreeSet::new();
    match n.attributes.iter().find(|a| !seen.insert(a.name.as_str())) {
        Some(a) => Err(NnError::Malformed(format!("{}: attribute {:?} twice", what(n), a.name))),
        None => Ok(()),
    }
}

impl Chain<'_> {
    fn node(&mut self, n: &NodeProto) -> Result<(), NnError> {
        self.count_reads(n);
        let op = n.op_type.clone();
        if self.fold(n)? {
            self.report.folded.push(op);
            return Ok(());
        }
        if self.side_branch(n) {
            return Ok(());
        }
        let built = |c: &Self| c.layers.iter().filter(|l| !matches!(l, Layer::Register(_))).count();
        let before = (built(self), self.dropped.len(), self.labels.len());
        if self.route(n)? {
            return Ok(());
        }
        self.layer(n)?;
        if (built(self), self.dropped.len(), self.labels.len()) == before {
            match op.as_str() {
                "Identity" | "Dropout" | "Cast" | "Flatten" | "Reshape" => {
                    self.report.views.push(op)
                }
                _ => self.report.merged.push(op),
            }
        }
        Ok(())
    }

    /// Reads `n` as a layer (or a part of one, or an output transform).
    fn layer(&mut self, n: &NodeProto) -> Result<(), NnError> {
        let op = (n.domain.as_str(), n.op_type.as_str());
        let linear = matches!(
            op,
            (
                "" | "ai.onnx",
                "Gemm"
                    | "MatMul"
                    | "Add"
                    | "Relu"
                    | "Conv"
                    | "MaxPool"
                    | "AveragePool"
                    | "GlobalAveragePool"
                    | "BatchNormalization"
                    | "QLinearConv"
                    | "QLinearMatMul"
            )
        ) || matches!(op, ("com.microsoft", "QGemm" | "QLinearGlobalAveragePool"))
            || matches!(
                op,
                (
                    "ai.onnx.ml",
                    "LinearClassifier"
                        | "LinearRegressor"
                        | "SVMClassifier"
                        | "TreeEnsembleClassifier"
                )
            );
        if self.terminal && linear {
            let last = self.dropped.last().map_or("ArgMax or a classifier", String::as_str);
            return Err(NnError::Unsupported(format!(
                "{} after an output transform ({last}): it is taken only at the output, where it \
                 does not change the class, not inside the network",
                what(n)
            )));
        }
        let fresh = core::mem::replace(&mut self.fresh_linear, false);
        if self.quantized()
            && matches!(
                op.1,
                "Gemm" | "MatMul" | "Conv" | "QLinearConv" | "QLinearMatMul" | "QGemm"
            )
        {
            self.flush_clip(n)?;
        }
        match op {
            ("" | "ai.onnx", "Gemm" | "MatMul" | "Conv") if self.quantized() => {
                match op.1 {
                    "Gemm" => self.gemm(n)?,
                    "MatMul" => self.matmul(n)?,
                    _ => self.conv(n)?,
                }
                self.integer_layer(n, 1)
            }
            ("" | "ai.onnx", "Gemm") => self.gemm(n),
            ("" | "ai.onnx", "MatMul") => self.matmul(n),
            ("" | "ai.onnx", "Conv") => self.conv(n),
            ("" | "ai.onnx", "QuantizeLinear") => self.quantize_linear(n),
            ("" | "ai.onnx", "DequantizeLinear") => self.dequantize_linear(n),
            ("" | "ai.onnx", "QLinearConv") => self.qlinear_conv(n),
            ("" | "ai.onnx", "QLinearMatMul") => self.qlinear_matmul(n),
            ("com.microsoft", "QGemm") => self.qgemm(n),
            ("com.microsoft", "QLinearGlobalAveragePool") => self.qlinear_global_pool(n),
            ("" | "ai.onnx", "Clip") => self.clip(n),
            ("" | "ai.onnx", "Relu") if self.quantized() => {
                only_attrs(n, &[])?;
                self.quantized_clip(n, 0.0, f64::INFINITY)
            }
            ("" | "ai.onnx", "MaxPool") => self.maxpool(n),
            ("" | "ai.onnx", "AveragePool" | "GlobalAveragePool") if self.quantized() => {
                self.avgpool(n, op.1 == "GlobalAveragePool")?;
                self.averaged();
                Ok(())
            }
            ("" | "ai.onnx", "AveragePool") => self.avgpool(n, false),
            ("" | "ai.onnx", "GlobalAveragePool") => self.avgpool(n, true),
            ("" | "ai.onnx", "BatchNormalization") if self.quantized() => {
                Err(NnError::Unsupported(format!(
                    "{}: BatchNormalization in a quantized model (fold it into the layer before \
                     quantizing, as onnxruntime's tool does)",
                    what(n)
                )))
            }
            ("" | "ai.onnx", "BatchNormalization") => self.batch_norm(n, fresh),
            ("" | "ai.onnx", "Add") if self.quantized() => {
                self.quantized_add(n)?;
                self.fresh_linear = fresh;
                Ok(())
            }
            ("" | "ai.onnx", "Add")
                if fresh && matches!(self.layers.last(), Some(Layer::Dense(_))) =>
            {
                self.add(n)?;
                self.fresh_linear = fresh;
                Ok(())
            }
            ("" | "ai.onnx", "Add" | "Sub" | "Mul" | "Div") => self.elementwise(n),
            ("" | "ai.onnx", "Relu") => {
                only_attrs(n, &[])?;
                self.act(n, 0)?;
                self.layers.push(Layer::Relu);
                self.rebind(n)
            }
            ("" | "ai.onnx", "Flatten") => {
                only_attrs(n, &["axis"])?;
                if int_attr(n, "axis", 1) != 1 {
                    return Err(NnError::Unsupported(format!("{}: axis != 1", what(n))));
                }
                self.act(n, 0)?;
                self.shape = vec![self.len];
                self.rebind(n)
            }
            ("" | "ai.onnx", "Reshape") => self.reshape(n),
            ("" | "ai.onnx", "Identity" | "Dropout") => {
                only_attrs(n, &["seed", "ratio"])?;
                self.act(n, 0)?;
                self.fresh_linear = fresh;
                self.alias(n)
            }
            ("" | "ai.onnx", "ReduceMean") => self.reduce_mean(n),
            ("" | "ai.onnx", "Softmax") => {
                only_attrs(n, &["axis"])?;
                if !matches!(int_attr(n, "axis", -1), 1 | -1) {
                    return Err(NnError::Unsupported(format!("{}: axis not the last", what(n))));
                }
                self.act(n, 0)?;
                self.output_transform(n, "Softmax", true)
            }
            ("" | "ai.onnx", "Sigmoid" | "Tanh")
                if n.outputs.iter().any(|o| self.read_by_a_layer(o)) =>
            {
                only_attrs(n, &[])?;
                let s = if op.1 == "Sigmoid" { Spline::sigmoid() } else { Spline::tanh() };
                self.activation(n, s)
            }
            ("" | "ai.onnx", "LeakyRelu") => {
                only_attrs(n, &["alpha"])?;
                let alpha = attr(n, "alpha").and_then(|a| a.f).map_or(0.01, f64::from);
                self.activation(n, Spline::leaky_relu(alpha))
            }
            ("" | "ai.onnx", "HardSigmoid") => {
                only_attrs(n, &["alpha", "beta"])?;
                let alpha = attr(n, "alpha").and_then(|a| a.f).map_or(0.2, f64::from);
                let beta = attr(n, "beta").and_then(|a| a.f).map_or(0.5, f64::from);
                let s = Spline::hard_sigmoid(alpha, beta).ok_or_else(|| {
                    NnError::Unsupported(format!("{}: alpha {alpha} (must be positive)", what(n)))
                })?;
                self.activation(n, s)
            }
            ("" | "ai.onnx", "Sigmoid" | "Tanh" | "LogSoftmax") => {
                only_attrs(n, &["axis"])?;
                if op.1 == "LogSoftmax" && !matches!(int_attr(n, "axis", -1), 1 | -1) {
                    return Err(NnError::Unsupported(format!("{}: axis not the last", what(n))));
                }
                self.act(n, 0)?;
                if self.len == 1 && op.1 != "LogSoftmax" {
                    self.single_score(n, fresh)?;
                }
                self.output_transform(n, op.1, op.1 == "Sigmoid")
            }
            ("" | "ai.onnx", "ArgMax") => {
                only_attrs(n, &["axis", "keepdims", "select_last_index"])?;
                if !matches!(int_attr(n, "axis", 0), 1 | -1)
                    || int_attr(n, "select_last_index", 0) != 0
                {
                    return Err(NnError::Unsupported(format!(
                        "{}: only axis 1 with select_last_index 0",
                        what(n)
                    )));
                }
                self.act(n, 0)?;
                self.terminal = true;
                self.labels.extend(n.outputs.iter().cloned());
                Ok(())
            }
            ("ai.onnx.ml", "LinearClassifier") => self.linear_classifier(n),
            ("ai.onnx.ml", "LinearRegressor") => self.linear_regressor(n),
            ("ai.onnx.ml", "SVMClassifier") => self.svm_classifier(n),
            ("ai.onnx.ml", "TreeEnsembleClassifier") => self.tree_classifier(n),
            ("ai.onnx.ml", "Scaler") => self.scaler(n),
            ("ai.onnx.ml", "ArrayFeatureExtractor") => self.positive_column(n),
            ("" | "ai.onnx", "Cast") => {
                // skl2onnx casts its input to float or double: an identity (the parties
                // compute in fixed point). Casts of the label side branch never reach here.
                only_attrs(n, &["to", "saturate", "round_mode"])?;
                self.act(n, 0)?;
                let to = i32::try_from(int_attr(n, "to", 0)).ok();
                if !matches!(to, Some(proto::dtype::FLOAT | proto::dtype::DOUBLE)) {
                    return Err(NnError::Unsupported(format!(
                        "{}: a cast of the activation to {} (only to float or double)",
                        what(n),
                        proto::dtype::name(to)
                    )));
                }
                self.fresh_linear = fresh;
                self.alias(n)
            }
            ("ai.onnx.ml", "ZipMap") => {
                // The probabilities as a sequence of maps from label to score (skl2onnx's
                // default output): the same scores, relabelled.
                only_attrs(n, &["classlabels_int64s", "classlabels_strings"])?;
                self.act(n, 0)?;
                let pos = self.positive;
                self.output_transform(n, "ZipMap", pos)
            }
            ("ai.onnx.ml", "Normalizer") => {
                only_attrs(n, &["norm"])?;
                self.act(n, 0)?;
                if !self.positive {
                    return Err(NnError::Unsupported(format!(
                        "{} on scores that may be negative (not argmax-preserving)",
                        what(n)
                    )));
                }
                let norm = str_attr(n, "norm").unwrap_or_default();
                self.output_transform(n, &format!("Normalizer({norm})"), true)
            }
            (d, o) => Err(NnError::Unsupported(format!(
                "op {o}{}{}",
                if d.is_empty() { String::new() } else { format!(" (domain {d})") },
                if n.name.is_empty() { String::new() } else { format!(" in node {:?}", n.name) }
            ))),
        }
    }

    /// A node on the class label's side branch (every input a label, a constant or folded, at
    /// least one a label: skl2onnx's `ArrayFeatureExtractor` of the classes, `Cast`, `Reshape`
    /// of the label): its outputs are labels too, and nothing is built. Likewise on the score
    /// side branch (inputs from it, constants or folded; labels may join it): reported there.
    fn side_branch(&mut self, n: &NodeProto) -> bool {
        let inputs = n.inputs.iter().filter(|i| !i.is_empty());
        let (mut any_label, mut any_score) = (false, false);
        for i in inputs {
            if self.labels.contains(i) {
                any_label = true;
            } else if self.scores.contains(i) {
                any_score = true;
            } else if !(self.consts.contains_key(i.as_str()) || self.folded.contains_key(i)) {
                return false;
            }
        }
        if any_score {
            self.scores.extend(n.outputs.iter().cloned());
            self.report.score_branch.push(n.op_type.clone());
        } else if any_label {
            self.labels.extend(n.outputs.iter().cloned());
            self.report.label_branch.push(n.op_type.clone());
            if n.op_type == "ArrayFeatureExtractor" && self.class_labels.is_none() {
                self.class_labels = n.inputs.first().and_then(|c| self.classes_tensor(c));
            }
        }
        any_label || any_score
    }

    /// The class labels of a network's label branch: the constant `name` that skl2onnx's
    /// `ArrayFeatureExtractor` indexes by the argmax (an MLP's `classes_`, int64 or text), if
    /// it names every score; else the answer stays the index.
    fn classes_tensor(&self, name: &str) -> Option<ClassLabels> {
        let t = self.consts.get(name)?;
        let labels = match t.data_type {
            proto::dtype::INT64 => ClassLabels::Ints(t.ints().ok()?),
            proto::dtype::STRING => ClassLabels::Strings(
                t.string_data
                    .iter()
                    .map(|b| String::from_utf8(b.clone()).ok())
                    .collect::<Option<_>>()?,
            ),
            _ => return None,
        };
        (labels.len() == self.len && labels.check().is_ok()).then_some(labels)
    }

    /// A binary classifier's single score `z` before a `Sigmoid` or `Tanh` (class 1 iff the
    /// transform is above its midpoint, i.e. `z > 0`): the layer that computes it gets a second
    /// output, `(−z, z)`, so that the argmax of the two is the class (ties to class 0).
    fn single_score(&mut self, n: &NodeProto, fresh: bool) -> Result<(), NnError> {
        match self.layers.last_mut() {
            Some(Layer::Dense(d)) if fresh && d.outputs == 1 => {
                let neg: Vec<f64> = d.weights.iter().map(|w| -w).collect();
                d.weights = [neg, d.weights.clone()].concat();
                d.bias = vec![-d.bias[0], d.bias[0]];
                d.outputs = 2;
                self.len = 2;
                self.shape = vec![2];
                Ok(())
            }
            _ => Err(NnError::Unsupported(format!(
                "{}: a single score not computed by the Gemm/MatMul right before it",
                what(n)
            ))),
        }
    }

    /// Checks that input `i` of `n` is the running activation.
    fn act(&self, n: &NodeProto, i: usize) -> Result<(), NnError> {
        match n.inputs.get(i) {
            Some(name) if self.cur.contains(name) => Ok(()),
            Some(name) => Err(NnError::Unsupported(format!(
                "{}: input {name:?} is not the running activation (branches of the graph may \
                 only join by an Add)",
                what(n)
            ))),
            None => Err(NnError::Malformed(format!("{}: missing input {i}", what(n)))),
        }
    }

    /// Binds the node's first output to the running activation.
    fn rebind(&mut self, n: &NodeProto) -> Result<(), NnError> {
        let out = n
            .outputs
            .first()
            .ok_or_else(|| NnError::Malformed(format!("{}: no output", what(n))))?;
        self.cur = BTreeSet::from([out.clone()]);
        Ok(())
    }

    /// Names the node's first output as the running activation too (an identity).
    fn alias(&mut self, n: &NodeProto) -> Result<(), NnError> {
        let out = n
            .outputs
            .first()
            .ok_or_else(|| NnError::Malformed(format!("{}: no output", what(n))))?;
        self.cur.insert(out.clone());
        Ok(())
    }

    /// An elementwise activation as a [`Spline`] layer (fixed-point models only).
    fn activation(&mut self, n: &NodeProto, s: Spline) -> Result<(), NnError> {
        self.act(n, 0)?;
        if self.quantized() {
            return Err(NnError::Unsupported(format!(
                "{}: {} in a quantized model (only Relu and Clip run on integers)",
                what(n),
                s.name
            )));
        }
        s.check()?;
        self.positive = false;
        self.layers.push(Layer::Spline(s));
        self.rebind(n)
    }

    fn output_transform(&mut self, n: &NodeProto, name: &str, pos: bool) -> Result<(), NnError> {
        self.terminal = true;
        self.positive = pos;
        self.dropped.push(name.to_string());
        self.alias(n)
    }

    fn constant(&self, n: &NodeProto, i: usize) -> Result<&TensorProto, NnError> {
        let name = n.inputs.get(i).filter(|s| !s.is_empty());
        let name =
            name.ok_or_else(|| NnError::Malformed(format!("{}: missing input {i}", what(n))))?;
        if let Some(t) = self.quant.consts.get(name.as_str()) {
            return Ok(t);
        }
        if let Some(t) = self.tensors.get(name.as_str()) {
            return Ok(t);
        }
        self.consts.get(name.as_str()).copied().ok_or_else(|| {
            NnError::Unsupported(format!(
                "{}: input {name:?} must be a constant initializer",
                what(n)
            ))
        })
    }

    /// Gemm and MatMul read a flat activation (ONNX would not flatten a rank > 2 tensor).
    fn flat(&self, n: &NodeProto) -> Result<(), NnError> {
        if self.shape.len() > 1 {
            return Err(NnError::Shape(format!(
                "{}: input of shape {:?} (flatten it first)",
                what(n),
                self.shape
            )));
        }
        Ok(())
    }

    fn push_dense(&mut self, n: &NodeProto, d: Dense) -> Result<(), NnError> {
        self.len = d.outputs;
        self.shape = vec![d.outputs];
        self.layers.push(Layer::Dense(d));
        self.positive = false;
        self.fresh_linear = true;
        self.rebind(n)
    }

    /// The constant B of a Gemm/MatMul (input 1) checked against the activation width and
    /// returned as `(inputs, outputs, weights)` with weights stored outputs × inputs, scaled by
    /// `alpha`; `trans` when B is already outputs × inputs (Gemm's transB).
    fn weights_from_b(
        &self,
        n: &NodeProto,
        trans: bool,
        alpha: f64,
    ) -> Result<(usize, usize, Vec<f64>), NnError> {
        let b = self.constant(n, 1)?;
        let w = b.reals()?;
        let (k, m) = match b.dims[..] {
            [r, c] if trans => (c, r),
            [r, c] => (r, c),
            _ => return Err(NnError::Shape(format!("{}: B has dims {:?}", what(n), b.dims))),
        };
        if usize::try_from(k).ok() != Some(self.len) {
            return Err(NnError::Shape(format!(
                "{}: B has {k} rows for an activation of {}",
                what(n),
                self.len
            )));
        }
        let (k, m) = (self.len, usize::try_from(m).unwrap_or(0));
        let weights = if trans {
            w.iter().map(|v| alpha * v).collect()
        } else {
            (0..m)
                .flat_map(|o| (0..k).map(move |i| (o, i)))
                .map(|(o, i)| alpha * w[i * m + o])
                .collect()
        };
        Ok((k, m, weights))
    }

    fn gemm(&mut self, n: &NodeProto) -> Result<(), NnError> {
        only_attrs(n, &["alpha", "beta", "transA", "transB"])?;
        if int_attr(n, "transA", 0) != 0 {
            return Err(NnError::Unsupported(format!("{}: transA=1", what(n))));
        }
        let alpha = f64::from(attr(n, "alpha").and_then(|a| a.f).unwrap_or(1.0));
        let beta = f64::from(attr(n, "beta").and_then(|a| a.f).unwrap_or(1.0));
        self.act(n, 0)?;
        self.flat(n)?;
        let trans = int_attr(n, "transB", 0) != 0;
        let (k, m, weights) = self.weights_from_b(n, trans, alpha)?;
        let bias = match n.inputs.get(2).filter(|s| !s.is_empty()) {
            Some(_) => {
                self.bias(n, self.constant(n, 2)?, m)?.into_iter().map(|v| beta * v).collect()
            }
            None => vec![0.0; m],
        };
        self.push_dense(n, Dense { inputs: k, outputs: m, weights, bias })
    }

    /// A bias of `m` values from a constant of `m` or 1 elements (broadcast).
    fn bias(&self, n: &NodeProto, t: &TensorProto, m: usize) -> Result<Vec<f64>, NnError> {
        let v = t.reals()?;
        let rank_ok = t.dims.len() <= 1 || (t.dims.len() == 2 && t.dims[0] == 1);
        match v.len() {
            l if l == m && rank_ok => Ok(v),
            1 => Ok(vec![v[0]; m]),
            _ => Err(NnError::Shape(format!(
                "{}: bias dims {:?} do not broadcast to {m} outputs",
                what(n),
                t.dims
            ))),
        }
    }

    fn matmul(&mut self, n: &NodeProto) -> Result<(), NnError> {
        only_attrs(n, &[])?;
        self.act(n, 0)?;
        self.flat(n)?;
        let (k, m, weights) = self.weights_from_b(n, false, 1.0)?;
        self.push_dense(n, Dense { inputs: k, outputs: m, weights, bias: vec![0.0; m] })
    }

    /// The constant of an `Add` of the running activation and a constant (either order), as a
    /// bias of the activation's width.
    fn added_bias(&self, n: &NodeProto) -> Result<Vec<f64>, NnError> {
        only_attrs(n, &[])?;
        let (a, c) = match (n.inputs.first(), n.inputs.get(1)) {
            (Some(x), Some(_)) if self.cur.contains(x) => (0, 1),
            (Some(_), Some(y)) if self.cur.contains(y) => (1, 0),
            _ => {
                self.act(n, 0)?;
                self.act(n, 1)?;
                return Err(NnError::Unsupported(format!(
                    "{}: needs the running activation",
                    what(n)
                )));
            }
        };
        self.act(n, a)?;
        self.bias(n, self.constant(n, c)?, self.len)
    }

    fn add(&mut self, n: &NodeProto) -> Result<(), NnError> {
        let bias = self.added_bias(n)?;
        match self.layers.last_mut() {
            Some(Layer::Dense(d)) => d.bias.iter_mut().zip(bias).for_each(|(b, v)| *b += v),
            _ => {
                return Err(NnError::Unsupported(format!(
                    "{}: Add of a constant not right after Gemm/MatMul",
                    what(n)
                )))
            }
        }
        self.rebind(n)
    }

    fn reshape(&mut self, n: &NodeProto) -> Result<(), NnError> {
        only_attrs(n, &["allowzero"])?;
        self.act(n, 0)?;
        let target = n.inputs.get(1).map(String::as_str).unwrap_or_default();
        let mut shape = match self.folded.get(target) {
            Some(f) => fold::as_shape(n, f)?,
            None => self.constant(n, 1)?.ints()?,
        };
        if self.batch_one && shape.first() == Some(&1) {
            shape[0] = 0;
        }
        let rest: Option<usize> = shape.get(1..).and_then(|r| {
            r.iter()
                .try_fold(1usize, |a, &d| usize::try_from(d).ok().and_then(|d| a.checked_mul(d)))
        });
        let keeps_batch = matches!(shape.first(), Some(0 | -1))
            && (rest == Some(self.len) || (shape.len() == 2 && shape[1] == -1 && shape[0] == 0));
        if !keeps_batch {
            return Err(NnError::Unsupported(format!(
                "{}: shape {shape:?} does not keep the batch axis of a {}-value activation",
                what(n),
                self.len
            )));
        }
        self.shape = match shape.get(1..) {
            Some(r) if r.iter().all(|&d| d > 0) => r.iter().map(|&d| d as usize).collect(),
            _ => vec![self.len],
        };
        self.rebind(n)
    }
}
