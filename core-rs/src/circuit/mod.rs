//! `circuit`: boolean circuits with multi-fan-in AND gates, independent of any scheme.
//!
//! A [`Circuit`] is a list of gates in topological order over numbered wires, with the wire
//! layout of Bristol Fashion: the input groups take the first wires, in group order, and the
//! output groups the last ones. Gates are XOR, NOT, a copy, a constant, and an AND of 2 to
//! [`MAX_FAN_IN`] inputs: a protocol that opens an ℓ-input AND in one round (Faraji–Kerschbaum)
//! pays one round per *AND depth* whatever the fan-in, so depth is counted with an ℓ-input AND
//! as one.
//!
//! [`Circuit::schedule`] groups the gates into [`Step`]s for an evaluator: local steps (no
//! communication) between AND layers, one layer per AND depth, so a secure evaluator makes one
//! batched call per layer. [`Circuit::eval`] runs that schedule on plain bits, 64 instances at a
//! time, and is how the schedule is tested.
//!
//! Submodules: [`bristol`] (read and write Bristol Fashion, with ℓ-input ANDs as an extension),
//! [`passes`] (dedupe AND inputs, fold constants, lower to 2-input ANDs, prune), [`gen`]
//! (AND trees, Sklansky adders, Fischlin comparators, AES).
//!
//! ```
//! use ringfence_core::circuit::Builder;
//! // a ∧ b ∧ c as one 3-input AND, then its negation.
//! let (mut b, ins) = Builder::new(&[3]);
//! let x = b.and(&ins[0]);
//! let y = b.not(x);
//! let c = b.finish(&[vec![x, y]])?;
//! assert_eq!(c.stats().and_depth, 1);
//! assert_eq!(c.eval_u128(&[0b111])?, vec![0b01]);
//! assert_eq!(c.eval_u128(&[0b101])?, vec![0b10]);
//! # Ok::<(), ringfence_core::Error>(())
//! ```

pub mod bristol;
mod builder;
pub mod gen;
pub mod passes;
mod plain;
mod schedule;
pub mod shared;

pub use builder::Builder;
pub use plain::{pack, unpack};
pub use schedule::Step;

use core::ops::Range;

use crate::Error;

/// A wire's index: inputs first, then gate outputs, with the output groups last.
pub type Wire = usize;

/// The largest AND fan-in (the protocol's cost grows as 2^ℓ; the paper stops at 8).
pub const MAX_FAN_IN: usize = 8;

/// An AND of 2 to [`MAX_FAN_IN`] wires.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AndGate {
    /// The wires multiplied (distinct after [`passes::dedupe_and_inputs`]).
    pub inputs: Vec<Wire>,
    /// The wire assigned.
    pub out: Wire,
}

/// One gate: its inputs and the one wire it assigns.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Gate {
    /// `out = a ⊕ b`.
    Xor {
        /// First input.
        a: Wire,
        /// Second input.
        b: Wire,
        /// The wire assigned.
        out: Wire,
    },
    /// `out = ¬a`.
    Not {
        /// Input.
        a: Wire,
        /// The wire assigned.
        out: Wire,
    },
    /// `out = a` (Bristol Fashion's `EQW`).
    Copy {
        /// Input.
        a: Wire,
        /// The wire assigned.
        out: Wire,
    },
    /// `out = value` (Bristol Fashion's `EQ`).
    Const {
        /// The constant.
        value: bool,
        /// The wire assigned.
        out: Wire,
    },
    /// The product of its inputs; the only gate that needs communication.
    And(AndGate),
}

impl Gate {
    /// The wire this gate assigns.
    pub fn out(&self) -> Wire {
        match self {
            Self::Xor { out, .. } | Self::Not { out, .. } | Self::Copy { out, .. } => *out,
            Self::Const { out, .. } => *out,
            Self::And(g) => g.out,
        }
    }

