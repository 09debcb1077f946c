//! The multi-fan-in Sklansky adder.

use super::{check, level, radices};
use crate::circuit::{Builder, Circuit, Wire};
use crate::Error;

/// `a + b` of two `n`-bit numbers: outputs the `n`-bit sum and the carry out (1 bit).
///
/// Generate bits `g_i = a_i ∧ b_i` take one layer (propagate bits `p_i = a_i ⊕ b_i` are
/// free); then a Sklansky prefix over (G, P) with the radices of `radices`,
/// where a position in sub-block `s` of its group folds in the `s` sub-blocks below in one
/// layer: `G ⊕= P·G_{s−1} ⊕ P·P_{s−1}·G_{s−2} ⊕ …` (ANDs of fan-in 2 to s+1; the terms
/// are mutually exclusive, so XOR is OR), and `P = P·P_{s−1}⋯P_0` unless the group starts at
/// bit 0 (where P is never read). Depth 1 + ⌈log_lmax n⌉; sizes as the paper's Table 2
/// (e.g. 64 bits: 385 ANDs for lmax = 2, 433 for 4, 561 for 8).
pub fn adder(n: usize, lmax: usize) -> Result<Circuit, Error> {
    check(n, lmax, "adder")?;
    let (mut b, ins) = Builder::new(&[n, n]);
    let (sum, carry) = add(&mut b, &ins[0], &ins[1], lmax);
    b.finish(&[sum, vec![carry]])
}

/// The sum bits and the carry out of `x + y` (equal widths, at least one bit), built into `b`
/// as [`adder`] describes.
pub(super) fn add(b: &mut Builder, x: &[Wire], y: &[Wire], lmax: usize) -> (Vec<Wire>, Wire) {
    let n = x.len();
    let p0: Vec<Wire> = (0..n).map(|i| b.xor(x[i], y[i])).collect();
    let mut g: Vec<Wire> = (0..n).map(|i| b.and(&[x[i], y[i]])).collect();
    let mut p = p0.clone();
    let mut block = 1;
    for r in radices(n, lmax) {
        let (gs, ps) = (g.clone(), p.clone());
        for i in 0..n {
            let (start, tops) = level(i, block, r);
            if tops.is_empty() {
                continue;
            }
            // Term k (k = 0 for the nearest sub-block): P_i · P_tops[0] ⋯ P_tops[k−1] · G_tops[k].
            let mut terms = vec![gs[i]];
            for k in 0..tops.len() {
                let mut f = vec![ps[i]];
                f.extend(tops[..k].iter().map(|&t| ps[t]));
                f.push(gs[tops[k]]);
                terms.push(b.and(&f));
            }
            g[i] = b.xor_all(&terms);
            if start > 0 {
                let mut f = vec![ps[i]];
                f.extend(tops.iter().map(|&t| ps[t]));
                p[i] = b.and(&f);
            }
        }
        block *= r;
    }
    // g[i] is now the carry into bit i + 1.
    let sum = (0..n).map(|i| if i == 0 { p0[0] } else { b.xor(p0[i], g[i - 1]) }).collect();
    (sum, g[n - 1])
}
