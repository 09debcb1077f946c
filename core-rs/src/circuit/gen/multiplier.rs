//! The multiplier: partial products, column compression by counters of one AND layer each,
//! and a multi-fan-in Sklansky adder.

use super::adder::add;
use super::check;
use crate::circuit::{bin3_gate_bits, passes, Builder, Circuit, Wire};
use crate::Error;

/// `a · b` of two `n`-bit numbers: outputs the `2n`-bit product.
///
/// One layer of `n²` partial products `a_i ∧ b_j`, column by weight; then stages that
/// compress every column to at most two bits with counters of one AND layer each; then
/// [`adder`](super::adder) on the two rows that are left. A counter over `N` bits of a column
/// outputs its popcount: bit 0 (the XOR) stays, bit 1 goes to the next column, bit 2 (for
/// `N ≥ 4`) to the one after. By Lucas' theorem bit 1 is `e₂` and bit 2 is `e₄` (elementary
/// symmetric polynomials mod 2), and with the prefix XORs `L_i = x_0 ⊕ … ⊕ x_i`
///
/// - `e₂ = ⊕_{j ≥ 1} x_j·L_{j−1}`: `N − 1` two-input ANDs (one, the majority
///   `((x₀⊕x₂)·(x₁⊕x₂)) ⊕ x₂`, for the full adder `N = 3`);
/// - `e₄ = ⊕_{1 ≤ b < c < d} x_b·x_c·x_d·L_{b−1}`: `C(N−1, 3)` four-input ANDs (20 for a 7:3
///   counter instead of `C(7, 4) = 35`).
///
/// Every AND reads linear functions of the stage's inputs, so a stage is one round. With
/// `lmax` 2 or 3 the counters are full and half adders (a Dadda tree); from 4 they go up to
/// 7:3, which shrinks columns by 7/3 a stage instead of 3/2. The number of stages is the
/// least a greedy reduction reaches, and each stage reduces no more than those stages need,
/// choosing the counters of fewest bits sent (an ℓ-input AND costs `2^ℓ − ℓ − 1` bits from
/// P1 and P2). Depth `1 + stages + 1 + ⌈log_lmax w⌉` for a final addition of `w` bits.
///
/// The paper (§4, Table 3) builds its multipliers from counters of one layer too, but prints
/// neither its counter mix nor its schedule; sizes and depths beside its table are in
/// BENCHMARKS.md.
///
/// ```
/// let c = ringfence_core::circuit::gen::multiplier(16, 4)?;
/// assert_eq!(c.eval_u128(&[0xffff, 0xfffe])?, vec![0xffff * 0xfffe]);
/// # Ok::<(), ringfence_core::Error>(())
/// ```
pub fn multiplier(n: usize, lmax: usize) -> Result<Circuit, Error> {
    check(n, lmax, "multiplier")?;
    let (mut b, ins) = Builder::new(&[n, n]);
    let (x, y) = (&ins[0], &ins[1]);
    let w = 2 * n;
    let mut cols: Vec<Vec<Wire>> = vec![Vec::new(); w];
    for (i, &xi) in x.iter().enumerate() {
        for (j, &yj) in y.iter().enumerate() {
            cols[i + j].push(b.and(&[xi, yj]));
        }
    }
    let widest = if lmax >= 4 { 7 } else { 3 };
    let mut left = stages(&heights(&cols), widest);
    while left > 0 {
        let counters = cheapest_stage(&heights(&cols), widest, left);
        cols = compress(&mut b, &cols, &counters);
        left -= 1;
    }
    // Columns below the first of two bits are final; the adder takes the rest.
    let lo = cols.iter().position(|c| c.len() == 2).unwrap_or(w);
    let zero = b.constant(false);
    let bit = |c: &Vec<Wire>, k: usize| c.get(k).copied().unwrap_or(zero);
    let mut out: Vec<Wire> = cols[..lo].iter().map(|c| bit(c, 0)).collect();
    if lo < w {
        let xs: Vec<Wire> = cols[lo..].iter().map(|c| bit(c, 0)).collect();
        let ys: Vec<Wire> = cols[lo..].iter().map(|c| bit(c, 1)).collect();
        // The carry out of the top column is 0: the product has 2n bits.
        out.extend(add(&mut b, &xs, &ys, lmax).0);
    }
    // Columns of one bit fed the adder zeros: fold them away.
    passes::prune(&passes::fold_constants(&b.finish(&[out])?))
}

fn heights(cols: &[Vec<Wire>]) -> Vec<usize> {
    cols.iter().map(Vec::len).collect()
}

