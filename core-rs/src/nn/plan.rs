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

use super::geom::{ConvGeom, PoolGeom};
use super::model::{check_input, Layer, Model};
use super::NnError;
use crate::ring::fixed::FixedPoint;
use crate::ring::IntRing;
use crate::Error;

/// Fractional bits used by default (METEOR's d = 13).
pub const DEFAULT_FRAC_BITS: u32 = 13;

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
}

/// The public shape of one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
}

impl StepShape {
    /// Values per output sample.
    pub fn out_len(&self) -> usize {
        match self {
            Self::Dense { outputs, .. } => *outputs,
            Self::Relu { len } => *len,
            Self::Conv(g) => g.out_len(),
            Self::MaxPool(g) => g.out_len(),
        }
    }
}

/// Preprocessing a run of a plan consumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrepNeeds {
    /// Truncation pairs (one per dense output per sample).
    pub trunc_pairs: usize,
    /// daBits (one per ReLU value, plus `classes − 1` per sample for argmax).
    pub dabits: usize,
}

impl PlanShape {
    /// Values per output sample (scores).
    pub fn output_len(&self) -> usize {
        self.steps.last().map_or(self.input_len, StepShape::out_len)
    }

    /// The preprocessing one run of `batch` samples needs.
    pub fn needs(&self, batch: usize, output: Output) -> PrepNeeds {
        let mut n = PrepNeeds { trunc_pairs: 0, dabits: 0 };
        for s in &self.steps {
            match s {
                StepShape::Dense { outputs, .. } => n.trunc_pairs += batch * outputs,
                StepShape::Relu { len } => n.dabits += batch * len,
                StepShape::Conv(g) => n.trunc_pairs += batch * g.out_len(),
                StepShape::MaxPool(g) => n.dabits += batch * g.out_len() * (g.window_len() - 1),
            }
        }
        if output == Output::Argmax {
            n.dabits += batch * self.output_len().saturating_sub(1);
        }
        n
    }
}

/// Bias tiling: output `i` of a layer with `width` outputs per row gets bias `i % width`.
pub(crate) fn tile(len: usize, width: usize) -> Vec<usize> {
    (0..len).map(|i| i % width).collect()
}

/// A step with its weights held as `V` (shares of some scheme): what a secure backend runs.
pub(crate) enum WeightedStep<V> {
    Dense { inputs: usize, outputs: usize, w: V, b: V },
    Relu { len: usize },
    Conv { geom: ConvGeom, w: V, b: V },
    MaxPool(PoolGeom),
}

impl PlanShape {
    /// Lengths of the weight blocks in sharing order: `w` then `b` of each dense or conv step.
    pub(crate) fn weight_lens(&self) -> Vec<usize> {
        let mut lens = Vec::new();
        for s in &self.steps {
            match s {
                StepShape::Dense { inputs, outputs } => lens.extend([inputs * outputs, *outputs]),
                StepShape::Conv(g) => lens.extend([g.patch_len() * g.out_c, g.out_c]),
                StepShape::Relu { .. } | StepShape::MaxPool(_) => {}
            }
        }
        lens
    }

