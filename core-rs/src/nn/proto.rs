//! A minimal protobuf wire-format decoder for the subset of ONNX the importer reads.
//!
//! Messages decoded: `ModelProto` (ir_version, opset_import, graph, metadata_props),
//! `StringStringEntryProto`, `GraphProto` (node,
//! initializer, input, output), `NodeProto`, `AttributeProto`, `TensorProto` (dims, data_type,
//! float_data, int64_data, raw_data, double_data, data_location), `ValueInfoProto` with tensor
//! shapes. Unknown fields are skipped, as protobuf requires; every structural fault (truncated
//! varint or length, a length past the end, a group or reserved wire type, field number 0, a
//! known field with the wrong wire type, invalid UTF-8 in a string) is an error, never a panic.
//! Allocations are bounded by the input length: counts come from byte lengths already checked
//! against the buffer.

use super::NnError;

/// Wire types (protobuf encoding).
const VARINT: u8 = 0;
const I64: u8 = 1;
const LEN: u8 = 2;
const I32: u8 = 5;

/// One decoded field value.
#[derive(Clone, Copy)]
enum Val<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

/// Iterates over the fields of one message.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    msg: &'static str,
}

fn bad(msg: &str, why: impl core::fmt::Display) -> NnError {
    NnError::Malformed(format!("{msg}: {why}"))
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8], msg: &'static str) -> Self {
        Self { buf, pos: 0, msg }
    }

    fn varint(&mut self) -> Result<u64, NnError> {
        let mut v = 0u64;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(bad(self.msg, "truncated varint"));
            };
            self.pos += 1;
            if i == 9 && b > 1 {
                return Err(bad(self.msg, "varint longer than 64 bits"));
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(bad(self.msg, "varint longer than 10 bytes"))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], NnError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        let Some(end) = end else {
            return Err(bad(self.msg, format!("field of {n} bytes runs past the end")));
        };
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// The next `(field number, value)`, or `None` at the end of the message.
    fn next(&mut self) -> Result<Option<(u32, Val<'a>)>, NnError> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let tag = self.varint()?;
        let field = tag >> 3;
        if field == 0 || field > u64::from(u32::MAX >> 3) {
            return Err(bad(self.msg, format!("invalid field number {field}")));
        }
        let val = match (tag & 7) as u8 {
            VARINT => Val::Varint(self.varint()?),
            I64 => Val::Fixed64(u64::from_le_bytes(self.take(8)?.try_into().map_err(|_| {
                bad(self.msg, "short fixed64") // unreachable: take(8) returns 8 bytes
            })?)),
            LEN => {
                let n = self.varint()?;
                let n = usize::try_from(n).map_err(|_| bad(self.msg, "length overflows"))?;
                Val::Bytes(self.take(n)?)
            }
            I32 => Val::Fixed32(u32::from_le_bytes(
                self.take(4)?.try_into().map_err(|_| bad(self.msg, "short fixed32"))?,
            )),
            w => return Err(bad(self.msg, format!("unsupported wire type {w} (field {field})"))),
        };
        Ok(Some((field as u32, val)))
    }
}

fn want_bytes<'a>(msg: &str, f: u32, v: Val<'a>) -> Result<&'a [u8], NnError> {
    match v {
        Val::Bytes(b) => Ok(b),
        _ => Err(bad(msg, format!("field {f} should be length-delimited"))),
    }
}

fn want_varint(msg: &str, f: u32, v: Val<'_>) -> Result<u64, NnError> {
    match v {
        Val::Varint(x) => Ok(x),
        _ => Err(bad(msg, format!("field {f} should be a varint"))),
    }
}

fn want_string(msg: &str, f: u32, v: Val<'_>) -> Result<String, NnError> {
    let b = want_bytes(msg, f, v)?;
    String::from_utf8(b.to_vec()).map_err(|_| bad(msg, format!("field {f} is not UTF-8")))
}

