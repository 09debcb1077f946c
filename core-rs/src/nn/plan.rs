//! Fixed-point plans: a [`Model`] with weights encoded in a ring, and the plaintext fixed-point
//! evaluator that mirrors the secure run step by step.
//!
//! # Quantisation
//! Inputs, weights and biases are encoded with `f` fractional bits ([`FixedPoint`]; default
//! [`DEFAULT_FRAC_BITS`] = 13, METEOR's choice, in Z_2^64). A dense layer computes the exact
//! integer `Σ x·w` (2f fractional bits), truncates it by `f` bits, then adds the bias. Errors
//! per output of a dense layer with n inputs, in units of 2^-f:
//! * weight and input encoding: at most ½ each, so the product error is below
//!   `½·Σ|x_j| + ½·Σ|w_j|` ulps plus the propagated input error `Σ|w_j|·e_j`;
//! * truncation: the plaintext plan floors (error in [0, 1) ulp); the secure run's
//!   probabilistic truncation is the floor or one less (error in [0, 2) ulps), and with
//!   probability about |Σ x·w|·2^(2f) / 2^63 per output (below 2^-25 for |Σ x·w| < 30) it is
//!   wrong by about 2^(64−f): the argmax of that sample is then garbage;
//! * ReLU is exact.
//!
//! [`FixedPlan::error_bound`] propagates the worst case through the layers from a bound on the
//! input magnitude. It is loose (every rounding error aligned, every activation at its largest
//! possible magnitude): about 24 for the shipped NN-A with inputs in [0, 1]. Measured on the
//! 1,000 held-out digits, the plaintext plan's logits (f = 13) differ from onnxruntime's by at
//! most 0.006 and the secure run's from the plaintext plan's by at most about 10 ulps
//! (1.2e-3); the tests assert argmax agreement with onnxruntime.
//!
//! # Average pooling, BatchNormalization, groups, trees
//! * **Average pooling** is a sum pool (local, exact) and a factor `1/k`. When a linear layer
//!   (dense, convolution, standalone BN) follows — through ReLUs and max or sum pools only,
//!   which commute with a positive factor — the factor is folded into that layer's weights
//!   before encoding (`w/k`, the bias untouched): free at run time, mathematically exact; the
//!   encoding error stays ½ ulp per weight but now multiplies the sum, i.e. `k` times the
//!   mean: at most `½·Σ|sum_j|` ulps per output instead of `½·Σ|mean_j|`. Otherwise a
//!   [`StepShape::Scale`] step multiplies by the public `c = encode(1/k)` and truncates
//!   (rep3: a truncation pair, 1 round; METEOR: the truncation folded into one reveal, 8 B per
//!   value): error ½ ulp of `c` times the value (relative 2^-f·k/2) plus the truncation's
//!   [0, 2) ulps.
//! * **BatchNormalization** right after a Conv/Gemm is folded into it at import (exact up to
//!   float rounding). Elsewhere it is a per-channel affine layer, planned as a depthwise 1×1
//!   convolution (weights γ', bias β', secret like all weights): the error of a dense layer
//!   with one input.
//! * **Grouped convolutions** multiply by the block-diagonal weight matrix with public zeros
//!   (exact zeros, no extra error; `groups` times the local work of the compact product).
//! * **Residual connections** ([`Register`] steps) add two activations with the same
//!   fractional bits: exact and local; the error bound adds the operands' errors. An average
//!   pool's pending `1/k` is not carried across them (a [`StepShape::Scale`] step applies it).
//! * **Tree ensembles** compare encoded values exactly and add encoded leaf weights exactly:
//!   the only error is the encoding of inputs, thresholds and weights (½ ulp each).

use super::geom::{ConvGeom, PoolGeom};
use super::model::{check_input, ClassLabels, InputRange, Layer, Model, Register};
use super::quant::{integer_weight, IntegerWalk};
use super::register::sum;
use super::spline::SplineShape;
use super::trees::{self, TreeShape};
use super::NnError;
use crate::ring::fixed::FixedPoint;
use crate::ring::IntRing;
use crate::Error;

/// Fractional bits used by default (METEOR's d = 13): [`FixedPoint::DEFAULT_64`]'s.
pub const DEFAULT_FRAC_BITS: u32 = FixedPoint::DEFAULT_64.frac_bits;

/// What the secure run gives the output receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Output {
    /// The score vector (fixed point), `output_len` values per sample.
    Logits,
    /// The index of the largest score, one value per sample.
    Argmax,
}

/// The public architecture of a plan: what every party knows, weights excluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanShape {
    /// Fractional bits of every encoded value.
    pub frac_bits: u32,
    /// Values per input sample.
    pub input_len: usize,
    /// The steps in order.
    pub steps: Vec<StepShape>,
    /// The input range the model was trained on, if its file said (see [`Model::input_range`]).
    pub input_range: Option<InputRange>,
}

