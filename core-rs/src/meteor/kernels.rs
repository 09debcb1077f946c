//! METEOR's kernels: the online sum of N-MULT over any ring it runs on ([`MeteorRing`]), and
//! F_67's lazily reduced forms of it for the MSB (its product with ζ and its product tree).
//!
//! The F_67 kernels run in 16-bit lanes, twice as many per AVX2 instruction: on x86-64 CPUs
//! with AVX2 they run a copy compiled for it (`ring::backend`, chosen at run time).
//! The MSB's e-value kernel is in `msb.rs`, F_67's sampler in `field.rs`.

use super::F67;
use crate::ring::backend::{self, Kernel};
use crate::ring::{Bits, Ring, Z32, Z64};

/// A ring METEOR's N-MULT runs over: [`MeteorRing::subset_sum`] is the online sum of every
/// N-MULT, which a ring may run faster than the generic kernel ([`F67`] does for N = 2 and 4).
///
/// Implemented for [`Z64`], [`Z32`], [`Bits`] and [`F67`].
pub trait MeteorRing: Ring {
    /// METEOR's N-MULT sum on both components of one party's shares, for every value `e`:
    /// `out[c][e] = Σ_{T ⊆ [N], T ≠ ∅} (Π_{j ∉ T} m[j][e])·terms[c][T − 1][e] − sub[c][e]`,
    /// plus the public term `Π_j m[j][e]` (T = ∅) in component `public` when that is `Some`.
    ///
    /// `m` holds the N public factors, `terms[c][T − 1]` the shares of `ψ_T` for the subset
    /// bitmask T (so `terms[c][(1 << j) − 1]` is input mask j), `sub` the output mask; all
    /// slices have the length of `out[0]`.
    fn subset_sum(
        m: &[&[Self]],
        terms: [&[&[Self]]; 2],
        sub: [&[Self]; 2],
        public: Option<usize>,
        out: [&mut [Self]; 2],
    ) {
        subset_sum(m, terms, sub, public, out);
    }
}

impl MeteorRing for Z64 {}
impl MeteorRing for Z32 {}
impl MeteorRing for Bits {}

impl MeteorRing for F67 {
    /// N = 2 (the MSB's product with ζ) and N = 4 (its product tree) run lazily reduced
    /// kernels (`subset_sum2`, `subset_sum4`); other N the generic one.
    fn subset_sum(
        m: &[&[Self]],
        terms: [&[&[Self]]; 2],
        sub: [&[Self]; 2],
        public: Option<usize>,
        out: [&mut [Self]; 2],
    ) {
        match m {
            [a, b] => subset_sum2([a, b], terms, sub, public, out),
            [a, b, c, d] => subset_sum4([a, b, c, d], terms, sub, public, out),
            _ => subset_sum(m, terms, sub, public, out),
        }
    }
}

/// [`MeteorRing::subset_sum`] as defined there, for any ring: the public coefficients
/// `Π_{j ∉ T} m_j` of every subset, then the two sums, value by value.
pub(crate) fn subset_sum<R: Ring>(
    m: &[&[R]],
    terms: [&[&[R]]; 2],
    sub: [&[R]; 2],
    public: Option<usize>,
    out: [&mut [R]; 2],
) {
    let s = 1usize << m.len();
    let full = s - 1;
    let len = out[0].len();
    assert!(
        m.iter().all(|x| x.len() == len)
            && terms.iter().all(|t| t.len() == full && t.iter().all(|x| x.len() == len))
            && sub.iter().all(|x| x.len() == len)
            && out[1].len() == len,
        "subset_sum: shapes differ"
    );
    let mut coef = vec![R::ONE; s];
    let [oa, ob] = out;
    for e in 0..len {
        // coef[T] = Π_{j ∉ T} m_j, built up by adding one index at a time.
        for t in (0..full).rev() {
            let j = (!t & full).trailing_zeros() as usize;
            coef[t] = coef[t | (1 << j)] * m[j][e];
        }
        for (c, o) in [(0, &mut *oa), (1, &mut *ob)] {
            let mut acc = if public == Some(c) { coef[0] } else { R::ZERO };
            for (t, x) in terms[c].iter().enumerate() {
                acc += coef[t + 1] * x[e];
            }
            o[e] = acc - sub[c][e];
        }
    }
}

