//! Integer plans: int8 models computed with integers and one private truncation per layer.
//!
//! A quantized model (QDQ or QLinear ops, imported as [`Layer::Requant`] between integer
//! layers) computes, per layer, the exact integer sum `acc = Σ (x̄ − z_x)(w̄ − z_w) + b̄` and
//! requantizes it: `ȳ − z_y = clamp(round(acc·m), qmin − z_y, qmax − z_y)` with the real
//! multiplier `m = s_x·s_w / s_y`. The secure version ([`super::FixedPlan`] of such a model;
//! the rss paper's section 6.2, extract §7.3, and SecureQ8 before it) does:
//!
//! 1. the linear layer as an exact product in the ring (no truncation; `acc` is at most
//!    `16 + log₂ n` bits for `n` inputs, so a small ring holds it);
//! 2. the clamp **before** scaling, to bounds in `acc`'s units, `lo ≈ min/m` and `hi ≈ max/m`
//!    (exactly: from the integer multiplier, so that the result stays in `[min, max]`; both
//!    sides in one batch of comparisons), so the value that is scaled is small whatever the
//!    sum was;
//! 3. the product with the multiplier `⌊m·2^M⌉` and a probabilistic truncation by the public
//!    `M`: a truncation by a private amount (`−log₂ m` bits), one product and one truncation
//!    as the paper's `TruncPriv`.
//!
//! The bounds and multipliers are secret weights of the model owner (they reveal the scales),
//! shared like the other weights; the plan's shape says only the layer sizes and `M`.
//!
//! Where this differs from the paper: it carries the scales' residual factor `γ ∈ [1, 2)`
//! into the next layer and multiplies by a private power of two, exact only when each layer
//! has one weight scale (TFLite's per-tensor models); the multiplier here serves per-channel
//! scales too at the same cost (one product, one truncation), with a relative error of
//! `2^−(M + log₂ m)` — below 2^−12 for every layer of the shipped models. Every scheme's
//! truncation gives the floor or one less (one less than the quotient on average); the walk adds
//! one, so a requantization rounds stochastically and unbiased — the floor or one more, the
//! latter with the probability of the fractional part — where onnxruntime rounds to nearest
//! (the plaintext plan too). An activation can so differ from onnxruntime's by a step, and at
//! the edges of its range pass it by one; the tests compare classes.
//!
//! The input is a client's real values encoded with the plan's `f` fractional bits, as for
//! every plan, and its quantization (`clamp(round(x/s), …)`) is the first requantization,
//! computed securely: the client needs no quantization parameter.
//!
//! `M` is the largest shift up to 24 whose scaled values (about `|ȳ|·2^M`, at most 2^8·2^M)
//! stay below `2^(k−3)` in `Z_2^k`: 24 in Z_2^64, 20 in Z_2^32 (rss's truncation needs
//! `|v| < 2^(k−2)`; rep3's fails with probability about `|v|/2^k`, 2^−32 in Z_2^64, so rep3
//! runs integer plans in Z_2^64 only).

use super::model::{InputRange, Requant};
use super::plan::Step;
use super::NnError;
use crate::ring::fixed::FixedPoint;
use crate::ring::IntRing;

/// The largest requantization shift.
const MAX_SHIFT: u32 = 24;

/// The bookkeeping of one integer plan's construction: the units and magnitude of the values
/// as the layers go, and the requantizations' real multipliers until the shift is chosen.
pub(super) struct IntegerWalk {
    bits: u32,
    /// Units of the current values: `2^f` before the input's quantization, 1 after.
    unit: f64,
    /// An upper bound on the current values' magnitude (in their units).
    mag: f64,
    /// Whether the input has been quantized.
    quantized: bool,
    /// Per requantization, in step order.
    scales: Vec<Scaling>,
    /// The largest output magnitude of any requantization (`max(|min|, |max|) + 1`): the
    /// scaled value `clamp(x)·⌊m·2^M⌉` is at most about this times `2^M`.
    peak: f64,
}

impl IntegerWalk {
    pub(super) fn new<R: IntRing>(fp: FixedPoint, range: Option<InputRange>) -> Self {
        let unit = f64::from(1u32 << fp.frac_bits.min(31));
        let mag = range.map_or(fp.max_abs::<R>(), |r| f64::from(r.min.abs().max(r.max.abs())));
        Self { bits: R::BITS, unit, mag: mag * unit, quantized: false, scales: vec![], peak: 0.0 }
    }

    fn limit(&self) -> f64 {
        2f64.powi(self.bits as i32 - 3)
    }

    /// A linear layer with `rows` of `row` integer weights and its integer bias.
    pub(super) fn linear(
        &mut self,
        i: usize,
        weights: &[f64],
        row: usize,
        bias: &[f64],
        pending: f64,
    ) -> Result<(), NnError> {
        if !self.quantized || pending != 1.0 {
            return Err(NnError::Unsupported(format!(
                "layer {i}: in a quantized model every linear layer takes quantized values (a \
                 requantization must come before it{})",
                if pending != 1.0 { ", after the average pool" } else { "" }
            )));
        }
        let w = weights.chunks_exact(row.max(1)).map(|r| r.iter().map(|v| v.abs()).sum::<f64>());
        let b = bias.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        self.mag = w.fold(0.0f64, f64::max) * self.mag + b;
        if self.mag >= self.limit() {
            return Err(NnError::Unsupported(format!(
                "layer {i}: its integer sums can reach 2^{:.0}, too large for Z_2^{} (a wider \
                 ring serves this model)",
                self.mag.log2().ceil(),
                self.bits
            )));
        }
        Ok(())
    }

