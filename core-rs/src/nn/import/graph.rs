//! Graphs with more than one live activation: residual connections.
//!
//! The importer reads nodes in the file's (topological) order over one running activation. A
//! value that a later node still reads is copied into a register before the running
//! activation moves on ([`Register::Keep`]); a node that reads a kept value makes it the
//! running activation again ([`Register::Recall`]) and an `Add` (or `Sub`) of two activations
//! adds the kept one to the running one ([`Register::Add`]; [`Register::Sub`] in the operands'
//! order). Whether a value is read later is known
//! from the graph: every node input is counted up front and counted down as nodes are read.

use std::collections::BTreeMap;

use super::{only_attrs, what, Chain};
use crate::nn::model::{Layer, Register};
use crate::nn::proto::NodeProto;
use crate::nn::register::MAX_REGISTERS;
use crate::nn::NnError;

/// A value held in a register.
#[derive(Debug, Clone)]
pub(super) struct Kept {
    slot: usize,
    len: usize,
    shape: Vec<usize>,
}

/// Reads of every value by the graph's nodes.
pub(super) fn reads(nodes: &[NodeProto]) -> BTreeMap<String, usize> {
    let mut uses = BTreeMap::new();
    for i in nodes.iter().flat_map(|n| &n.inputs).filter(|i| !i.is_empty()) {
        *uses.entry(i.clone()).or_insert(0) += 1;
    }
    uses
}

/// The nodes that read each value.
pub(super) fn readers(nodes: &[NodeProto]) -> BTreeMap<&str, Vec<&NodeProto>> {
    let mut out: BTreeMap<&str, Vec<&NodeProto>> = BTreeMap::new();
    for n in nodes {
        for i in n.inputs.iter().filter(|i| !i.is_empty()) {
            out.entry(i.as_str()).or_default().push(n);
        }
    }
    out
}

/// Ops that only relabel or read the running activation at the end (they never move on from
/// it, so it need not be kept for its later readers).
fn keeps_running(n: &NodeProto) -> bool {
    matches!(
        (n.domain.as_str(), n.op_type.as_str()),
        (
            "" | "ai.onnx",
            "Identity"
                | "Dropout"
                | "Cast"
                | "Softmax"
                | "LogSoftmax"
                | "Sigmoid"
                | "Tanh"
                | "ArgMax"
        ) | ("ai.onnx.ml", "ZipMap" | "Normalizer")
    )
}

