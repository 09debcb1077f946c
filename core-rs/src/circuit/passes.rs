//! Circuit-to-circuit passes. Each keeps the circuit's function, its input and output groups.
//!
//! - [`dedupe_and_inputs`]: an ℓ-input AND costs about 2^ℓ bits in the multi-fan-in protocol,
//!   so a repeated input (`a ∧ a ∧ b`) is pure waste.
//! - [`fold_constants`]: constants (`EQ` lines of a Bristol file) need no gate at all.
//! - [`lower_ands`]: every ℓ-input AND as a balanced tree of 2-input ANDs — the 2-input
//!   baseline of a circuit, for schemes and comparisons without multi-fan-in ANDs.
//! - [`prune`]: drops the gates no output depends on.
//!
//! ```
//! use ringfence_core::circuit::{passes, Builder};
//! let (mut b, ins) = Builder::new(&[8]);
//! let x = b.and(&ins[0]);
//! let c = b.finish(&[vec![x]])?;
//! let two = passes::lower_ands(&c)?;
//! assert_eq!((two.stats().ands[2], two.stats().and_depth), (7, 3));
//! assert_eq!(two.eval_u128(&[0xff])?, c.eval_u128(&[0xff])?);
//! # Ok::<(), ringfence_core::Error>(())
//! ```

use super::{AndGate, Builder, Circuit, Gate, Wire};
use crate::Error;

/// Removes repeated inputs of every AND; an AND left with one input becomes a copy. Wire
/// numbers do not change.
pub fn dedupe_and_inputs(c: &Circuit) -> Circuit {
    let gates = c
        .gates
        .iter()
        .map(|g| match g {
            Gate::And(a) => {
                let mut inputs: Vec<Wire> = Vec::with_capacity(a.inputs.len());
                for &w in &a.inputs {
                    if !inputs.contains(&w) {
                        inputs.push(w);
                    }
                }
                match inputs[..] {
                    [w] => Gate::Copy { a: w, out: a.out },
                    _ => Gate::And(AndGate { inputs, out: a.out }),
                }
            }
            other => other.clone(),
        })
        .collect();
    Circuit { gates, ..c.clone() }
}

/// Replaces every gate whose output is known from constants alone by a constant, and
/// simplifies the rest: `x ⊕ 0 = x`, `x ⊕ 1 = ¬x`, `x ⊕ x = 0`, an AND with a 0 input is 0,
/// and its 1 inputs are dropped (one input left: a copy; none: the constant 1). Wire numbers do
/// not change; gates left without readers stay (see [`prune`]).
pub fn fold_constants(c: &Circuit) -> Circuit {
    let mut known: Vec<Option<bool>> = vec![None; c.wires];
    let mut gates = Vec::with_capacity(c.gates.len());
    for g in &c.gates {
        let out = g.out();
        let folded = match *g {
            Gate::Const { value, .. } => Gate::Const { value, out },
            Gate::Copy { a, .. } => match known[a] {
                Some(value) => Gate::Const { value, out },
                None => g.clone(),
            },
            Gate::Not { a, .. } => match known[a] {
                Some(v) => Gate::Const { value: !v, out },
                None => g.clone(),
            },
            Gate::Xor { a, b, .. } => match (known[a], known[b]) {
                (Some(x), Some(y)) => Gate::Const { value: x ^ y, out },
                _ if a == b => Gate::Const { value: false, out },
                (Some(k), None) => xor_const(b, k, out),
                (None, Some(k)) => xor_const(a, k, out),
                (None, None) => g.clone(),
            },
            Gate::And(ref and) => {
                let unknown: Vec<Wire> =
                    and.inputs.iter().copied().filter(|&w| known[w] != Some(true)).collect();
                if and.inputs.iter().any(|&w| known[w] == Some(false)) {
                    Gate::Const { value: false, out }
                } else {
                    match unknown[..] {
                        [] => Gate::Const { value: true, out },
                        [a] => Gate::Copy { a, out },
                        _ => Gate::And(AndGate { inputs: unknown, out }),
                    }
                }
            }
        };
        if let Gate::Const { value, .. } = folded {
            known[out] = Some(value);
        }
        gates.push(folded);
    }
    Circuit { gates, ..c.clone() }
}

fn xor_const(a: Wire, k: bool, out: Wire) -> Gate {
    if k {
        Gate::Not { a, out }
    } else {
        Gate::Copy { a, out }
    }
}

/// Every ℓ-input AND as a balanced tree of 2-input ANDs (depth ⌈log₂ ℓ⌉ each); other gates as
/// they are. Intermediate wires are added, so wires are renumbered (outputs stay last).
pub fn lower_ands(c: &Circuit) -> Result<Circuit, Error> {
    rebuild(c, &vec![true; c.gates.len()], |b, g| match g {
        Gate::And(a) => {
            let mut level = a.inputs.clone();
            while level.len() > 1 {
                level = level.chunks(2).map(|pair| b.and(pair)).collect();
            }
            level[0]
        }
        other => b.gate(other),
    })
}