/// Appends a repeated float field, packed or not.
fn push_floats(msg: &str, f: u32, v: Val<'_>, out: &mut Vec<f32>) -> Result<(), NnError> {
    match v {
        Val::Fixed32(x) => out.push(f32::from_bits(x)),
        Val::Bytes(b) if b.len() % 4 == 0 => {
            out.extend(b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        }
        _ => return Err(bad(msg, format!("field {f}: bad packed floats"))),
    }
    Ok(())
}

/// Appends a repeated double field, packed or not.
fn push_doubles(msg: &str, f: u32, v: Val<'_>, out: &mut Vec<f64>) -> Result<(), NnError> {
    match v {
        Val::Fixed64(x) => out.push(f64::from_bits(x)),
        Val::Bytes(b) if b.len() % 8 == 0 => out.extend(b.chunks_exact(8).map(|c| {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            f64::from_le_bytes(w)
        })),
        _ => return Err(bad(msg, format!("field {f}: bad packed doubles"))),
    }
    Ok(())
}

/// Appends a repeated int64 field (varints), packed or not.
fn push_ints(msg: &'static str, f: u32, v: Val<'_>, out: &mut Vec<i64>) -> Result<(), NnError> {
    match v {
        Val::Varint(x) => out.push(x as i64),
        Val::Bytes(b) => {
            let mut r = Reader::new(b, msg);
            while r.pos < b.len() {
                out.push(r.varint()? as i64);
            }
        }
        _ => return Err(bad(msg, format!("field {f}: bad packed ints"))),
    }
    Ok(())
}

/// `ModelProto`, the parts the importer reads.
#[derive(Debug, Default)]
pub(crate) struct ModelProto {
    pub(crate) ir_version: i64,
    /// `(domain, version)` pairs.
    pub(crate) opsets: Vec<(String, i64)>,
    pub(crate) graph: Option<GraphProto>,
    /// `metadata_props`: `(key, value)` pairs.
    pub(crate) metadata: Vec<(String, String)>,
}

/// `GraphProto`.
#[derive(Debug, Default)]
pub(crate) struct GraphProto {
    pub(crate) nodes: Vec<NodeProto>,
    pub(crate) initializers: Vec<TensorProto>,
    pub(crate) inputs: Vec<ValueInfo>,
    pub(crate) outputs: Vec<ValueInfo>,
    pub(crate) has_sparse_initializers: bool,
}

/// `NodeProto`.
#[derive(Debug, Default)]
pub(crate) struct NodeProto {
    pub(crate) inputs: Vec<String>,
    pub(crate) outputs: Vec<String>,
    pub(crate) name: String,
    pub(crate) op_type: String,
    pub(crate) domain: String,
    pub(crate) attributes: Vec<Attribute>,
}

/// `AttributeProto` (graph-valued attributes are only noted, not decoded).
#[derive(Debug, Default, Clone)]
pub(crate) struct Attribute {
    pub(crate) name: String,
    pub(crate) f: Option<f32>,
    pub(crate) i: Option<i64>,
    pub(crate) s: Option<Vec<u8>>,
    pub(crate) t: Option<TensorProto>,
    pub(crate) floats: Vec<f32>,
    pub(crate) ints: Vec<i64>,
    pub(crate) strings: Vec<Vec<u8>>,
    pub(crate) has_graph: bool,
}

/// `TensorProto`.
#[derive(Debug, Default, Clone)]
pub(crate) struct TensorProto {
    pub(crate) name: String,
    pub(crate) dims: Vec<i64>,
    pub(crate) data_type: i32,
    pub(crate) float_data: Vec<f32>,
    /// `int32_data`: the typed field of INT32, INT8, UINT8 (and other narrow types).
    pub(crate) int32_data: Vec<i64>,
    pub(crate) int64_data: Vec<i64>,
    pub(crate) double_data: Vec<f64>,
    /// `string_data`: the elements of a STRING tensor (bytes, UTF-8 by convention).
    pub(crate) string_data: Vec<Vec<u8>>,
    pub(crate) raw: Option<Vec<u8>>,
    pub(crate) external: bool,
}

/// A tensor dimension in a `ValueInfoProto` shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Dim {
    Value(i64),
    Param(String),
    Unknown,
}

/// `ValueInfoProto` with a tensor type.
#[derive(Debug, Default)]
pub(crate) struct ValueInfo {
    pub(crate) name: String,
    pub(crate) elem_type: Option<i32>,
    pub(crate) shape: Option<Vec<Dim>>,
    pub(crate) non_tensor: bool,
}

