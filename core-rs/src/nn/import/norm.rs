//! `BatchNormalization` (inference), scikit-learn's `Scaler` and elementwise arithmetic by
//! constants (input normalisation) of the importer: affine layers.
//!
//! At inference BN is the per-channel affine map `y = s·x + t` with `s = γ / √(var + ε)` and
//! `t = β − s·μ`. Directly after a Conv, Gemm or MatMul (possibly through a folded Add, an
//! Identity or a Dropout) it is folded into that layer: `W' = s·W` row by row (per output
//! channel) and `b' = s·(b − μ) + β`, which costs nothing at run time. Anywhere else (the
//! paper's AlexNet has MaxPool, ReLU, BN) it becomes a [`Layer::Affine`], evaluated by the
//! secure backends as a depthwise 1×1 convolution: one fixed-point multiplication per value
//! (its weights shared by the model owner like all weights) plus the shift.

use super::{attr, int_attr, only_attrs, what, Chain};
use crate::nn::model::{Affine, Layer};
use crate::nn::proto::NodeProto;
use crate::nn::NnError;

impl Chain<'_> {
    pub(super) fn batch_norm(&mut self, n: &NodeProto, fresh: bool) -> Result<(), NnError> {
        only_attrs(n, &["epsilon", "momentum", "spatial", "training_mode"])?;
        if int_attr(n, "training_mode", 0) != 0 {
            return Err(NnError::Unsupported(format!(
                "{}: attribute training_mode = 1 (inference only)",
                what(n)
            )));
        }
        if int_attr(n, "spatial", 1) != 1 {
            return Err(NnError::Unsupported(format!(
                "{}: attribute spatial = 0 (per-value statistics)",
                what(n)
            )));
        }
        if n.outputs.iter().skip(1).any(|o| !o.is_empty()) {
            return Err(NnError::Unsupported(format!(
                "{}: running mean/var outputs (training mode)",
                what(n)
            )));
        }
        self.act(n, 0)?;
        let eps = f64::from(attr(n, "epsilon").and_then(|a| a.f).unwrap_or(1e-5));
        let c = *self.shape.first().unwrap_or(&0);
        let mut params = Vec::with_capacity(4);
        for (i, name) in [(1, "scale"), (2, "B"), (3, "input_mean"), (4, "input_var")] {
            let v = self.constant(n, i)?.reals()?;
            if v.len() != c {
                return Err(NnError::Shape(format!(
                    "{}: {name} has {} values for {c} channels",
                    what(n),
                    v.len()
                )));
            }
            params.push(v);
        }
        let (gamma, beta, mean, var) = (&params[0], &params[1], &params[2], &params[3]);
        let mut scale = Vec::with_capacity(c);
        for (i, (g, v)) in gamma.iter().zip(var).enumerate() {
            let d = v + eps;
            if !(d > 0.0 && d.is_finite() && g.is_finite()) {
                return Err(NnError::Shape(format!(
                    "{}: channel {i} has variance {v} + epsilon {eps} (must be positive)",
                    what(n)
                )));
            }
            scale.push(g / d.sqrt());
        }
        let shift: Vec<f64> =
            scale.iter().zip(beta).zip(mean).map(|((s, b), m)| b - s * m).collect();
        let inner = self.len / c.max(1);
        match self.layers.last_mut() {
            Some(Layer::Dense(d)) if fresh && d.outputs == c => {
                for ((row, b), s) in
                    d.weights.chunks_exact_mut(d.inputs).zip(&mut d.bias).zip(&scale)
                {
                    row.iter_mut().for_each(|w| *w *= s);
                    *b *= s;
                }
                d.bias.iter_mut().zip(&shift).for_each(|(b, t)| *b += t);
            }
            Some(Layer::Conv(cv)) if fresh && cv.geom.out_c == c => {
                let k = cv.geom.patch_len();
                for ((row, b), s) in cv.weights.chunks_exact_mut(k).zip(&mut cv.bias).zip(&scale) {
                    row.iter_mut().for_each(|w| *w *= s);
                    *b *= s;
                }
                cv.bias.iter_mut().zip(&shift).for_each(|(b, t)| *b += t);
            }
            _ => {
                if c == 0 || inner * c != self.len {
                    return Err(NnError::Shape(format!(
                        "{}: input of shape {:?} has no channel axis",
                        what(n),
                        self.shape
                    )));
                }
                self.layers.push(Layer::Affine(Affine { channels: c, inner, scale, shift }));
                self.positive = false;
                self.rebind(n)?;
                return Ok(());
            }
        }
        self.fresh_linear = true;
        self.rebind(n)
    }

    /// ONNX-ML's `Scaler` (scikit-learn's `StandardScaler` in a pipeline): `y = (x − offset)·
    /// scale` per feature (or one offset and scale for all), a [`Layer::Affine`] of one value
    /// per channel.
    pub(super) fn scaler(&mut self, n: &NodeProto) -> Result<(), NnError> {
        only_attrs(n, &["offset", "scale"])?;
        self.act(n, 0)?;
        let f = self.len;
        let per = |name: &str, default: f32| -> Result<Vec<f64>, NnError> {
            let v: Vec<f64> = attr(n, name)
                .map_or_else(|| vec![default], |a| a.floats.clone())
                .into_iter()
                .map(f64::from)
                .collect();
            match v.len() {
                1 => Ok(vec![v[0]; f]),
                l if l == f => Ok(v),
                l => Err(NnError::Shape(format!(
                    "{}: {name} has {l} values for {f} features",
                    what(n)
                ))),
            }
        };
        let (offset, scale) = (per("offset", 0.0)?, per("scale", 1.0)?);
        if let Some(i) = offset.iter().chain(&scale).position(|v| !v.is_finite()) {
            return Err(NnError::Shape(format!("{}: value {i} is not finite", what(n))));
        }
        let shift = offset.iter().zip(&scale).map(|(o, s)| -o * s).collect();
        self.layers.push(Layer::Affine(Affine { channels: f, inner: 1, scale, shift }));
        self.shape = vec![f];
        self.positive = false;
        self.rebind(n)
    }

    /// `x + c`, `x − c`, `c − x`, `x·c` or `x / c` for a constant `c` (a scalar, one value per
    /// channel as `[C, 1, 1]` broadcasts, or one per value): PyTorch's input normalisation
    /// `(x − mean) / std` and the like. A [`Layer::Affine`], merged into an affine layer of the
    /// same layout that computes its input.
    pub(super) fn elementwise(&mut self, n: &NodeProto) -> Result<(), NnError> {
        only_attrs(n, &[])?;
        let op = n.op_type.as_str();
        let (a, c) = match (n.inputs.first(), n.inputs.get(1)) {
            (Some(x), Some(_)) if self.cur.contains(x) => (0, 1),
            (Some(_), Some(y)) if self.cur.contains(y) => (1, 0),
            _ => {
                self.act(n, 0)?;
                return self.act(n, 1);
            }
        };
        self.act(n, a)?;
        let t = self.constant(n, c)?;
        let v = t.reals()?;
        // The layout: one value for all, one per channel, or one per value.
        let channels = self.shape.first().copied().unwrap_or(self.len);
        let per_channel = v.len() == channels
            && self.shape.len() > 1
            && t.dims.iter().rev().take(self.shape.len() - 1).all(|&d| d == 1)
            && t.dims.len() >= self.shape.len();
        let (ch, inner) = match v.len() {
            1 => (1, self.len),
            l if per_channel => (l, self.len / l),
            l if l == self.len => (l, 1),
            _ => {
                return Err(NnError::Shape(format!(
                    "{}: constant of dims {:?} does not broadcast to an activation of shape {:?}",
                    what(n),
                    t.dims,
                    self.shape
                )))
            }
        };
        let (scale, shift): (Vec<f64>, Vec<f64>) = match (op, a) {
            ("Add", _) => (vec![1.0; ch], v),
            ("Sub", 0) => (vec![1.0; ch], v.iter().map(|x| -x).collect()),
            ("Sub", _) => (vec![-1.0; ch], v),
            ("Mul", _) => (v, vec![0.0; ch]),
            ("Div", 0) => {
                if let Some(i) = v.iter().position(|x| *x == 0.0 || !x.is_finite()) {
                    return Err(NnError::Shape(format!(
                        "{}: divisor {i} is {} (must be finite and non-zero)",
                        what(n),
                        v[i]
                    )));
                }
                (v.iter().map(|x| 1.0 / x).collect(), vec![0.0; ch])
            }
            _ => {
                return Err(NnError::Unsupported(format!(
                    "{}: a constant divided by the activation",
                    what(n)
                )))
            }
        };
        if scale.iter().all(|&s| s == 1.0) && shift.iter().all(|&t| t == 0.0) {
            // x·1 or x + 0 (LightGBM's export multiplies its probabilities by one): a view.
            return self.rebind(n);
        }
        let merge = self.affine_out.as_ref().is_some_and(|o| self.cur.contains(o));
        match self.layers.last_mut() {
            // s2·(s1·x + t1) + t2, in the layout before (a scalar fits any).
            Some(Layer::Affine(p))
                if merge && (ch == 1 || (p.channels, p.inner) == (ch, inner)) =>
            {
                for (i, (s1, t1)) in p.scale.iter_mut().zip(&mut p.shift).enumerate() {
                    let j = if ch == 1 { 0 } else { i };
                    *s1 *= scale[j];
                    *t1 = *t1 * scale[j] + shift[j];
                }
            }
            _ => self.layers.push(Layer::Affine(Affine { channels: ch, inner, scale, shift })),
        }
        self.positive = false;
        self.rebind(n)?;
        self.affine_out = n.outputs.first().cloned();
        Ok(())
    }
}
