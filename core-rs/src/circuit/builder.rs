//! Building circuits gate by gate, with the output wires moved to the end on `finish`.

use super::{AndGate, Circuit, Gate, Wire, MAX_FAN_IN};
use crate::Error;

/// Appends gates to a circuit under construction; [`Builder::finish`] lays the wires out as
/// Bristol Fashion wants them (outputs last).
///
/// A wire is created by the gate that assigns it, so gates are in topological order by
/// construction. A misuse (an AND of more than [`MAX_FAN_IN`] wires, a wire that does not
/// exist) is remembered and returned by `finish`, so generator code needs no `?` per gate.
///
/// ```
/// use ringfence_core::circuit::Builder;
/// let (mut b, ins) = Builder::new(&[1, 1]);
/// let x = b.xor(ins[0][0], ins[1][0]);
/// let c = b.finish(&[vec![x]])?;
/// assert_eq!(c.eval_u128(&[1, 0])?, vec![1]);
/// # Ok::<(), ringfence_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Builder {
    inputs: Vec<usize>,
    wires: usize,
    gates: Vec<Gate>,
    error: Option<String>,
}

impl Builder {
    /// A builder with input groups of the given widths, and the wires of each group.
    pub fn new(input_widths: &[usize]) -> (Self, Vec<Vec<Wire>>) {
        let mut next = 0;
        let groups = input_widths
            .iter()
            .map(|&w| {
                next += w;
                (next - w..next).collect()
            })
            .collect();
        (
            Self { inputs: input_widths.to_vec(), wires: next, gates: Vec::new(), error: None },
            groups,
        )
    }

    /// `a ⊕ b`.
    pub fn xor(&mut self, a: Wire, b: Wire) -> Wire {
        self.check(&[a, b]);
        self.push(|out| Gate::Xor { a, b, out })
    }

    /// The XOR of all of `ws` (a constant 0 if there are none).
    pub fn xor_all(&mut self, ws: &[Wire]) -> Wire {
        match ws.split_first() {
            None => self.constant(false),
            Some((&first, rest)) => rest.iter().fold(first, |acc, &w| self.xor(acc, w)),
        }
    }

    /// `¬a`.
    pub fn not(&mut self, a: Wire) -> Wire {
        self.check(&[a]);
        self.push(|out| Gate::Not { a, out })
    }

    /// A copy of `a` on a new wire.
    pub fn copy(&mut self, a: Wire) -> Wire {
        self.check(&[a]);
        self.push(|out| Gate::Copy { a, out })
    }

    /// A constant wire.
    pub fn constant(&mut self, value: bool) -> Wire {
        self.push(|out| Gate::Const { value, out })
    }

    /// The AND of `ws` as one gate. One wire is returned as it is and none gives a constant 1,
    /// so callers building trees need no special cases; more than [`MAX_FAN_IN`] is a misuse.
    pub fn and(&mut self, ws: &[Wire]) -> Wire {
        self.check(ws);
        match ws {
            [] => self.constant(true),
            [w] => *w,
            _ => {
                if ws.len() > MAX_FAN_IN {
                    self.fail(format!("AND of {} wires (at most {MAX_FAN_IN})", ws.len()));
                }
                self.push(|out| Gate::And(AndGate { inputs: ws.to_vec(), out }))
            }
        }
    }

    /// Appends a gate of another circuit whose wires have been mapped to this builder's (used
    /// by the passes); its `out` is ignored and the new wire returned.
    pub(crate) fn gate(&mut self, g: Gate) -> Wire {
        let ins: Vec<Wire> = g.inputs().collect();
        self.check(&ins);
        self.push(|out| match g {
            Gate::Xor { a, b, .. } => Gate::Xor { a, b, out },
            Gate::Not { a, .. } => Gate::Not { a, out },
            Gate::Copy { a, .. } => Gate::Copy { a, out },
            Gate::Const { value, .. } => Gate::Const { value, out },
            Gate::And(g) => Gate::And(AndGate { inputs: g.inputs, out }),
        })
    }

    /// The circuit with output groups `outputs`. Output wires are renumbered to the end, in
    /// group order; an output wire that is an input, or that appears twice, gets a copy first
    /// (Bristol Fashion gives each output position a wire of its own).
    pub fn finish(mut self, outputs: &[Vec<Wire>]) -> Result<Circuit, Error> {
        for o in outputs {
            self.check(o);
        }
        if let Some(e) = self.error.take() {
            return Err(Error::ApiMisuse(format!("circuit builder: {e}")));
        }
        let inputs: usize = self.inputs.iter().sum();
        let mut is_out = vec![false; self.wires];
        let mut outs = Vec::with_capacity(outputs.iter().map(Vec::len).sum());
        for &w in outputs.iter().flatten() {
            let w = if w < inputs || is_out[w] { self.copy(w) } else { w };
            if w >= is_out.len() {
                is_out.resize(w + 1, false);
            }
            is_out[w] = true;
            outs.push(w);
        }
        is_out.resize(self.wires, false);
        // Inputs keep their numbers, other gate outputs follow in gate order, outputs come last.
        let mut map: Vec<Wire> = (0..self.wires).collect();
        let mut next = inputs;
        for g in &self.gates {
            if !is_out[g.out()] {
                map[g.out()] = next;
                next += 1;
            }
        }
        for &w in &outs {
            map[w] = next;
            next += 1;
        }
        let gates = self.gates.into_iter().map(|g| renumber(g, &map)).collect();
        let widths = outputs.iter().map(Vec::len).collect();
        Circuit::new(next, self.inputs, widths, gates)
    }

    fn push(&mut self, make: impl FnOnce(Wire) -> Gate) -> Wire {
        let out = self.wires;
        self.wires += 1;
        self.gates.push(make(out));
        out
    }

    fn check(&mut self, ws: &[Wire]) {
        if let Some(&w) = ws.iter().find(|&&w| w >= self.wires) {
            self.fail(format!("wire {w} does not exist yet"));
        }
    }

    fn fail(&mut self, e: String) {
        self.error.get_or_insert(e);
    }
}

/// `g` with every wire `w` replaced by `map[w]`.
pub(crate) fn renumber(g: Gate, map: &[Wire]) -> Gate {
    let m = |w: Wire| map[w];
    match g {
        Gate::Xor { a, b, out } => Gate::Xor { a: m(a), b: m(b), out: m(out) },
        Gate::Not { a, out } => Gate::Not { a: m(a), out: m(out) },
        Gate::Copy { a, out } => Gate::Copy { a: m(a), out: m(out) },
        Gate::Const { value, out } => Gate::Const { value, out: m(out) },
        Gate::And(g) => {
            Gate::And(AndGate { inputs: g.inputs.into_iter().map(m).collect(), out: m(g.out) })
        }
    }
}
