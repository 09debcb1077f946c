//! Shape artefacts: a model's public structure without its weights, for the servers that do not
//! own the model.
//!
//! Only the model owner ([`crate::service::MODEL_OWNER`], P0) needs the weights; P1 and P2 need
//! what every party knows anyway — the layers, their sizes and the fixed-point parameters (a
//! [`PlanShape`]) — plus what the service reports about the model. [`ModelShape::encode`]
//! writes that as a `.rfshape` file (`ringfence model shape IN.onnx --out OUT.rfshape`), so the
//! weight file never has to leave the owner's machine.
//!
//! # Format, version 1
//! All integers little-endian.
//!
//! ```text
//!  offset   size  field
//!  0        8     magic "RFSHAPE\0"
//!  8        2     version (1)
//!  10       4     body length n (at most MAX_SHAPE_BYTES)
//!  14       n     body
//!  14 + n   32    SHA-256 of bytes 0 .. 14 + n (integrity: a damaged file is refused)
//!
//!  body:    u32 fractional bits
//!           u32 length, UTF-8 bytes           the ONNX graph's input name (≤ 256 bytes)
//!           u32 count, u64 each               one sample's input shape (≤ 8 axes)
//!           u8 0 | 1, then u32 count, i64 each  class labels, if the model names them: 1
//!           | 2, then u32 count, per label       integers, 2 text (each 1 to MAX_LABEL_BYTES
//!             u32 length, UTF-8 bytes          of UTF-8)
//!           u8 0 | 1, then u64                 the input range, if the model declares one
//!                                              (`InputRange::to_bits`: min's f32 bits high)
//!           u32 count (≤ MAX_STEPS), then per step a u8 tag and its u64 fields:
//!             1 Dense   inputs outputs
//!             2 Relu    len
//!             3 Conv    in_c in_h in_w out_c kh kw sh sw pad_top pad_left pad_bottom pad_right groups
//!             4 MaxPool c in_h in_w kh kw sh sw
//!             5 SumPool c in_h in_w kh kw sh sw
//!             6 Scale   len divisor
//!             7 Trees   features classes, u32 node count, per node: feature (u64), mode (u8:
//!                       1 <, 2 ≤, 3 >, 4 ≥), parent (u8 0 | 1, then u64 index, u8 branch),
//!                       depth (u64); u32 leaf count, per leaf: parent (as for nodes)
//!             8 Requant channels inner shift   (an integer plan's; every shift the same,
//!                       1 to 24, and no Scale, Trees or register step beside it)
//!             9 Keep    slot len   (registers of residual connections: slot < 64; a Keep
//!            10 Recall  slot len    fills an empty register with the running activation, a
//!            11 Add     slot len    Recall, Add or Sub reads a full one, which empties it;
//!            12 Sub     slot len    12: the running activation minus the kept value, 13: the
//!            13 Sub     slot len    kept value minus the running one)
//!            14 Spline  len, u32 knot count (1 to MAX_KNOTS), then i64 each: the knots
//!                       (increasing), the slopes (one more), the value at the first knot —
//!                       in the plan's fixed point (see `nn::spline`)
//! ```
//!
//! Decoding is strict: the magic, version, length and checksum must match, every count is
//! bounded, nothing may follow the body, and the steps must chain (each takes as many values as
//! the previous one gives, every geometry within [`MAX_LAYER_VALUES`]) — the same checks a
//! [`FixedPlan`] gets from its model. Bad bytes are [`NnError::ShapeFile`], never a panic.
//!
//! # Digest
//! [`PlanShape::digest`] is the SHA-256 of the plan's canonical encoding (fractional bits, input
//! length and steps — what the protocol runs; not the input's name or the labels). The three
//! servers compare it for every request, so servers given different shapes of a model refuse
//! together instead of running mismatched protocols.

use sha2::{Digest as _, Sha256};

use super::geom::{ConvGeom, PoolGeom, MAX_LAYER_VALUES};
use super::model::{ClassLabels, InputRange, Model, Register, MAX_LABELS, MAX_LABEL_BYTES};
use super::plan::{FixedPlan, PlanShape, StepShape, DEFAULT_FRAC_BITS};
use super::spline::{SplineShape, MAX_KNOTS};
use super::trees::{NodeMode, TreeNode, TreeShape};
use super::NnError;
use crate::ring::Z64;