    /// Hands consecutive weight blocks (as split by [`PlanShape::weight_lens`]) to the steps.
    pub(crate) fn assemble<V>(&self, blocks: Vec<V>) -> Result<Vec<WeightedStep<V>>, Error> {
        let mut blocks = blocks.into_iter();
        let mut pair = || match (blocks.next(), blocks.next()) {
            (Some(w), Some(b)) => Ok((w, b)),
            _ => Err(Error::ApiMisuse("weights do not split by the plan's shape".into())),
        };
        self.steps
            .iter()
            .map(|s| {
                Ok(match *s {
                    StepShape::Dense { inputs, outputs } => {
                        let (w, b) = pair()?;
                        WeightedStep::Dense { inputs, outputs, w, b }
                    }
                    StepShape::Conv(geom) => {
                        let (w, b) = pair()?;
                        WeightedStep::Conv { geom, w, b }
                    }
                    StepShape::Relu { len } => WeightedStep::Relu { len },
                    StepShape::MaxPool(g) => WeightedStep::MaxPool(g),
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
    class_labels: Option<Vec<i64>>,
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
    /// `w` is `patch_len × out_c` row-major, `b` has `out_c`.
    Conv {
        geom: ConvGeom,
        w: Vec<R>,
        b: Vec<R>,
    },
    MaxPool(PoolGeom),
}

impl<R: IntRing> FixedPlan<R> {
    /// Encodes `model` with `frac_bits` fractional bits; a weight that does not fit is an
    /// error naming its layer.
    pub fn new(model: &Model, frac_bits: u32) -> Result<Self, NnError> {
        let fp = FixedPoint::new(frac_bits);
        if 2 * frac_bits + 8 >= R::BITS {
            return Err(NnError::Unsupported(format!(
                "{frac_bits} fractional bits in a {}-bit ring (products need 2f + 8 < k)",
                R::BITS
            )));
        }
        let mut len = model.input_len();
        let mut steps = Vec::new();
        for (i, l) in model.layers.iter().enumerate() {
            match l {
                Layer::Dense(d) => {
                    if d.inputs != len {
                        return Err(NnError::Shape(format!(
                            "layer {i}: {} inputs after {len} values",
                            d.inputs
                        )));
                    }
                    let mut w = vec![R::ZERO; d.inputs * d.outputs];
                    for (o, row) in d.weights.chunks_exact(d.inputs).enumerate() {
                        for (j, v) in row.iter().enumerate() {
                            w[j * d.outputs + o] = fp
                                .encode(*v)
                                .map_err(|e| NnError::Shape(format!("layer {i} weight: {e}")))?;
                        }
                    }
                    let b = fp
                        .encode_slice(&d.bias)
                        .map_err(|e| NnError::Shape(format!("layer {i} bias: {e}")))?;
                    steps.push(Step::Dense { inputs: d.inputs, outputs: d.outputs, w, b });
                    len = d.outputs;
                }
                Layer::Relu => steps.push(Step::Relu { len }),
                Layer::Conv(c) => {
                    let g = c.geom;
                    if g.in_len() != len {
                        return Err(NnError::Shape(format!(
                            "layer {i}: convolution of {} values after {len}",
                            g.in_len()
                        )));
                    }
                    let k = g.patch_len();
                    let mut w = vec![R::ZERO; k * g.out_c];
                    for (o, row) in c.weights.chunks_exact(k).enumerate() {
                        for (j, v) in row.iter().enumerate() {
                            w[j * g.out_c + o] = fp
                                .encode(*v)
                                .map_err(|e| NnError::Shape(format!("layer {i} weight: {e}")))?;
                        }
                    }
                    let b = fp
                        .encode_slice(&c.bias)
                        .map_err(|e| NnError::Shape(format!("layer {i} bias: {e}")))?;
                    steps.push(Step::Conv { geom: g, w, b });
                    len = g.out_len();
                }
                Layer::MaxPool(g) => {
                    if g.in_len() != len {
                        return Err(NnError::Shape(format!("layer {i}: pooling after {len}")));
                    }
                    steps.push(Step::MaxPool(*g));
                    len = g.out_len();
                }
            }
        }
        Ok(Self {
            fp,
            input_len: model.input_len(),
            steps,
            class_labels: model.class_labels.clone(),
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
                })
                .collect(),
        }
    }

    /// The fixed-point format.
    pub fn format(&self) -> FixedPoint {
        self.fp
    }

    /// Class labels of the score entries, if the model names them.
    pub fn class_labels(&self) -> Option<&[i64]> {
        self.class_labels.as_deref()
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
        check_input(x.len(), batch, self.input_len)?;
        let f = self.fp.frac_bits;
        let mut h = x.to_vec();
        for s in &self.steps {
            h = match s {
                Step::Dense { inputs, outputs, w, b } => {
                    let mut z = crate::ring::kernels::matmul(&h, w, batch, *inputs, *outputs);
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
                    let mut z =
                        crate::ring::kernels::matmul(&cols, w, rows, g.patch_len(), g.out_c);
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
            };
        }
        Ok(h)
    }
}

impl<R: IntRing> FixedPlan<R> {
    /// A worst-case bound on the error of every score of the secure run, in real units, for
    /// inputs of magnitude at most `input_abs` (see the module docs; assumes no truncation
    /// wrap-around).
    pub fn error_bound(&self, input_abs: f64) -> f64 {
        let plan = self;
        let ulp = 2f64.powi(-(plan.fp.frac_bits as i32));
        let n = plan.input_len;
        let (mut mag, mut err) = (vec![input_abs; n], vec![ulp / 2.0; n]);
        for s in &plan.steps {
            if let Step::Dense { inputs, outputs, w, b } = s {
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
            } else if let Step::MaxPool(g) = s {
                let (xm, xe) = (
                    mag.iter().fold(0.0, |a: f64, &v| a.max(v)),
                    err.iter().fold(0.0, |a: f64, &v| a.max(v)),
                );
                mag = vec![xm; g.out_len()];
                err = vec![xe; g.out_len()];
            }
        }
        err.into_iter().fold(0.0, f64::max)
    }
}