/// The public shape of one step.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StepShape {
    /// Dense layer `inputs -> outputs`.
    Dense {
        /// Input width.
        inputs: usize,
        /// Output width.
        outputs: usize,
    },
    /// ReLU over `len` values per sample.
    Relu {
        /// Values per sample.
        len: usize,
    },
    /// Convolution.
    Conv(ConvGeom),
    /// Max pooling.
    MaxPool(PoolGeom),
    /// Sum pooling: average pooling before its `1/k`, which the plan folds into the next
    /// linear layer's weights or, when none follows, into a [`StepShape::Scale`] step.
    SumPool(PoolGeom),
    /// Multiplication by the public `1/divisor` (fixed point, truncated).
    Scale {
        /// Values per sample.
        len: usize,
        /// The divisor (an average pool's window size).
        divisor: usize,
    },
    /// A tree ensemble: its public node layout (thresholds and leaf weights are secret).
    Trees(Box<TreeShape>),
    /// An integer plan's requantization of `channels × inner` values per sample: a clamp to
    /// secret bounds, then a product with a secret multiplier truncated by `shift` bits (the
    /// truncation by a private amount of the rss paper's quantized networks).
    Requant {
        /// Channels (each has its own bounds and multiplier).
        channels: usize,
        /// Values per channel.
        inner: usize,
        /// The public truncation after the multiplier, the same in every step of a plan.
        shift: u32,
    },
    /// A register operation (residual connections): local, no material.
    Register(Register),
    /// A piecewise-linear activation (see [`super::spline`]): one ReLU per knot and value, one
    /// truncation per value.
    Spline(SplineShape),
}

impl StepShape {
    /// Values per output sample.
    pub fn out_len(&self) -> usize {
        match self {
            Self::Dense { outputs, .. } => *outputs,
            Self::Relu { len } | Self::Scale { len, .. } => *len,
            Self::Spline(s) => s.len,
            Self::Conv(g) => g.out_len(),
            Self::MaxPool(g) | Self::SumPool(g) => g.out_len(),
            Self::Trees(t) => t.classes,
            Self::Requant { channels, inner, .. } => channels * inner,
            Self::Register(r) => r.out_len(),
        }
    }
}

/// The material a run of a plan consumes, in units that every scheme with uniform material
/// counts alike (`nn::uniform`; rep3: truncation pairs and daBits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrepNeeds {
    /// Truncated product outputs (by [`PlanShape::product_bits`]): one per dense, conv or
    /// scale output per sample of a fixed-point plan, one per requantized value of an integer
    /// plan (rep3: a truncation pair each).
    pub products: usize,
    /// Exact product outputs: an integer plan's dense and conv outputs, a tree ensemble's
    /// reach products (one per node below the roots per sample) and leaf products (rep3:
    /// nothing).
    pub exact: usize,
    /// Bit products and injections: one per ReLU value, per comparison of max pooling and of
    /// the argmax (`classes − 1` per sample), per tree node per sample, and two per requantized
    /// value (rep3: a daBit each).
    pub bits: usize,
}

impl PlanShape {
    /// Values per output sample (scores).
    pub fn output_len(&self) -> usize {
        self.steps.last().map_or(self.input_len, StepShape::out_len)
    }

    /// True for an integer plan (one made from a quantized model): its dense and convolution
    /// steps are exact integer products and its [`StepShape::Requant`] steps rescale.
    pub fn is_integer(&self) -> bool {
        self.steps.iter().any(|s| matches!(s, StepShape::Requant { .. }))
    }

    /// The truncation of the plan's truncated products: the requantizations' shift in an
    /// integer plan, the fractional bits otherwise.
    pub fn product_bits(&self) -> u32 {
        self.steps
            .iter()
            .find_map(|s| match s {
                StepShape::Requant { shift, .. } => Some(*shift),
                _ => None,
            })
            .unwrap_or(self.frac_bits)
    }

    /// The matrix products of one run of `batch` samples in the order the walk makes them,
    /// as `(m, l, n)` for an (m×l)·(l×n) product, each with whether it is exact (no
    /// truncation): a dense layer's `(batch, inputs, outputs)`, a convolution's im2col product
    /// `(batch · positions, patch, out_c)` (both exact in an integer plan), a tree ensemble's
    /// leaf product `(batch, leaves, classes)` (always exact: its left operand is 0/1).
    pub fn matmuls(&self, batch: usize) -> Vec<((usize, usize, usize), bool)> {
        let exact = self.is_integer();
        self.steps
            .iter()
            .filter_map(|s| match s {
                StepShape::Dense { inputs, outputs } => Some(((batch, *inputs, *outputs), exact)),
                StepShape::Conv(g) => {
                    Some(((batch * g.positions(), g.full_patch_len(), g.out_c), exact))
                }
                StepShape::Trees(t) => Some(((batch, t.leaves.len(), t.classes), true)),
                _ => None,
            })
            .collect()
    }

    /// The preprocessing one run of `batch` samples needs.
    pub fn needs(&self, batch: usize, output: Output) -> PrepNeeds {
        let mut n = PrepNeeds { products: 0, exact: 0, bits: 0 };
        for ((m, _, o), exact) in self.matmuls(batch) {
            *if exact { &mut n.exact } else { &mut n.products } += m * o;
        }
        for s in &self.steps {
            match s {
                StepShape::Dense { .. } | StepShape::Conv(_) => {}
                StepShape::Relu { len } => n.bits += batch * len,
                StepShape::MaxPool(g) => n.bits += batch * g.out_len() * (g.window_len() - 1),
                StepShape::Scale { len, .. } => n.products += batch * len,
                StepShape::Spline(sp) => {
                    n.bits += batch * sp.len * sp.knots.len();
                    n.products += batch * sp.len;
                }
                StepShape::SumPool(_) | StepShape::Register(_) => {}
                StepShape::Trees(t) => {
                    n.bits += batch * t.nodes.len();
                    n.exact += batch * t.reach_products();
                }
                StepShape::Requant { channels, inner, .. } => {
                    n.products += batch * channels * inner;
                    n.bits += 2 * batch * channels * inner;
                }
            }
        }
        if output == Output::Argmax {
            n.bits += batch * self.output_len().saturating_sub(1);
        }
        n
    }
}