    /// The wires this gate reads, in order.
    pub fn inputs(&self) -> impl Iterator<Item = Wire> + '_ {
        let (pair, rest): ([Option<Wire>; 2], &[Wire]) = match self {
            Self::Xor { a, b, .. } => ([Some(*a), Some(*b)], &[]),
            Self::Not { a, .. } | Self::Copy { a, .. } => ([Some(*a), None], &[]),
            Self::Const { .. } => ([None, None], &[]),
            Self::And(g) => ([None, None], &g.inputs),
        };
        pair.into_iter().flatten().chain(rest.iter().copied())
    }

    /// True for the gates a party evaluates alone (everything but AND).
    pub fn is_local(&self) -> bool {
        !matches!(self, Self::And(_))
    }
}

/// A boolean circuit in topological order (see the module documentation for the wire layout).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Circuit {
    wires: usize,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    gates: Vec<Gate>,
}

/// Gate counts and AND depth of a circuit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// `ands[ℓ]`: the number of ℓ-input ANDs (indices 0 and 1 stay 0).
    pub ands: [usize; MAX_FAN_IN + 1],
    /// XOR gates.
    pub xor: usize,
    /// NOT gates.
    pub not: usize,
    /// Copies and constants.
    pub other: usize,
    /// The longest chain of ANDs from an input to any wire, an ℓ-input AND counting one.
    pub and_depth: usize,
}

impl Stats {
    /// All ANDs, whatever their fan-in (the paper's "size").
    pub fn and_count(&self) -> usize {
        self.ands.iter().sum()
    }

    /// ANDs with fan-in in `fan_ins` (e.g. `3..5` for Table 10's "3–4 input" column).
    pub fn ands_in(&self, fan_ins: Range<usize>) -> usize {
        self.ands.iter().enumerate().filter(|(l, _)| fan_ins.contains(l)).map(|(_, n)| n).sum()
    }

    /// Bits the seats P1, P2 and P3 send per instance when bin3 evaluates the circuit (its ANDs
    /// only: inputs and outputs aside), by [`bin3_gate_bits`].
    pub fn bin3_bits(&self) -> [usize; 3] {
        let mut out = [0; 3];
        for (l, &n) in self.ands.iter().enumerate().skip(2) {
            for (o, b) in out.iter_mut().zip(bin3_gate_bits(l)) {
                *o += n * b;
            }
        }
        out
    }
}

/// Bits the seats P1, P2 and P3 each send for one `l`-input AND of one instance in bin3's
/// protocol (Faraji–Kerschbaum): 1, 1, 1 for two inputs; from three, P1 and P2 send the masked
/// products of every subset of at least two inputs (`2^l − l − 1`) and P3 one bit to each.
///
/// ```
/// use ringfence_core::circuit::bin3_gate_bits;
/// assert_eq!((bin3_gate_bits(2), bin3_gate_bits(4)), ([1, 1, 1], [11, 11, 2]));
/// ```
pub fn bin3_gate_bits(l: usize) -> [usize; 3] {
    if l <= 2 {
        [1, 1, 1]
    } else {
        let pair = (1 << l) - l - 1;
        [pair, pair, 2]
    }
}

impl Circuit {
    /// A circuit of `wires` wires with input groups of widths `inputs` (the first wires) and
    /// output groups of widths `outputs` (the last wires), after checking that `gates` are in
    /// topological order: each wire read is an input or assigned by an earlier gate, no wire is
    /// assigned twice or at all if it is an input, every output wire is assigned, and every AND
    /// has 2 to [`MAX_FAN_IN`] inputs.
    pub fn new(
        wires: usize,
        inputs: Vec<usize>,
        outputs: Vec<usize>,
        gates: Vec<Gate>,
    ) -> Result<Self, Error> {
        let misuse = |at: String, why: String| Error::ApiMisuse(format!("circuit: {at}: {why}"));
        let mut check =
            Checker::new(wires, &inputs, &outputs).map_err(|e| misuse("layout".into(), e))?;
        for (i, g) in gates.iter().enumerate() {
            check.gate(g).map_err(|e| misuse(format!("gate {i}"), e))?;
        }
        check.finish().map_err(|e| misuse("outputs".into(), e))?;
        Ok(Self { wires, inputs, outputs, gates })
    }

    /// The number of wires.
    pub fn wires(&self) -> usize {
        self.wires
    }