impl Chain<'_> {
    /// Whether a layer reads `name` (through renames and reshapes): an activation function
    /// whose output only output transforms read (`Softmax`, `ArgMax`, …) or the graph's output
    /// is itself an output transform; one that a layer reads is inside the network.
    pub(super) fn read_by_a_layer(&self, name: &str) -> bool {
        self.readers.get(name).into_iter().flatten().any(|r| match r.op_type.as_str() {
            "Identity" | "Dropout" | "Cast" | "Flatten" | "Reshape" => {
                r.outputs.iter().any(|o| self.read_by_a_layer(o))
            }
            _ => !keeps_running(r),
        })
    }

    /// Counts `n`'s reads of its inputs as done.
    pub(super) fn count_reads(&mut self, n: &NodeProto) {
        for i in &n.inputs {
            if let Some(u) = self.uses.get_mut(i) {
                *u = u.saturating_sub(1);
            }
        }
    }

    /// Makes the activation `n` reads the running one, keeping the running one first when a
    /// later node reads it, and keeps it when a later node reads it too. `Ok(true)` when `n`
    /// was an `Add` or `Sub` of two activations, done here.
    pub(super) fn route(&mut self, n: &NodeProto) -> Result<bool, NnError> {
        let mut acts: Vec<String> = n
            .inputs
            .iter()
            .filter(|i| self.cur.contains(*i) || self.kept.contains_key(*i))
            .cloned()
            .collect();
        let add = matches!(n.op_type.as_str(), "Add" | "Sub")
            && matches!(n.domain.as_str(), "" | "ai.onnx");
        if !add {
            // One activation read twice (`MatMul(x, x)`) is named by the op's own checks.
            acts.dedup();
        }
        match &acts[..] {
            [] => Ok(false),
            [a] => {
                if !self.cur.contains(a) {
                    self.recall(n, a)?;
                }
                if !keeps_running(n) {
                    self.keep_if_read_later(n)?;
                }
                Ok(false)
            }
            [a, b] if add => {
                self.residual(n, a, b)?;
                Ok(true)
            }
            _ => Err(NnError::Unsupported(format!(
                "{}: reads {} activations {acts:?} (an Add or Sub of two is supported)",
                what(n),
                acts.len()
            ))),
        }
    }

    /// `a + b` (a residual connection) or `a − b` of two activations: the kept one is added
    /// to the running one, or the two subtracted in the node's order.
    fn residual(&mut self, n: &NodeProto, a: &str, b: &str) -> Result<(), NnError> {
        only_attrs(n, &[])?;
        if !self.cur.contains(a) && !self.cur.contains(b) {
            self.recall(n, a)?;
        }
        // Both names of one value (`x + x`, or `x + Identity(x)`).
        let sub = n.op_type == "Sub";
        if a == b || (self.cur.contains(a) && self.cur.contains(b)) {
            return Err(NnError::Unsupported(format!(
                "{}: an activation {} itself (write it as {})",
                what(n),
                if sub { "minus" } else { "added to" },
                if sub { "a Mul by 0" } else { "a Mul by 2" }
            )));
        }
        let other = if self.cur.contains(a) { b } else { a };
        if self.uses.get(other).is_some_and(|&u| u > 0) {
            return Err(NnError::Unsupported(format!(
                "{}: its operand {other:?} is read again after the {} (only the running \
                 operand may be)",
                what(n),
                n.op_type
            )));
        }
        let k = self.kept.get(other).cloned().ok_or_else(|| {
            NnError::Malformed(format!("{}: operand {other:?} is not computed", what(n)))
        })?;
        if k.shape != self.shape {
            return Err(NnError::Shape(format!(
                "{}: operands of shapes {:?} and {:?} (broadcasting two activations is not \
                 supported)",
                what(n),
                k.shape,
                self.shape
            )));
        }
        self.keep_if_read_later(n)?;
        let (slot, len) = (k.slot, k.len);
        self.layers.push(Layer::Register(if sub {
            // `a − b`: the kept operand is `a` when the running one is `b`.
            Register::Sub { slot, len, kept_first: other == a }
        } else {
            Register::Add { slot, len }
        }));
        self.kept.retain(|_, v| v.slot != k.slot);
        self.moved_on();
        self.rebind(n)
    }

    /// Makes the kept value `name` the running activation (keeping the running one if a later
    /// node reads it).
    fn recall(&mut self, n: &NodeProto, name: &str) -> Result<(), NnError> {
        let k = self.kept.get(name).cloned().ok_or_else(|| {
            NnError::Malformed(format!("{}: input {name:?} is not computed", what(n)))
        })?;
        self.keep_if_read_later(n)?;
        self.layers.push(Layer::Register(Register::Recall { slot: k.slot, len: k.len }));
        self.cur =
            self.kept.iter().filter(|(_, v)| v.slot == k.slot).map(|(c, _)| c.clone()).collect();
        self.kept.retain(|_, v| v.slot != k.slot);
        self.len = k.len;
        self.shape = k.shape;
        self.moved_on();
        Ok(())
    }

    /// Keeps the running activation in a free register when a later node reads it and no
    /// register holds it yet.
    fn keep_if_read_later(&mut self, n: &NodeProto) -> Result<(), NnError> {
        let later: Vec<String> = self
            .cur
            .iter()
            .filter(|c| self.uses.get(*c).is_some_and(|&u| u > 0) && !self.kept.contains_key(*c))
            .cloned()
            .collect();
        if later.is_empty() {
            return Ok(());
        }
        if self.quantized() {
            return Err(NnError::Unsupported(format!(
                "{}: {later:?} is read again later, a residual connection in a quantized model \
                 (only chains run on integers)",
                what(n)
            )));
        }
        let slot = (0..MAX_REGISTERS)
            .find(|s| self.kept.values().all(|k| k.slot != *s))
            .ok_or_else(|| {
                NnError::Unsupported(format!(
                    "{}: more than {MAX_REGISTERS} activations alive at once",
                    what(n)
                ))
            })?;
        self.layers.push(Layer::Register(Register::Keep { slot, len: self.len }));
        let k = Kept { slot, len: self.len, shape: self.shape.clone() };
        self.kept.extend(later.into_iter().map(|c| (c, k.clone())));
        self.moved_on();
        Ok(())
    }

    /// The last layer no longer computes the running activation alone: nothing folds into it.
    fn moved_on(&mut self) {
        self.fresh_linear = false;
        self.positive = false;
        self.affine_out = None;
    }
}
