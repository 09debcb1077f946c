//! Elementwise activations other than ReLU, as continuous piecewise-linear functions.
//!
//! A [`Spline`] with knots `t_0 < … < t_K` and slopes `s_L` (left of `t_0`), `m_0 … m_{K−1}`
//! (on each `[t_i, t_{i+1}]`) and `s_R` (right of `t_K`) is, with `r_i = relu(x − t_i)`,
//!
//! ```text
//! f(x) = f(t_0) + s_L·((x − t_0) − r_0) + Σ_{i<K} m_i·(r_i − r_{i+1}) + s_R·r_K
//! ```
//!
//! so a secure run computes it with the `K + 1` ReLUs of one batch (the rounds of one ReLU)
//! and one truncation: the sum is local (public slopes times shares), in twice the plan's
//! fractional bits. Each slope multiplies a value of at most one piece's width (or the
//! tails), which keeps the slopes' rounding error to `2^−(f+1)` per unit of the knots' span.
//!
//! A piecewise-linear activation (`LeakyRelu`, `Clip`, `HardSigmoid`) is exact this way. A
//! smooth one (`Sigmoid`, `Tanh`) is interpolated at evenly spaced knots and held constant
//! beyond them; its [`Spline::bound`] is the interpolation error `h²/8 · max|f″|` plus the
//! tails' `|f(±∞) − f(t)|`. The knots and slopes are public (they follow from the
//! activation's name, as a layer's kind does); the fixed-point plan encodes them once, and
//! every party reads the same values from the model's shape.

use super::NnError;
use crate::ring::fixed::FixedPoint;
use crate::ring::Z64;

/// Most knots of a spline: bounds a shape file's claim before anything is allocated.
pub const MAX_KNOTS: usize = 1024;

/// Pieces of the interpolated activations: 64, a ReLU batch of 65 values per activation.
const PIECES: usize = 64;

/// An elementwise continuous piecewise-linear function (see the module docs).
#[derive(Clone, PartialEq)]
pub struct Spline {
    /// What it computes (the ONNX op it stands for), e.g. `Sigmoid`.
    pub name: String,
    /// The knots, strictly increasing.
    pub knots: Vec<f64>,
    /// `s_L`, one slope per piece between knots, then `s_R`: `knots.len() + 1` values.
    pub slopes: Vec<f64>,
    /// The value at the first knot.
    pub value: f64,
    /// The largest distance from the function it stands for, over all reals (0: exact).
    pub bound: f64,
}

impl core::fmt::Debug for Spline {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} ({} knots, within {:.1e})", self.name, self.knots.len(), self.bound)
    }
}

impl Spline {
    /// The logistic function on 64 pieces over [−8, 8], constant beyond: within 1.1e-3.
    ///
    /// ```
    /// use ringfence_core::nn::Spline;
    /// let s = Spline::sigmoid();
    /// for x in [-20.0, -3.3, 0.0, 0.7, 9.0] {
    ///     assert!((s.eval(x) - 1.0 / (1.0 + (-x as f64).exp())).abs() <= s.bound);
    /// }
    /// ```
    pub fn sigmoid() -> Self {
        let f = |x: f64| 1.0 / (1.0 + (-x).exp());
        // max |σ''| = 1/(6√3), at x = ±ln(2 + √3).
        Self::interpolate("Sigmoid", f, 8.0, 1.0 / (6.0 * 3f64.sqrt()))
    }

    /// `tanh` on 64 pieces over [−4, 4], constant beyond: within 2.2e-3.
    pub fn tanh() -> Self {
        // max |tanh''| = 4/(3√3), at x = ±atanh(1/√3).
        Self::interpolate("Tanh", f64::tanh, 4.0, 4.0 / (3.0 * 3f64.sqrt()))
    }

    /// `x` for `x ≥ 0`, `alpha·x` below (exact).
    pub fn leaky_relu(alpha: f64) -> Self {
        Self {
            name: format!("LeakyRelu({alpha})"),
            knots: vec![0.0],
            slopes: vec![alpha, 1.0],
            value: 0.0,
            bound: 0.0,
        }
    }