/// The counters (their sizes, per column) of one stage that leaves every column at most `t`
/// high, using counters of at most `widest` bits, each as large as the column's excess needs
/// (a greedy pass from the lowest column up, counting the bits each counter sends up); `None`
/// if some column cannot get there.
fn plan(h: &[usize], t: usize, widest: usize) -> Option<Vec<Vec<usize>>> {
    let w = h.len();
    let mut incoming = vec![0; w + 2];
    let mut counters = vec![Vec::new(); w];
    for j in 0..w {
        let (mut height, mut free) = (h[j] + incoming[j], h[j]);
        while height > t && free >= 2 {
            let n = widest.min(free).min(height - t + 1);
            counters[j].push(n);
            free -= n;
            height -= n - 1;
            incoming[j + 1] += 1;
            incoming[j + 2] += usize::from(n >= 4);
        }
        if height > t {
            return None;
        }
    }
    Some(counters)
}

/// The heights after a stage of `counters` (outputs above the top column are dropped).
fn after(h: &[usize], counters: &[Vec<usize>]) -> Vec<usize> {
    let mut out = h.to_vec();
    for (j, cs) in counters.iter().enumerate() {
        for &n in cs {
            out[j] -= n - 1;
            if j + 1 < h.len() {
                out[j + 1] += 1;
            }
            if n >= 4 && j + 2 < h.len() {
                out[j + 2] += 1;
            }
        }
    }
    out
}

/// The stages a greedy reduction takes to two bits a column: each stage to the lowest height
/// it can reach.
fn stages(h: &[usize], widest: usize) -> usize {
    let mut h = h.to_vec();
    let mut count = 0;
    while let Some(&top) = h.iter().max().filter(|&&m| m > 2) {
        // Reaching t is monotone in t: the lowest reachable height by bisection.
        let (mut lo, mut hi) = (2, top);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if plan(&h, mid, widest).is_some() {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        match plan(&h, lo, widest) {
            Some(counters) if lo < top => h = after(&h, &counters),
            // No stage lowers the tallest column (a full adder always can): a loop must end.
            _ => return usize::MAX,
        }
        count += 1;
    }
    count
}

/// Bits P1 (and P2) send in bin3 for a stage's counters ([`bin3_gate_bits`]).
fn cost(counters: &[Vec<usize>]) -> usize {
    let [two, four] = [bin3_gate_bits(2)[0], bin3_gate_bits(4)[0]];
    counters
        .iter()
        .flatten()
        .map(|&n| match n {
            2 | 3 => two,
            _ => (n - 1) * two + (n - 1) * (n - 2) * (n - 3) / 6 * four,
        })
        .sum()
}

/// The stage of fewest bits sent after which `left − 1` greedy stages still finish.
fn cheapest_stage(h: &[usize], widest: usize, left: usize) -> Vec<Vec<usize>> {
    let top = h.iter().copied().max().unwrap_or(0);
    let mut best: Option<(usize, Vec<Vec<usize>>)> = None;
    for size in 3..=widest {
        for t in 2..top {
            let Some(counters) = plan(h, t, size) else { continue };
            if stages(&after(h, &counters), widest) < left {
                let c = cost(&counters);
                if best.as_ref().is_none_or(|(b, _)| c < *b) {
                    best = Some((c, counters));
                }
            }
        }
    }
    // `left` came from the greedy reduction, whose own first stage always qualifies.
    best.map(|(_, c)| c).unwrap_or_default()
}

/// One stage: the counters applied to the first bits of each column, the rest passed on.
fn compress(b: &mut Builder, cols: &[Vec<Wire>], counters: &[Vec<usize>]) -> Vec<Vec<Wire>> {
    let w = cols.len();
    let mut next: Vec<Vec<Wire>> = vec![Vec::new(); w];
    for (j, (col, cs)) in cols.iter().zip(counters).enumerate() {
        let mut at = 0;
        for &n in cs {
            let outs = counter(b, &col[at..at + n]);
            at += n;
            for (k, o) in outs.into_iter().enumerate() {
                if j + k < w {
                    next[j + k].push(o);
                }
            }
        }
        next[j].extend_from_slice(&col[at..]);
    }
    next
}

/// The popcount of `x` (2 to 7 bits) in one AND layer: bits 0, 1 and (from 4 bits) 2.
fn counter(b: &mut Builder, x: &[Wire]) -> Vec<Wire> {
    let n = x.len();
    let mut prefix = Vec::with_capacity(n);
    prefix.push(x[0]);
    for i in 1..n {
        let p = b.xor(prefix[i - 1], x[i]);
        prefix.push(p);
    }
    let sum = prefix[n - 1];
    let e2 = match n {
        2 => b.and(x),
        3 => {
            let (u, v) = (b.xor(x[0], x[2]), b.xor(x[1], x[2]));
            let m = b.and(&[u, v]);
            b.xor(m, x[2])
        }
        _ => {
            let terms: Vec<Wire> = (1..n).map(|j| b.and(&[x[j], prefix[j - 1]])).collect();
            b.xor_all(&terms)
        }
    };
    if n < 4 {
        return vec![sum, e2];
    }
    let mut terms = Vec::new();
    for i in 1..n {
        for j in i + 1..n {
            for k in j + 1..n {
                terms.push(b.and(&[x[i], x[j], x[k], prefix[i - 1]]));
            }
        }
    }
    let e4 = b.xor_all(&terms);
    vec![sum, e2, e4]
}
