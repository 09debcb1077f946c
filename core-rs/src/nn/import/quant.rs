//! Quantized ops: int8 models as onnxruntime's quantization tool writes them, in both of
//! ONNX's forms, imported as an integer model (`Layer::Requant` between integer layers; see
//! `nn::quant` for how it is computed).
//!
//! * **QOperator**: `QuantizeLinear` at the input, `QLinearConv`, `QLinearMatMul`,
//!   `com.microsoft` `QGemm` and `QLinearGlobalAveragePool`, `MaxPool`/`Flatten`/`Reshape` on
//!   the quantized tensor, `DequantizeLinear` at the output.
//! * **QDQ**: float `Conv`/`Gemm`/`MatMul` whose weights and bias are `DequantizeLinear`s of
//!   integer initializers, each activation passing through `QuantizeLinear` →
//!   `DequantizeLinear`; float `MaxPool`, pooling, `Relu` and `Clip` between them.
//!
//! The importer follows the running activation's quantization: the real value of one unit
//! (`s_x` after a quantization, `s_x·s_w` per channel after an integer layer), and whether it
//! holds exactly the centred values of a quantization (so that a `DequantizeLinear` →
//! `QuantizeLinear` with the same parameters, as around a `Flatten`, costs nothing). A
//! `QuantizeLinear` becomes a `Requant` by `unit / s_y`; a `Relu` or `Clip` before it narrows
//! its range instead of costing comparisons. Per-tensor activation parameters, per-tensor or
//! per-channel (axis 0) weight scales; anything else is refused naming the op.

use std::collections::BTreeMap;

use super::{attr, int_attr, only_attrs, what, Chain};
use crate::nn::model::{Layer, Requant, Spline};
use crate::nn::proto::{dtype, Attribute, NodeProto, TensorProto};
use crate::nn::NnError;

/// One quantization: `real = scale·(q − zero)` with `q` in `[qmin, qmax]`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Qp {
    scale: f64,
    zero: i64,
    qmin: i64,
    qmax: i64,
}

/// The import state of a quantized model.
#[derive(Debug, Default)]
pub(super) struct Quant {
    /// `DequantizeLinear`s of initializers, as real constants by output name.
    pub(super) consts: BTreeMap<String, TensorProto>,
    /// Their scales along axis 0 (one entry when per-tensor).
    scales: BTreeMap<String, Vec<f64>>,
    /// The real value of one unit of the running activation, per channel (one entry: every
    /// channel); `None` while the activation is not quantized.
    unit: Option<Vec<f64>>,
    /// The quantization whose centred values the running activation holds exactly.
    exact: Option<Qp>,
    /// A ReLU or Clip on real values, for the next quantization's range.
    clip: Option<(f64, f64)>,
    /// The last quantization's scale (the output's, at the end).
    last_scale: Option<f64>,
}

/// Rounds to nearest, ties to even (as onnxruntime quantizes).
fn round_even(v: f64) -> f64 {
    if (v - v.trunc()).abs() == 0.5 {
        2.0 * (v / 2.0).round()
    } else {
        v.round()
    }
}