/// Bias tiling: output `i` of a layer with `width` outputs per row gets bias `i % width`.
pub(crate) fn tile(len: usize, width: usize) -> Vec<usize> {
    (0..len).map(|i| i % width).collect()
}

/// The windows of a pooling layer on a batch as `window_len` index columns: column `t` holds
/// the `t`-th element of every window (a sum pool adds the columns' gathers).
pub(crate) fn window_columns(g: &PoolGeom, batch: usize) -> Vec<Vec<usize>> {
    let windows = g.windows(batch);
    (0..g.window_len()).map(|t| windows.iter().map(|w| w[t]).collect()).collect()
}

/// The gather that expands a grouped convolution's compact weights, followed by one appended
/// public zero (index `patch_len · out_c`), to the full im2col weight matrix; `None` for an
/// ungrouped convolution (see [`ConvGeom::grouped_weight_index`]).
pub(crate) fn grouped_gather(g: &ConvGeom) -> Option<Vec<usize>> {
    let zero = g.patch_len() * g.out_c;
    g.grouped_weight_index().map(|idx| idx.into_iter().map(|i| i.unwrap_or(zero)).collect())
}

/// The fixed-point encoding of `1/divisor` (the public factor of a [`StepShape::Scale`]).
pub(crate) fn inverse<R: IntRing>(fp: FixedPoint, divisor: usize) -> Result<R, Error> {
    fp.encode(1.0 / divisor.max(1) as f64)
}

/// A step with its weights held as `V` (shares of some scheme): what a secure backend runs.
pub(crate) enum WeightedStep<V> {
    Dense {
        inputs: usize,
        outputs: usize,
        w: V,
        b: V,
    },
    Relu,
    Conv {
        geom: ConvGeom,
        w: V,
        b: V,
    },
    MaxPool(PoolGeom),
    SumPool(PoolGeom),
    Scale {
        divisor: usize,
    },
    Trees {
        shape: Box<TreeShape>,
        t: V,
        w: V,
        base: V,
    },
    /// Per channel: the clamp's bounds and the multiplier.
    Requant {
        channels: usize,
        inner: usize,
        lo: V,
        hi: V,
        mult: V,
    },
    Register(Register),
    Spline(SplineShape),
}

impl PlanShape {
    /// Lengths of the weight blocks in sharing order: `w` then `b` of each dense or conv step.
    pub(crate) fn weight_lens(&self) -> Vec<usize> {
        let mut lens = Vec::new();
        for s in &self.steps {
            match s {
                StepShape::Dense { inputs, outputs } => lens.extend([inputs * outputs, *outputs]),
                StepShape::Conv(g) => lens.extend([g.patch_len() * g.out_c, g.out_c]),
                StepShape::Trees(t) => {
                    lens.extend([t.nodes.len(), t.leaves.len() * t.classes, t.classes])
                }
                StepShape::Requant { channels, .. } => lens.extend([*channels; 3]),
                StepShape::Relu { .. }
                | StepShape::MaxPool(_)
                | StepShape::SumPool(_)
                | StepShape::Scale { .. }
                | StepShape::Spline(_)
                | StepShape::Register(_) => {}
            }
        }
        lens
    }

    /// Hands consecutive weight blocks (as split by [`PlanShape::weight_lens`]) to the steps.
    pub(crate) fn assemble<V>(&self, blocks: Vec<V>) -> Result<Vec<WeightedStep<V>>, Error> {
        let blocks = core::cell::RefCell::new(blocks.into_iter());
        let bad = || Error::ApiMisuse("weights do not split by the plan's shape".into());
        let pair1 = || blocks.borrow_mut().next().ok_or_else(bad);
        let pair = || Ok::<_, Error>((pair1()?, pair1()?));
        self.steps
            .iter()
            .map(|s| {
                Ok(match s {
                    StepShape::Dense { inputs, outputs } => {
                        let (w, b) = pair()?;
                        WeightedStep::Dense { inputs: *inputs, outputs: *outputs, w, b }
                    }
                    StepShape::Conv(geom) => {
                        let (w, b) = pair()?;
                        WeightedStep::Conv { geom: *geom, w, b }
                    }
                    StepShape::Relu { .. } => WeightedStep::Relu,
                    StepShape::MaxPool(g) => WeightedStep::MaxPool(*g),
                    StepShape::SumPool(g) => WeightedStep::SumPool(*g),
                    StepShape::Scale { divisor, .. } => WeightedStep::Scale { divisor: *divisor },
                    StepShape::Trees(shape) => {
                        let (t, w) = pair()?;
                        let base = pair1()?;
                        WeightedStep::Trees { shape: shape.clone(), t, w, base }
                    }
                    StepShape::Requant { channels, inner, .. } => {
                        let (lo, hi) = pair()?;
                        let mult = pair1()?;
                        WeightedStep::Requant { channels: *channels, inner: *inner, lo, hi, mult }
                    }
                    StepShape::Register(r) => WeightedStep::Register(*r),
                    StepShape::Spline(sp) => WeightedStep::Spline(sp.clone()),
                })
            })
            .collect()
    }
}

