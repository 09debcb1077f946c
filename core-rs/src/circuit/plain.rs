//! Plaintext evaluation, bitsliced: a wire holds one `u64`, bit `t` of it in instance `t`, so
//! one pass evaluates 64 instances.

use super::{Circuit, Gate, Step};
use crate::Error;

impl Circuit {
    /// Evaluates 64 instances at once, through [`Circuit::schedule`] (so the schedule is what
    /// is tested whenever this is).
    ///
    /// `inputs[g][i]` holds bit `i` of input group `g`, instance `t` in bit `t` of the word; the
    /// result has the same layout for the output groups. Group counts and widths must match.
    ///
    /// ```
    /// use ringfence_core::circuit::{pack, unpack, Builder};
    /// let (mut b, ins) = Builder::new(&[2]);
    /// let x = b.and(&ins[0]);
    /// let c = b.finish(&[vec![x]])?;
    /// // Four instances: 0, 1, 2, 3.
    /// let out = c.eval(&[pack(&[0, 1, 2, 3], 2)?])?;
    /// assert_eq!(unpack(&out[0], 4), vec![0, 0, 0, 1]);
    /// # Ok::<(), ringfence_core::Error>(())
    /// ```
    pub fn eval(&self, inputs: &[Vec<u64>]) -> Result<Vec<Vec<u64>>, Error> {
        let widths: Vec<usize> = inputs.iter().map(Vec::len).collect();
        if widths != self.inputs {
            return Err(Error::ApiMisuse(format!(
                "circuit eval: input widths {widths:?}, the circuit takes {:?}",
                self.inputs
            )));
        }
        let mut w = vec![0u64; self.wires];
        for (i, &bits) in inputs.iter().flatten().enumerate() {
            w[i] = bits;
        }
        for step in self.schedule() {
            match step {
                Step::Local(gates) => {
                    for g in gates {
                        let (out, v) = match g {
                            Gate::Xor { a, b, out } => (out, w[a] ^ w[b]),
                            Gate::Not { a, out } => (out, !w[a]),
                            Gate::Copy { a, out } => (out, w[a]),
                            Gate::Const { value, out } => (out, if value { !0 } else { 0 }),
                            // The schedule puts ANDs in their own steps.
                            Gate::And(g) => (g.out, g.inputs.iter().fold(!0, |acc, &i| acc & w[i])),
                        };
                        w[out] = v;
                    }
                }
                Step::Ands(layer) => {
                    // Computed from the layer's inputs before any of its outputs is written,
                    // as a secure evaluator would: no AND of a layer may read another's output.
                    let vals: Vec<u64> = layer
                        .iter()
                        .map(|g| g.inputs.iter().fold(!0, |acc, &i| acc & w[i]))
                        .collect();
                    for (g, v) in layer.iter().zip(vals) {
                        w[g.out] = v;
                    }
                }
            }
        }
        let mut start = self.wires - self.outputs.iter().sum::<usize>();
        Ok(self
            .outputs
            .iter()
            .map(|&n| {
                start += n;
                w[start - n..start].to_vec()
            })
            .collect())
    }

    /// Evaluates one instance whose groups are each at most 128 bits wide, a group's bit `i`
    /// being bit `i` of its number.
    pub fn eval_u128(&self, inputs: &[u128]) -> Result<Vec<u128>, Error> {
        if let Some(&w) = self.inputs.iter().chain(&self.outputs).find(|&&w| w > 128) {
            return Err(Error::ApiMisuse(format!("circuit eval_u128: a group of {w} bits")));
        }
        if inputs.len() != self.inputs.len() {
            return Err(Error::ApiMisuse(format!(
                "circuit eval_u128: {} input groups, the circuit takes {}",
                inputs.len(),
                self.inputs.len()
            )));
        }
        let sliced = inputs
            .iter()
            .zip(&self.inputs)
            .map(|(&v, &n)| pack(&[v], n))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(self.eval(&sliced)?.iter().map(|o| unpack(o, 1)[0]).collect())
    }
}

/// Bitslices up to 64 values of `width ≤ 128` bits: word `i` holds bit `i` of every value,
/// value `t` in bit `t`. Bits of a value above `width` are ignored.
pub fn pack(values: &[u128], width: usize) -> Result<Vec<u64>, Error> {
    if values.len() > 64 || width > 128 {
        return Err(Error::ApiMisuse(format!(
            "pack: {} values of {width} bits (at most 64 of at most 128)",
            values.len()
        )));
    }
    Ok((0..width)
        .map(|i| {
            values.iter().enumerate().fold(0, |acc, (t, v)| acc | (((v >> i) & 1) as u64) << t)
        })
        .collect())
}

/// The inverse of [`pack`]: `count ≤ 64` values from bitsliced words (at most 128 of them).
pub fn unpack(words: &[u64], count: usize) -> Vec<u128> {
    (0..count.min(64))
        .map(|t| {
            words
                .iter()
                .take(128)
                .enumerate()
                .fold(0, |acc, (i, w)| acc | u128::from((w >> t) & 1) << i)
        })
        .collect()
}
