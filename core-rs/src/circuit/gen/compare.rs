//! Fischlin's comparator on a multi-fan-in prefix-AND tree.

use super::{check, prefix_and};
use crate::circuit::{Builder, Circuit, Wire};
use crate::Error;

/// `a > b` for unsigned `n`-bit `a`, `b` (one output bit).
///
/// `a > b` exactly when, at some bit `i`, `a_i = 1`, `b_i = 0` and all higher bits agree;
/// at most one `i` qualifies, so the terms are XORed. The "higher bits agree" products `E_{i+1}`
/// are the prefix ANDs, from the top bit down, of the equality bits `¬(a_j ⊕ b_j)` (free), on
/// a Sklansky tree of fan-in `lmax`; each term is then one 3-input AND `a_i ∧ ¬b_i ∧ E_{i+1}`
/// (two 2-input ANDs when `lmax` is 2). Depth 1 + ⌈log_lmax n⌉, as the paper's Table 4; the
/// size is Table 4's "standard" row for `lmax` = 2 and one 2-input AND above its ℓ ≤ 4 and
/// ℓ ≤ 8 rows.
///
/// This is the paper's construction, kept for comparison: the prefix tree also computes the
/// product of all `n` equality bits, which no term reads, and the chain of ANDs leading to it
/// (⌈log_lmax n⌉ gates or fewer). [`passes::prune`](crate::circuit::passes::prune) drops them
/// (16 bits at `lmax` = 2: 59 ANDs instead of 63), at the same depth.
pub fn greater_than(n: usize, lmax: usize) -> Result<Circuit, Error> {
    check(n, lmax, "greater_than")?;
    let (mut b, ins) = Builder::new(&[n, n]);
    let (x, y) = (&ins[0], &ins[1]);
    // From the top bit down: eq[k] is bit n−1−k's equality.
    let eq: Vec<Wire> = (0..n)
        .rev()
        .map(|i| {
            let d = b.xor(x[i], y[i]);
            b.not(d)
        })
        .collect();
    let agree = prefix_and(&mut b, &eq, lmax);
    let mut terms = Vec::with_capacity(n);
    for i in 0..n {
        let not_b = b.not(y[i]);
        let mut f = vec![x[i], not_b];
        if i + 1 < n {
            // E_{i+1}: bits n−1 … i+1 agree, prefix position n−2−i.
            f.push(agree[n - 2 - i]);
        }
        let t = if lmax == 2 && f.len() == 3 {
            let g = b.and(&f[..2]);
            b.and(&[g, f[2]])
        } else {
            b.and(&f)
        };
        terms.push(t);
    }
    let out = b.xor_all(&terms);
    b.finish(&[vec![out]])
}
