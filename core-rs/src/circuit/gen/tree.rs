//! The AND of n bits as a ragged tree of ℓ-input ANDs.

use super::check;
use crate::circuit::{Builder, Circuit};
use crate::Error;

/// `x_0 ∧ … ∧ x_{n−1}` (one input group of `n` bits, one output bit): each level ANDs its wires
/// `lmax` at a time, the leftover ones (if more than one) in one smaller gate, a single leftover
/// wire passing on. Depth ⌈log_lmax n⌉; 2^10 bits at ℓ = 8 take 128 + 16 + 2 + 1 = 147 gates.
///
/// ```
/// let c = ringfence_core::circuit::gen::and_tree(1024, 8)?;
/// assert_eq!((c.stats().and_count(), c.stats().and_depth), (147, 4));
/// # Ok::<(), ringfence_core::Error>(())
/// ```
pub fn and_tree(n: usize, lmax: usize) -> Result<Circuit, Error> {
    check(n, lmax, "and_tree")?;
    let (mut b, ins) = Builder::new(&[n]);
    let mut level = ins[0].clone();
    while level.len() > 1 {
        level = level.chunks(lmax).map(|c| b.and(c)).collect();
    }
    b.finish(&[level])
}