/// Decodes a serialized `ModelProto`.
pub(crate) fn decode_model(buf: &[u8]) -> Result<ModelProto, NnError> {
    const M: &str = "ModelProto";
    let mut m = ModelProto::default();
    let mut r = Reader::new(buf, M);
    while let Some((f, v)) = r.next()? {
        match f {
            1 => m.ir_version = want_varint(M, f, v)? as i64,
            7 => {
                if m.graph.is_some() {
                    return Err(bad(M, "more than one graph"));
                }
                m.graph = Some(decode_graph(want_bytes(M, f, v)?)?);
            }
            8 => m.opsets.push(decode_opset(want_bytes(M, f, v)?)?),
            14 => m.metadata.push(decode_string_entry(want_bytes(M, f, v)?)?),
            _ => {}
        }
    }
    Ok(m)
}

fn decode_string_entry(buf: &[u8]) -> Result<(String, String), NnError> {
    const M: &str = "StringStringEntryProto";
    let (mut key, mut value) = (String::new(), String::new());
    let mut r = Reader::new(buf, M);
    while let Some((f, v)) = r.next()? {
        match f {
            1 => key = want_string(M, f, v)?,
            2 => value = want_string(M, f, v)?,
            _ => {}
        }
    }
    Ok((key, value))
}

fn decode_opset(buf: &[u8]) -> Result<(String, i64), NnError> {
    const M: &str = "OperatorSetIdProto";
    let (mut domain, mut version) = (String::new(), 0);
    let mut r = Reader::new(buf, M);
    while let Some((f, v)) = r.next()? {
        match f {
            1 => domain = want_string(M, f, v)?,
            2 => version = want_varint(M, f, v)? as i64,
            _ => {}
        }
    }
    Ok((domain, version))
}

fn decode_graph(buf: &[u8]) -> Result<GraphProto, NnError> {
    const M: &str = "GraphProto";
    let mut g = GraphProto::default();
    let mut r = Reader::new(buf, M);
    while let Some((f, v)) = r.next()? {
        match f {
            1 => g.nodes.push(decode_node(want_bytes(M, f, v)?)?),
            5 => g.initializers.push(decode_tensor(want_bytes(M, f, v)?)?),
            11 => g.inputs.push(decode_value_info(want_bytes(M, f, v)?)?),
            12 => g.outputs.push(decode_value_info(want_bytes(M, f, v)?)?),
            15 => g.has_sparse_initializers = true,
            _ => {}
        }
    }
    Ok(g)
}

fn decode_node(buf: &[u8]) -> Result<NodeProto, NnError> {
    const M: &str = "NodeProto";
    let mut n = NodeProto::default();
    let mut r = Reader::new(buf, M);
    while let Some((f, v)) = r.next()? {
        match f {
            1 => n.inputs.push(want_string(M, f, v)?),
            2 => n.outputs.push(want_string(M, f, v)?),
            3 => n.name = want_string(M, f, v)?,
            4 => n.op_type = want_string(M, f, v)?,
            5 => n.attributes.push(decode_attribute(want_bytes(M, f, v)?)?),
            7 => n.domain = want_string(M, f, v)?,
            _ => {}
        }
    }
    Ok(n)
}

fn decode_attribute(buf: &[u8]) -> Result<Attribute, NnError> {
    const M: &str = "AttributeProto";
    let mut a = Attribute::default();
    let mut r = Reader::new(buf, M);
    while let Some((f, v)) = r.next()? {
        match (f, v) {
            (1, _) => a.name = want_string(M, f, v)?,
            (2, Val::Fixed32(x)) => a.f = Some(f32::from_bits(x)),
            (2, _) => return Err(bad(M, "field 2 (f) should be a float")),
            (3, _) => a.i = Some(want_varint(M, f, v)? as i64),
            (4, _) => a.s = Some(want_bytes(M, f, v)?.to_vec()),
            (5, _) => a.t = Some(decode_tensor(want_bytes(M, f, v)?)?),
            (6 | 11, _) => a.has_graph = true,
            (7, _) => push_floats(M, f, v, &mut a.floats)?,
            (8, _) => push_ints(M, f, v, &mut a.ints)?,
            (9, _) => a.strings.push(want_bytes(M, f, v)?.to_vec()),
            _ => {}
        }
    }
    Ok(a)
}

