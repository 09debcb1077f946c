//! Random shared bits (RandBit, the paper's Protocol 6, after Damgård et al.): one round of
//! multiply-and-open in a ring two bits wider than the target.
//!
//! For `[u]` random, `[a] = 2[u] + 1` is a uniform odd value; `e = a²` is opened (the masks of
//! [`Rss::mul_pub`]). `e` has four square roots `±a`, `±a + 2^(m−1)`; every party computes the
//! same inverse `c⁻¹` of one of them (Newton's iteration for `e^(−1/2)`), so
//! `c⁻¹·a ∈ {±1, ±1 + 2^(m−1)}` is ±1 up to the top bit, uniformly signed. Then
//! `d = c⁻¹·a + 1 ∈ {0, 2, 2^(m−1), 2^(m−1) + 2}` has only even shares (the `+1`s go to the same
//! designated share), and halving every share gives a sharing of `d/2`, whose low `m − 2` bits
//! are a uniform bit. The wider ring is the next native width ([`Widen`]): Z_2^64 for Z_2^32,
//! Z_2^128 for Z_2^64.

use super::{Rss, RssVec};
use crate::net::Transport;
use crate::ring::{IntRing, Ring, Z128, Z32, Z64};
use crate::Error;

/// A ring whose random bits are made in a wider one (RandBit needs two more bits).
pub trait Widen: IntRing {
    /// The wider ring.
    type Wide: Ring;
    /// `w` as an unsigned integer (its bits, zero-extended).
    fn wide_to_u128(w: Self::Wide) -> u128;
    /// The element of the wider ring with these low bits.
    fn wide_from_u128(v: u128) -> Self::Wide;
}

impl Widen for Z32 {
    type Wide = Z64;
    fn wide_to_u128(w: Z64) -> u128 {
        u128::from(w.0)
    }
    fn wide_from_u128(v: u128) -> Z64 {
        Z64(v as u64)
    }
}

impl Widen for Z64 {
    type Wide = Z128;
    fn wide_to_u128(w: Z128) -> u128 {
        w.0
    }
    fn wide_from_u128(v: u128) -> Z128 {
        Z128(v)
    }
}

/// The inverse of a square root of `e ≡ 1 (mod 8)` modulo 2^(`m` − 1), the same at every
/// party: Newton's iteration for `e^(−1/2)`, `y ← y + y·(1 − e·y²)/2` from `y = 1`, which
/// doubles the correct low bits (3, 5, 9, … 129) in wrapping 128-bit arithmetic, where the
/// halving loses only the top bit.
///
/// Correct modulo 2^(m−1) is enough: for `e = a²` with `a` odd, an exact inverse root `y*`
/// gives `y*·a ∈ {±1, ±1 + 2^(m−1)}` modulo 2^m, and `y = y* + δ·2^(m−1)` moves `y·a` by a
/// multiple of 2^(m−1) (`a` is odd), so `y·a` stays in that set: the random bit comes out the
/// same, and each square costs 7 iterations instead of a bit-by-bit root and an inverse.
pub(crate) fn inverse_sqrt_mod_pow2(e: u128) -> u128 {
    let mut y: u128 = 1;
    for _ in 0..7 {
        let err = 1u128.wrapping_sub(e.wrapping_mul(y).wrapping_mul(y));
        y = y.wrapping_add(y.wrapping_mul(err >> 1));
    }
    y
}

impl<R: Ring> RssVec<R> {
    /// `c_i·x_i` elementwise for public `c` (local).
    pub fn mul_public(&self, c: &[R]) -> Result<Self, Error> {
        crate::sharing::same_len(self.len(), c.len(), "mul_public")?;
        Ok(self.map(|s| s.iter().zip(c).map(|(&x, &y)| x * y).collect()))
    }

    /// `x + c` for one public scalar added to every element (local).
    pub fn add_public_scalar(&self, c: R) -> Self {
        let mut out = self.clone();
        if let Some(d) = out.designated {
            out.shares[d].iter_mut().for_each(|x| *x += c);
        }
        out
    }
}

impl<T: Transport> Rss<T> {
    /// `n` uniformly random shared bits over `R` (1 round, `n − 1` elements of the wider ring
    /// per bit and party).
    pub async fn rand_bits<R: Widen>(&mut self, n: usize) -> Result<RssVec<R>, Error> {
        let two = R::wide_from_u128(2);
        let a = self.random::<R::Wide>(n).scale(two).add_public_scalar(R::Wide::ONE);
        let e = self.mul_pub(&a, &a).await?;
        let inv: Vec<R::Wide> = e
            .iter()
            .map(|&e| R::wide_from_u128(inverse_sqrt_mod_pow2(R::wide_to_u128(e))))
            .collect();
        let d = a.mul_public(&inv)?.add_public_scalar(R::Wide::ONE);
        Ok(RssVec {
            me: d.me,
            designated: d.designated,
            shares: d
                .shares
                .iter()
                .map(|s| s.iter().map(|&w| R::from_u64((R::wide_to_u128(w) >> 1) as u64)).collect())
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For `e = a²` (any odd `a`, reduced to `m` bits), `y·a` is ±1 up to the top bit modulo
    /// 2^m — what makes `(y·a + 1)/2` a bit.
    #[test]
    fn inverse_square_roots_modulo_powers_of_two() {
        let mut x: u128 = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835;
        for m in [34u32, 64, 66, 128] {
            let mask = if m == 128 { u128::MAX } else { (1u128 << m) - 1 };
            for _ in 0..500 {
                x = x.wrapping_mul(0x2545_f491_4f6c_dd1d).wrapping_add(1442695040888963407);
                let a = (x | 1) & mask;
                let e = a.wrapping_mul(a) & mask;
                let ya = inverse_sqrt_mod_pow2(e).wrapping_mul(a) & mask;
                let low = ya & (mask >> 1);
                assert!(low == 1 || low == mask >> 1, "m = {m}: y·a = {ya:#x}");
            }
        }
    }
}
