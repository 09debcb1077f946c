//! The Galois ring GR(2^k, 42) = Z_2^k\[ξ\]/(f), f = ξ^42 + ξ^7 + 1, over a ring `R` = Z_2^k:
//! the extension in which random linear combinations of Z_2^k values detect errors.
//!
//! Over Z_2^k itself a random combination `Σ r_i·e_i` of errors misses an error `2^(k−1)`
//! half of the time (the coefficient only has to be even). f is irreducible modulo 2, so
//! GR/2GR is the field F_{2^42}: a nonzero error `e = 2^j·u` (u not divisible by 2) is
//! cancelled by at most a `2^−42` fraction of uniform coefficients, and a nonzero polynomial of
//! degree δ over GR vanishes at a uniform point with probability at most `δ/2^42`
//! (Schwartz–Zippel applied to the residue field after dividing by the lowest power of 2).
//!
//! An element is `D` coefficients of `R`, lowest first; a vector of elements is stored flat
//! (element `j` at `j·D..(j+1)·D`), so replicated shares of GR vectors are ordinary share
//! vectors of `R` and every linear operation on them is coefficientwise. Products go through
//! the ring's matrix kernel: the coefficients of `Σ_j p_j·q_j` before reduction are the
//! anti-diagonal sums of the D×D matrix `Pᵀ·Q`.
//!
//! ```
//! use ringfence_core::ring::{galois::{self, D}, Z64};
//! let mut xi = vec![Z64(0); D];
//! xi[1] = Z64(1); // ξ
//! let mut x41 = vec![Z64(0); D];
//! x41[D - 1] = Z64(1); // ξ^41
//! // ξ·ξ^41 = ξ^42 = −ξ^7 − 1.
//! let p = galois::mul(&xi, &x41);
//! assert_eq!((p[0], p[7]), (Z64(u64::MAX), Z64(u64::MAX)));
//! assert!(p.iter().enumerate().all(|(i, c)| i == 0 || i == 7 || *c == Z64(0)));
//! ```

use super::{kernels, Ring};

/// Coefficients per element: the extension degree (soundness `2^−D` per random coefficient).
pub const D: usize = 42;

/// The middle term of f: `ξ^D = −ξ^TAP − 1`.
const TAP: usize = 7;

/// The product's `2D − 1` coefficients reduced modulo f into the first `D` (returned).
fn reduce<R: Ring>(mut wide: Vec<R>) -> Vec<R> {
    debug_assert_eq!(wide.len(), 2 * D - 1);
    // Highest first: ξ^i = −ξ^(i−D+TAP) − ξ^(i−D), both lower, reduced in turn when ≥ D.
    for i in (D..2 * D - 1).rev() {
        let c = wide[i];
        wide[i - D + TAP] -= c;
        wide[i - D] -= c;
    }
    wide.truncate(D);
    wide
}

/// `a·b` for two elements.
pub fn mul<R: Ring>(a: &[R], b: &[R]) -> Vec<R> {
    dot(a, b)
}

/// `Σ_j p_j·q_j` for equal-length vectors of elements (flat, `len·D` coefficients each).
///
/// # Panics
/// If the lengths differ or are not whole elements (a caller's bug, not a peer's input).
pub fn dot<R: Ring>(p: &[R], q: &[R]) -> Vec<R> {
    assert!(p.len() == q.len() && p.len() % D == 0, "galois::dot: {} and {}", p.len(), q.len());
    let len = p.len() / D;
    // Pᵀ: row u holds coefficient u of every element.
    let mut pt = vec![R::ZERO; p.len()];
    for (j, e) in p.chunks_exact(D).enumerate() {
        for (u, c) in e.iter().enumerate() {
            pt[u * len + j] = *c;
        }
    }
    let outer = kernels::matmul(&pt, q, D, len, D);
    let mut wide = vec![R::ZERO; 2 * D - 1];
    for (u, row) in outer.chunks_exact(D).enumerate() {
        kernels::add_assign(&mut wide[u..u + D], row);
    }
    reduce(wide)
}

/// `t·v_j` for every element `v_j` of `v` (flat).
///
/// # Panics
/// If `t` is not one element or `v` not whole elements.
pub fn scale<R: Ring>(t: &[R], v: &[R]) -> Vec<R> {
    assert!(t.len() == D && v.len() % D == 0, "galois::scale: {} and {}", t.len(), v.len());
    // v (len×D) times the D×(2D−1) matrix whose row u is t shifted by u.
    let mut shifted = vec![R::ZERO; D * (2 * D - 1)];
    for u in 0..D {
        shifted[u * (2 * D - 1) + u..u * (2 * D - 1) + u + D].copy_from_slice(t);
    }
    let wide = kernels::matmul(v, &shifted, v.len() / D, D, 2 * D - 1);
    wide.chunks_exact(2 * D - 1).flat_map(|w| reduce(w.to_vec())).collect()
}

