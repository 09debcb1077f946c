//! The model representation: a chain of layers over one flat activation vector per sample.

use super::geom::{ConvGeom, PoolGeom};
pub use super::register::Register;
pub use super::spline::Spline;
use super::trees::TreeEnsemble;
use super::NnError;

/// An imported model: one input, a chain of layers, and a vector of class scores at the end.
///
/// Activations are flat per sample in ONNX's row-major (C) order, so Flatten and Reshape that
/// keep the batch axis are no-ops and do not appear as layers.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Name of the graph input.
    pub input_name: String,
    /// Shape of one sample (without the batch axis), e.g. `[784]` or `[1, 28, 28]`.
    pub input_shape: Vec<usize>,
    /// The layers, in evaluation order.
    pub layers: Vec<Layer>,
    /// Class labels of the score vector's entries (ONNX-ML classifiers); `None` means entry `i`
    /// is class `i`.
    pub class_labels: Option<ClassLabels>,
    /// Monotone output transforms of the source graph that the plan leaves out because they
    /// do not change the argmax (e.g. `Softmax`, `LinearClassifier.post_transform=SOFTMAX`,
    /// `Normalizer`). The plan's "logits" are the scores before these.
    pub dropped_transforms: Vec<String>,
    /// The range of input values the model was trained on, when its file says so (ONNX
    /// `metadata_props` key [`INPUT_RANGE_KEY`], value `"MIN,MAX"`): served to clients, which
    /// refuse input outside it (e.g. 0–255 pixels for a model trained on pixels / 255).
    pub input_range: Option<InputRange>,
}

/// Longest text label, in bytes (UTF-8).
pub const MAX_LABEL_BYTES: usize = 256;
/// Most class labels a model may name (a client receives them all with the model's
/// description, so they are bounded like any message a server sends it).
pub const MAX_LABELS: usize = 1 << 16;
/// Most bytes of text all of a model's labels may hold together.
pub const MAX_LABELS_TEXT: usize = 1 << 20;

/// The names of a classifier's classes, in score order: ONNX-ML's `classlabels_int64s` /
/// `classlabels_ints` or `classlabels_strings` (scikit-learn's `classes_`).
///
/// ```
/// use ringfence_core::nn::{ClassLabels, Label};
/// let names = ClassLabels::Strings(vec!["cat".into(), "dog".into()]);
/// assert_eq!(names.get(1), Some(Label::Text("dog".into())));
/// assert_eq!(Label::of(None, 3).to_string(), "3");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClassLabels {
    /// Integer labels.
    Ints(Vec<i64>),
    /// Text labels, each valid UTF-8 of at most [`MAX_LABEL_BYTES`].
    Strings(Vec<String>),
}

/// One class's label.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Label {
    /// An integer label (or a class index, for a model without labels).
    Int(i64),
    /// A text label.
    Text(String),
}

impl core::fmt::Display for Label {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Int(v) => write!(f, "{v}"),
            Self::Text(t) => f.write_str(t),
        }
    }
}

impl Label {
    /// Class `index`'s label under `labels`: the model's own, or the index itself when the
    /// model names none (or `index` is past its last class).
    pub fn of(labels: Option<&ClassLabels>, index: usize) -> Self {
        labels.and_then(|l| l.get(index)).unwrap_or(Self::Int(index as i64))
    }
}

impl ClassLabels {
    /// The number of classes named.
    pub fn len(&self) -> usize {
        match self {
            Self::Ints(v) => v.len(),
            Self::Strings(v) => v.len(),
        }
    }

    /// Whether no class is named.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The label of class `index`, or `None` past the last class.
    pub fn get(&self, index: usize) -> Option<Label> {
        match self {
            Self::Ints(v) => v.get(index).map(|&l| Label::Int(l)),
            Self::Strings(v) => v.get(index).map(|t| Label::Text(t.clone())),
        }
    }