/// The first bytes of every shape file.
pub const SHAPE_MAGIC: [u8; 8] = *b"RFSHAPE\0";
/// The format version this code writes and reads.
pub const SHAPE_VERSION: u16 = 1;
/// Largest body accepted, in bytes (the shipped models' shapes are below 1 kB; a large tree
/// ensemble takes about 40 B per node).
pub const MAX_SHAPE_BYTES: usize = 64 << 20;
/// Most steps a plan may have.
pub const MAX_STEPS: usize = 4096;
const MAX_NAME: usize = 256;
const MAX_AXES: usize = 8;
const HEADER: usize = 14;
const CHECKSUM: usize = 32;

/// A model's public description: what a server that does not own the model loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelShape {
    /// Name of the ONNX graph's input.
    pub input_name: String,
    /// Shape of one sample (without the batch axis).
    pub input_shape: Vec<usize>,
    /// Class labels of the score entries, if the model names them.
    pub class_labels: Option<ClassLabels>,
    /// The fixed-point plan's shape: what the protocol runs.
    pub plan: PlanShape,
}

impl ModelShape {
    /// The shape of `model` planned as `plan`.
    pub fn new(model: &Model, plan: PlanShape) -> Self {
        Self {
            input_name: model.input_name.clone(),
            input_shape: model.input_shape.clone(),
            class_labels: model.class_labels.clone(),
            plan,
        }
    }