/// Drops every gate that no output depends on. Wires are renumbered.
pub fn prune(c: &Circuit) -> Result<Circuit, Error> {
    let mut live = vec![false; c.wires];
    let outs = c.wires - c.outputs.iter().sum::<usize>();
    live[outs..].fill(true);
    let mut keep = vec![false; c.gates.len()];
    for (i, g) in c.gates.iter().enumerate().rev() {
        if live[g.out()] {
            keep[i] = true;
            g.inputs().for_each(|w| live[w] = true);
        }
    }
    rebuild(c, &keep, |b, g| b.gate(g))
}

/// `c` rebuilt gate by gate (those with `keep`), each through `emit`, which gets the gate with
/// its inputs already mapped to the new circuit's wires and returns the wire of its value.
fn rebuild(
    c: &Circuit,
    keep: &[bool],
    mut emit: impl FnMut(&mut Builder, Gate) -> Wire,
) -> Result<Circuit, Error> {
    let (mut b, _) = Builder::new(&c.inputs);
    let mut map: Vec<Wire> = (0..c.wires).collect();
    for (g, _) in c.gates.iter().zip(keep).filter(|(_, &k)| k) {
        let mapped = super::builder::renumber(g.clone(), &map);
        map[g.out()] = emit(&mut b, mapped);
    }
    let mut start = c.wires - c.outputs.iter().sum::<usize>();
    let outputs: Vec<Vec<Wire>> = c
        .outputs
        .iter()
        .map(|&n| {
            start += n;
            map[start - n..start].to_vec()
        })
        .collect();
    b.finish(&outputs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuit::bristol;

    /// Every input of a circuit with one input group of `width ≤ 16` bits.
    fn same_function(x: &Circuit, y: &Circuit, width: u32) {
        for v in 0..1u128 << width {
            assert_eq!(x.eval_u128(&[v]).unwrap(), y.eval_u128(&[v]).unwrap(), "input {v:#x}");
        }
    }

    #[test]
    fn dedupe_drops_repeated_and_inputs() {
        // 3 = 0∧0∧1, 4 = 2∧2 (a copy), 5 = 3∧4∧3∧1.
        let c = bristol::read("3 6\n1 3\n1 1\n3 1 0 0 1 3 AND\n2 1 2 2 4 AND\n4 1 3 4 3 1 5 AND\n")
            .unwrap();
        let d = dedupe_and_inputs(&c);
        let s = d.stats();
        assert_eq!((s.ands[2], s.ands[3], s.other), (1, 1, 1));
        same_function(&c, &d, 3);
    }

    #[test]
    fn fold_constants_removes_constant_gates() {
        let text = "8 11\n1 2\n1 3\n\
            1 1 1 2 EQ\n1 1 0 3 EQ\n2 1 0 2 4 AND\n2 1 1 3 5 AND\n\
            3 1 0 1 2 6 AND\n2 1 4 2 7 XOR\n2 1 7 7 9 XOR\n2 1 5 6 8 XOR\n";
        // The header's 11 wires leave wire 10 unassigned and an output: make it a copy of 9.
        let text = text.replace("8 11\n", "9 11\n") + "1 1 9 10 EQW\n";
        let c = bristol::read(&text).unwrap();
        let f = fold_constants(&c);
        let s = f.stats();
        // 0∧1 (one AND left, of fan-in 2), x⊕1 as a NOT, 5 ⊕ 6 with 5 = 0 as a copy.
        assert_eq!((s.and_count(), s.ands[2], s.not), (1, 1, 1));
        same_function(&c, &f, 2);
        // What is left without readers goes with `prune`: the two EQ wires, the AND with 0, …
        assert!(prune(&f).unwrap().gates().len() < f.gates().len());
        same_function(&c, &prune(&f).unwrap(), 2);
    }

    #[test]
    fn lower_ands_gives_balanced_two_input_trees() {
        let (mut b, ins) = Builder::new(&[8]);
        let outs: Vec<Wire> = (2..=8).map(|l| b.and(&ins[0][..l])).collect();
        let c = b.finish(&[outs]).unwrap();
        let low = lower_ands(&c).unwrap();
        let s = low.stats();
        assert_eq!(s.and_count(), s.ands[2]);
        assert_eq!(s.ands[2], (2..=8).map(|l| l - 1).sum::<usize>());
        assert_eq!(s.and_depth, 3);
        same_function(&c, &low, 8);
        assert_eq!(bristol::read(&bristol::write(&low)).unwrap(), low);
    }

    #[test]
    fn prune_keeps_what_outputs_need() {
        let (mut b, ins) = Builder::new(&[3]);
        let dead = b.and(&ins[0]);
        let _ = b.not(dead);
        let live = b.xor(ins[0][0], ins[0][1]);
        let c = b.finish(&[vec![live]]).unwrap();
        let p = prune(&c).unwrap();
        assert_eq!((p.gates().len(), p.stats().and_count()), (1, 0));
        same_function(&c, &p, 3);
    }
}