    /// Every label, in class order.
    pub fn iter(&self) -> impl Iterator<Item = Label> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    /// Checks the bounds: at most [`MAX_LABELS`] labels, each text label 1 to
    /// [`MAX_LABEL_BYTES`] bytes, [`MAX_LABELS_TEXT`] in all; `Err` says which is broken.
    pub fn check(&self) -> Result<(), String> {
        if self.len() > MAX_LABELS {
            return Err(format!("{} class labels (at most {MAX_LABELS})", self.len()));
        }
        let Self::Strings(v) = self else { return Ok(()) };
        if let Some(i) = v.iter().position(|t| t.is_empty() || t.len() > MAX_LABEL_BYTES) {
            return Err(format!(
                "class label {i} has {} bytes (1 to {MAX_LABEL_BYTES})",
                v[i].len()
            ));
        }
        let total: usize = v.iter().map(String::len).sum();
        if total > MAX_LABELS_TEXT {
            return Err(format!(
                "class labels of {total} bytes in all (at most {MAX_LABELS_TEXT})"
            ));
        }
        Ok(())
    }
}

/// The ONNX `metadata_props` key of [`Model::input_range`]; its value is `"MIN,MAX"` (decimal).
pub const INPUT_RANGE_KEY: &str = "ringfence.input_range";

/// A closed range `[min, max]` of input values (f32: what the wire carries, exact for the small
/// integers and simple fractions ranges are made of).
#[derive(Debug, Clone, Copy)]
pub struct InputRange {
    /// The smallest value.
    pub min: f32,
    /// The largest value.
    pub max: f32,
}

impl InputRange {
    /// A range from finite `min <= max`; `None` otherwise.
    pub fn new(min: f32, max: f32) -> Option<Self> {
        (min.is_finite() && max.is_finite() && min <= max).then_some(Self { min, max })
    }

    /// Parses the metadata value `"MIN,MAX"`.
    pub fn parse(text: &str) -> Option<Self> {
        let (min, max) = text.split_once(',')?;
        Self::new(min.trim().parse().ok()?, max.trim().parse().ok()?)
    }

    /// The two bounds in one word, `min`'s bits high, for the wire.
    pub fn to_bits(self) -> u64 {
        u64::from(self.min.to_bits()) << 32 | u64::from(self.max.to_bits())
    }

    /// The inverse of [`Self::to_bits`]; `None` for bits that are not a range.
    pub fn from_bits(bits: u64) -> Option<Self> {
        Self::new(f32::from_bits((bits >> 32) as u32), f32::from_bits(bits as u32))
    }
}

// Bitwise, so that a range equals itself and the parties' descriptions compare exactly.
impl PartialEq for InputRange {
    fn eq(&self, other: &Self) -> bool {
        self.to_bits() == other.to_bits()
    }
}

impl Eq for InputRange {}

/// One layer of a [`Model`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Layer {
    /// A fully connected layer `y = W·x + b`.
    Dense(Dense),
    /// `max(x, 0)` elementwise.
    Relu,
    /// A 2-D convolution (im2col then a matrix product).
    Conv(Conv),
    /// Max pooling.
    MaxPool(PoolGeom),
    /// Average pooling (`GlobalAveragePool` is the window of the whole plane).
    AvgPool(PoolGeom),
    /// A per-channel affine map `y = scale[c]·x + shift[c]`: a `BatchNormalization` that does
    /// not directly follow a linear layer (one that does is folded into it at import).
    Affine(Affine),
    /// A tree ensemble (`TreeEnsembleClassifier`): features to class scores.
    Trees(TreeEnsemble),
    /// Requantization, as an int8 model computes between its layers: `clamp(round(scale[c]·x),
    /// min, max)`. A model with one of these is an integer model (see [`Requant`]).
    Requant(Requant),
    /// A register operation of a graph with residual connections (see [`Register`]).
    Register(Register),
    /// An elementwise activation other than ReLU, as a piecewise-linear function (exact for
    /// `LeakyRelu`, `Clip`, `HardSigmoid`; `Sigmoid` and `Tanh` within its bound).
    Spline(Spline),
}

