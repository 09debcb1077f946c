//! Secure evaluation of a [`Circuit`] on any scheme with [`Gates`]: every local step on the
//! parties' own shares, one [`Gates::and_layer`] call per AND layer, many instances at once
//! (each wire holds one shared bit per instance).

use super::{Circuit, Gate, Step, Wire};
use crate::net::PartyId;
use crate::sharing::{Bitwise, Gates};
use crate::Error;

/// Who supplies one input group of a run: a compute party, and (at that party only) its bits.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The party that owns the group's bits.
    pub owner: PartyId,
    /// At the owner, the group's bits for every instance, wire-major: wire `i` of the group,
    /// instance `t`, at `i·n + t`. `None` at the other parties.
    pub bits: Option<&'a [bool]>,
}

/// One AND layer with the gates of each fan-in side by side: operand `j` of all gates of
/// fan-in `ℓ` concatenated into one vector, one `ℓ`-input gate per fan-in, the outputs split
/// back per gate. A scheme packs shared bits into words per vector, so with `n` instances not
/// a multiple of the word each gate's vectors would carry padding on the wire (63 of 64 bits
/// for one instance); side by side, only the last word of a fan-in's vectors does. The same
/// ANDs in the same rounds: only the packing changes.
async fn and_layer_side_by_side<S: Gates>(
    s: &mut S,
    ops: &[Vec<&S::Bits>],
    n: usize,
) -> Result<Vec<S::Bits>, Error> {
    let mut fan_ins: Vec<usize> = ops.iter().map(Vec::len).collect();
    fan_ins.sort_unstable();
    fan_ins.dedup();
    let members: Vec<Vec<usize>> =
        fan_ins.iter().map(|&l| (0..ops.len()).filter(|&g| ops[g].len() == l).collect()).collect();
    let joined: Vec<Vec<S::Bits>> = fan_ins
        .iter()
        .zip(&members)
        .map(|(&l, gs)| {
            (0..l)
                .map(|j| S::Bits::concat(&gs.iter().map(|&g| ops[g][j]).collect::<Vec<_>>()))
                .collect()
        })
        .collect();
    let refs: Vec<Vec<&S::Bits>> = joined.iter().map(|g| g.iter().collect()).collect();
    let layer: Vec<&[&S::Bits]> = refs.iter().map(|g| &g[..]).collect();
    let outs = s.and_layer(&layer).await?;
    let mut result: Vec<Option<S::Bits>> = vec![None; ops.len()];
    for (out, gs) in outs.iter().zip(&members) {
        for (k, &g) in gs.iter().enumerate() {
            result[g] = Some(out.slice(k * n..(k + 1) * n));
        }
    }
    result
        .into_iter()
        .map(|r| r.ok_or_else(|| Error::ApiMisuse("circuit: a layer lost a gate".into())))
        .collect()
}