/// A [`Model`] with weights encoded in ring `R`. `Debug` shows only the shape.
#[derive(Clone)]
pub struct FixedPlan<R> {
    fp: FixedPoint,
    input_len: usize,
    steps: Vec<Step<R>>,
    class_labels: Option<ClassLabels>,
    input_range: Option<InputRange>,
}

impl<R> core::fmt::Debug for FixedPlan<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "FixedPlan(f = {}, {} steps, <weights>)", self.fp.frac_bits, self.steps.len())
    }
}

/// One step with encoded weights.
#[derive(Clone)]
pub(crate) enum Step<R> {
    /// `w` is `inputs × outputs` row-major (the right operand of `x · W`), `b` has `outputs`.
    Dense {
        inputs: usize,
        outputs: usize,
        w: Vec<R>,
        b: Vec<R>,
    },
    Relu {
        len: usize,
    },
    /// `w` is `patch_len × out_c` row-major (compact: within the group), `b` has `out_c`.
    Conv {
        geom: ConvGeom,
        w: Vec<R>,
        b: Vec<R>,
    },
    MaxPool(PoolGeom),
    SumPool(PoolGeom),
    Scale {
        len: usize,
        divisor: usize,
    },
    Trees {
        shape: Box<TreeShape>,
        t: Vec<R>,
        w: Vec<R>,
        base: Vec<R>,
    },
    /// `clamp(x, lo[c], hi[c])·mult[c] >> shift`.
    Requant {
        channels: usize,
        inner: usize,
        shift: u32,
        lo: Vec<R>,
        hi: Vec<R>,
        mult: Vec<R>,
    },
    Register(Register),
    Spline(SplineShape),
}

