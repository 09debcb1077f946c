//! Values the exporters compute from constants and static shapes, folded while the chain is
//! read: `Constant`, `Shape` of the running activation (its batch axis kept symbolic), and
//! `Gather`, `Unsqueeze`, `Squeeze`, `Concat`, `Slice`, `Cast`, `ConstantOfShape` and integer
//! `Add`/`Sub`/`Mul`/`Div` over such values. PyTorch writes `x.view(x.size(0), -1)` as
//! `Shape → Gather → Unsqueeze → Concat → Reshape`; after folding, the `Reshape` sees the
//! constant target `[batch, -1]` and keeps the batch axis like any other.

use std::collections::BTreeMap;

use super::{attr, int_attr, what, Chain};
use crate::nn::proto::{dtype, NodeProto, TensorProto};
use crate::nn::NnError;

/// An element of a folded integer tensor: the batch size (known only at run time) or a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Elem {
    Batch,
    Int(i64),
}

/// A folded value: integers (shapes and indices, the batch symbolic) with their dims, or a
/// constant tensor of any other type.
#[derive(Clone, Debug)]
pub(super) enum Folded {
    Ints { dims: Vec<i64>, v: Vec<Elem> },
    Tensor(TensorProto),
}

/// The folded values by name.
pub(super) type Values = BTreeMap<String, Folded>;

/// The ops this module folds.
pub(super) fn folds(op: &str) -> bool {
    matches!(
        op,
        "Constant"
            | "Shape"
            | "Gather"
            | "Unsqueeze"
            | "Squeeze"
            | "Concat"
            | "Slice"
            | "Cast"
            | "ConstantOfShape"
            | "Add"
            | "Sub"
            | "Mul"
            | "Div"
    )
}

fn ints_of(t: &TensorProto) -> Result<Folded, NnError> {
    let v = match t.data_type {
        dtype::INT64 => t.ints()?,
        dtype::INT32 => t.numbers()?.into_iter().map(|x| x as i64).collect(),
        _ => return Ok(Folded::Tensor(t.clone())),
    };
    Ok(Folded::Ints { dims: t.dims.clone(), v: v.into_iter().map(Elem::Int).collect() })
}

/// The plain integers of `f`, or why not.
fn plain(n: &NodeProto, f: &Folded) -> Result<Vec<i64>, NnError> {
    match f {
        Folded::Ints { v, .. } => v
            .iter()
            .map(|e| match e {
                Elem::Int(i) => Ok(*i),
                Elem::Batch => Err(NnError::Unsupported(format!(
                    "{}: computes with the batch size (only shapes that keep it as their first \
                     element are supported)",
                    what(n)
                ))),
            })
            .collect(),
        Folded::Tensor(t) => Err(NnError::Unsupported(format!(
            "{}: integer input expected, tensor {:?} of type {}",
            what(n),
            t.name,
            t.data_type
        ))),
    }
}

/// A 1-D (or scalar) list's elements.
fn elems<'a>(n: &NodeProto, f: &'a Folded) -> Result<(&'a [i64], &'a [Elem]), NnError> {
    match f {
        Folded::Ints { dims, v } if dims.len() <= 1 => Ok((dims, v)),
        _ => Err(NnError::Unsupported(format!("{}: only 1-D integer lists are folded", what(n)))),
    }
}

/// Python-style index `i` into a list of `len`.
fn index(n: &NodeProto, i: i64, len: usize) -> Result<usize, NnError> {
    let j = if i < 0 { i + len as i64 } else { i };
    usize::try_from(j)
        .ok()
        .filter(|&j| j < len)
        .ok_or_else(|| NnError::Malformed(format!("{}: index {i} out of a list of {len}", what(n))))
}