/// The requantization of an int8 model's tensor: `y = clamp(round(scale[c]·x), min, max)`
/// elementwise over `channels × inner` values per sample (channel-major), `round` to nearest
/// with ties to even (onnxruntime's).
///
/// Quantized values here are **centred**: `q − zero_point`, so that a convolution's padding
/// and the next layer's `(x̄ − z)` need no zero point; `min` and `max` are the saturation
/// bounds in those units (`qmin − z`, `qmax − z`, narrowed by a ReLU or Clip fused into the
/// quantization). A model with a `Requant` layer is an *integer model*: its first layer is the
/// input's quantization (a `Requant` of the real input by `1/scale`), its dense and
/// convolution layers hold integer weights (`w̄ − z_w`) and biases (int32, scale `s_x·s_w`),
/// and every linear layer is followed by a `Requant` (after pooling too) — the form
/// [`super::FixedPlan`] computes exactly with integers and a private truncation per layer.
#[derive(Clone, PartialEq)]
pub struct Requant {
    /// Channels.
    pub channels: usize,
    /// Values per channel (e.g. height × width).
    pub inner: usize,
    /// The multiplier per channel (`s_x·s_w / s_y`; `1/s_y` for the input), positive.
    pub scale: Vec<f64>,
    /// The smallest centred output.
    pub min: i64,
    /// The largest centred output.
    pub max: i64,
}

impl core::fmt::Debug for Requant {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Requant({} x {}, [{}, {}])", self.channels, self.inner, self.min, self.max)
    }
}

impl Requant {
    /// `clamp(round_half_even(scale·x), min, max)`.
    pub fn apply(&self, c: usize, x: f64) -> f64 {
        let v = self.scale[c] * x;
        let r = v.round();
        // Ties to even, as onnxruntime's requantization rounds.
        let r = if (v - v.trunc()).abs() == 0.5 { 2.0 * (v / 2.0).round() } else { r };
        r.clamp(self.min as f64, self.max as f64)
    }

    pub(crate) fn is_valid(&self, per_sample: usize) -> bool {
        self.channels > 0
            && self.channels * self.inner == per_sample
            && self.scale.len() == self.channels
            && self.scale.iter().all(|s| s.is_finite() && *s > 0.0)
            && self.min <= self.max
    }
}

/// A per-channel affine layer over `channels × inner` values per sample (channel-major).
#[derive(Clone, PartialEq)]
pub struct Affine {
    /// Channels.
    pub channels: usize,
    /// Values per channel (e.g. height × width).
    pub inner: usize,
    /// Multiplier per channel.
    pub scale: Vec<f64>,
    /// Offset per channel.
    pub shift: Vec<f64>,
}

impl core::fmt::Debug for Affine {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Affine({} x {})", self.channels, self.inner)
    }
}

/// A convolution with real weights.
#[derive(Clone, PartialEq)]
pub struct Conv {
    /// The geometry.
    pub geom: ConvGeom,
    /// Weights `[out_c][in_c / groups][kh][kw]` (ONNX order), i.e. `out_c` rows of
    /// `patch_len`.
    pub weights: Vec<f64>,
    /// Bias, one per output channel.
    pub bias: Vec<f64>,
}

impl core::fmt::Debug for Conv {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Conv({:?})", self.geom)
    }
}

impl Layer {
    /// Values per output sample, given `in_len` values per input sample.
    pub fn out_len(&self, in_len: usize) -> usize {
        match self {
            Self::Dense(d) => d.outputs,
            Self::Relu | Self::Spline(_) => in_len,
            Self::Conv(c) => c.geom.out_len(),
            Self::MaxPool(p) | Self::AvgPool(p) => p.out_len(),
            Self::Affine(a) => a.channels * a.inner,
            Self::Requant(q) => q.channels * q.inner,
            Self::Trees(t) => t.shape.classes,
            Self::Register(r) => r.out_len(),
        }
    }
}

/// A fully connected layer with real weights.
#[derive(Clone, PartialEq)]
pub struct Dense {
    /// Input width.
    pub inputs: usize,
    /// Output width.
    pub outputs: usize,
    /// Weights, `outputs` rows of `inputs` (row-major, as Gemm with `transB=1`).
    pub weights: Vec<f64>,
    /// Bias, one per output.
    pub bias: Vec<f64>,
}