/// `n` uniformly random elements from `prg` (flat).
pub fn random<R: Ring>(prg: &mut crate::prg::Prg, n: usize) -> Vec<R> {
    let mut v = vec![R::ZERO; n * D];
    R::fill_random(prg, &mut v);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prg::{Prg, Seed};
    use crate::ring::{Z32, Z64};

    /// Rabin's test over F_2 for a polynomial of degree D given as bits: ξ^(2^D) ≡ ξ, and
    /// ξ^(2^(D/q)) − ξ coprime to it for each prime q dividing D = 2·3·7.
    fn irreducible(f: u128) -> bool {
        let mulmod = |mut a: u128, mut b: u128| {
            let mut r = 0u128;
            while b != 0 {
                if b & 1 == 1 {
                    r ^= a;
                }
                b >>= 1;
                a <<= 1;
                if a >> D & 1 == 1 {
                    a ^= f;
                }
            }
            r
        };
        let frobenius = |times: usize| (0..times).fold(2u128, |x, _| mulmod(x, x));
        let degree = |a: u128| 128 - a.leading_zeros();
        let gcd = |mut a: u128, mut b: u128| {
            while b != 0 {
                while a != 0 && degree(a) >= degree(b) {
                    a ^= b << (degree(a) - degree(b));
                }
                core::mem::swap(&mut a, &mut b);
            }
            a
        };
        frobenius(D) == 2 && [2, 3, 7].iter().all(|q| gcd(frobenius(D / q) ^ 2, f) == 1)
    }

    /// f is irreducible modulo 2, so GR/2GR is a field and the soundness claims hold; the
    /// test itself rejects reducible trinomials of the same degree.
    #[test]
    fn f_is_irreducible_mod_2() {
        assert!(irreducible((1 << D) | (1 << TAP) | 1));
        assert!(!irreducible((1 << D) | 1), "ξ^42 + 1 = (ξ^21 + 1)^2");
        assert!(!irreducible((1 << D) | (1 << 3) | 1));
    }

    /// Schoolbook product with reduction by the definition ξ^42 = −ξ^7 − 1, one power at a time.
    fn reference<R: Ring>(a: &[R], b: &[R]) -> Vec<R> {
        let mut out = vec![R::ZERO; D];
        // ξ^i as an element, from ξ^0 upward.
        let mut power = vec![R::ZERO; D];
        power[0] = R::ONE;
        let mut powers = Vec::new();
        for _ in 0..2 * D - 1 {
            powers.push(power.clone());
            let top = power[D - 1];
            power.rotate_right(1);
            power[0] = -top;
            power[TAP] -= top;
        }
        for (i, x) in a.iter().enumerate() {
            for (j, y) in b.iter().enumerate() {
                for (o, c) in out.iter_mut().zip(&powers[i + j]) {
                    *o += *x * *y * *c;
                }
            }
        }
        out
    }

    fn ring_laws<R: Ring>() {
        let mut prg = Prg::new(&Seed::from_bytes([5; 32]), 0, 0);
        for _ in 0..20 {
            let (a, b, c) =
                (random::<R>(&mut prg, 1), random::<R>(&mut prg, 1), random(&mut prg, 1));
            assert_eq!(mul(&a, &b), reference(&a, &b));
            assert_eq!(mul(&a, &b), mul(&b, &a));
            assert_eq!(mul(&mul(&a, &b), &c), mul(&a, &mul(&b, &c)));
            let mut bc = b.clone();
            kernels::add_assign(&mut bc, &c);
            let mut sum = mul(&a, &b);
            kernels::add_assign(&mut sum, &mul(&a, &c));
            assert_eq!(mul(&a, &bc), sum);
        }
        // Vectors: dot is the sum of products, scale the products with one element.
        let (p, q, t) = (random::<R>(&mut prg, 9), random::<R>(&mut prg, 9), random(&mut prg, 1));
        let mut sum = vec![R::ZERO; D];
        for (x, y) in p.chunks_exact(D).zip(q.chunks_exact(D)) {
            kernels::add_assign(&mut sum, &reference(x, y));
        }
        assert_eq!(dot(&p, &q), sum);
        let scaled: Vec<R> = q.chunks_exact(D).flat_map(|y| reference(&t, y)).collect();
        assert_eq!(scale(&t, &q), scaled);
        assert_eq!(dot::<R>(&[], &[]), vec![R::ZERO; D]);
    }

    #[test]
    fn products_follow_the_definition_and_the_ring_laws() {
        ring_laws::<Z64>();
        ring_laws::<Z32>();
    }

    /// The property the checks rely on: an error in the top bit only (the one a coefficient
    /// from Z_2^k cancels half of the time) survives a uniform coefficient, over many draws.
    #[test]
    fn a_top_bit_error_survives_random_coefficients() {
        let mut prg = Prg::new(&Seed::from_bytes([6; 32]), 0, 0);
        let mut e = vec![Z64(0); D];
        e[0] = Z64(1 << 63);
        let mut cancelled_in_z = 0;
        for _ in 0..1000 {
            let r = random::<Z64>(&mut prg, 1);
            assert!(mul(&r, &e).iter().any(|c| c.0 != 0), "r·e = 0 for r = {r:?}");
            cancelled_in_z += usize::from((r[0] * e[0]).0 == 0);
        }
        // Within Z_2^64 alone (coefficient r_0) about half the draws cancel it.
        assert!((400..600).contains(&cancelled_in_z), "{cancelled_in_z}");
    }
}