fn decode_tensor(buf: &[u8]) -> Result<TensorProto, NnError> {
    const M: &str = "TensorProto";
    let mut t = TensorProto::default();
    let mut r = Reader::new(buf, M);
    while let Some((f, v)) = r.next()? {
        match f {
            1 => push_ints(M, f, v, &mut t.dims)?,
            2 => t.data_type = want_varint(M, f, v)? as i32,
            4 => push_floats(M, f, v, &mut t.float_data)?,
            5 => push_ints(M, f, v, &mut t.int32_data)?,
            6 => t.string_data.push(want_bytes(M, f, v)?.to_vec()),
            7 => push_ints(M, f, v, &mut t.int64_data)?,
            8 => t.name = want_string(M, f, v)?,
            9 => t.raw = Some(want_bytes(M, f, v)?.to_vec()),
            10 => push_doubles(M, f, v, &mut t.double_data)?,
            13 => t.external = true,
            14 => t.external |= want_varint(M, f, v)? == 1,
            _ => {}
        }
    }
    Ok(t)
}

fn decode_value_info(buf: &[u8]) -> Result<ValueInfo, NnError> {
    const M: &str = "ValueInfoProto";
    let mut vi = ValueInfo::default();
    let mut r = Reader::new(buf, M);
    while let Some((f, v)) = r.next()? {
        match f {
            1 => vi.name = want_string(M, f, v)?,
            2 => decode_type(want_bytes(M, f, v)?, &mut vi)?,
            _ => {}
        }
    }
    Ok(vi)
}

fn decode_type(buf: &[u8], vi: &mut ValueInfo) -> Result<(), NnError> {
    const M: &str = "TypeProto";
    let mut r = Reader::new(buf, M);
    while let Some((f, v)) = r.next()? {
        match f {
            1 => {
                let mut tr = Reader::new(want_bytes(M, f, v)?, "TypeProto.Tensor");
                while let Some((f, v)) = tr.next()? {
                    match f {
                        1 => vi.elem_type = Some(want_varint(M, f, v)? as i32),
                        2 => vi.shape = Some(decode_shape(want_bytes(M, f, v)?)?),
                        _ => {}
                    }
                }
            }
            2..=9 => vi.non_tensor = true,
            _ => {}
        }
    }
    Ok(())
}

fn decode_shape(buf: &[u8]) -> Result<Vec<Dim>, NnError> {
    const M: &str = "TensorShapeProto";
    let mut dims = Vec::new();
    let mut r = Reader::new(buf, M);
    while let Some((f, v)) = r.next()? {
        if f != 1 {
            continue;
        }
        let mut d = Dim::Unknown;
        let mut dr = Reader::new(want_bytes(M, f, v)?, "TensorShapeProto.Dimension");
        while let Some((f, v)) = dr.next()? {
            match f {
                1 => d = Dim::Value(want_varint(M, f, v)? as i64),
                2 => d = Dim::Param(want_string(M, f, v)?),
                _ => {}
            }
        }
        dims.push(d);
    }
    Ok(dims)
}

/// ONNX `TensorProto.DataType` codes used here.
pub(crate) mod dtype {
    pub(crate) const FLOAT: i32 = 1;
    pub(crate) const UINT8: i32 = 2;
    pub(crate) const INT8: i32 = 3;
    pub(crate) const INT32: i32 = 6;
    pub(crate) const INT64: i32 = 7;
    pub(crate) const STRING: i32 = 8;
    pub(crate) const DOUBLE: i32 = 11;

    /// ONNX's name of an element type, for messages (`type 8` → "string").
    pub(crate) fn name(t: Option<i32>) -> String {
        let known = match t {
            Some(1) => "float",
            Some(2) => "uint8",
            Some(3) => "int8",
            Some(4) => "uint16",
            Some(5) => "int16",
            Some(6) => "int32",
            Some(7) => "int64",
            Some(8) => "string",
            Some(9) => "bool",
            Some(10) => "float16",
            Some(11) => "double",
            Some(16) => "bfloat16",
            Some(t) => return format!("element type {t}"),
            None => return "no element type".into(),
        };
        format!("type {known}")
    }
}