    /// A sum pool of `k` values.
    pub(super) fn sum_pool(&mut self, k: usize) {
        self.mag *= k as f64;
    }

    /// The requantization `q`, after average pools whose `1/k` product is `pending`: its step
    /// with the bounds set and the multipliers still to come ([`IntegerWalk::finish`]).
    pub(super) fn requant<R: IntRing>(
        &mut self,
        i: usize,
        q: &Requant,
        pending: f64,
    ) -> Result<Step<R>, NnError> {
        let m: Vec<f64> = q.scale.iter().map(|s| s * pending / self.unit).collect();
        if m.iter().any(|m| !m.is_finite() || *m <= 0.0) {
            return Err(NnError::Unsupported(format!("layer {i}: requantization scales {m:?}")));
        }
        let top = (q.min.unsigned_abs().max(q.max.unsigned_abs()) + 1) as f64;
        // The multiplier's rounding adds up to |clamp(x)|/2 = top/(2m) to the scaled value.
        let least = m.iter().fold(f64::INFINITY, |a, &m| a.min(m));
        self.peak = self.peak.max(top * (1.0 + 1.0 / (least * 2f64.powi(MAX_SHIFT as i32))));
        self.scales.push(Scaling { layer: i, m, range: (q.min, q.max) });
        self.mag = top;
        self.unit = 1.0;
        self.quantized = true;
        let (channels, inner) = (q.channels, q.inner);
        Ok(Step::Requant { channels, inner, shift: 0, lo: vec![], hi: vec![], mult: vec![] })
    }

    /// Chooses the shift and sets every requantization's multipliers `⌊m·2^M⌉` and, from them,
    /// its clamp bounds `lo = ⌈min·2^M / mult⌉`, `hi = ⌊max·2^M / mult⌋`: the scaled value then
    /// lies in `[min, max]·2^M`, so the result, the floor or one more, stays in the range.
    pub(super) fn finish<R: IntRing>(self, steps: &mut [Step<R>]) -> Result<(), NnError> {
        // The largest M with peak·2^M below the limit, at most MAX_SHIFT.
        let room = (self.limit() / self.peak.max(f64::MIN_POSITIVE)).log2().floor();
        let shift = room.min(f64::from(MAX_SHIFT));
        if shift < 1.0 {
            return Err(NnError::Unsupported(format!(
                "the requantized values do not fit Z_2^{} with any shift",
                self.bits
            )));
        }
        let (shift, one) = (shift as u32, 2f64.powi(shift as i32));
        let limit = self.limit();
        let mut scales = self.scales.into_iter();
        for s in steps {
            let Step::Requant { shift: sh, lo, hi, mult, .. } = s else { continue };
            let Scaling { layer: i, m, range: (min, max) } =
                scales.next().ok_or_else(|| NnError::Shape("requant".into()))?;
            let fit = |v: f64| -> Result<R, NnError> {
                if !v.is_finite() || v.abs() >= limit {
                    return Err(NnError::Unsupported(format!(
                        "layer {i}: a requantization bound of {v:e} does not fit the ring"
                    )));
                }
                Ok(R::from_i64(v as i64))
            };
            *sh = shift;
            let ints = m
                .iter()
                .map(|m| {
                    let v = (m * one).round();
                    if v < 1.0 {
                        return Err(NnError::Unsupported(format!(
                            "layer {i}: the requantization multiplier {m:e} is below 2^-{shift}, \
                             the finest this ring resolves"
                        )));
                    }
                    Ok(v)
                })
                .collect::<Result<Vec<f64>, _>>()?;
            *lo = ints
                .iter()
                .map(|&u| fit((min as f64 * one / u).ceil()))
                .collect::<Result<_, _>>()?;
            *hi = ints
                .iter()
                .map(|&u| fit((max as f64 * one / u).floor()))
                .collect::<Result<_, _>>()?;
            *mult = ints.iter().map(|&u| R::from_i64(u as i64)).collect();
        }
        Ok(())
    }
}

/// One requantization's real multipliers and its range, until the shift is chosen.
struct Scaling {
    layer: usize,
    m: Vec<f64>,
    range: (i64, i64),
}

/// An integer model's weight or bias, which must be an integer that fits the ring.
pub(super) fn integer_weight<R: IntRing>(i: usize, what: &str, v: f64) -> Result<R, NnError> {
    if v.fract() != 0.0 || v.abs() >= 2f64.powi(R::BITS as i32 - 2) {
        return Err(NnError::Shape(format!(
            "layer {i} {what}: {v} is not an integer of the quantized model"
        )));
    }
    Ok(R::from_i64(v as i64))
}