impl<R: IntRing> FixedPlan<R> {
    /// Encodes `model` with `frac_bits` fractional bits; a weight that does not fit is an
    /// error naming its layer.
    pub fn new(model: &Model, frac_bits: u32) -> Result<Self, NnError> {
        let fp = FixedPoint::new(frac_bits);
        let integer = model.layers.iter().any(|l| matches!(l, Layer::Requant(_)));
        // An integer plan multiplies integers: only its input is in fixed point.
        if !integer && 2 * frac_bits + 8 >= R::BITS {
            return Err(NnError::Unsupported(format!(
                "{frac_bits} fractional bits in a {}-bit ring (products need 2f + 8 < k)",
                R::BITS
            )));
        }
        let mut len = model.input_len();
        let mut regs = Vec::new();
        let mut steps = Vec::new();
        // The product of the `1/k` of average pools not applied yet: it goes into the weights
        // (not the bias) of the next linear layer, exactly, since ReLU, max and sum pooling
        // commute with a positive factor (in an integer model, into the next requantization).
        let mut pending = 1.0f64;
        let mut int = integer.then(|| IntegerWalk::new::<R>(fp, model.input_range));
        let enc = |i: usize, what: &str, v: f64| -> Result<R, NnError> {
            if integer {
                return integer_weight(i, what, v);
            }
            fp.encode(v).map_err(|e| NnError::Shape(format!("layer {i} {what}: {e}")))
        };
        for (i, l) in model.layers.iter().enumerate() {
            match l {
                Layer::Dense(d) => {
                    if d.inputs != len {
                        return Err(NnError::Shape(format!(
                            "layer {i}: {} inputs after {len} values",
                            d.inputs
                        )));
                    }
                    if let Some(int) = &mut int {
                        int.linear(i, &d.weights, d.inputs, &d.bias, pending)?;
                    }
                    let mut w = vec![R::ZERO; d.inputs * d.outputs];
                    for (o, row) in d.weights.chunks_exact(d.inputs).enumerate() {
                        for (j, v) in row.iter().enumerate() {
                            w[j * d.outputs + o] = enc(i, "weight", v * pending)?;
                        }
                    }
                    pending = 1.0;
                    let b = d.bias.iter().map(|v| enc(i, "bias", *v)).collect::<Result<_, _>>()?;
                    steps.push(Step::Dense { inputs: d.inputs, outputs: d.outputs, w, b });
                    len = d.outputs;
                }
                Layer::Relu => steps.push(Step::Relu { len }),
                Layer::Spline(sp) if integer => {
                    return Err(NnError::Unsupported(format!(
                        "layer {i} ({:?}) in a quantized model: only ReLU runs on integers",
                        sp
                    )));
                }
                Layer::Spline(sp) => {
                    sp.check()?;
                    let code = |v: &[f64]| -> Result<Vec<i64>, NnError> {
                        v.iter().map(|&v| Ok(enc(i, &sp.name, v)?.to_i64())).collect()
                    };
                    let value = enc(i, &sp.name, sp.value)?.to_i64();
                    let (knots, slopes) = (code(&sp.knots)?, code(&sp.slopes)?);
                    steps.push(Step::Spline(SplineShape { len, knots, slopes, value }));
                }
                Layer::Conv(c) => {
                    let g = c.geom;
                    if g.in_len() != len
                        || !g.is_valid()
                        || c.weights.len() != g.patch_len() * g.out_c
                        || c.bias.len() != g.out_c
                    {
                        return Err(NnError::Shape(format!(
                            "layer {i}: convolution {g:?} ({} weights, {} biases) after {len} \
                             values",
                            c.weights.len(),
                            c.bias.len()
                        )));
                    }
                    let k = g.patch_len();
                    if let Some(int) = &mut int {
                        int.linear(i, &c.weights, k, &c.bias, pending)?;
                    }
                    let mut w = vec![R::ZERO; k * g.out_c];
                    for (o, row) in c.weights.chunks_exact(k).enumerate() {
                        for (j, v) in row.iter().enumerate() {
                            w[j * g.out_c + o] = enc(i, "weight", v * pending)?;
                        }
                    }
                    pending = 1.0;
                    let b = c.bias.iter().map(|v| enc(i, "bias", *v)).collect::<Result<_, _>>()?;
                    steps.push(Step::Conv { geom: g, w, b });
                    len = g.out_len();
                }
                Layer::MaxPool(g) => {
                    if g.in_len() != len || !g.is_valid() {
                        return Err(NnError::Shape(format!(
                            "layer {i}: pooling {g:?} after {len}"
                        )));
                    }
                    steps.push(Step::MaxPool(*g));
                    len = g.out_len();
                }
                Layer::AvgPool(g) => {
                    if g.in_len() != len || !g.is_valid() {
                        return Err(NnError::Shape(format!(
                            "layer {i}: pooling {g:?} after {len}"
                        )));
                    }
                    steps.push(Step::SumPool(*g));
                    len = g.out_len();
                    let k = g.window_len();
                    if let Some(int) = &mut int {
                        // The mean's 1/k goes into the next requantization's multiplier.
                        int.sum_pool(k);
                        pending /= k as f64;
                        continue;
                    }
                    let linear_follows = model.layers[i + 1..]
                        .iter()
                        .find(|l| !matches!(l, Layer::Relu | Layer::MaxPool(_) | Layer::AvgPool(_)))
                        .is_some_and(|l| {
                            matches!(l, Layer::Dense(_) | Layer::Conv(_) | Layer::Affine(_))
                        });
                    if linear_follows {
                        pending /= k as f64;
                    } else {
                        inverse::<R>(fp, k)?;
                        steps.push(Step::Scale { len, divisor: k });
                    }
                }
                Layer::Requant(q) => {
                    if !q.is_valid(len) {
                        return Err(NnError::Shape(format!("layer {i}: {q:?} after {len} values")));
                    }
                    let int = int.as_mut().ok_or_else(|| NnError::Unsupported("requant".into()))?;
                    steps.push(int.requant::<R>(i, q, pending)?);
                    pending = 1.0;
                }
                Layer::Register(r) if integer => {
                    return Err(NnError::Unsupported(format!(
                        "layer {i} ({r:?}): a residual connection in a quantized model (only \
                         chains run on integers)"
                    )));
                }
                Layer::Register(r) => {
                    if !r.fits(&mut len, &mut regs) {
                        return Err(NnError::Shape(format!("layer {i}: {r:?} after {len} values")));
                    }
                    steps.push(Step::Register(*r));
                }
                Layer::Affine(_) | Layer::Trees(_) if integer => {
                    return Err(NnError::Unsupported(format!(
                        "layer {i} ({}) in a quantized model: only convolutions, dense layers, \
                         ReLU, pooling and requantization run on integers",
                        model.summary()[i]
                    )));
                }
                Layer::Affine(a) => {
                    if a.channels * a.inner != len
                        || a.scale.len() != a.channels
                        || a.shift.len() != a.channels
                    {
                        return Err(NnError::Shape(format!(
                            "layer {i}: affine of {} x {} ({} scales, {} shifts) after {len}",
                            a.channels,
                            a.inner,
                            a.scale.len(),
                            a.shift.len()
                        )));
                    }
                    // A depthwise 1x1 convolution: one weight and one bias per channel.
                    let geom = ConvGeom {
                        in_c: a.channels,
                        in_h: 1,
                        in_w: a.inner,
                        out_c: a.channels,
                        kernel: [1, 1],
                        stride: [1, 1],
                        pads: [0; 4],
                        groups: a.channels,
                    };
                    let w = a.scale.iter().map(|v| enc(i, "scale", v * pending)).collect::<Result<
                        Vec<R>,
                        _,
                    >>(
                    )?;
                    let b =
                        a.shift.iter().map(|v| enc(i, "shift", *v)).collect::<Result<_, _>>()?;
                    pending = 1.0;
                    steps.push(Step::Conv { geom, w, b });
                }
                Layer::Trees(te) => {
                    let s = &te.shape;
                    if s.features != len {
                        return Err(NnError::Shape(format!(
                            "layer {i}: trees over {} features after {len} values",
                            s.features
                        )));
                    }
                    s.check()?;
                    if te.thresholds.len() != s.nodes.len()
                        || te.leaf_weights.len() != s.leaves.len() * s.classes
                        || te.base.len() != s.classes
                    {
                        return Err(NnError::Shape(format!("layer {i}: tree weights")));
                    }
                    // Pending average-pool factors cannot fold into comparisons: apply them.
                    if pending != 1.0 {
                        return Err(NnError::Unsupported(format!(
                            "layer {i}: trees after an average pool"
                        )));
                    }
                    let code = |what: &str, v: &[f64]| -> Result<Vec<R>, NnError> {
                        v.iter().map(|v| enc(i, what, *v)).collect()
                    };
                    steps.push(Step::Trees {
                        shape: Box::new(s.clone()),
                        t: code("threshold", &te.thresholds)?,
                        w: code("leaf weight", &te.leaf_weights)?,
                        base: code("base value", &te.base)?,
                    });
                    len = s.classes;
                }
            }
        }
        if let Some(int) = int {
            if pending != 1.0 {
                return Err(NnError::Unsupported(
                    "a quantized model ends with an average pool: no requantization follows it"
                        .into(),
                ));
            }
            int.finish(&mut steps)?;
        }
        Ok(Self {
            fp,
            input_len: model.input_len(),
            steps,
            class_labels: model.class_labels.clone(),
            input_range: model.input_range,
        })
    }

