//! Carry computation for `a + b` on bit planes: a Sklansky parallel-prefix network, pruned to
//! the carries actually requested.
//!
//! With `g_i = a_i ∧ b_i` and `p_i = a_i ⊕ b_i`, the carry out of position `i` is `G_i`, the
//! generate signal of the span `[0, i]`, built from the associative operator
//! `(G, P)_hi ∘ (G, P)_lo = (G_hi ⊕ P_hi ∧ G_lo, P_hi ∧ P_lo)`.
//! Sklansky's network reaches every `G_i` in ⌈log₂ L⌉ levels. Working backwards from the wanted
//! outputs, each level keeps only the ANDs something depends on, so one carry (MSB) costs a
//! binary tree (about 2 ANDs per merge) while full addition (A2B) costs the whole network.
//! Rounds: 1 (the `g` layer) + one per level that still has work.

use super::binary::{AndLayer, AndPair, Planes};
use super::compare::SharedBits;
use super::Rep3Vec;
use crate::ring::Bits;
use crate::Error;

/// The combine steps `(target, source)` of Sklansky level `d` over `len` positions.
fn level_ops(len: usize, d: u32) -> impl Iterator<Item = (usize, usize)> {
    (0..len)
        .filter(move |i| (i >> d) & 1 == 1)
        .map(move |i| (i, ((i >> (d + 1)) << (d + 1)) + (1 << d) - 1))
}

/// Sklansky levels over `len` positions: ⌈log₂ len⌉.
pub(crate) fn levels(len: usize) -> u32 {
    usize::BITS - len.saturating_sub(1).leading_zeros()
}

/// Which signals the pruned network computes: `need[d] = (need_g, need_p)` per position for
/// the state *before* level `d` (`need[levels]` is the output), working back from `want`.
fn needs(len: usize, want: &[usize]) -> Vec<(Vec<bool>, Vec<bool>)> {
    let nl = levels(len);
    let mut need = vec![(vec![false; len], vec![false; len]); nl as usize + 1];
    for &i in want {
        need[nl as usize].0[i] = true;
    }
    for d in (0..nl).rev() {
        let (ng, np) = need[d as usize + 1].clone();
        let (mut g, mut p) = (ng.clone(), np.clone());
        for (i, j) in level_ops(len, d) {
            if ng[i] {
                p[i] = true;
                g[j] = true;
            }
            if np[i] {
                p[j] = true;
            }
        }
        need[d as usize] = (g, p);
    }
    need
}

/// The AND planes [`carries`] evaluates for `want`: the `g` layer's, then one per needed `G` or
/// `P` update of each level (a scheme that validates triples ahead reserves this many).
pub(crate) fn carry_ands(want: &[usize]) -> usize {
    let len = want.iter().map(|&i| i + 1).max().unwrap_or(0);
    if len == 0 {
        return 0;
    }
    let need = needs(len, want);
    let g_layer = need[0].0.iter().filter(|&&g| g).count();
    let levels = (0..levels(len)).map(|d| {
        let (ng, np) = &need[d as usize + 1];
        level_ops(len, d).map(|(i, _)| usize::from(ng[i]) + usize::from(np[i])).sum::<usize>()
    });
    g_layer + levels.sum::<usize>()
}