impl Chain<'_> {
    /// True once the model has quantized its input: an integer model.
    pub(super) fn quantized(&self) -> bool {
        self.quant.unit.is_some()
    }

    /// Scale and zero point of `n`'s inputs `si` and `zi` (a missing zero point is uint8 0).
    fn qparams(&self, n: &NodeProto, si: usize, zi: usize) -> Result<Qp, NnError> {
        let s = self.constant(n, si)?.numbers()?;
        let scale = match s[..] {
            [v] if v.is_finite() && v > 0.0 => v,
            _ => {
                return Err(NnError::Unsupported(format!(
                    "{}: scale {s:?} (one positive value: per-tensor activations only)",
                    what(n)
                )))
            }
        };
        let (zero, ty) = match n.inputs.get(zi).filter(|s| !s.is_empty()) {
            Some(_) => {
                let t = self.constant(n, zi)?;
                match t.numbers()?[..] {
                    [z] => (z as i64, t.data_type),
                    _ => {
                        return Err(NnError::Unsupported(format!(
                            "{}: zero point of {} values (one per tensor)",
                            what(n),
                            t.numbers()?.len()
                        )))
                    }
                }
            }
            None => (0, dtype::UINT8),
        };
        let (qmin, qmax) = match ty {
            dtype::UINT8 => (0, 255),
            dtype::INT8 => (-128, 127),
            t => {
                return Err(NnError::Unsupported(format!(
                    "{}: quantized type {t} (uint8 and int8 only)",
                    what(n)
                )))
            }
        };
        Ok(Qp { scale, zero, qmin, qmax })
    }

    /// Checks that `n`'s input 0 is the running activation, quantized as its inputs `si`, `zi`
    /// say.
    fn quantized_input(&self, n: &NodeProto, si: usize, zi: usize) -> Result<Qp, NnError> {
        self.act(n, 0)?;
        let p = self.qparams(n, si, zi)?;
        if self.quant.exact != Some(p) {
            return Err(NnError::Unsupported(format!(
                "{}: input quantized as {p:?}, but the running activation is {:?}",
                what(n),
                self.quant.exact
            )));
        }
        Ok(p)
    }

    /// Requantizes the running activation to `p`: a `Requant` layer, or nothing when it holds
    /// `p`'s values already.
    fn requantize(&mut self, n: &NodeProto, p: Qp) -> Result<(), NnError> {
        let clip = self.quant.clip.take();
        if self.quant.exact == Some(p) && clip.is_none() {
            return Ok(());
        }
        let unit = self.quant.unit.clone().unwrap_or_else(|| vec![1.0]);
        let (mut min, mut max) = (p.qmin - p.zero, p.qmax - p.zero);
        if let Some((lo, hi)) = clip {
            if lo.is_finite() {
                min = min.max(round_even(lo / p.scale) as i64);
            }
            if hi.is_finite() {
                max = max.min(round_even(hi / p.scale) as i64);
            }
        }
        if min > max {
            return Err(NnError::Unsupported(format!("{}: an empty clip range", what(n))));
        }
        let channels = unit.len();
        if self.len % channels != 0 {
            return Err(NnError::Shape(format!("{}: {channels} channel scales", what(n))));
        }
        let scale = unit.iter().map(|u| u / p.scale).collect();
        let inner = self.len / channels;
        self.layers.push(Layer::Requant(Requant { channels, inner, scale, min, max }));
        self.quant.unit = Some(vec![p.scale]);
        self.quant.exact = Some(p);
        self.quant.last_scale = Some(p.scale);
        Ok(())
    }

    pub(super) fn quantize_linear(&mut self, n: &NodeProto) -> Result<(), NnError> {
        only_attrs(n, &["axis", "saturate"])?;
        self.act(n, 0)?;
        let p = self.qparams(n, 1, 2)?;
        self.requantize(n, p)?;
        self.rebind(n)
    }

    pub(super) fn dequantize_linear(&mut self, n: &NodeProto) -> Result<(), NnError> {
        only_attrs(n, &["axis"])?;
        let x =
            n.inputs.first().ok_or_else(|| NnError::Malformed(format!("{}: no input", what(n))))?;
        if self.cur.contains(x) {
            // The running activation, viewed as reals: nothing to compute.
            let p = self.qparams(n, 1, 2)?;
            if self.quant.exact != Some(p) {
                return Err(NnError::Unsupported(format!(
                    "{}: dequantizes as {p:?} a value quantized as {:?}",
                    what(n),
                    self.quant.exact
                )));
            }
            return self.rebind(n);
        }
        // A constant (weights or bias): its real values, and its scales along axis 0.
        let q = self.constant(n, 0)?;
        let dims = q.dims.clone();
        let values = q.numbers()?;
        let scale = self.constant(n, 1)?.numbers()?;
        let zero = match n.inputs.get(2).filter(|s| !s.is_empty()) {
            Some(_) => self.constant(n, 2)?.numbers()?,
            None => vec![0.0],
        };
        let rows = dims.first().map_or(1, |&d| usize::try_from(d).unwrap_or(0).max(1));
        let per_row = scale.len() == rows && scale.len() > 1;
        if !(scale.len() == 1 || per_row && int_attr(n, "axis", 1) == 0)
            || !(zero.len() == 1 || zero.len() == scale.len())
            || scale.iter().any(|s| !s.is_finite() || *s <= 0.0)
        {
            return Err(NnError::Unsupported(format!(
                "{}: {} scales and {} zero points for dims {dims:?} (per tensor, or per channel \
                 along axis 0)",
                what(n),
                scale.len(),
                zero.len()
            )));
        }
        let inner = values.len() / rows;
        let at = |v: &[f64], r: usize| v[if v.len() == 1 { 0 } else { r }];
        let real = values
            .iter()
            .enumerate()
            .map(|(i, &q)| at(&scale, i / inner.max(1)) * (q - at(&zero, i / inner.max(1))))
            .collect();
        let out = n.outputs.first().cloned().unwrap_or_default();
        let t = TensorProto {
            name: out.clone(),
            dims,
            data_type: dtype::DOUBLE,
            double_data: real,
            ..TensorProto::default()
        };
        self.quant.consts.insert(out.clone(), t);
        self.quant.scales.insert(out, scale);
        Ok(())
    }

    /// A `Relu` or `Clip(lo, hi)` on a quantized model's real values: kept for the next
    /// quantization's range.
    pub(super) fn quantized_clip(
        &mut self,
        n: &NodeProto,
        lo: f64,
        hi: f64,
    ) -> Result<(), NnError> {
        self.act(n, 0)?;
        let (a, b) = self.quant.clip.unwrap_or((f64::NEG_INFINITY, f64::INFINITY));
        self.quant.clip = Some((a.max(lo), b.min(hi)));
        self.rebind(n)
    }

    /// `Clip` with its bounds from inputs 1 and 2 (opset ≥ 11) or attributes `min`, `max`.
    pub(super) fn clip(&mut self, n: &NodeProto) -> Result<(), NnError> {
        only_attrs(n, &["min", "max"])?;
        let bound = |i: usize, name: &str, default: f64| -> Result<f64, NnError> {
            if let Some(a) = attr(n, name).and_then(|a| a.f) {
                return Ok(f64::from(a));
            }
            match n.inputs.get(i).filter(|s| !s.is_empty()) {
                Some(_) => match self.constant(n, i)?.numbers()?[..] {
                    [v] => Ok(v),
                    _ => Err(NnError::Unsupported(format!("{}: bound of many values", what(n)))),
                },
                None => Ok(default),
            }
        };
        let (lo, hi) = (bound(1, "min", f64::NEG_INFINITY)?, bound(2, "max", f64::INFINITY)?);
        if self.quantized() {
            return self.quantized_clip(n, lo, hi);
        }
        if lo.is_nan() || hi.is_nan() || lo > hi {
            return Err(NnError::Unsupported(format!("{}: bounds [{lo}, {hi}]", what(n))));
        }
        match Spline::clip(lo, hi) {
            Some(s) => self.activation(n, s),
            // Clip with no bound is an identity.
            None => {
                self.act(n, 0)?;
                self.alias(n)
            }
        }
    }

    /// Before a linear layer of a quantized model: a pending ReLU is applied (a Clip cannot
    /// be without a quantization after it).
    pub(super) fn flush_clip(&mut self, n: &NodeProto) -> Result<(), NnError> {
        match self.quant.clip.take() {
            None => Ok(()),
            Some((lo, hi)) if lo == 0.0 && hi == f64::INFINITY => {
                self.layers.push(Layer::Relu);
                Ok(())
            }
            Some(_) => Err(NnError::Unsupported(format!(
                "{}: a Clip before it with no QuantizeLinear in between",
                what(n)
            ))),
        }
    }

    /// After the float code built a linear layer of a quantized model from dequantized
    /// weights (input `w` of `n`): its weights back to integers (`/ s_w`) and its bias in the
    /// sum's units (`/ (unit·s_w)`), and the sum's unit per output channel.
    pub(super) fn integer_layer(&mut self, n: &NodeProto, w: usize) -> Result<(), NnError> {
        let name = n.inputs.get(w).cloned().unwrap_or_default();
        let Some(ws) = self.quant.scales.get(&name).cloned() else {
            return Err(NnError::Unsupported(format!(
                "{}: float weights in a quantized model (they must be a DequantizeLinear of \
                 integers)",
                what(n)
            )));
        };
        // Per-channel scales are along axis 0 of the weight tensor: the outputs of a Conv and of
        // a Gemm with transB, the inputs of anything else.
        let along_outputs =
            n.op_type == "Conv" || (n.op_type == "Gemm" && int_attr(n, "transB", 0) != 0);
        if ws.len() > 1 && !along_outputs {
            return Err(NnError::Unsupported(format!(
                "{}: per-channel weight scales on a MatMul or a Gemm without transB (per-tensor \
                 scales there; per-channel on a Conv or a Gemm with transB = 1)",
                what(n)
            )));
        }
        let unit = match self.quant.unit.as_deref() {
            Some([u]) => *u,
            _ => {
                return Err(NnError::Unsupported(format!(
                    "{}: input not requantized after a per-channel layer",
                    what(n)
                )))
            }
        };
        let (weights, bias, row) = match self.layers.last_mut() {
            Some(Layer::Dense(d)) => (&mut d.weights, &mut d.bias, d.inputs),
            Some(Layer::Conv(c)) => (&mut c.weights, &mut c.bias, c.geom.patch_len()),
            _ => return Err(NnError::Shape(format!("{}: no layer to quantize", what(n)))),
        };
        let outs = bias.len();
        let s_w = |o: usize| ws[if ws.len() == 1 { 0 } else { o.min(ws.len() - 1) }];
        if ws.len() != 1 && ws.len() != outs {
            return Err(NnError::Unsupported(format!(
                "{}: {} weight scales for {outs} outputs",
                what(n),
                ws.len()
            )));
        }
        for (o, r) in weights.chunks_exact_mut(row.max(1)).enumerate() {
            for v in r {
                let q = *v / s_w(o);
                if (q - q.round()).abs() > 1e-3 {
                    return Err(NnError::Unsupported(format!(
                        "{}: weight {v} is not an integer multiple of its scale {}",
                        what(n),
                        s_w(o)
                    )));
                }
                *v = q.round();
            }
        }
        for (o, b) in bias.iter_mut().enumerate() {
            *b = round_even(*b / (unit * s_w(o)));
        }
        let units: Vec<f64> = (0..outs).map(|o| unit * s_w(o)).collect();
        let same = units.iter().all(|&u| u == units[0]);
        self.quant.unit = Some(if same { vec![units[0]] } else { units });
        self.quant.exact = None;
        Ok(())
    }

    /// `n` rewritten as the float op `op` on `inputs`, its dequantized weights registered:
    /// `(weights input, bias input)` each `(q, scale, zero point)` input indices of `n`, the
    /// bias with no scale (its scale is `s_x·s_w`).
    fn float_twin(
        &mut self,
        n: &NodeProto,
        op: &str,
        weights: (usize, usize, usize),
        bias: Option<usize>,
        x_scale: f64,
        keep: &[&str],
    ) -> Result<NodeProto, NnError> {
        let out = n.outputs.first().cloned().unwrap_or_default();
        let wname = format!("{out}#w");
        let dq = NodeProto {
            inputs: [weights.0, weights.1, weights.2]
                .map(|i| n.inputs.get(i).cloned().unwrap_or_default())
                .to_vec(),
            outputs: vec![wname.clone()],
            name: n.name.clone(),
            op_type: "DequantizeLinear".into(),
            attributes: vec![Attribute { name: "axis".into(), i: Some(0), ..Attribute::default() }],
            ..NodeProto::default()
        };
        self.dequantize_linear(&dq)?;
        let mut inputs = vec![n.inputs.first().cloned().unwrap_or_default(), wname.clone()];
        if let Some(b) = bias.filter(|&b| n.inputs.get(b).is_some_and(|s| !s.is_empty())) {
            let bq = self.constant(n, b)?;
            let ws = &self.quant.scales[&wname];
            let values = bq.numbers()?;
            let at = |o: usize| ws[if ws.len() == 1 { 0 } else { o.min(ws.len() - 1) }];
            let real = values.iter().enumerate().map(|(o, v)| v * x_scale * at(o)).collect();
            let bname = format!("{out}#b");
            let t = TensorProto {
                name: bname.clone(),
                dims: bq.dims.clone(),
                data_type: dtype::DOUBLE,
                double_data: real,
                ..TensorProto::default()
            };
            self.quant.consts.insert(bname.clone(), t);
            inputs.push(bname);
        }
        Ok(NodeProto {
            inputs,
            outputs: vec![out],
            name: n.name.clone(),
            op_type: op.into(),
            domain: String::new(),
            attributes: n
                .attributes
                .iter()
                .filter(|a| keep.contains(&a.name.as_str()))
                .cloned()
                .collect(),
        })
    }

    /// `QLinearConv`: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B.
    pub(super) fn qlinear_conv(&mut self, n: &NodeProto) -> Result<(), NnError> {
        let keep = ["kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"];
        only_attrs(n, &keep)?;
        let x = self.quantized_input(n, 1, 2)?;
        let twin = self.float_twin(n, "Conv", (3, 4, 5), Some(8), x.scale, &keep)?;
        self.conv(&twin)?;
        self.integer_layer(&twin, 1)?;
        let y = self.qparams(n, 6, 7)?;
        self.requantize(n, y)?;
        self.rebind(n)
    }

    /// `QLinearMatMul`: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp.
    pub(super) fn qlinear_matmul(&mut self, n: &NodeProto) -> Result<(), NnError> {
        only_attrs(n, &[])?;
        let x = self.quantized_input(n, 1, 2)?;
        let twin = self.float_twin(n, "MatMul", (3, 4, 5), None, x.scale, &[])?;
        self.matmul(&twin)?;
        self.integer_layer(&twin, 1)?;
        let y = self.qparams(n, 6, 7)?;
        self.requantize(n, y)?;
        self.rebind(n)
    }

    /// `com.microsoft` `QGemm`: A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp (without
    /// y_scale the output is the float sum).
    pub(super) fn qgemm(&mut self, n: &NodeProto) -> Result<(), NnError> {
        let keep = ["alpha", "transA", "transB"];
        only_attrs(n, &keep)?;
        let x = self.quantized_input(n, 1, 2)?;
        let twin = self.float_twin(n, "Gemm", (3, 4, 5), Some(6), x.scale, &keep)?;
        self.gemm(&twin)?;
        self.integer_layer(&twin, 1)?;
        if n.inputs.get(7).is_some_and(|s| !s.is_empty()) {
            let y = self.qparams(n, 7, 8)?;
            self.requantize(n, y)?;
        }
        self.rebind(n)
    }

    /// After an average pool: the mean keeps the unit, but it is not the quantization's values
    /// any more (a quantization with the same parameters must round and clamp it again).
    pub(super) fn averaged(&mut self) {
        self.quant.exact = None;
    }

    /// `Add` of a constant bias (real values, e.g. a `DequantizeLinear` of int32) right after a
    /// quantized dense layer: into its bias, in the sum's units.
    pub(super) fn quantized_add(&mut self, n: &NodeProto) -> Result<(), NnError> {
        let bias = self.added_bias(n)?;
        let unit = self.quant.unit.clone().unwrap_or_default();
        match (self.layers.last_mut(), self.quant.exact) {
            (Some(Layer::Dense(d)), None) if !unit.is_empty() => {
                for (o, (b, v)) in d.bias.iter_mut().zip(bias).enumerate() {
                    *b += round_even(v / unit[if unit.len() == 1 { 0 } else { o }]);
                }
            }
            _ => {
                return Err(NnError::Unsupported(format!(
                    "{}: in a quantized model, Add of a constant right after a MatMul/Gemm only",
                    what(n)
                )))
            }
        }
        self.rebind(n)
    }

    /// `com.microsoft` `QLinearGlobalAveragePool` (channels first): x, x_scale, x_zp,
    /// y_scale, y_zp.
    pub(super) fn qlinear_global_pool(&mut self, n: &NodeProto) -> Result<(), NnError> {
        only_attrs(n, &["channels_last"])?;
        if int_attr(n, "channels_last", 0) != 0 {
            return Err(NnError::Unsupported(format!("{}: channels_last = 1", what(n))));
        }
        self.quantized_input(n, 1, 2)?;
        let twin = NodeProto {
            inputs: vec![n.inputs[0].clone()],
            outputs: n.outputs.clone(),
            op_type: "GlobalAveragePool".into(),
            ..NodeProto::default()
        };
        self.avgpool(&twin, true)?;
        self.averaged();
        let y = self.qparams(n, 3, 4)?;
        self.requantize(n, y)?;
        self.rebind(n)
    }

    /// At the end of a quantized model: a pending ReLU, and the note that the scores are the
    /// quantized ones (the output's dequantization, a positive scale, is left out).
    pub(super) fn finish_quantized(&mut self) -> Result<(), NnError> {
        if !self.quantized() {
            return Ok(());
        }
        let end = NodeProto { op_type: "the graph's end".into(), ..NodeProto::default() };
        self.flush_clip(&end)?;
        if let Some(s) = self.quant.last_scale {
            self.dropped.push(format!("DequantizeLinear (scale {s})"));
        }
        Ok(())
    }
}