    /// The encoded file (see the module docs).
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Writer::default();
        body.u32(self.plan.frac_bits);
        body.u32(self.input_name.len() as u32);
        body.0.extend_from_slice(self.input_name.as_bytes());
        body.u32(self.input_shape.len() as u32);
        for &d in &self.input_shape {
            body.u64(d);
        }
        match &self.class_labels {
            None => body.0.push(0),
            Some(ClassLabels::Ints(l)) => {
                body.0.push(1);
                body.u32(l.len() as u32);
                for &v in l {
                    body.0.extend_from_slice(&v.to_le_bytes());
                }
            }
            Some(ClassLabels::Strings(l)) => {
                body.0.push(2);
                body.u32(l.len() as u32);
                for t in l {
                    body.u32(t.len() as u32);
                    body.0.extend_from_slice(t.as_bytes());
                }
            }
        }
        match self.plan.input_range {
            None => body.0.push(0),
            Some(r) => {
                body.0.push(1);
                // Not `Writer::u64`, which takes a usize: 32 bits in wasm.
                body.0.extend_from_slice(&r.to_bits().to_le_bytes());
            }
        }
        body.steps(&self.plan.steps);
        let mut out = Vec::with_capacity(HEADER + body.0.len() + CHECKSUM);
        out.extend_from_slice(&SHAPE_MAGIC);
        out.extend_from_slice(&SHAPE_VERSION.to_le_bytes());
        out.extend_from_slice(&(body.0.len() as u32).to_le_bytes());
        out.extend_from_slice(&body.0);
        let sum = Sha256::digest(&out);
        out.extend_from_slice(&sum);
        out
    }

    /// Decodes and checks a shape file; any defect is [`NnError::ShapeFile`] saying what.
    pub fn decode(bytes: &[u8]) -> Result<Self, NnError> {
        if !is_shape_file(bytes) {
            return Err(bad("not a shape file (no RFSHAPE magic)"));
        }
        if bytes.len() < HEADER + CHECKSUM {
            return Err(bad(format!("{} bytes: shorter than the header", bytes.len())));
        }
        let version = u16::from_le_bytes([bytes[8], bytes[9]]);
        if version != SHAPE_VERSION {
            return Err(bad(format!(
                "version {version} (this build reads version {SHAPE_VERSION})"
            )));
        }
        let n = u32::from_le_bytes([bytes[10], bytes[11], bytes[12], bytes[13]]) as usize;
        if n > MAX_SHAPE_BYTES {
            return Err(bad(format!("body of {n} bytes (at most {MAX_SHAPE_BYTES})")));
        }
        if bytes.len() != HEADER + n + CHECKSUM {
            return Err(bad(format!(
                "{} bytes for a body of {n} (expected {}): truncated or trailing data",
                bytes.len(),
                HEADER + n + CHECKSUM
            )));
        }
        let (signed, sum) = bytes.split_at(HEADER + n);
        if Sha256::digest(signed).as_slice() != sum {
            return Err(bad("checksum mismatch: the file is damaged"));
        }
        let mut r = Reader { b: &signed[HEADER..], what: "body" };
        let frac_bits = r.u32("fractional bits")?;
        let name_len = r.count("input name length", MAX_NAME, 1)?;
        let input_name = core::str::from_utf8(r.take(name_len, "input name")?)
            .map_err(|_| bad("the input name is not UTF-8"))?
            .to_string();
        let axes = r.count("input axes", MAX_AXES, 8)?;
        let input_shape = (0..axes).map(|_| r.size("input axis")).collect::<Result<Vec<_>, _>>()?;
        let class_labels = match r.u8("labels flag")? {
            0 => None,
            1 => {
                let k = r.count("class labels", MAX_LABELS, 8)?;
                let take = |r: &mut Reader| {
                    let b = r.take(8, "class label")?;
                    Ok::<_, NnError>(i64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
                };
                Some(ClassLabels::Ints((0..k).map(|_| take(&mut r)).collect::<Result<_, _>>()?))
            }
            2 => {
                let k = r.count("class labels", MAX_LABELS, 5)?;
                let take = |r: &mut Reader| {
                    let len = r.count("class label length", MAX_LABEL_BYTES, 1)?;
                    if len == 0 {
                        return Err(bad("class label length: 0 (an empty label)"));
                    }
                    let t = core::str::from_utf8(r.take(len, "class label")?)
                        .map_err(|_| bad("a class label is not UTF-8"))?;
                    Ok::<_, NnError>(t.to_string())
                };
                Some(ClassLabels::Strings((0..k).map(|_| take(&mut r)).collect::<Result<_, _>>()?))
            }
            f => return Err(bad(format!("labels flag {f} (0, 1 or 2)"))),
        };
        if let Some(labels) = &class_labels {
            labels.check().map_err(bad)?;
        }
        let input_range = match r.u8("input range flag")? {
            0 => None,
            1 => {
                let b = r.take(8, "input range")?;
                let bits = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
                let range = InputRange::from_bits(bits);
                Some(range.ok_or_else(|| bad("the input range is not MIN ≤ MAX, both finite"))?)
            }
            f => return Err(bad(format!("input range flag {f} (0 or 1)"))),
        };
        let steps = r.steps()?;
        if !r.b.is_empty() {
            return Err(bad(format!("{} bytes after the last step", r.b.len())));
        }
        let input_len = input_shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .filter(|&n| n > 0 && n <= MAX_LAYER_VALUES)
            .ok_or_else(|| bad(format!("input shape {input_shape:?} out of range")))?;
        let shape = Self {
            input_name,
            input_shape,
            class_labels,
            plan: PlanShape { frac_bits, input_len, steps, input_range },
        };
        shape.check()?;
        Ok(shape)
    }

    /// Checks that the plan is one a [`FixedPlan`] could have: the steps chain, every geometry
    /// is valid, the labels (if any) name every score.
    fn check(&self) -> Result<(), NnError> {
        let p = &self.plan;
        // The plan's products need 2f + 8 < 64 bits (as FixedPlan::new requires in Z_2^64).
        if 2 * u64::from(p.frac_bits) + 8 >= 64 {
            return Err(bad(format!("{} fractional bits (at most 27)", p.frac_bits)));
        }
        if p.steps.is_empty() {
            return Err(bad("no steps"));
        }
        let (mut len, mut regs) = (p.input_len, Vec::new());
        for (i, s) in p.steps.iter().enumerate() {
            let ok = match s {
                StepShape::Dense { inputs, outputs } => {
                    *inputs == len
                        && *outputs > 0
                        && inputs.checked_mul(*outputs).is_some_and(|n| n <= MAX_LAYER_VALUES)
                }
                StepShape::Relu { len: l } => *l == len,
                StepShape::Conv(g) => g.is_valid() && g.in_len() == len,
                StepShape::MaxPool(g) | StepShape::SumPool(g) => g.is_valid() && g.in_len() == len,
                StepShape::Scale { len: l, divisor } => *l == len && *divisor > 0,
                StepShape::Trees(t) => {
                    t.features == len && t.classes <= MAX_LAYER_VALUES && t.check().is_ok()
                }
                StepShape::Requant { channels, inner, shift } => {
                    *channels > 0
                        && channels.checked_mul(*inner) == Some(len)
                        && (1..=24).contains(shift)
                        && *shift == p.product_bits()
                }
                StepShape::Register(r) => r.fits(&mut { len }, &mut regs),
                StepShape::Spline(sp) => {
                    sp.len == len
                        && (1..=MAX_KNOTS).contains(&sp.knots.len())
                        && sp.slopes.len() == sp.knots.len() + 1
                        && sp.knots.windows(2).all(|t| t[0] < t[1])
                }
            };
            if !ok {
                return Err(bad(format!("step {i} ({s:?}) does not fit after {len} values")));
            }
            len = s.out_len();
        }
        if p.is_integer()
            && p.steps.iter().any(|s| {
                matches!(
                    s,
                    StepShape::Scale { .. }
                        | StepShape::Trees(_)
                        | StepShape::Register(_)
                        | StepShape::Spline(_)
                )
            })
        {
            return Err(bad("an integer plan with a scale, tree, register or spline step"));
        }
        if let Some(l) = &self.class_labels {
            if l.len() != len {
                return Err(bad(format!("{} class labels for {len} scores", l.len())));
            }
        }
        Ok(())
    }
}