/// Returns `G_i` (the carry out of position `i`) for each `i` in `want`, given the bit planes
/// of `a` and `b`, with every AND layer evaluated by `s`. With `carry_in`, position 0 also
/// receives a carry of 1.
pub(crate) async fn carries<A: AndLayer + ?Sized>(
    s: &mut A,
    a: &Planes,
    b: &Planes,
    want: &[usize],
    carry_in: bool,
) -> Result<Vec<Rep3Vec<Bits>>, Error> {
    let len = want.iter().map(|&i| i + 1).max().unwrap_or(0);
    if len == 0 {
        return Ok(Vec::new());
    }
    let nl = levels(len);
    let need = needs(len, want);

    let w = a.w;
    let mut p = a.xor_prefix(b, len);
    // g layer (one round): g_i = a_i ∧ b_i where needed.
    let gi: Vec<usize> = (0..len).filter(|&i| need[0].0[i]).collect();
    let pairs: Vec<AndPair<'_>> = gi.iter().map(|&i| (a, i, b, i)).collect();
    let prods = s.and_planes(&pairs, w).await?;
    let mut g = Planes::zeros(a.me, len, w);
    for (t, &i) in gi.iter().enumerate() {
        g.set_plane(i, &prods, t);
    }
    if carry_in {
        // A carry of 1 into position 0 makes G_0 = g_0 ⊕ p_0.
        g.xor_plane(0, &p, 0);
    }

    for d in 0..nl {
        let (ng, np) = (&need[d as usize + 1].0, &need[d as usize + 1].1);
        let mut plan = Vec::new(); // (target, source, updates G?)
        for (i, j) in level_ops(len, d) {
            if ng[i] {
                plan.push((i, j, true));
            }
            if np[i] {
                plan.push((i, j, false));
            }
        }
        if plan.is_empty() {
            continue;
        }
        let pairs: Vec<AndPair<'_>> = plan
            .iter()
            .map(|&(i, j, is_g)| if is_g { (&p, i, &g, j) } else { (&p, i, &p, j) })
            .collect();
        let prods = s.and_planes(&pairs, w).await?;
        for (t, &(i, _, is_g)) in plan.iter().enumerate() {
            if is_g {
                g.xor_plane(i, &prods, t);
            } else {
                p.set_plane(i, &prods, t);
            }
        }
    }
    Ok(want.iter().map(|&i| g.to_vec(i)).collect())
}

/// The `k` bits of `a + b` mod 2^k for `n` values (planes of `a` and `b`, one vector per bit):
/// bit `i` is `a_i ⊕ b_i ⊕ G_{i−1}`, from the whole carry network.
pub(crate) async fn sum_bits<A: AndLayer + ?Sized>(
    s: &mut A,
    a: &Planes,
    b: &Planes,
    k: usize,
    n: usize,
) -> Result<Vec<SharedBits>, Error> {
    let want: Vec<usize> = (0..k - 1).collect();
    let g = carries(s, a, b, &want, false).await?;
    let p = a.xor_prefix(b, k);
    let mut out = Vec::with_capacity(k);
    for i in 0..k {
        let pi = p.to_vec(i);
        let words = if i == 0 { pi } else { pi.add(&g[i - 1])? };
        out.push(SharedBits { n, words });
    }
    Ok(out)
}

/// The top bit of `a + b` mod 2^k, `a_{k−1} ⊕ b_{k−1} ⊕ G_{k−2}`, for vectors laid side by side
/// in the planes (`ws[j]` words and `ns[j]` values for vector `j`): one pruned carry network.
pub(crate) async fn sum_msbs<A: AndLayer + ?Sized>(
    s: &mut A,
    a: &Planes,
    b: &Planes,
    k: usize,
    ws: &[usize],
    ns: &[usize],
) -> Result<Vec<SharedBits>, Error> {
    let g = carries(s, a, b, &[k - 2], false).await?;
    let top = a.xor_one(b, k - 1);
    let m = top.add(&g[0])?;
    Ok(m.split(ws).into_iter().zip(ns).map(|(words, &n)| SharedBits { n, words }).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_and_count_is_the_networks() {
        // rep3's MSB is exactly this network: 3k − 5 − ⌈log₂(k−1)⌉ ANDs (rep3/compare.rs).
        assert_eq!(carry_ands(&[62]), 3 * 64 - 5 - 6);
        assert_eq!(carry_ands(&[]), 0);
        assert_eq!(carry_ands(&[0]), 1);
        let all: Vec<usize> = (0..63).collect();
        assert!(carry_ands(&all) > carry_ands(&[62]));
    }

    #[test]
    fn sklansky_levels_reach_every_prefix() {
        // Track spans symbolically: after all levels, position i must cover [0, i].
        for len in [1usize, 2, 5, 31, 63, 64] {
            let mut lo: Vec<usize> = (0..len).collect();
            for d in 0..levels(len) {
                for (i, j) in level_ops(len, d) {
                    assert_eq!(lo[i], j + 1, "span of {i} must abut {j}");
                    lo[i] = lo[j];
                }
            }
            assert!(lo.iter().all(|&l| l == 0), "len {len}: {lo:?}");
        }
    }
}
