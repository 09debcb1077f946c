//! Circuit generators: the circuits of Faraji–Kerschbaum's evaluation, each for a largest AND
//! fan-in `lmax` in 2..=8 (2 gives the classic 2-input circuit).
//!
//! - [`and_tree`]: the AND of n bits, depth ⌈log_ℓ n⌉.
//! - [`adder`]: a mixed-radix Sklansky adder, depth 1 + ⌈log_ℓ n⌉.
//! - [`greater_than`]: Fischlin's comparator on a prefix-AND tree, depth 1 + ⌈log_ℓ n⌉.
//! - [`multiplier`]: the 2n-bit product by column compression with counters of one AND layer.
//! - [`aes`]: AES encryption under expanded round keys, on the Boyar–Peralta S-box.
//!
//! ```
//! use ringfence_core::circuit::gen;
//! let add = gen::adder(64, 8)?;
//! assert_eq!((add.stats().and_count(), add.stats().and_depth), (561, 3));
//! let sum = add.eval_u128(&[u64::MAX as u128, 2])?;
//! assert_eq!(sum, vec![1, 1]); // 2^64 + 1: sum 1, carry 1
//! # Ok::<(), ringfence_core::Error>(())
//! ```

mod adder;
mod aes;
mod compare;
mod multiplier;
mod sbox;
mod tree;

pub use adder::adder;
pub use aes::{aes, AesKey};
pub use compare::greater_than;
pub use multiplier::multiplier;
pub use sbox::{sbox, Sbox};
pub use tree::and_tree;

use super::{Builder, Wire, MAX_FAN_IN};
use crate::Error;

fn check(n: usize, lmax: usize, what: &str) -> Result<(), Error> {
    if n == 0 || !(2..=MAX_FAN_IN).contains(&lmax) {
        return Err(Error::ApiMisuse(format!(
            "{what}: {n} bits with fan-in {lmax} (at least 1 bit, fan-in 2 to {MAX_FAN_IN})"
        )));
    }
    Ok(())
}

/// The radices of a mixed-radix prefix over `n` positions: `lmax` while a full level fits,
/// then the smallest radix that covers the rest. Their count is ⌈log_lmax n⌉, and for powers
/// of two this is the paper's sequence (e.g. 32 bits at ℓ ≤ 4: 4, 4, 2).
fn radices(n: usize, lmax: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut span = 1;
    while span < n {
        let r = lmax.min(n.div_ceil(span));
        out.push(r);
        span *= r;
    }
    out
}

/// For each position `i` of a Sklansky level with sub-blocks of `block` positions grouped
/// `radix` at a time: the start of its group, its sub-block index `s`, and the tops (last
/// positions) of the sub-blocks below it in the group, nearest first.
fn level(i: usize, block: usize, radix: usize) -> (usize, Vec<usize>) {
    let start = i / (block * radix) * (block * radix);
    let s = (i - start) / block;
    (start, (0..s).rev().map(|t| start + (t + 1) * block - 1).collect())
}

/// The prefix ANDs `x_0 ∧ … ∧ x_k` of every `k`, on a mixed-radix Sklansky tree: one AND of
/// fan-in up to `lmax` per position and level.
fn prefix_and(b: &mut Builder, x: &[Wire], lmax: usize) -> Vec<Wire> {
    let mut cur = x.to_vec();
    let mut block = 1;
    for r in radices(x.len(), lmax) {
        let prev = cur.clone();
        for (i, c) in cur.iter_mut().enumerate() {
            let (_, tops) = level(i, block, r);
            if !tops.is_empty() {
                let mut f = vec![prev[i]];
                f.extend(tops.iter().map(|&t| prev[t]));
                *c = b.and(&f);
            }
        }
        block *= r;
    }
    cur
}

#[cfg(test)]
mod tests;