/// Whether `bytes` start like a shape file (else they may be ONNX).
pub fn is_shape_file(bytes: &[u8]) -> bool {
    bytes.starts_with(&SHAPE_MAGIC)
}

impl PlanShape {
    /// The SHA-256 of this plan's canonical encoding (see the module docs): equal for the
    /// owner's plan and a shape file made from the same model.
    pub fn digest(&self) -> [u8; 32] {
        let mut w = Writer::default();
        w.0.extend_from_slice(b"ringfence plan shape v1");
        w.u32(self.frac_bits);
        w.u64(self.input_len);
        w.steps(&self.steps);
        Sha256::digest(&w.0).into()
    }
}

/// A model file as a server loads it: ONNX (with the weights) or a shape file (without).
#[derive(Debug, Clone)]
pub enum ModelFile {
    /// An ONNX model, planned with [`DEFAULT_FRAC_BITS`]: its shape and its weights.
    Weights {
        /// The public shape.
        shape: ModelShape,
        /// The encoded weights.
        plan: FixedPlan<Z64>,
    },
    /// A shape file: no weights.
    Shape(ModelShape),
}

impl ModelFile {
    /// Reads `bytes`: a shape file if it starts with [`SHAPE_MAGIC`], else ONNX (imported and
    /// planned as every server plans it).
    pub fn parse(bytes: &[u8]) -> Result<Self, NnError> {
        if is_shape_file(bytes) {
            return ModelShape::decode(bytes).map(Self::Shape);
        }
        let model = super::import_onnx(bytes)?;
        let plan = FixedPlan::<Z64>::new(&model, DEFAULT_FRAC_BITS)?;
        Ok(Self::Weights { shape: ModelShape::new(&model, plan.shape()), plan })
    }

    /// The public shape, whichever the file.
    pub fn shape(&self) -> &ModelShape {
        match self {
            Self::Weights { shape, .. } | Self::Shape(shape) => shape,
        }
    }
}

fn bad(what: impl Into<String>) -> NnError {
    NnError::ShapeFile(what.into())
}