/// [`subset_sum`] for N = 2 in F_67 with one reduction per element:
/// `[pub]·m0·m1 + m1·ψ_0 + m0·ψ_1 + ψ_01 + (q − sub) ≤ 3·66² + 66 + 67 < 2^16`.
fn subset_sum2(
    m: [&[F67]; 2],
    terms: [&[&[F67]]; 2],
    sub: [&[F67]; 2],
    public: Option<usize>,
    out: [&mut [F67]; 2],
) {
    let len = out[0].len();
    assert!(
        m.iter().all(|x| x.len() == len)
            && terms.iter().all(|t| t.len() == 3 && t.iter().all(|x| x.len() == len))
            && sub.iter().all(|x| x.len() == len)
            && out[1].len() == len,
        "subset_sum: shapes differ"
    );
    let q = u16::from(F67::Q);
    let v = |x: F67| u16::from(x.value());
    let (m0, m1) = (&m[0][..len], &m[1][..len]);
    for (c, o) in out.into_iter().enumerate() {
        let p = u16::from(public == Some(c));
        let (t0, t1, t01, s) =
            (&terms[c][0][..len], &terms[c][1][..len], &terms[c][2][..len], &sub[c][..len]);
        for e in 0..len {
            let (x, y) = (v(m0[e]), v(m1[e]));
            let sum = p * x * y + y * v(t0[e]) + x * v(t1[e]) + v(t01[e]) + q - v(s[e]);
            o[e] = F67::from_small(sum);
        }
    }
}

/// Values per block of [`subset_sum4`]: fixed-size blocks let the compiler drop every bounds
/// check and run the block's loop in vector lanes.
const BLOCK: usize = 64;

/// [`subset_sum`] for N = 4 in F_67, lazily reduced in 16-bit lanes.
///
/// With `lo = (1, m0, m1, m0·m1)` indexed by the complement's bits {0, 1} and
/// `hi = (1, m2, m3, m2·m3)` by its bits {2, 3} (both reduced), the coefficient of subset T is
/// `lo[C & 3]·hi[C >> 2]` for `C = 15 ^ T`, and the sum is
/// `Σ_{c_hi} hi[c_hi]·(Σ_{c_lo} lo[c_lo]·ψ_T mod q) mod q`: each inner sum is at most
/// 4·66·66 = 17,424 and so is the outer one, far below 2^16.
fn subset_sum4(
    m: [&[F67]; 4],
    terms: [&[&[F67]]; 2],
    sub: [&[F67]; 2],
    public: Option<usize>,
    out: [&mut [F67]; 2],
) {
    backend::dispatch(SubsetSum4 { m, terms, sub, public, out });
}

/// The arguments of [`subset_sum4`], for the backends.
struct SubsetSum4<'a> {
    m: [&'a [F67]; 4],
    terms: [&'a [&'a [F67]]; 2],
    sub: [&'a [F67]; 2],
    public: Option<usize>,
    out: [&'a mut [F67]; 2],
}

impl Kernel for SubsetSum4<'_> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        let Self { m, terms, sub, public, out } = self;
        subset_sum4_portable(m, terms, sub, public, out);
    }
}

/// The body of [`subset_sum4`] (also compiled with AVX2 by the x86-64 backend).
#[inline(always)]
fn subset_sum4_portable(
    m: [&[F67]; 4],
    terms: [&[&[F67]]; 2],
    sub: [&[F67]; 2],
    public: Option<usize>,
    out: [&mut [F67]; 2],
) {
    let len = out[0].len();
    assert!(
        m.iter().all(|x| x.len() == len)
            && terms.iter().all(|t| t.len() == 15 && t.iter().all(|x| x.len() == len))
            && sub.iter().all(|x| x.len() == len)
            && out[1].len() == len,
        "subset_sum: shapes differ"
    );
    let publics = [u16::from(public == Some(0)), u16::from(public == Some(1))];
    let [oa, ob] = out;
    // A full block is copied straight from the inputs; the last, partial one goes through
    // zero-padded copies.
    let mut pad = [[F67::ZERO; BLOCK]; 36];
    let mut at = 0;
    while at < len {
        let r = at..(at + BLOCK).min(len);
        let k = r.len();
        let mut block = |x: &[F67], slot: usize| -> [F67; BLOCK] {
            match <[F67; BLOCK]>::try_from(&x[r.clone()]) {
                Ok(full) => full,
                Err(_) => {
                    pad[slot][..k].copy_from_slice(&x[r.clone()]);
                    pad[slot]
                }
            }
        };
        let mb: [[F67; BLOCK]; 4] = core::array::from_fn(|j| block(m[j], j));
        let ta: [[F67; BLOCK]; 15] = core::array::from_fn(|t| block(terms[0][t], 4 + t));
        let tb: [[F67; BLOCK]; 15] = core::array::from_fn(|t| block(terms[1][t], 19 + t));
        let sa = block(sub[0], 34);
        let sb = block(sub[1], 35);
        let mut res = [[F67::ZERO; BLOCK]; 2];
        subset_sum4_block(&mb, [&ta, &tb], [&sa, &sb], publics, &mut res);
        oa[r.clone()].copy_from_slice(&res[0][..k]);
        ob[r.clone()].copy_from_slice(&res[1][..k]);
        at += k;
    }
}

