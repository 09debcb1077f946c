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

/// The x86-64 backend: kernel bodies recompiled with AVX2, behind run-time detection.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86 {
    use super::Kernel;

    pub(super) fn has_avx2() -> bool {
        std::is_x86_feature_detected!("avx2")
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