#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn u64(&mut self, v: usize) {
        self.0.extend_from_slice(&(v as u64).to_le_bytes());
    }

    fn i64s(&mut self, vs: &[i64]) {
        vs.iter().for_each(|v| self.0.extend_from_slice(&v.to_le_bytes()));
    }

    fn all(&mut self, vs: &[usize]) {
        for &v in vs {
            self.u64(v);
        }
    }

    fn parent(&mut self, p: Option<(usize, bool)>) {
        match p {
            None => self.0.push(0),
            Some((i, br)) => {
                self.0.push(1);
                self.u64(i);
                self.0.push(u8::from(br));
            }
        }
    }

    fn pool(&mut self, tag: u8, g: &PoolGeom) {
        self.0.push(tag);
        self.all(&[g.c, g.in_h, g.in_w, g.kernel[0], g.kernel[1], g.stride[0], g.stride[1]]);
    }

    fn steps(&mut self, steps: &[StepShape]) {
        self.u32(steps.len() as u32);
        for s in steps {
            match s {
                StepShape::Dense { inputs, outputs } => {
                    self.0.push(1);
                    self.all(&[*inputs, *outputs]);
                }
                StepShape::Relu { len } => {
                    self.0.push(2);
                    self.u64(*len);
                }
                StepShape::Conv(g) => {
                    self.0.push(3);
                    self.all(&[g.in_c, g.in_h, g.in_w, g.out_c]);
                    self.all(&g.kernel);
                    self.all(&g.stride);
                    self.all(&g.pads);
                    self.u64(g.groups);
                }
                StepShape::MaxPool(g) => self.pool(4, g),
                StepShape::SumPool(g) => self.pool(5, g),
                StepShape::Scale { len, divisor } => {
                    self.0.push(6);
                    self.all(&[*len, *divisor]);
                }
                StepShape::Trees(t) => {
                    self.0.push(7);
                    self.all(&[t.features, t.classes]);
                    self.u32(t.nodes.len() as u32);
                    for n in &t.nodes {
                        self.u64(n.feature);
                        self.0.push(match n.mode {
                            NodeMode::Lt => 1,
                            NodeMode::Leq => 2,
                            NodeMode::Gt => 3,
                            NodeMode::Gte => 4,
                        });
                        self.parent(n.parent);
                        self.u64(n.depth);
                    }
                    self.u32(t.leaves.len() as u32);
                    for &l in &t.leaves {
                        self.parent(l);
                    }
                }
                StepShape::Requant { channels, inner, shift } => {
                    self.0.push(8);
                    self.all(&[*channels, *inner, *shift as usize]);
                }
                StepShape::Register(r) => {
                    self.0.push(match r {
                        Register::Keep { .. } => 9,
                        Register::Recall { .. } => 10,
                        Register::Add { .. } => 11,
                        Register::Sub { kept_first: false, .. } => 12,
                        Register::Sub { kept_first: true, .. } => 13,
                    });
                    self.all(&[r.slot(), r.out_len()]);
                }
                StepShape::Spline(sp) => {
                    self.0.push(14);
                    self.u64(sp.len);
                    self.u32(sp.knots.len() as u32);
                    self.i64s(&sp.knots);
                    self.i64s(&sp.slopes);
                    self.i64s(&[sp.value]);
                }
            }
        }
    }
}