/// One block of [`subset_sum4`].
#[inline(always)]
fn subset_sum4_block(
    m: &[[F67; BLOCK]; 4],
    terms: [&[[F67; BLOCK]; 15]; 2],
    sub: [&[F67; BLOCK]; 2],
    publics: [u16; 2],
    out: &mut [[F67; BLOCK]; 2],
) {
    let q = u16::from(F67::Q);
    for e in 0..BLOCK {
        let v = |x: F67| u16::from(x.value());
        let (m0, m1, m2, m3) = (v(m[0][e]), v(m[1][e]), v(m[2][e]), v(m[3][e]));
        let lo = [1, m0, m1, m0 * m1 % q];
        let hi = [1, m2, m3, m2 * m3 % q];
        for c in 0..2 {
            let mut acc = 0u16;
            for (c_hi, h) in hi.iter().enumerate() {
                let mut inner = 0u16;
                for (c_lo, l) in lo.iter().enumerate() {
                    let t = 15 ^ (c_lo | c_hi << 2);
                    let psi = if t == 0 { publics[c] } else { v(terms[c][t - 1][e]) };
                    inner += l * psi;
                }
                acc += h * (inner % q);
            }
            out[c][e] = F67::from_small(acc + q - v(sub[c][e]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prg::{Prg, Seed};

    /// Runs F67's N-factor kernel of [`MeteorRing::subset_sum`] and the generic one on `len`
    /// random values, then on all-66 values (the largest lazy sums), with the public term in either
    /// component or neither; `also` gets each case's inputs and the generic result, for extra
    /// checks of the same case.
    #[allow(clippy::type_complexity)]
    fn check_subset_sum(
        n: usize,
        len: usize,
        seed: u8,
        mut also: impl FnMut(&[&[F67]], [&[&[F67]]; 2], [&[F67]; 2], Option<usize>, &[Vec<F67>; 2]),
    ) {
        let terms = 2 * ((1 << n) - 1); // one per non-empty subset, in each of two components
        let mut prg = Prg::new(&Seed::from_bytes([seed; 32]), 1, 1);
        for all_max in [false, true] {
            let mut draw = || {
                let mut v = vec![F67::ZERO; len];
                F67::fill_random(&mut prg, &mut v);
                if all_max {
                    v.iter_mut().for_each(|x| *x = F67::new(66));
                }
                v
            };
            let m: Vec<Vec<F67>> = (0..n).map(|_| draw()).collect();
            let t: Vec<Vec<F67>> = (0..terms).map(|_| draw()).collect();
            let sub: Vec<Vec<F67>> = (0..2).map(|_| draw()).collect();
            let mr: Vec<&[F67]> = m.iter().map(|x| &x[..]).collect();
            let ta: Vec<&[F67]> = t[..terms / 2].iter().map(|x| &x[..]).collect();
            let tb: Vec<&[F67]> = t[terms / 2..].iter().map(|x| &x[..]).collect();
            for public in [None, Some(0), Some(1)] {
                let mut fast = [vec![F67::ZERO; len], vec![F67::ZERO; len]];
                let mut slow = fast.clone();
                let [fa, fb] = &mut fast;
                F67::subset_sum(&mr, [&ta, &tb], [&sub[0], &sub[1]], public, [fa, fb]);
                let [sa, sb] = &mut slow;
                subset_sum(&mr, [&ta, &tb], [&sub[0], &sub[1]], public, [sa, sb]);
                assert_eq!(fast, slow, "N = {n}, public {public:?}, all 66: {all_max}");
                also(&mr, [&ta, &tb], [&sub[0], &sub[1]], public, &slow);
            }
        }
    }

    #[test]
    fn subset_sum2_matches_the_generic_kernel() {
        check_subset_sum(2, 77, 6, |_, _, _, _, _| {});
    }

    /// Over two full blocks and a partial one; the portable body is checked too (the kernel
    /// call may take the AVX2 copy).
    #[test]
    fn subset_sum4_matches_the_generic_kernel() {
        let len = 2 * BLOCK + 7;
        check_subset_sum(4, len, 5, |mr, terms, sub, public, slow| {
            let mut portable = [vec![F67::ZERO; len], vec![F67::ZERO; len]];
            let [pa, pb] = &mut portable;
            let m4 = [mr[0], mr[1], mr[2], mr[3]];
            subset_sum4_portable(m4, terms, sub, public, [pa, pb]);
            assert_eq!(&portable, slow, "portable, public {public:?}");
        });
    }
}
