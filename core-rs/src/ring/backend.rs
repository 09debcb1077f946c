//! Kernel backends: a kernel body runs compiled for AVX2 on x86-64 CPUs that have it (detected
//! at run time), otherwise as compiled for the target (baseline x86-64, wasm32 with `simd128`).
//!
//! A kernel is a value holding its arguments whose [`Kernel::run`] is the portable body, marked
//! `#[inline(always)]`; [`dispatch`] runs it. The body is written once and compiled twice: into
//! [`dispatch`]'s own code, and into a `#[target_feature(enable = "avx2")]` copy, where LLVM
//! may use 256-bit lanes (baseline x86-64 has no 64-bit lane multiply, and twice as many 16-bit
//! lanes per instruction). Kernels of any module use it; this is the only module of the core
//! that may use `unsafe`.

/// A kernel body with its arguments, for [`dispatch`].
///
/// `run` must be `#[inline(always)]` and so must the portable functions it calls: the AVX2
/// copy only exists where the body is inlined into it, a call out of it runs baseline code.
pub(crate) trait Kernel {
    /// What the kernel returns.
    type Output;
    /// The portable body.
    fn run(self) -> Self::Output;
}

/// Runs `kernel` with the best backend this CPU has: the AVX2 copy of its body on x86-64 CPUs
/// with AVX2, else the body as compiled for the target.
#[inline]
pub(crate) fn dispatch<K: Kernel>(kernel: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    if x86::has_avx2() {
        return x86::run_avx2(kernel);
    }
    kernel.run()
}

/// `Σ a_i·b_i` of carry-less 128×128-bit products, unreduced (the 255-bit sum as `(hi, lo)`),
/// with PCLMULQDQ where the CPU has it; `None` elsewhere (the caller then multiplies portably).
/// The OT extension's consistency check is one such sum per extension.
#[inline]
pub(crate) fn clmul_dot(a: &[u128], b: &[u128]) -> Option<(u128, u128)> {
    #[cfg(target_arch = "x86_64")]
    if x86::has_pclmul() {
        return Some(x86::clmul_dot(a, b));
    }
    let _ = (a, b);
    None
}

/// The x86-64 backend: kernel bodies recompiled with AVX2, behind run-time detection.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86 {
    use super::Kernel;

    pub(super) fn has_avx2() -> bool {
        std::is_x86_feature_detected!("avx2")
    }

    pub(super) fn has_pclmul() -> bool {
        std::is_x86_feature_detected!("pclmulqdq")
    }

    /// [`super::clmul_dot`] with PCLMULQDQ; the caller checks `has_pclmul()`.
    pub(super) fn clmul_dot(a: &[u128], b: &[u128]) -> (u128, u128) {
        #[target_feature(enable = "pclmulqdq")]
        fn inner(a: &[u128], b: &[u128]) -> (u128, u128) {
            use core::arch::x86_64::{
                __m128i, _mm_clmulepi64_si128, _mm_cvtsi128_si64, _mm_set_epi64x,
                _mm_setzero_si128, _mm_unpackhi_epi64, _mm_xor_si128,
            };
            let load = |x: u128| _mm_set_epi64x((x >> 64) as i64, x as i64);
            let store = |v: __m128i| {
                let lo = _mm_cvtsi128_si64(v) as u64;
                let hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v)) as u64;
                u128::from(lo) | u128::from(hi) << 64
            };
            let (mut lo, mut mid, mut hi) =
                (_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128());
            for (&x, &y) in a.iter().zip(b) {
                let (x, y) = (load(x), load(y));
                lo = _mm_xor_si128(lo, _mm_clmulepi64_si128::<0x00>(x, y));
                hi = _mm_xor_si128(hi, _mm_clmulepi64_si128::<0x11>(x, y));
                mid = _mm_xor_si128(mid, _mm_clmulepi64_si128::<0x01>(x, y));
                mid = _mm_xor_si128(mid, _mm_clmulepi64_si128::<0x10>(x, y));
            }
            let (lo, mid, hi) = (store(lo), store(mid), store(hi));
            (hi ^ (mid >> 64), lo ^ (mid << 64))
        }
        debug_assert!(has_pclmul());
        // SAFETY: `inner` only requires PCLMULQDQ (SSE2 is baseline on x86-64), and the one
        // caller, `super::clmul_dot`, checks `has_pclmul()` first.
        unsafe { inner(a, b) }
    }

    /// Runs `kernel`'s body compiled with AVX2; the caller checks `has_avx2()`.
    pub(super) fn run_avx2<K: Kernel>(kernel: K) -> K::Output {
        #[target_feature(enable = "avx2")]
        fn inner<K: Kernel>(kernel: K) -> K::Output {
            kernel.run()
        }
        debug_assert!(has_avx2());
        // SAFETY: `inner` only requires AVX2, and the one caller, `dispatch`, checks
        // `has_avx2()` first.
        unsafe { inner(kernel) }
    }
}