    /// The public architecture.
    pub fn shape(&self) -> PlanShape {
        PlanShape {
            frac_bits: self.fp.frac_bits,
            input_len: self.input_len,
            steps: self
                .steps
                .iter()
                .map(|s| match s {
                    Step::Dense { inputs, outputs, .. } => {
                        StepShape::Dense { inputs: *inputs, outputs: *outputs }
                    }
                    Step::Relu { len } => StepShape::Relu { len: *len },
                    Step::Conv { geom, .. } => StepShape::Conv(*geom),
                    Step::MaxPool(g) => StepShape::MaxPool(*g),
                    Step::SumPool(g) => StepShape::SumPool(*g),
                    Step::Scale { len, divisor } => {
                        StepShape::Scale { len: *len, divisor: *divisor }
                    }
                    Step::Trees { shape, .. } => StepShape::Trees(shape.clone()),
                    Step::Requant { channels, inner, shift, .. } => {
                        StepShape::Requant { channels: *channels, inner: *inner, shift: *shift }
                    }
                    Step::Register(r) => StepShape::Register(*r),
                    Step::Spline(sp) => StepShape::Spline(sp.clone()),
                })
                .collect(),
            input_range: self.input_range,
        }
    }

    /// True for a plan of an integer model (see [`PlanShape::is_integer`]).
    pub fn is_integer(&self) -> bool {
        self.steps.iter().any(|s| matches!(s, Step::Requant { .. }))
    }

    /// The fixed-point format.
    pub fn format(&self) -> FixedPoint {
        self.fp
    }

    /// Class labels of the score entries, if the model names them.
    pub fn class_labels(&self) -> Option<&ClassLabels> {
        self.class_labels.as_ref()
    }

    /// All weights in sharing order (see [`PlanShape::weight_lens`]), after checking that the
    /// plan has exactly `shape`.
    pub(crate) fn weights_flat(&self, shape: &PlanShape) -> Result<Vec<R>, Error> {
        if self.shape() != *shape {
            return Err(Error::ApiMisuse("the plan does not match the public shape".into()));
        }
        let mut v = Vec::with_capacity(shape.weight_lens().iter().sum());
        for s in &self.steps {
            if let Step::Dense { w, b, .. } | Step::Conv { w, b, .. } = s {
                v.extend_from_slice(w);
                v.extend_from_slice(b);
            }
            if let Step::Trees { t, w, base: c, .. } | Step::Requant { lo: t, hi: w, mult: c, .. } =
                s
            {
                v.extend_from_slice(t);
                v.extend_from_slice(w);
                v.extend_from_slice(c);
            }
        }
        Ok(v)
    }

    /// Encodes real inputs (`batch × input_len`).
    pub fn encode_input(&self, x: &[f64]) -> Result<Vec<R>, NnError> {
        Ok(self.fp.encode_slice(x)?)
    }

    /// Decodes fixed-point outputs to reals.
    pub fn decode(&self, v: &[R]) -> Vec<f64> {
        v.iter().map(|&x| self.fp.decode(x)).collect()
    }

    /// Evaluates the plan in plaintext fixed point (floor truncation), `batch × input_len`
    /// encoded inputs to `batch × output_len` encoded scores: the reference for the secure run.
    pub fn eval_plain(&self, x: &[R], batch: usize) -> Result<Vec<R>, NnError> {
        self.eval_plain_observed(x, batch, |_| {})
    }