/// A cursor over the body; every read checks the bytes left.
struct Reader<'a> {
    b: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8], NnError> {
        if self.b.len() < n {
            return Err(bad(format!("the {} ends inside {field}", self.what)));
        }
        let (head, rest) = self.b.split_at(n);
        self.b = rest;
        Ok(head)
    }

    fn u8(&mut self, field: &str) -> Result<u8, NnError> {
        Ok(self.take(1, field)?[0])
    }

    fn u32(&mut self, field: &str) -> Result<u32, NnError> {
        let b = self.take(4, field)?;
        Ok(u32::from_le_bytes(b.try_into().unwrap_or([0; 4])))
    }

    /// A size: a u64 that must be at most [`MAX_LAYER_VALUES`].
    fn size(&mut self, field: &str) -> Result<usize, NnError> {
        let b = self.take(8, field)?;
        let v = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        usize::try_from(v)
            .ok()
            .filter(|&v| v <= MAX_LAYER_VALUES)
            .ok_or_else(|| bad(format!("{field} = {v} (at most {MAX_LAYER_VALUES})")))
    }

    fn i64(&mut self, field: &str) -> Result<i64, NnError> {
        let b = self.take(8, field)?;
        Ok(i64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }

    fn sizes<const N: usize>(&mut self, field: &str) -> Result<[usize; N], NnError> {
        let mut out = [0; N];
        for v in &mut out {
            *v = self.size(field)?;
        }
        Ok(out)
    }

    /// A u32 count of items of at least `min_bytes` each, at most `max` and no more than the
    /// bytes left could hold (so a forged count allocates nothing).
    fn count(&mut self, field: &str, max: usize, min_bytes: usize) -> Result<usize, NnError> {
        let n = self.u32(field)? as usize;
        if n > max || n.saturating_mul(min_bytes) > self.b.len() {
            return Err(bad(format!("{field}: {n} (at most {max}, and the bytes left)")));
        }
        Ok(n)
    }

    fn flag(&mut self, field: &str) -> Result<bool, NnError> {
        match self.u8(field)? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(bad(format!("{field}: {v} (0 or 1)"))),
        }
    }

    fn parent(&mut self) -> Result<Option<(usize, bool)>, NnError> {
        Ok(if self.flag("tree parent flag")? {
            Some((self.size("tree parent")?, self.flag("tree branch")?))
        } else {
            None
        })
    }

    fn pool(&mut self) -> Result<PoolGeom, NnError> {
        let [c, in_h, in_w, kh, kw, sh, sw] = self.sizes("pooling geometry")?;
        Ok(PoolGeom { c, in_h, in_w, kernel: [kh, kw], stride: [sh, sw] })
    }

    fn steps(&mut self) -> Result<Vec<StepShape>, NnError> {
        let n = self.count("steps", MAX_STEPS, 9)?;
        let mut steps = Vec::with_capacity(n);
        for _ in 0..n {
            let s = match self.u8("step tag")? {
                1 => {
                    let [inputs, outputs] = self.sizes("dense sizes")?;
                    StepShape::Dense { inputs, outputs }
                }
                2 => StepShape::Relu { len: self.size("relu length")? },
                3 => {
                    let [in_c, in_h, in_w, out_c, kh, kw, sh, sw, p0, p1, p2, p3, groups] =
                        self.sizes("convolution geometry")?;
                    StepShape::Conv(ConvGeom {
                        in_c,
                        in_h,
                        in_w,
                        out_c,
                        kernel: [kh, kw],
                        stride: [sh, sw],
                        pads: [p0, p1, p2, p3],
                        groups,
                    })
                }
                4 => StepShape::MaxPool(self.pool()?),
                5 => StepShape::SumPool(self.pool()?),
                6 => {
                    let [len, divisor] = self.sizes("scale")?;
                    StepShape::Scale { len, divisor }
                }
                7 => {
                    let [features, classes] = self.sizes("tree sizes")?;
                    let k = self.count("tree nodes", MAX_LAYER_VALUES, 18)?;
                    let mut nodes = Vec::with_capacity(k);
                    for _ in 0..k {
                        let feature = self.size("tree feature")?;
                        let mode = match self.u8("tree mode")? {
                            1 => NodeMode::Lt,
                            2 => NodeMode::Leq,
                            3 => NodeMode::Gt,
                            4 => NodeMode::Gte,
                            m => return Err(bad(format!("tree mode {m} (1 to 4)"))),
                        };
                        let parent = self.parent()?;
                        let depth = self.size("tree depth")?;
                        nodes.push(TreeNode { feature, mode, parent, depth });
                    }
                    let k = self.count("tree leaves", MAX_LAYER_VALUES, 1)?;
                    let leaves = (0..k).map(|_| self.parent()).collect::<Result<Vec<_>, _>>()?;
                    StepShape::Trees(Box::new(TreeShape { features, classes, nodes, leaves }))
                }
                8 => {
                    let [channels, inner, shift] = self.sizes("requantization")?;
                    let shift = u32::try_from(shift).unwrap_or(u32::MAX);
                    StepShape::Requant { channels, inner, shift }
                }
                tag @ 9..=13 => {
                    let [slot, len] = self.sizes("register")?;
                    StepShape::Register(match tag {
                        9 => Register::Keep { slot, len },
                        10 => Register::Recall { slot, len },
                        11 => Register::Add { slot, len },
                        _ => Register::Sub { slot, len, kept_first: tag == 13 },
                    })
                }
                14 => {
                    let len = self.size("spline length")?;
                    let k = self.count("spline knots", MAX_KNOTS, 16)?;
                    if k == 0 {
                        return Err(bad("spline knots: 0 (at least 1)"));
                    }
                    let knots =
                        (0..k).map(|_| self.i64("spline knot")).collect::<Result<_, _>>()?;
                    let slopes =
                        (0..=k).map(|_| self.i64("spline slope")).collect::<Result<_, _>>()?;
                    let value = self.i64("spline value")?;
                    StepShape::Spline(SplineShape { len, knots, slopes, value })
                }
                t => return Err(bad(format!("unknown step tag {t}"))),
            };
            steps.push(s);
        }
        Ok(steps)
    }
}