impl core::fmt::Debug for Dense {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Dense({} -> {})", self.inputs, self.outputs)
    }
}

impl Model {
    /// Number of input values per sample.
    pub fn input_len(&self) -> usize {
        self.input_shape.iter().product()
    }

    /// Number of scores per sample.
    pub fn output_len(&self) -> usize {
        self.layers.iter().fold(self.input_len(), |n, l| l.out_len(n))
    }

    /// A one-line description per layer, e.g. `["Dense 784->128", "Relu", ...]`.
    pub fn summary(&self) -> Vec<String> {
        self.layers
            .iter()
            .map(|l| match l {
                Layer::Dense(d) => format!("Dense {}->{}", d.inputs, d.outputs),
                Layer::Relu => "Relu".to_string(),
                Layer::Spline(s) if s.bound > 0.0 => {
                    format!("{} ({} pieces, within {:.1e})", s.name, s.knots.len() - 1, s.bound)
                }
                Layer::Spline(s) => s.name.clone(),
                Layer::Conv(c) => {
                    let g = &c.geom;
                    format!(
                        "Conv {}x{}x{}->{}x{}x{} k{}x{} s{} p{}{}",
                        g.in_c,
                        g.in_h,
                        g.in_w,
                        g.out_c,
                        g.out_h(),
                        g.out_w(),
                        g.kernel[0],
                        g.kernel[1],
                        g.stride[0],
                        g.pads[0],
                        if g.groups > 1 { format!(" g{}", g.groups) } else { String::new() }
                    )
                }
                Layer::AvgPool(p) => format!(
                    "AvgPool {}x{} s{} -> {}x{}x{}",
                    p.kernel[0],
                    p.kernel[1],
                    p.stride[0],
                    p.c,
                    p.out_h(),
                    p.out_w()
                ),
                Layer::Affine(a) => format!("Affine {}x{}", a.channels, a.inner),
                Layer::Requant(q) => {
                    format!("Requant {}x{} [{}, {}]", q.channels, q.inner, q.min, q.max)
                }
                Layer::Register(Register::Keep { slot, .. }) => format!("Keep -> r{slot}"),
                Layer::Register(Register::Recall { slot, .. }) => format!("Recall r{slot}"),
                Layer::Register(Register::Add { slot, .. }) => format!("Add r{slot}"),
                Layer::Register(Register::Sub { slot, kept_first: false, .. }) => {
                    format!("Sub r{slot}")
                }
                Layer::Register(Register::Sub { slot, kept_first: true, .. }) => {
                    format!("Sub from r{slot}")
                }
                Layer::Trees(t) => format!(
                    "Trees {} nodes {} leaves -> {}",
                    t.shape.nodes.len(),
                    t.shape.leaves.len(),
                    t.shape.classes
                ),
                Layer::MaxPool(p) => format!(
                    "MaxPool {}x{} s{} -> {}x{}x{}",
                    p.kernel[0],
                    p.kernel[1],
                    p.stride[0],
                    p.c,
                    p.out_h(),
                    p.out_w()
                ),
            })
            .collect()
    }