    /// [`FixedPlan::eval_plain`], showing `truncated` every batch of values the secure
    /// protocols truncate, as they are before the shift (products with twice the fractional
    /// bits; the bias is added after): probabilistic truncation fails with probability about
    /// |z| / 2^k for each such z (`core-rs/src/rep3/trunc.rs`), so these bound the failures
    /// of a run on the same input (`core-rs/examples/trunc_failure.rs`).
    pub fn eval_plain_observed(
        &self,
        x: &[R],
        batch: usize,
        mut truncated: impl FnMut(&[R]),
    ) -> Result<Vec<R>, NnError> {
        check_input(x.len(), batch, self.input_len)?;
        // An integer plan's linear products are exact.
        let f = if self.is_integer() { 0 } else { self.fp.frac_bits };
        let mut h = x.to_vec();
        let mut regs = Vec::new();
        for s in &self.steps {
            h = match s {
                Step::Dense { inputs, outputs, w, b } => {
                    let mut z = crate::ring::kernels::matmul(&h, w, batch, *inputs, *outputs);
                    truncated(&z);
                    for (i, v) in z.iter_mut().enumerate() {
                        *v = v.shr_arith(f) + b[i % outputs];
                    }
                    z
                }
                Step::Relu { .. } => {
                    h.into_iter().map(|v| if v.to_i64() < 0 { R::ZERO } else { v }).collect()
                }
                Step::Conv { geom: g, w, b } => {
                    h.push(R::ZERO);
                    let cols: Vec<R> = g.batch_patches(batch).iter().map(|&i| h[i]).collect();
                    let rows = batch * g.positions();
                    let full: Vec<R>;
                    let w = match grouped_gather(g) {
                        Some(idx) => {
                            full =
                                idx.iter().map(|&i| w.get(i).copied().unwrap_or(R::ZERO)).collect();
                            &full
                        }
                        None => w,
                    };
                    let mut z =
                        crate::ring::kernels::matmul(&cols, w, rows, g.full_patch_len(), g.out_c);
                    truncated(&z);
                    for (i, v) in z.iter_mut().enumerate() {
                        *v = v.shr_arith(f) + b[i % g.out_c];
                    }
                    g.chw_order(batch).iter().map(|&i| z[i]).collect()
                }
                Step::MaxPool(g) => g
                    .windows(batch)
                    .iter()
                    .map(|win| {
                        win.iter().map(|&i| h[i]).max_by_key(|v| v.to_i64()).unwrap_or(R::ZERO)
                    })
                    .collect(),
                Step::SumPool(g) => g
                    .windows(batch)
                    .iter()
                    .map(|win| win.iter().fold(R::ZERO, |a, &i| a + h[i]))
                    .collect(),
                Step::Scale { divisor, .. } => {
                    let c = inverse::<R>(self.fp, *divisor)?;
                    let z: Vec<R> = h.into_iter().map(|v| v * c).collect();
                    truncated(&z);
                    z.into_iter().map(|v| v.shr_arith(f)).collect()
                }
                Step::Trees { shape, t, w, base } => {
                    trees::eval_plain(shape, (t, w, base), &h, batch)
                }
                Step::Requant { channels, inner, shift, lo, hi, mult } => {
                    let c = |i: usize| i / inner % channels;
                    let z: Vec<R> = h
                        .iter()
                        .enumerate()
                        .map(|(i, v)| {
                            let v = v.to_i64().clamp(lo[c(i)].to_i64(), hi[c(i)].to_i64());
                            R::from_i64(v) * mult[c(i)]
                        })
                        .collect();
                    truncated(&z);
                    // Rounded to nearest (the secure run rounds stochastically, unbiased).
                    let half = R::ONE.shl(*shift - 1);
                    z.into_iter().map(|v| (v + half).shr_arith(*shift)).collect()
                }
                Step::Register(r) => r
                    .apply(
                        h,
                        &mut regs,
                        |a, b| crate::sharing::Linear::add(&a, &b),
                        |a, b| crate::sharing::Linear::sub(&a, &b),
                    )
                    .map_err(|e| NnError::Shape(e.to_string()))?,
                Step::Spline(sp) => {
                    let z: Vec<R> =
                        h.iter().map(|x| R::from_i64(sp.sum_at(x.to_i64(), f))).collect();
                    truncated(&z);
                    z.into_iter().map(|v| v.shr_arith(f)).collect()
                }
            };
        }
        if self.is_integer() {
            let one = R::from_i64(1 << self.fp.frac_bits);
            h.iter_mut().for_each(|v| *v *= one);
        }
        Ok(h)
    }
}

impl<R: IntRing> FixedPlan<R> {
    /// A worst-case bound, in units in the last place, on how far the secure run's scores may
    /// be from [`FixedPlan::eval_plain`]'s on the same input: every truncation of the secure run
    /// may give one less than the plaintext plan's floor (assuming no wrap-around), and each
    /// such difference grows through the following layers by their weights' absolute sums
    /// (ReLU and max pooling do not grow it, a sum pool adds its window, a residual `Add`
    /// adds both sides'). Infinite where a difference reaches a comparison whose outcome it may
    /// flip (a tree ensemble after a truncated layer).
    ///
    /// ```
    /// use ringfence_core::nn::{Dense, FixedPlan, Layer, Model};
    /// let dense = |w: Vec<f64>| Layer::Dense(Dense { inputs: 2, outputs: 2, bias: vec![0.0; 2],
    ///     weights: w });
    /// let model = Model { input_name: "x".into(), input_shape: vec![2], class_labels: None,
    ///     dropped_transforms: vec![], input_range: None,
    ///     layers: vec![dense(vec![1.0, 2.0, 0.5, 0.5]), Layer::Relu, dense(vec![3.0, -1.0, 0.0, 1.0])] };
    /// let plan = FixedPlan::<ringfence_core::ring::Z64>::new(&model, 13).unwrap();
    /// // One ulp from the first layer's truncation, times |3| + |−1|, plus the second's.
    /// assert_eq!(plan.truncation_spread(), 5.0);
    /// ```
    pub fn truncation_spread(&self) -> f64 {
        let (mut d, mut regs) = (vec![0.0f64; self.input_len], Vec::new());
        let weight = |w: &R| self.fp.decode(*w).abs();
        let worst = |d: &[f64]| d.iter().fold(0.0f64, |a, &v| a.max(v));
        for s in &self.steps {
            d = match s {
                Step::Dense { inputs, outputs, w, .. } => (0..*outputs)
                    .map(|o| {
                        1.0 + (0..*inputs).map(|j| weight(&w[j * outputs + o]) * d[j]).sum::<f64>()
                    })
                    .collect(),
                Step::Conv { geom: g, w, .. } => {
                    let x = worst(&d);
                    let per = (0..g.out_c).map(|o| {
                        1.0 + x
                            * (0..g.patch_len()).map(|j| weight(&w[j * g.out_c + o])).sum::<f64>()
                    });
                    vec![per.fold(0.0, f64::max); g.out_len()]
                }
                Step::Relu { .. } => d,
                Step::MaxPool(g) => vec![worst(&d); g.out_len()],
                Step::SumPool(g) => vec![worst(&d) * g.window_len() as f64; g.out_len()],
                Step::Scale { divisor, .. } => {
                    d.iter().map(|v| v / *divisor as f64 + 1.0).collect()
                }
                Step::Trees { shape, .. } if worst(&d) > 0.0 => vec![f64::INFINITY; shape.classes],
                Step::Trees { shape, .. } => vec![0.0; shape.classes],
                Step::Requant { channels, inner, shift, mult, .. } => {
                    let m =
                        mult.iter().fold(0.0f64, |a, v| a.max(v.to_i64().unsigned_abs() as f64));
                    let grow = m / f64::from(1u32 << shift);
                    vec![worst(&d) * grow + 1.0; channels * inner]
                }
                // A difference's spread, like a sum's, is at most its operands' together.
                Step::Register(r) => r.apply(d, &mut regs, sum, sum).unwrap_or_default(),
                // Continuous: a difference grows by the steepest slope, plus the truncation.
                Step::Spline(sp) => {
                    let l = sp.steepest(self.fp);
                    d.iter().map(|v| l * v + 1.0).collect()
                }
            };
        }
        worst(&d)
    }

