//! Batch kernels over ring slices.
//!
//! Plain loops over `#[repr(transparent)]` words: LLVM turns them into vector code on x86-64 and
//! on wasm32 with `simd128`. Length mismatches are caller bugs and panic with a message; protocol
//! code validates peer-derived lengths before calling these. The products run on the best
//! backend the CPU has (`ring::backend`).

use super::backend::{self, Kernel};
use super::Ring;

/// `dst[i] += src[i]`.
#[inline]
pub fn add_assign<R: Ring>(dst: &mut [R], src: &[R]) {
    assert_eq!(dst.len(), src.len(), "add_assign: length mismatch");
    for (d, s) in dst.iter_mut().zip(src) {
        *d += *s;
    }
}

/// `dst[i] -= src[i]`.
#[inline]
pub fn sub_assign<R: Ring>(dst: &mut [R], src: &[R]) {
    assert_eq!(dst.len(), src.len(), "sub_assign: length mismatch");
    for (d, s) in dst.iter_mut().zip(src) {
        *d -= *s;
    }
}

/// `dst[i] *= c`.
#[inline]
pub fn scale<R: Ring>(dst: &mut [R], c: R) {
    for d in dst.iter_mut() {
        *d *= c;
    }
}

/// `dst[i] *= src[i]`.
#[inline]
pub fn mul_assign<R: Ring>(dst: &mut [R], src: &[R]) {
    assert_eq!(dst.len(), src.len(), "mul_assign: length mismatch");
    for (d, s) in dst.iter_mut().zip(src) {
        *d *= *s;
    }
}

/// `Σ a[i]·b[i]`.
#[inline]
pub fn dot<R: Ring>(a: &[R], b: &[R]) -> R {
    assert_eq!(a.len(), b.len(), "dot: length mismatch");
    // Four accumulators break the add dependency chain so the loop vectorises.
    let mut acc = [R::ZERO; 4];
    let (ac, ar) = a.split_at(a.len() / 4 * 4);
    let (bc, br) = b.split_at(ac.len());
    for (x, y) in ac.chunks_exact(4).zip(bc.chunks_exact(4)) {
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    let mut s = acc[0] + acc[1] + acc[2] + acc[3];
    for (x, y) in ar.iter().zip(br) {
        s += *x * *y;
    }
    s
}

/// `out += a·b` for row-major `a` (m×k), `b` (k×n), `out` (m×n).
///
/// On x86-64 with AVX2 this runs a copy of the same code compiled for AVX2 (`backend`,
/// chosen at run time): baseline x86-64 has no 64-bit lane multiply, and the AVX2 build is ~3×
/// faster on a 128×128×128 product (`cargo run --release -p ringfence-core --example matmul_kernel`).
pub fn matmul_acc<R: Ring>(a: &[R], b: &[R], out: &mut [R], m: usize, k: usize, n: usize) {
    assert_eq!(a.len(), m * k, "matmul: a is not m×k");
    assert_eq!(b.len(), k * n, "matmul: b is not k×n");
    assert_eq!(out.len(), m * n, "matmul: out is not m×n");
    backend::dispatch(MatmulAcc { a, b, out, m, k, n });
}

/// The arguments of [`matmul_acc`], for the backends.
struct MatmulAcc<'a, R> {
    a: &'a [R],
    b: &'a [R],
    out: &'a mut [R],
    m: usize,
    k: usize,
    n: usize,
}

impl<R: Ring> Kernel for MatmulAcc<'_, R> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        let Self { a, b, out, m, k, n } = self;
        matmul_acc_portable(a, b, out, m, k, n);
    }
}

/// Loop order i-p-j streams rows of `b` and `out`, so the inner loop is an axpy that vectorises.
#[inline(always)]
fn matmul_acc_portable<R: Ring>(a: &[R], b: &[R], out: &mut [R], m: usize, k: usize, n: usize) {
    for i in 0..m {
        let row = &mut out[i * n..(i + 1) * n];
        for p in 0..k {
            let x = a[i * k + p];
            let brow = &b[p * n..(p + 1) * n];
            for (o, y) in row.iter_mut().zip(brow) {
                *o += x * *y;
            }
        }
    }
}