impl Chain<'_> {
    /// A folded value or constant initializer by name, if the input is one.
    pub(super) fn known(&self, name: &str) -> Result<Option<Folded>, NnError> {
        if let Some(f) = self.folded.get(name) {
            return Ok(Some(f.clone()));
        }
        match self.consts.get(name) {
            Some(t) => ints_of(t).map(Some),
            None => Ok(None),
        }
    }

    /// The axes of a reduction: its `axes` attribute (before opset 18) or its constant input
    /// `i` (from opset 18); empty when neither is given.
    pub(super) fn axes(&self, n: &NodeProto, i: usize) -> Result<Vec<i64>, NnError> {
        match attr(n, "axes") {
            Some(a) => Ok(a.ints.clone()),
            None => self.int_input(n, i),
        }
    }

    /// The integers of `n`'s constant input `i` (empty when the input is absent).
    pub(super) fn int_input(&self, n: &NodeProto, i: usize) -> Result<Vec<i64>, NnError> {
        match n.inputs.get(i).filter(|s| !s.is_empty()) {
            Some(name) => match self.known(name)? {
                Some(f) => plain(n, &f),
                None => Err(NnError::Unsupported(format!(
                    "{}: input {name:?} must be a constant",
                    what(n)
                ))),
            },
            None => Ok(Vec::new()),
        }
    }

    /// Folds `n` when it computes from folded values, constants or the running activation's
    /// shape only; `Ok(false)` when it does not (it is then read as a layer).
    pub(super) fn fold(&mut self, n: &NodeProto) -> Result<bool, NnError> {
        let op = n.op_type.as_str();
        if !matches!(n.domain.as_str(), "" | "ai.onnx") || !folds(op) {
            return Ok(false);
        }
        let value = match op {
            "Constant" => self.constant_node(n)?,
            "Shape" => {
                if !n.inputs.first().is_some_and(|i| self.cur.contains(i)) {
                    return Ok(false);
                }
                let mut v = vec![Elem::Batch];
                v.extend(self.shape.iter().map(|&d| Elem::Int(d as i64)));
                let len = v.len() as i64;
                let clamp = |i: i64| (if i < 0 { i + len } else { i }).clamp(0, len) as usize;
                let (s, e) = (clamp(int_attr(n, "start", 0)), clamp(int_attr(n, "end", len)));
                let v = v[s..e.max(s)].to_vec();
                Folded::Ints { dims: vec![v.len() as i64], v }
            }
            _ => {
                let mut ins = Vec::with_capacity(n.inputs.len());
                for name in &n.inputs {
                    if name.is_empty() {
                        ins.push(None);
                        continue;
                    }
                    match self.known(name)? {
                        Some(f) => ins.push(Some(f)),
                        None => return Ok(false),
                    }
                }
                self.fold_op(n, &ins)?
            }
        };
        let out = n
            .outputs
            .first()
            .ok_or_else(|| NnError::Malformed(format!("{}: no output", what(n))))?;
        let tensor = match &value {
            Folded::Tensor(t) => Some(t.clone()),
            Folded::Ints { dims, v } => v
                .iter()
                .map(|e| match e {
                    Elem::Int(x) => Some(*x),
                    Elem::Batch => None,
                })
                .collect::<Option<Vec<i64>>>()
                .map(|ints| TensorProto {
                    dims: dims.clone(),
                    data_type: dtype::INT64,
                    int64_data: ints,
                    ..TensorProto::default()
                }),
        };
        if let Some(mut t) = tensor {
            t.name = out.clone();
            self.tensors.insert(out.clone(), t);
        }
        self.folded.insert(out.clone(), value);
        Ok(true)
    }

    fn constant_node(&self, n: &NodeProto) -> Result<Folded, NnError> {
        let [a] = &n.attributes[..] else {
            return Err(NnError::Malformed(format!("{}: exactly one value attribute", what(n))));
        };
        let scalar = |dims: Vec<i64>, v: Vec<i64>| Folded::Ints {
            dims,
            v: v.into_iter().map(Elem::Int).collect(),
        };
        match a.name.as_str() {
            "value" => {
                let t = a.t.as_ref().ok_or_else(|| {
                    NnError::Malformed(format!("{}: value is not a tensor", what(n)))
                })?;
                ints_of(t)
            }
            "value_int" => Ok(scalar(Vec::new(), vec![a.i.unwrap_or(0)])),
            "value_ints" => Ok(scalar(vec![a.ints.len() as i64], a.ints.clone())),
            "value_float" | "value_floats" => {
                let v: Vec<f32> = a.f.map_or_else(|| a.floats.clone(), |f| vec![f]);
                let dims = if a.name == "value_float" { Vec::new() } else { vec![v.len() as i64] };
                Ok(Folded::Tensor(TensorProto {
                    dims,
                    data_type: dtype::FLOAT,
                    float_data: v,
                    ..TensorProto::default()
                }))
            }
            other => Err(NnError::Unsupported(format!("{}: attribute {other:?}", what(n)))),
        }
    }

    fn fold_op(&self, n: &NodeProto, ins: &[Option<Folded>]) -> Result<Folded, NnError> {
        let input = |i: usize| {
            ins.get(i)
                .and_then(Option::as_ref)
                .ok_or_else(|| NnError::Malformed(format!("{}: missing input {i}", what(n))))
        };
        let axes = |i: usize| -> Result<Vec<i64>, NnError> {
            match (attr(n, "axes"), ins.get(i).and_then(Option::as_ref)) {
                (Some(a), _) => Ok(a.ints.clone()),
                (None, Some(f)) => plain(n, f),
                (None, None) => Ok(Vec::new()),
            }
        };
        let list = |v: Vec<Elem>| Folded::Ints { dims: vec![v.len() as i64], v };
        Ok(match n.op_type.as_str() {
            "Gather" => {
                let (_, v) = elems(n, input(0)?)?;
                if int_attr(n, "axis", 0) != 0 {
                    return Err(NnError::Unsupported(format!("{}: axis != 0", what(n))));
                }
                let idx = input(1)?;
                let picked: Vec<Elem> = plain(n, idx)?
                    .into_iter()
                    .map(|i| index(n, i, v.len()).map(|j| v[j]))
                    .collect::<Result<_, _>>()?;
                // plain() took only integers, whose dims the result keeps.
                let dims = match idx {
                    Folded::Ints { dims, .. } => dims.clone(),
                    Folded::Tensor(t) => t.dims.clone(),
                };
                Folded::Ints { dims, v: picked }
            }
            "Unsqueeze" => {
                let (dims, v) = elems(n, input(0)?)?;
                match (dims.len(), &axes(1)?[..]) {
                    (0, [0 | -1]) => list(v.to_vec()),
                    _ => {
                        return Err(NnError::Unsupported(format!(
                            "{}: only a scalar made a 1-element list",
                            what(n)
                        )))
                    }
                }
            }
            "Squeeze" => {
                let (dims, v) = elems(n, input(0)?)?;
                match (dims.len(), v, &axes(1)?[..]) {
                    (1, [e], [] | [0 | -1]) => Folded::Ints { dims: Vec::new(), v: vec![*e] },
                    _ => {
                        return Err(NnError::Unsupported(format!(
                            "{}: only a 1-element list made a scalar",
                            what(n)
                        )))
                    }
                }
            }
            "Concat" => {
                let mut v = Vec::new();
                for i in 0..ins.len() {
                    v.extend_from_slice(elems(n, input(i)?)?.1);
                }
                list(v)
            }
            "Slice" => {
                let (_, v) = elems(n, input(0)?)?;
                let bound = |i: usize, default: i64| -> Result<i64, NnError> {
                    match ins.get(i).and_then(Option::as_ref) {
                        Some(f) => plain(n, f)?.first().copied().ok_or_else(|| {
                            NnError::Malformed(format!("{}: empty input {i}", what(n)))
                        }),
                        None => Ok(default),
                    }
                };
                let len = v.len() as i64;
                let (start, end, step) = (bound(1, 0)?, bound(2, len)?, bound(4, 1)?);
                if step != 1 || !matches!(&axes(3)?[..], [] | [0]) {
                    return Err(NnError::Unsupported(format!(
                        "{}: only step 1 along axis 0",
                        what(n)
                    )));
                }
                let clamp = |i: i64| (if i < 0 { i + len } else { i }).clamp(0, len) as usize;
                let (s, e) = (clamp(start), clamp(end));
                list(v[s..e.max(s)].to_vec())
            }
            "Cast" => match input(0)? {
                Folded::Ints { dims, v }
                    if matches!(int_attr(n, "to", 0) as i32, dtype::INT64 | dtype::INT32) =>
                {
                    Folded::Ints { dims: dims.clone(), v: v.clone() }
                }
                _ => {
                    return Err(NnError::Unsupported(format!(
                        "{}: casts other than between integer shapes",
                        what(n)
                    )))
                }
            },
            "ConstantOfShape" => {
                let dims = plain(n, input(0)?)?;
                let fill =
                    attr(n, "value").and_then(|a| a.t.clone()).unwrap_or_else(|| TensorProto {
                        dims: vec![1],
                        data_type: dtype::FLOAT,
                        float_data: vec![0.0],
                        ..TensorProto::default()
                    });
                let count = dims.iter().try_fold(1usize, |a, &d| {
                    usize::try_from(d).ok().and_then(|d| a.checked_mul(d))
                });
                let count = count
                    .filter(|&c| c <= crate::nn::geom::MAX_LAYER_VALUES)
                    .ok_or_else(|| NnError::Shape(format!("{}: shape {dims:?}", what(n))))?;
                match ints_of(&fill)? {
                    Folded::Ints { v, .. } if v.len() == 1 => {
                        Folded::Ints { dims, v: vec![v[0]; count] }
                    }
                    _ => {
                        let x = fill.reals()?.first().copied().unwrap_or(0.0) as f32;
                        Folded::Tensor(TensorProto {
                            dims,
                            data_type: dtype::FLOAT,
                            float_data: vec![x; count],
                            ..TensorProto::default()
                        })
                    }
                }
            }
            op @ ("Add" | "Sub" | "Mul" | "Div") => {
                let (a, b) = (input(0)?, input(1)?);
                let (Folded::Ints { dims: da, .. }, Folded::Ints { dims: db, .. }) = (a, b) else {
                    return Err(NnError::Unsupported(format!(
                        "{}: arithmetic on constant tensors before the first layer (fold it into \
                         the weights when exporting)",
                        what(n)
                    )));
                };
                let (x, y) = (plain(n, a)?, plain(n, b)?);
                let dims = if x.len() >= y.len() { da.clone() } else { db.clone() };
                let len = x.len().max(y.len());
                if !(x.len() == len || x.len() == 1) || !(y.len() == len || y.len() == 1) {
                    return Err(NnError::Shape(format!(
                        "{}: lengths {} and {}",
                        what(n),
                        x.len(),
                        y.len()
                    )));
                }
                let at = |v: &[i64], i: usize| if v.len() == 1 { v[0] } else { v[i] };
                let v = (0..len)
                    .map(|i| {
                        let (p, q) = (at(&x, i), at(&y, i));
                        let r = match op {
                            "Add" => p.checked_add(q),
                            "Sub" => p.checked_sub(q),
                            "Mul" => p.checked_mul(q),
                            _ => p.checked_div(q),
                        };
                        r.map(Elem::Int).ok_or_else(|| {
                            NnError::Malformed(format!("{}: {p} {op} {q} overflows", what(n)))
                        })
                    })
                    .collect::<Result<_, _>>()?;
                Folded::Ints { dims, v }
            }
            other => return Err(NnError::Unsupported(format!("op {other}"))),
        })
    }
}

/// A folded integer list as the constant tensor a `Reshape` reads: the batch element as 0
/// (ONNX: copy the input's dimension).
pub(super) fn as_shape(n: &NodeProto, f: &Folded) -> Result<Vec<i64>, NnError> {
    match f {
        Folded::Ints { v, .. } => v
            .iter()
            .enumerate()
            .map(|(i, e)| match (i, e) {
                (0, Elem::Batch) => Ok(0),
                (_, Elem::Int(x)) => Ok(*x),
                (_, Elem::Batch) => Err(NnError::Unsupported(format!(
                    "{}: the batch size at position {i} of the target shape",
                    what(n)
                ))),
            })
            .collect(),
        Folded::Tensor(t) => t.ints(),
    }
}