    /// A worst-case bound on the error of every score of the secure run, in real units, for
    /// inputs of magnitude at most `input_abs` (see the module docs; assumes no truncation
    /// wrap-around).
    pub fn error_bound(&self, input_abs: f64) -> f64 {
        let plan = self;
        let ulp = 2f64.powi(-(plan.fp.frac_bits as i32));
        let n = plan.input_len;
        let (mut mag, mut err) = (vec![input_abs; n], vec![ulp / 2.0; n]);
        let mut regs = Vec::new();
        for s in &plan.steps {
            if let Step::Register(r) = s {
                // A sum's (or difference's) magnitude and error are at most the sums of its
                // operands'.
                let add = |(m, e): (Vec<f64>, Vec<f64>), (m2, e2): (Vec<f64>, Vec<f64>)| {
                    Ok((sum(m, m2)?, sum(e, e2)?))
                };
                // The plan was checked when it was made: every register read finds a value.
                let h = (core::mem::take(&mut mag), core::mem::take(&mut err));
                if let Ok(v) = r.apply(h, &mut regs, add, add) {
                    (mag, err) = v;
                }
            } else if let Step::Dense { inputs, outputs, w, b } = s {
                let (mut m2, mut e2) = (vec![0.0; *outputs], vec![0.0; *outputs]);
                for o in 0..*outputs {
                    let (mut sm, mut se) = (plan.fp.decode(b[o]).abs(), 2.0 * ulp + ulp / 2.0);
                    for j in 0..*inputs {
                        let wv = plan.fp.decode(w[j * outputs + o]).abs();
                        sm += wv * mag[j];
                        se += (wv + ulp / 2.0) * err[j] + mag[j] * ulp / 2.0;
                    }
                    m2[o] = sm;
                    e2[o] = se;
                }
                mag = m2;
                err = e2;
            } else if let Step::Conv { geom: g, w, b } = s {
                let (xm, xe) = (
                    mag.iter().fold(0.0, |a: f64, &v| a.max(v)),
                    err.iter().fold(0.0, |a: f64, &v| a.max(v)),
                );
                let (mut om, mut oe) = (0.0f64, 0.0f64);
                for o in 0..g.out_c {
                    let sw: f64 =
                        (0..g.patch_len()).map(|j| plan.fp.decode(w[j * g.out_c + o]).abs()).sum();
                    om = om.max(sw * xm + plan.fp.decode(b[o]).abs());
                    oe = oe.max(
                        (sw + g.patch_len() as f64 * ulp / 2.0) * xe
                            + g.patch_len() as f64 * xm * ulp / 2.0
                            + 2.5 * ulp,
                    );
                }
                mag = vec![om; g.out_len()];
                err = vec![oe; g.out_len()];
            } else if let Step::MaxPool(g) | Step::SumPool(g) = s {
                let (xm, xe) = (
                    mag.iter().fold(0.0, |a: f64, &v| a.max(v)),
                    err.iter().fold(0.0, |a: f64, &v| a.max(v)),
                );
                // A sum pool adds k values (its 1/k is in the next weights or a scale step).
                let k = if matches!(s, Step::SumPool(_)) { g.window_len() as f64 } else { 1.0 };
                mag = vec![k * xm; g.out_len()];
                err = vec![k * xe; g.out_len()];
            } else if let Step::Scale { divisor, .. } = s {
                // The factor's encoding error (at most ½ ulp) times the value, the truncation
                // (2 ulps), and the propagated error scaled by 1/k.
                let k = *divisor as f64;
                for (m, e) in mag.iter_mut().zip(err.iter_mut()) {
                    *e = *e / k + *m * ulp / 2.0 + 2.0 * ulp;
                    *m /= k;
                }
            } else if let Step::Spline(sp) = s {
                // The propagated error times the steepest slope, the slopes' rounding (½ ulp
                // per unit of the input's range) and the truncation (2 ulps); the magnitude is
                // the largest |f| over the input's range (at a knot or an end).
                let l = sp.steepest(plan.fp);
                for (m, e) in mag.iter_mut().zip(err.iter_mut()) {
                    let span = sp.span(plan.fp).max(*m) + *m;
                    *e = l * *e + span * ulp / 2.0 + 2.0 * ulp;
                    *m = sp.largest(plan.fp, *m);
                }
            }
        }
        err.into_iter().fold(0.0, f64::max)
    }
}