impl Circuit {
    /// Evaluates `n` instances of the circuit on scheme `s`, with one [`Input`] per input group,
    /// and returns one shared vector per output group, wire-major like the inputs (wire `i`,
    /// instance `t` at `i·n + t`), for the caller to open to whom it chooses.
    ///
    /// The inputs of each owner are shared in one call (a round per owner); then the schedule's
    /// steps run in order, and each AND layer is one [`Gates::and_layer`] (one round on a
    /// scheme with multi-input ANDs; ⌈log₂ ℓ⌉ on others). A wire's shares are dropped after
    /// their last use.
    ///
    /// ```
    /// use ringfence_core::circuit::{shared::Input, Builder};
    /// use ringfence_core::{net::PartyId, sharing::Gates, testing};
    /// // (a ∧ b ∧ c) ⊕ d for two instances, a..c from P0 and d from P1.
    /// let (mut b, ins) = Builder::new(&[3, 1]);
    /// let t = b.and(&ins[0]);
    /// let y = b.xor(t, ins[1][0]);
    /// let c = b.finish(&[vec![y]])?;
    /// let outs = testing::run_rep3(1, |mut p| {
    ///     let c = c.clone();
    ///     async move {
    ///         let me = p.me();
    ///         // Wire-major: a = [1, 1], b = [1, 0], c = [1, 1]; d = [0, 1].
    ///         let abc = [true, true, true, false, true, true];
    ///         let d = [false, true];
    ///         let inputs = [
    ///             Input { owner: PartyId(0), bits: (me == PartyId(0)).then_some(&abc[..]) },
    ///             Input { owner: PartyId(1), bits: (me == PartyId(1)).then_some(&d[..]) },
    ///         ];
    ///         let out = c.eval_shared(&mut p, &inputs, 2).await?;
    ///         p.open_bits(out[0].clone()).await
    ///     }
    /// });
    /// assert_eq!(outs[2], vec![true, true]);
    /// # Ok::<(), ringfence_core::Error>(())
    /// ```
    pub async fn eval_shared<S: Gates>(
        &self,
        s: &mut S,
        inputs: &[Input<'_>],
        n: usize,
    ) -> Result<Vec<S::Bits>, Error> {
        let widths = self.input_widths();
        if inputs.len() != widths.len() {
            return Err(Error::ApiMisuse(format!(
                "circuit: {} input groups given, the circuit has {}",
                inputs.len(),
                widths.len()
            )));
        }
        for (g, (inp, &w)) in inputs.iter().zip(widths).enumerate() {
            if let Some(b) = inp.bits {
                if b.len() != w * n {
                    return Err(Error::ApiMisuse(format!(
                        "circuit input group {g}: {} bits for {w} wires × {n} instances",
                        b.len()
                    )));
                }
            }
        }
        let mut wires: Vec<Option<S::Bits>> = vec![None; self.wires()];
        self.share_inputs(s, inputs, n, &mut wires).await?;
        let steps = self.schedule();
        let drops = self.drops(&steps);
        let get = |w: &[Option<S::Bits>], i: Wire| {
            w[i].clone().ok_or_else(|| Error::ApiMisuse(format!("circuit: wire {i} read unset")))
        };
        for (k, step) in steps.iter().enumerate() {
            match step {
                Step::Local(gates) => {
                    for g in gates {
                        let v = match g {
                            Gate::Xor { a, b, .. } => get(&wires, *a)?.xor(&get(&wires, *b)?)?,
                            Gate::Not { a, .. } => get(&wires, *a)?.not(),
                            Gate::Copy { a, .. } => get(&wires, *a)?,
                            Gate::Const { value, .. } => s.constant_bits(&vec![*value; n]),
                            Gate::And(_) => {
                                return Err(Error::ApiMisuse(
                                    "circuit: an AND in a local step".into(),
                                ))
                            }
                        };
                        wires[g.out()] = Some(v);
                    }
                }
                Step::Ands(gates) => {
                    let ops: Vec<Vec<&S::Bits>> = gates
                        .iter()
                        .map(|g| g.inputs.iter().map(|&i| wires[i].as_ref().ok_or(i)).collect())
                        .collect::<Result<_, Wire>>()
                        .map_err(|i| Error::ApiMisuse(format!("circuit: wire {i} read unset")))?;
                    let outs = if n % 64 == 0 {
                        let refs: Vec<&[&S::Bits]> = ops.iter().map(|g| &g[..]).collect();
                        s.and_layer(&refs).await?
                    } else {
                        and_layer_side_by_side(s, &ops, n).await?
                    };
                    for (g, v) in gates.iter().zip(outs) {
                        wires[g.out] = Some(v);
                    }
                }
            }
            for &w in &drops[k] {
                wires[w] = None;
            }
        }
        let widths = self.output_widths();
        (0..widths.len())
            .map(|g| {
                let range = self.output_wires(g).unwrap_or(0..0);
                let parts: Vec<S::Bits> =
                    range.map(|i| get(&wires, i)).collect::<Result<_, _>>()?;
                Ok(S::Bits::concat(&parts.iter().collect::<Vec<_>>()))
            })
            .collect()
    }

    /// Shares every input group, one call per owner (its groups concatenated).
    async fn share_inputs<S: Gates>(
        &self,
        s: &mut S,
        inputs: &[Input<'_>],
        n: usize,
        wires: &mut [Option<S::Bits>],
    ) -> Result<(), Error> {
        let mut owners: Vec<PartyId> = inputs.iter().map(|i| i.owner).collect();
        owners.sort_unstable_by_key(|p| p.0);
        owners.dedup();
        for owner in owners {
            let groups: Vec<usize> =
                (0..inputs.len()).filter(|&g| inputs[g].owner == owner).collect();
            let total: usize = groups.iter().map(|&g| self.input_widths()[g] * n).sum();
            let mine = groups
                .iter()
                .map(|&g| inputs[g].bits)
                .collect::<Option<Vec<&[bool]>>>()
                .map(|parts| parts.concat());
            let x = s.input_bits(owner, mine.as_deref(), total).await?;
            let mut at = 0;
            for &g in &groups {
                for w in self.input_wires(g).unwrap_or(0..0) {
                    wires[w] = Some(x.slice(at..at + n));
                    at += n;
                }
            }
        }
        Ok(())
    }

    /// For every step, the wires it reads for the last time (outputs excepted, which are kept
    /// to the end).
    fn drops(&self, steps: &[Step]) -> Vec<Vec<Wire>> {
        let mut last = vec![None; self.wires()];
        for (k, step) in steps.iter().enumerate() {
            let reads: Vec<Wire> = match step {
                Step::Local(gates) => gates.iter().flat_map(Gate::inputs).collect(),
                Step::Ands(gates) => gates.iter().flat_map(|g| g.inputs.iter().copied()).collect(),
            };
            for w in reads {
                last[w] = Some(k);
            }
        }
        for g in 0..self.output_widths().len() {
            for w in self.output_wires(g).unwrap_or(0..0) {
                last[w] = None;
            }
        }
        let mut drops = vec![Vec::new(); steps.len()];
        for (w, k) in last.into_iter().enumerate() {
            if let Some(k) = k {
                drops[k].push(w);
            }
        }
        drops
    }
}