    /// The widths of the input groups.
    pub fn input_widths(&self) -> &[usize] {
        &self.inputs
    }

    /// The widths of the output groups.
    pub fn output_widths(&self) -> &[usize] {
        &self.outputs
    }

    /// The gates, in topological order.
    pub fn gates(&self) -> &[Gate] {
        &self.gates
    }

    /// The wires of input group `group` (its bit 0 first), if there is such a group.
    pub fn input_wires(&self, group: usize) -> Option<Range<Wire>> {
        let start: usize = self.inputs.get(..group)?.iter().sum();
        Some(start..start + self.inputs.get(group)?)
    }

    /// The wires of output group `group` (its bit 0 first), if there is such a group.
    pub fn output_wires(&self, group: usize) -> Option<Range<Wire>> {
        let before: usize = self.outputs.get(..group)?.iter().sum();
        let start = self.wires - self.outputs.iter().sum::<usize>() + before;
        Some(start..start + self.outputs.get(group)?)
    }

    /// Gate counts by kind (ANDs by fan-in) and the AND depth.
    pub fn stats(&self) -> Stats {
        let mut s =
            Stats { and_depth: self.depths().into_iter().max().unwrap_or(0), ..Stats::default() };
        for g in &self.gates {
            match g {
                Gate::Xor { .. } => s.xor += 1,
                Gate::Not { .. } => s.not += 1,
                Gate::Copy { .. } | Gate::Const { .. } => s.other += 1,
                Gate::And(a) => s.ands[a.inputs.len()] += 1,
            }
        }
        s
    }

    /// The AND depth of every wire: 0 for inputs, and one more than its inputs' deepest for an
    /// AND's output.
    pub(crate) fn depths(&self) -> Vec<usize> {
        let mut depth = vec![0; self.wires];
        for g in &self.gates {
            let d = g.inputs().map(|w| depth[w]).max().unwrap_or(0);
            depth[g.out()] = d + usize::from(!g.is_local());
        }
        depth
    }
}

/// Checks a circuit gate by gate, for [`Circuit::new`] and the Bristol reader (which adds the
/// line number to the reason).
pub(crate) struct Checker {
    assigned: Vec<bool>,
    outputs: Range<Wire>,
}

impl Checker {
    pub(crate) fn new(wires: usize, inputs: &[usize], outputs: &[usize]) -> Result<Self, String> {
        let sum = |v: &[usize]| v.iter().try_fold(0usize, |s, &w| s.checked_add(w));
        let (Some(ins), Some(outs)) = (sum(inputs), sum(outputs)) else {
            return Err("group widths overflow".into());
        };
        if ins.checked_add(outs).is_none_or(|n| n > wires) {
            return Err(format!("{ins} input and {outs} output wires do not fit in {wires} wires"));
        }
        let mut assigned = vec![false; wires];
        assigned[..ins].fill(true);
        Ok(Self { assigned, outputs: wires - outs..wires })
    }

    pub(crate) fn gate(&mut self, g: &Gate) -> Result<(), String> {
        let n = self.assigned.len();
        if let Gate::And(a) = g {
            if !(2..=MAX_FAN_IN).contains(&a.inputs.len()) {
                return Err(format!("AND with {} inputs (2 to {MAX_FAN_IN})", a.inputs.len()));
            }
        }
        for w in g.inputs() {
            match self.assigned.get(w) {
                None => return Err(format!("wire {w} out of range (the circuit has {n})")),
                Some(false) => return Err(format!("wire {w} read before it is assigned")),
                Some(true) => {}
            }
        }
        let out = g.out();
        match self.assigned.get_mut(out) {
            None => Err(format!("wire {out} out of range (the circuit has {n})")),
            Some(true) => Err(format!("wire {out} assigned twice (or an input)")),
            Some(a) => {
                *a = true;
                Ok(())
            }
        }
    }

    pub(crate) fn finish(&self) -> Result<(), String> {
        match self.outputs.clone().find(|&w| !self.assigned[w]) {
            Some(w) => Err(format!("output wire {w} is never assigned")),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