    /// `min(max(x, lo), hi)` (exact): ONNX's `Clip` of a float activation, ReLU6. An infinite
    /// bound is no bound; `None` when neither is finite (an identity) or `lo > hi`.
    ///
    /// ```
    /// use ringfence_core::nn::Spline;
    /// let relu6 = Spline::clip(0.0, 6.0).unwrap();
    /// assert_eq!((relu6.eval(-1.0), relu6.eval(2.5), relu6.eval(7.0)), (0.0, 2.5, 6.0));
    /// assert_eq!(Spline::clip(f64::NEG_INFINITY, 1.0).unwrap().eval(-9.0), -9.0);
    /// assert!(Spline::clip(f64::NEG_INFINITY, f64::INFINITY).is_none());
    /// ```
    pub fn clip(lo: f64, hi: f64) -> Option<Self> {
        let name = format!("Clip({lo}, {hi})");
        let (knots, slopes, value) = match (lo.is_finite(), hi.is_finite()) {
            _ if lo > hi => return None,
            (true, true) if lo == hi => (vec![lo], vec![0.0, 0.0], lo),
            (true, true) => (vec![lo, hi], vec![0.0, 1.0, 0.0], lo),
            (true, false) => (vec![lo], vec![0.0, 1.0], lo),
            (false, true) => (vec![hi], vec![1.0, 0.0], hi),
            (false, false) => return None,
        };
        Some(Self { name, knots, slopes, value, bound: 0.0 })
    }

    /// `max(0, min(1, alpha·x + beta))` (exact), ONNX's `HardSigmoid`; `None` for `alpha ≤ 0`.
    pub fn hard_sigmoid(alpha: f64, beta: f64) -> Option<Self> {
        (alpha > 0.0 && alpha.is_finite() && beta.is_finite()).then(|| Self {
            name: format!("HardSigmoid({alpha}, {beta})"),
            knots: vec![-beta / alpha, (1.0 - beta) / alpha],
            slopes: vec![0.0, alpha, 0.0],
            value: 0.0,
            bound: 0.0,
        })
    }

    /// An odd-symmetric saturating `f` (`f(−x) = c − f(x)`, monotone) interpolated on
    /// [`PIECES`] pieces over `[−span, span]` and constant beyond; `f2` bounds `|f″|`.
    fn interpolate(name: &str, f: impl Fn(f64) -> f64, span: f64, f2: f64) -> Self {
        let h = 2.0 * span / PIECES as f64;
        let knots: Vec<f64> = (0..=PIECES).map(|i| -span + h * i as f64).collect();
        let inner = knots.windows(2).map(|t| (f(t[1]) - f(t[0])) / h);
        let slopes = core::iter::once(0.0).chain(inner).chain([0.0]).collect();
        // Beyond the knots the function moves at most to its limit (monotone tails).
        let tail = (f(1e9) - f(span)).abs().max((f(-1e9) - f(-span)).abs());
        Self {
            name: name.into(),
            knots,
            slopes,
            value: f(-span),
            bound: (h * h / 8.0 * f2).max(tail),
        }
    }

    /// Checks the structure: 1 to [`MAX_KNOTS`] finite, strictly increasing knots, one more
    /// slope, all finite.
    pub fn check(&self) -> Result<(), NnError> {
        let ok = (1..=MAX_KNOTS).contains(&self.knots.len())
            && self.slopes.len() == self.knots.len() + 1
            && self.knots.windows(2).all(|t| t[0] < t[1])
            && self.knots.iter().chain(&self.slopes).chain([&self.value]).all(|v| v.is_finite());
        if !ok {
            return Err(NnError::Shape(format!(
                "{}: {} knots and {} slopes (want 1 to {MAX_KNOTS} increasing knots, one more \
                 slope, all finite)",
                self.name,
                self.knots.len(),
                self.slopes.len()
            )));
        }
        Ok(())
    }

    /// The function at `x`, by the module's formula (as the secure run composes it).
    pub fn eval(&self, x: f64) -> f64 {
        let r: Vec<f64> = self.knots.iter().map(|t| (x - t).max(0.0)).collect();
        let (k, s) = (self.knots.len(), &self.slopes);
        let pieces: f64 = (0..k - 1).map(|i| s[i + 1] * (r[i] - r[i + 1])).sum();
        self.value + s[0] * ((x - self.knots[0]) - r[0]) + pieces + s[k] * r[k - 1]
    }
}

/// A spline in a plan's fixed point: knots, slopes and value encoded with the plan's
/// fractional bits (two's-complement `i64`), and the values per sample it applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplineShape {
    /// Values per sample.
    pub len: usize,
    /// Encoded knots.
    pub knots: Vec<i64>,
    /// Encoded slopes (`knots.len() + 1`).
    pub slopes: Vec<i64>,
    /// The encoded value at the first knot.
    pub value: i64,
}