impl TensorProto {
    /// Number of elements from `dims` (an empty list is a scalar), overflow-checked.
    pub(crate) fn numel(&self) -> Result<usize, NnError> {
        self.dims.iter().try_fold(1usize, |acc, &d| {
            usize::try_from(d)
                .ok()
                .and_then(|d| acc.checked_mul(d))
                .ok_or_else(|| bad("TensorProto", format!("tensor {:?}: bad dims", self.name)))
        })
    }

    /// The elements as reals (FLOAT or DOUBLE; from raw_data or the typed field).
    pub(crate) fn reals(&self) -> Result<Vec<f64>, NnError> {
        let what = || format!("tensor {:?}", self.name);
        if self.external {
            return Err(NnError::Unsupported(format!("{}: external data", what())));
        }
        let n = self.numel()?;
        let v: Vec<f64> = match (self.data_type, &self.raw) {
            (dtype::FLOAT, Some(raw)) if raw.len() % 4 == 0 => raw
                .chunks_exact(4)
                .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect(),
            (dtype::FLOAT, None) => self.float_data.iter().map(|&x| f64::from(x)).collect(),
            (dtype::DOUBLE, Some(raw)) if raw.len() % 8 == 0 => raw
                .chunks_exact(8)
                .map(|c| {
                    let mut w = [0u8; 8];
                    w.copy_from_slice(c);
                    f64::from_le_bytes(w)
                })
                .collect(),
            (dtype::DOUBLE, None) => self.double_data.clone(),
            (t, _) if t != dtype::FLOAT && t != dtype::DOUBLE => {
                return Err(NnError::Unsupported(format!("{}: data type {t}", what())))
            }
            _ => Vec::new(),
        };
        if v.len() != n {
            return Err(bad(
                "TensorProto",
                format!("{}: {} elements stored, dims {:?} need {n}", what(), v.len(), self.dims),
            ));
        }
        Ok(v)
    }

    /// The elements as reals from any of FLOAT, DOUBLE, INT8, UINT8, INT32 and INT64 (a
    /// quantized model's weights, scales and zero points).
    pub(crate) fn numbers(&self) -> Result<Vec<f64>, NnError> {
        let width = match self.data_type {
            dtype::UINT8 | dtype::INT8 => 1,
            dtype::INT32 => 4,
            dtype::INT64 => return Ok(self.ints()?.into_iter().map(|v| v as f64).collect()),
            _ => return self.reals(),
        };
        if self.external {
            return Err(NnError::Unsupported(format!("tensor {:?}: external data", self.name)));
        }
        let n = self.numel()?;
        let v: Vec<f64> = match (&self.raw, self.data_type) {
            (Some(raw), dtype::UINT8) => raw.iter().map(|&b| f64::from(b)).collect(),
            (Some(raw), dtype::INT8) => raw.iter().map(|&b| f64::from(b as i8)).collect(),
            (Some(raw), _) if raw.len() % width == 0 => raw
                .chunks_exact(4)
                .map(|c| f64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect(),
            (Some(_), _) => Vec::new(),
            // The typed field holds INT8 and UINT8 values as int32 varints.
            (None, _) => self.int32_data.iter().map(|&v| v as i32 as f64).collect(),
        };
        if v.len() != n {
            return Err(bad(
                "TensorProto",
                format!("tensor {:?}: {} elements stored, {n} expected", self.name, v.len()),
            ));
        }
        Ok(v)
    }

    /// The elements as integers (INT64).
    pub(crate) fn ints(&self) -> Result<Vec<i64>, NnError> {
        if self.data_type != dtype::INT64 {
            return Err(NnError::Unsupported(format!(
                "tensor {:?}: data type {} where int64 is expected",
                self.name, self.data_type
            )));
        }
        let n = self.numel()?;
        let v: Vec<i64> = match &self.raw {
            Some(raw) if raw.len() % 8 == 0 => raw
                .chunks_exact(8)
                .map(|c| {
                    let mut w = [0u8; 8];
                    w.copy_from_slice(c);
                    i64::from_le_bytes(w)
                })
                .collect(),
            Some(_) => Vec::new(),
            None => self.int64_data.clone(),
        };
        if v.len() != n {
            return Err(bad("TensorProto", format!("tensor {:?}: length mismatch", self.name)));
        }
        Ok(v)
    }
}