/// `xa[i]·(ya[i] + yb[i]) + xb[i]·ya[i]` for all `i`: the local product of replicated sharing
/// (party P_i's additive component of x·y from its pairs `(x_i, x_{i+1})`, `(y_i, y_{i+1})`).
pub fn cross_mul<R: Ring>(xa: &[R], xb: &[R], ya: &[R], yb: &[R]) -> Vec<R> {
    let mut out = Vec::with_capacity(xa.len());
    cross_mul_into(xa, xb, ya, yb, &mut out);
    out
}

/// [`cross_mul`] appending to `out`: several products written into one vector without
/// concatenating their operands first.
pub(crate) fn cross_mul_into<R: Ring>(xa: &[R], xb: &[R], ya: &[R], yb: &[R], out: &mut Vec<R>) {
    let n = xa.len();
    assert!(xb.len() == n && ya.len() == n && yb.len() == n, "cross_mul: lengths differ");
    out.reserve(n);
    backend::dispatch(CrossMul { xa, xb, ya, yb, out });
}

/// The arguments of [`cross_mul_into`], for the backends.
struct CrossMul<'a, R> {
    xa: &'a [R],
    xb: &'a [R],
    ya: &'a [R],
    yb: &'a [R],
    out: &'a mut Vec<R>,
}

impl<R: Ring> Kernel for CrossMul<'_, R> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        let Self { xa, xb, ya, yb, out } = self;
        cross_mul_portable(xa, xb, ya, yb, out);
    }
}

/// Appends the products to `out`, a block at a time through a stack buffer: a plain loop
/// rather than `extend` (which runs through `Iterator::fold`, not inlined into the AVX2 copy,
/// so without AVX2, and without vector lanes for a field's reduction), and no zero-fill of
/// the output before it is written (a whole extra pass over a large vector).
#[inline(always)]
fn cross_mul_portable<R: Ring>(xa: &[R], xb: &[R], ya: &[R], yb: &[R], out: &mut Vec<R>) {
    const BLOCK: usize = 256;
    let mut buf = [R::ZERO; BLOCK];
    let blocks = xa.chunks(BLOCK).zip(xb.chunks(BLOCK)).zip(ya.chunks(BLOCK).zip(yb.chunks(BLOCK)));
    for ((xa, xb), (ya, yb)) in blocks {
        let got = &mut buf[..xa.len()];
        for (o, ((xa, xb), (ya, yb))) in
            got.iter_mut().zip(xa.iter().zip(xb).zip(ya.iter().zip(yb)))
        {
            *o = *xa * (*ya + *yb) + *xb * *ya;
        }
        out.extend_from_slice(got);
    }
}

/// `a·b` for row-major `a` (m×k) and `b` (k×n).
pub fn matmul<R: Ring>(a: &[R], b: &[R], m: usize, k: usize, n: usize) -> Vec<R> {
    let mut out = vec![R::ZERO; m * n];
    matmul_acc(a, b, &mut out, m, k, n);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::{Z32, Z64};

    #[test]
    fn kernels_match_scalar_definitions() {
        let a: Vec<Z64> = (0..7).map(|i| Z64(u64::MAX - i)).collect();
        let b: Vec<Z64> = (0..7).map(|i| Z64(3 * i + 1)).collect();
        let naive = a.iter().zip(&b).fold(Z64(0), |s, (x, y)| s + *x * *y);
        assert_eq!(dot(&a, &b), naive);
        let mut c = a.clone();
        add_assign(&mut c, &b);
        sub_assign(&mut c, &b);
        assert_eq!(c, a);
        mul_assign(&mut c, &b);
        assert_eq!(c[2], a[2] * b[2]);
        let z = cross_mul(&a, &b, &b, &a);
        assert_eq!(z[3], a[3] * (b[3] + a[3]) + b[3] * b[3]);
        scale(&mut c, Z64(0));
        assert!(c.iter().all(|x| *x == Z64(0)));
    }

    #[test]
    fn matmul_matches_definition() {
        // Odd sizes exercise the vector loops' remainders on every backend.
        let (m, k, n) = (3, 5, 37);
        let a: Vec<Z32> = (0..m * k).map(|i| Z32((i as u32).wrapping_mul(2654435761))).collect();
        let b: Vec<Z32> = (0..k * n).map(|i| Z32(i as u32 ^ 0xdead)).collect();
        let c = matmul(&a, &b, m, k, n);
        for i in 0..m {
            for j in 0..n {
                let s = (0..k).fold(Z32(0), |s, p| s + a[i * k + p] * b[p * n + j]);
                assert_eq!(c[i * n + j], s);
            }
        }
    }
}