impl SplineShape {
    /// The local sum of the module's formula at the encoded `x`, in `2·frac_bits` fractional
    /// bits before its truncation, in wrapping `i64` arithmetic (the ring's for `Z_2^64`).
    pub(crate) fn sum_at(&self, x: i64, frac_bits: u32) -> i64 {
        let r: Vec<i64> = self.knots.iter().map(|&t| x.wrapping_sub(t).max(0)).collect();
        let (k, s) = (self.knots.len(), &self.slopes);
        let mut acc = self.value.wrapping_shl(frac_bits);
        acc = acc.wrapping_add(s[0].wrapping_mul(x.wrapping_sub(self.knots[0]).wrapping_sub(r[0])));
        for i in 0..k - 1 {
            acc = acc.wrapping_add(s[i + 1].wrapping_mul(r[i].wrapping_sub(r[i + 1])));
        }
        acc.wrapping_add(s[k].wrapping_mul(r[k - 1]))
    }

    /// The decoded spline (a float view, for error bounds).
    fn decoded(&self, fp: FixedPoint) -> Spline {
        let dec = |v: &[i64]| v.iter().map(|&v| fp.decode(Z64(v as u64))).collect();
        Spline {
            name: String::new(),
            knots: dec(&self.knots),
            slopes: dec(&self.slopes),
            value: fp.decode(Z64(self.value as u64)),
            bound: 0.0,
        }
    }

    /// The largest slope's magnitude (how much a difference in the input can grow).
    pub(crate) fn steepest(&self, fp: FixedPoint) -> f64 {
        self.slopes.iter().map(|&v| fp.decode(Z64(v as u64)).abs()).fold(0.0, f64::max)
    }

    /// The knots' span, `t_K − t_0`.
    pub(crate) fn span(&self, fp: FixedPoint) -> f64 {
        let (a, b) = (self.knots[0], self.knots[self.knots.len() - 1]);
        fp.decode(Z64(b.wrapping_sub(a) as u64))
    }

    /// The largest `|f(x)|` for `|x| ≤ m`: at an end or a knot inside.
    pub(crate) fn largest(&self, fp: FixedPoint, m: f64) -> f64 {
        let s = self.decoded(fp);
        let inside = s.knots.iter().copied().filter(|t| t.abs() <= m);
        inside.chain([-m, m]).map(|x| s.eval(x).abs()).fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bounds hold on a fine grid well beyond the knots, and are not loose by more than
    /// a few times (the interpolation error is largest where |f″| is).
    #[test]
    fn the_smooth_activations_stay_within_their_bounds() {
        let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
        for (s, f) in
            [(Spline::sigmoid(), &sigmoid as &dyn Fn(f64) -> f64), (Spline::tanh(), &f64::tanh)]
        {
            s.check().unwrap();
            let worst = (-40_000..=40_000)
                .map(|i| i as f64 / 1000.0)
                .map(|x| (s.eval(x) - f(x)).abs())
                .fold(0.0, f64::max);
            assert!(worst <= s.bound && worst > s.bound / 4.0, "{s:?}: {worst}");
        }
        assert!(Spline::sigmoid().bound < 1.1e-3 && Spline::tanh().bound < 2.2e-3);
    }

    #[test]
    fn piecewise_linear_activations_are_exact() {
        let hs = Spline::hard_sigmoid(0.2, 0.5).unwrap();
        for i in -100..=100 {
            let x = i as f64 / 8.0;
            assert_eq!(Spline::leaky_relu(0.125).eval(x), if x < 0.0 { x / 8.0 } else { x });
            assert_eq!(Spline::clip(0.0, 6.0).unwrap().eval(x), x.clamp(0.0, 6.0));
            assert!((hs.eval(x) - (0.2 * x + 0.5).clamp(0.0, 1.0)).abs() < 1e-12, "{x}");
        }
        assert!(Spline::hard_sigmoid(0.0, 0.5).is_none());
    }

    /// The encoded evaluation follows the float one within the encoding's error.
    #[test]
    fn the_fixed_point_sum_tracks_the_spline() {
        let f = 13;
        let enc = |v: f64| (v * f64::from(1u32 << f)).round() as i64;
        for s in [Spline::sigmoid(), Spline::tanh(), Spline::leaky_relu(0.01)] {
            let shape = SplineShape {
                len: 1,
                knots: s.knots.iter().map(|&v| enc(v)).collect(),
                slopes: s.slopes.iter().map(|&v| enc(v)).collect(),
                value: enc(s.value),
            };
            for i in -3000..3000 {
                let x = i as f64 / 256.0;
                let got = (shape.sum_at(enc(x), f) >> f) as f64 / f64::from(1u32 << f);
                assert!((got - s.eval(x)).abs() < 2e-3, "{s:?} at {x}: {got}");
            }
        }
    }
}