    /// Evaluates the model in floating point on `batch` samples (row-major, `batch ×
    /// input_len`); returns `batch × output_len` scores.
    pub fn eval_f64(&self, x: &[f64], batch: usize) -> Result<Vec<f64>, NnError> {
        check_input(x.len(), batch, self.input_len())?;
        let mut h = x.to_vec();
        let (mut regs, mut lens) = (Vec::new(), Vec::new());
        for l in &self.layers {
            let per = h.len() / batch;
            let ok = match l {
                Layer::Dense(d) => {
                    d.inputs == per
                        && d.inputs > 0
                        && d.weights.len() == d.inputs * d.outputs
                        && d.bias.len() == d.outputs
                }
                Layer::MaxPool(p) | Layer::AvgPool(p) => p.is_valid() && p.in_len() == per,
                Layer::Requant(q) => q.is_valid(per),
                Layer::Affine(a) => {
                    a.channels > 0
                        && a.channels * a.inner == per
                        && a.scale.len() == a.channels
                        && a.shift.len() == a.channels
                }
                Layer::Register(r) => r.fits(&mut { per }, &mut lens),
                Layer::Spline(s) => s.check().is_ok(),
                _ => true,
            };
            if !ok {
                return Err(NnError::Shape(format!("layer {l:?} after {per} values")));
            }
            h = match l {
                Layer::Dense(d) => h
                    .chunks_exact(d.inputs)
                    .flat_map(|row| {
                        d.weights.chunks_exact(d.inputs).zip(&d.bias).map(move |(w, b)| {
                            w.iter().zip(row).map(|(w, x)| w * x).sum::<f64>() + b
                        })
                    })
                    .collect(),
                Layer::Relu => h.into_iter().map(|v| v.max(0.0)).collect(),
                Layer::Spline(s) => h.into_iter().map(|v| s.eval(v)).collect(),
                Layer::Conv(c) => {
                    let g = &c.geom;
                    if !g.is_valid()
                        || g.in_len() != h.len() / batch
                        || c.weights.len() != g.patch_len() * g.out_c
                        || c.bias.len() != g.out_c
                    {
                        return Err(NnError::Shape(format!("convolution {g:?}")));
                    }
                    conv_f64(c, &h, batch)
                }
                Layer::MaxPool(p) => p
                    .windows(batch)
                    .iter()
                    .map(|w| w.iter().map(|&i| h[i]).fold(f64::NEG_INFINITY, f64::max))
                    .collect(),
                Layer::AvgPool(p) => p
                    .windows(batch)
                    .iter()
                    .map(|w| w.iter().map(|&i| h[i]).sum::<f64>() / w.len() as f64)
                    .collect(),
                Layer::Affine(a) => h
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let c = i / a.inner % a.channels;
                        a.scale[c] * v + a.shift[c]
                    })
                    .collect(),
                Layer::Requant(q) => h
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| q.apply(i / q.inner % q.channels, v))
                    .collect(),
                Layer::Trees(t) => t.eval_f64(&h, batch)?,
                Layer::Register(r) => r
                    .apply(h, &mut regs, super::register::sum, super::register::difference)
                    .map_err(|e| NnError::Shape(e.to_string()))?,
            };
        }
        Ok(h)
    }
}

fn conv_f64(c: &Conv, h: &[f64], batch: usize) -> Vec<f64> {
    let g = &c.geom;
    let patches = g.patches();
    let (k, p) = (g.patch_len(), g.positions());
    let ocg = g.out_c / g.groups.max(1);
    let mut out = vec![0.0; batch * g.out_len()];
    for b in 0..batch {
        let x = &h[b * g.in_len()..(b + 1) * g.in_len()];
        for (q, patch) in patches.chunks_exact(g.full_patch_len()).enumerate() {
            for (o, w) in c.weights.chunks_exact(k).enumerate() {
                let patch = &patch[o / ocg * k..(o / ocg + 1) * k];
                let s: f64 = patch.iter().zip(w).filter_map(|(i, w)| i.map(|i| x[i] * w)).sum();
                out[b * g.out_len() + o * p + q] = s + c.bias[o];
            }
        }
    }
    out
}

/// Checks that `n` values are `batch` samples of `len` (before any protocol round).
pub(crate) fn check_input(n: usize, batch: usize, len: usize) -> Result<(), NnError> {
    if batch == 0 || batch.checked_mul(len) != Some(n) {
        return Err(NnError::Shape(format!(
            "input has {n} values, the model takes batches of {len} per sample (batch {batch})"
        )));
    }
    Ok(())
}

/// Index of the largest entry of each row of `len` (ties go to the lowest index).
pub fn argmax_rows<T: PartialOrd + Copy>(v: &[T], len: usize) -> Vec<usize> {
    v.chunks_exact(len.max(1))
        .map(|r| {
            let mut best = 0;
            for (i, x) in r.iter().enumerate() {
                if *x > r[best] {
                    best = i;
                }
            }
            best
        })
        .collect()
}
