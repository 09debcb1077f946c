//! PRG candidates for ringfence, benchmarked natively (`src/bin/native.rs`) and on wasm32
//! (`run-wasm.mjs` calls the `bench_*` exports of the cdylib).
//!
//! Workloads (both report keystream bytes produced):
//! - `1m`: open one stream, then fill a 1 MiB buffer `iters` times (bulk throughput).
//! - `4k`: `iters` times, open a FRESH stream (new domain, as a protocol operation does) and
//!   draw 4 KiB from it (includes key/nonce setup, so key schedules and hasher setup count).
#![allow(clippy::missing_safety_doc)]

/// `core-rs/src/prg.rs` itself, compiled in (it is self-contained), so the bench measures the
/// real PRG without building the rest of ringfence-core.
#[path = "../../../core-rs/src/prg.rs"]
#[allow(unreachable_pub, dead_code)]
pub mod core_prg;
pub mod ours_port;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub mod ours_simd;
pub mod ours_v0;

use aes::cipher::{KeyIvInit, StreamCipher};
use rand_core::{Rng, SeedableRng};

pub const BIG: usize = 1 << 20;
pub const SMALL: usize = 4096;

/// A keystream generator opened at `(seed, domain, stream)`.
pub trait Cand {
    fn open(seed: &[u8; 32], domain: u64, stream: u32) -> Self;
    fn fill(&mut self, out: &mut [u8]);
}

impl<const DR: usize> Cand for ours_v0::Prg<DR> {
    fn open(seed: &[u8; 32], domain: u64, stream: u32) -> Self {
        Self::new(seed, domain, stream)
    }
    fn fill(&mut self, out: &mut [u8]) {
        self.fill_bytes(out)
    }
}

/// A ChaCha block function producing `BYTES` bytes (`BYTES / 64` blocks) per call.
pub trait Blocks {
    const BYTES: usize;
    fn blocks(key: &[u32; 8], ctr: u32, nonce: &[u32; 3], out: &mut [u8]);
}
pub struct Port<const L: usize, const DR: usize>;
impl<const L: usize, const DR: usize> Blocks for Port<L, DR> {
    const BYTES: usize = 64 * L;
    #[inline(always)]
    fn blocks(key: &[u32; 8], ctr: u32, nonce: &[u32; 3], out: &mut [u8]) {
        ours_port::chacha_blocks::<L, DR>(key, ctr, nonce, out)
    }
}
/// prg.rs's own block function (whatever path this target compiles) at `DR` double rounds.
pub struct PrgRs<const DR: usize>;
impl<const DR: usize> Blocks for PrgRs<DR> {
    const BYTES: usize = core_prg::BUF_BYTES;
    #[inline(always)]
    fn blocks(key: &[u32; 8], ctr: u32, nonce: &[u32; 3], out: &mut [u8]) {
        core_prg::chacha_blocks::<DR>(
            key,
            ctr,
            nonce,
            (&mut out[..core_prg::BUF_BYTES]).try_into().unwrap(),
        )
    }
}
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub struct Simd<const DR: usize>;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
impl<const DR: usize> Blocks for Simd<DR> {
    const BYTES: usize = 256;
    #[inline(always)]
    fn blocks(key: &[u32; 8], ctr: u32, nonce: &[u32; 3], out: &mut [u8]) {
        ours_simd::chacha_blocks::<DR>(key, ctr, nonce, (&mut out[..256]).try_into().unwrap())
    }
}

/// prg.rs's buffering logic over any block function.
pub struct BufPrg<B> {
    key: [u32; 8],
    nonce: [u32; 3],
    counter: u32,
    buf: [u8; 1024],
    pos: usize,
    _b: core::marker::PhantomData<B>,
}
impl<B: Blocks> Cand for BufPrg<B> {
    fn open(seed: &[u8; 32], domain: u64, stream: u32) -> Self {
        let mut key = [0u32; 8];
        for (k, c) in key.iter_mut().zip(seed.chunks_exact(4)) {
            *k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        let nonce = [domain as u32, (domain >> 32) as u32, stream];
        Self {
            key,
            nonce,
            counter: 0,
            buf: [0; 1024],
            pos: B::BYTES,
            _b: core::marker::PhantomData,
        }
    }
    fn fill(&mut self, mut out: &mut [u8]) {
        let n = B::BYTES;
        if self.pos < n {
            let k = out.len().min(n - self.pos);
            out[..k].copy_from_slice(&self.buf[self.pos..self.pos + k]);
            self.pos += k;
            out = &mut out[k..];
        }
        while out.len() >= n {
            let (head, rest) = out.split_at_mut(n);
            B::blocks(&self.key, self.counter, &self.nonce, head);
            self.counter = self.counter.wrapping_add((n / 64) as u32);
            out = rest;
        }
        if !out.is_empty() {
            B::blocks(&self.key, self.counter, &self.nonce, &mut self.buf[..n]);
            self.counter = self.counter.wrapping_add((n / 64) as u32);
            out.copy_from_slice(&self.buf[..out.len()]);
            self.pos = out.len();
        }
    }
}

/// The real `core_prg::Prg` (ChaCha12 at whatever state prg.rs is in).
pub struct Core(core_prg::Prg);
impl Cand for Core {
    fn open(seed: &[u8; 32], domain: u64, stream: u32) -> Self {
        Self(core_prg::Prg::new(&core_prg::Seed::from_bytes(*seed), domain, stream))
    }
    fn fill(&mut self, out: &mut [u8]) {
        self.0.fill_bytes(out)
    }
}

/// RustCrypto `chacha20` (IETF layout: 96-bit nonce, 32-bit counter — same bytes as ours).
pub struct RcChaCha<C>(C);
impl<C: KeyIvInit + StreamCipher> Cand for RcChaCha<C> {
    fn open(seed: &[u8; 32], domain: u64, stream: u32) -> Self {
        let mut iv = [0u8; 12];
        iv[..8].copy_from_slice(&domain.to_le_bytes());
        iv[8..].copy_from_slice(&stream.to_le_bytes());
        Self(C::new_from_slices(seed, &iv).expect("key/iv sizes"))
    }
    fn fill(&mut self, out: &mut [u8]) {
        out.fill(0);
        self.0.apply_keystream(out)
    }
}

/// AES-128-CTR: key = seed[..16], IV = domain (BE) ‖ stream (BE) ‖ 32-bit block counter 0.
pub struct AesCtr(ctr::Ctr128BE<aes::Aes128>);
impl Cand for AesCtr {
    fn open(seed: &[u8; 32], domain: u64, stream: u32) -> Self {
        let mut iv = [0u8; 16];
        iv[..8].copy_from_slice(&domain.to_be_bytes());
        iv[8..12].copy_from_slice(&stream.to_be_bytes());
        Self(ctr::Ctr128BE::<aes::Aes128>::new_from_slices(&seed[..16], &iv).expect("sizes"))
    }
    fn fill(&mut self, out: &mut [u8]) {
        out.fill(0);
        self.0.apply_keystream(out)
    }
}

/// BLAKE3 keyed hash of `domain ‖ stream`, read in XOF mode.
pub struct Blake3Xof(blake3::OutputReader);
impl Cand for Blake3Xof {
    fn open(seed: &[u8; 32], domain: u64, stream: u32) -> Self {
        let mut h = blake3::Hasher::new_keyed(seed);
        h.update(&domain.to_le_bytes());
        h.update(&stream.to_le_bytes());
        Self(h.finalize_xof())
    }
    fn fill(&mut self, out: &mut [u8]) {
        self.0.fill(out)
    }
}

/// `rand_chacha` (64-bit counter/stream layout; different bytes, same core).
pub struct RandChaCha<R>(R);
impl<R: SeedableRng<Seed = [u8; 32]> + Rng> Cand for RandChaCha<R> {
    fn open(seed: &[u8; 32], domain: u64, stream: u32) -> Self {
        // Not a real nonce mapping; only the cost matters here.
        let mut s = *seed;
        s[..8].iter_mut().zip(domain.to_le_bytes()).for_each(|(a, b)| *a ^= b);
        s[8..12].iter_mut().zip(stream.to_le_bytes()).for_each(|(a, b)| *a ^= b);
        Self(R::from_seed(s))
    }
    fn fill(&mut self, out: &mut [u8]) {
        self.0.fill_bytes(out)
    }
}

const SEED: [u8; 32] = [0x5a; 32];

#[inline(never)]
fn sum(buf: &[u8]) -> u64 {
    // Touch both ends so the fill cannot be elided; cheap compared with the fill.
    let a = u64::from_le_bytes(buf[..8].try_into().unwrap());
    let b = u64::from_le_bytes(buf[buf.len() - 8..].try_into().unwrap());
    a ^ b.rotate_left(1)
}

pub fn run_big<C: Cand>(iters: u32) -> u64 {
    let mut buf = vec![0u8; BIG];
    let mut g = C::open(&SEED, 1, 2);
    let mut acc = 0u64;
    for _ in 0..iters {
        g.fill(core::hint::black_box(&mut buf));
        acc = acc.wrapping_add(sum(core::hint::black_box(&buf)));
    }
    acc
}

pub fn run_small<C: Cand>(iters: u32) -> u64 {
    let mut buf = [0u8; SMALL];
    let mut acc = 0u64;
    for i in 0..iters {
        let mut g = C::open(&SEED, i as u64, 2);
        g.fill(core::hint::black_box(&mut buf));
        acc = acc.wrapping_add(sum(core::hint::black_box(&buf)));
    }
    acc
}

/// Digest of the real `ringfence_core` PRG output over awkward split sizes; must be equal on
/// every target (native, wasm simd128, wasm scalar).
pub fn core_digest() -> u64 {
    let seed = core_prg::Seed::from_bytes(core::array::from_fn(|i| i as u8 * 7 + 1));
    let mut acc = 0xcbf2_9ce4_8422_2325u64;
    for dom in [0u64, 1, 0xdead_beef_0000_0001, u64::MAX] {
        let mut p = core_prg::Prg::new(&seed, dom, 5);
        let mut buf = [0u8; 2000];
        for n in [1usize, 3, 63, 64, 65, 255, 256, 257, 511, 512, 513, 1000, 1999] {
            p.fill_bytes(&mut buf[..n]);
            for &b in &buf[..n] {
                acc = (acc ^ b as u64).wrapping_mul(0x100_0000_01b3);
            }
            acc ^= p.next_u64() ^ p.next_u32() as u64;
        }
    }
    acc
}

/// `cand_list!(CONST, module; name => Type, ...)`: a table for the native runner and a pair of
/// `bench_<name>_{1m,4k}` wasm exports per candidate.
macro_rules! cand_list {
    ($list:ident, $module:ident; $($name:ident => $ty:ty,)*) => {
        /// (name, 1 MiB workload, 4 KiB workload)
        pub const $list: &[(&str, fn(u32) -> u64, fn(u32) -> u64)] = &[
            $((stringify!($name), run_big::<$ty>, run_small::<$ty>),)*
        ];
        pub mod $module {
            #[allow(unused_imports)]
            use super::*;
            $( paste_exports!($name, $ty); )*
        }
    };
}

macro_rules! paste_exports {
    ($name:ident, $ty:ty) => {
        const _: () = {
            #[export_name = concat!("bench_", stringify!($name), "_1m")]
            pub extern "C" fn big(iters: u32) -> u64 {
                run_big::<$ty>(iters)
            }
            #[export_name = concat!("bench_", stringify!($name), "_4k")]
            pub extern "C" fn small(iters: u32) -> u64 {
                run_small::<$ty>(iters)
            }
        };
    };
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub struct SimdNoShuf<const DR: usize>;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
impl<const DR: usize> Blocks for SimdNoShuf<DR> {
    const BYTES: usize = 256;
    #[inline(always)]
    fn blocks(key: &[u32; 8], ctr: u32, nonce: &[u32; 3], out: &mut [u8]) {
        ours_simd::chacha_blocks_g::<DR, false>(
            key,
            ctr,
            nonce,
            (&mut out[..256]).try_into().unwrap(),
        )
    }
}
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub struct Simd8<const DR: usize>;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
impl<const DR: usize> Blocks for Simd8<DR> {
    const BYTES: usize = 512;
    #[inline(always)]
    fn blocks(key: &[u32; 8], ctr: u32, nonce: &[u32; 3], out: &mut [u8]) {
        ours_simd::chacha_blocks8::<DR>(key, ctr, nonce, (&mut out[..512]).try_into().unwrap())
    }
}
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub struct SimdIl<const DR: usize>;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
impl<const DR: usize> Blocks for SimdIl<DR> {
    const BYTES: usize = 256;
    #[inline(always)]
    fn blocks(key: &[u32; 8], ctr: u32, nonce: &[u32; 3], out: &mut [u8]) {
        ours_simd::chacha_blocks_il::<DR>(key, ctr, nonce, (&mut out[..256]).try_into().unwrap())
    }
}
#[cfg(all(target_arch = "wasm32", target_feature = "simd128", feature = "experiments"))]
cand_list! { SIMD_EXPERIMENTS, simd_exports;
    x_simd4_chacha12 => BufPrg<Simd<6>>,
    x_simd4noshuf_chacha12 => BufPrg<SimdNoShuf<6>>,
    x_simd8_chacha12 => BufPrg<Simd8<6>>,
    x_simd8_chacha8 => BufPrg<Simd8<4>>,
    x_simd4il_chacha12 => BufPrg<SimdIl<6>>,
}

#[export_name = "core_digest"]
pub extern "C" fn core_digest_export() -> u64 {
    core_digest()
}

#[cfg(feature = "experiments")]
cand_list! { EXPERIMENTS, experiment_exports;
    x_port1_chacha12 => BufPrg<Port<1, 6>>,
    x_port4_chacha12 => BufPrg<Port<4, 6>>,
    x_port8_chacha12 => BufPrg<Port<8, 6>>,
    x_port16_chacha12 => BufPrg<Port<16, 6>>,
}

cand_list! { CANDIDATES, exports;
    ringfence_prg_chacha12 => Core,
    prg_rs_chacha8 => BufPrg<PrgRs<4>>,
    prg_rs_chacha12 => BufPrg<PrgRs<6>>,
    prg_rs_chacha20 => BufPrg<PrgRs<10>>,
    before_chacha8 => ours_v0::Prg<4>,
    before_chacha12 => ours_v0::Prg<6>,
    before_chacha20 => ours_v0::Prg<10>,
    rustcrypto_chacha8 => RcChaCha<chacha20::ChaCha8>,
    rustcrypto_chacha12 => RcChaCha<chacha20::ChaCha12>,
    rustcrypto_chacha20 => RcChaCha<chacha20::ChaCha20>,
    rand_chacha12 => RandChaCha<rand_chacha::ChaCha12Rng>,
    aes128_ctr => AesCtr,
    blake3_xof => Blake3Xof,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<C: Cand>(n: usize) -> Vec<u8> {
        let mut v = vec![0u8; n];
        C::open(&SEED, 0x0102_0304_0506_0708, 9).fill(&mut v);
        v
    }

    #[test]
    fn chacha_implementations_agree() {
        let r = bytes::<Core>(5000);
        assert_eq!(r, bytes::<ours_v0::Prg<6>>(5000));
        assert_eq!(r, bytes::<BufPrg<PrgRs<6>>>(5000));
        assert_eq!(bytes::<BufPrg<PrgRs<4>>>(5000), bytes::<RcChaCha<chacha20::ChaCha8>>(5000));
        assert_eq!(bytes::<BufPrg<PrgRs<10>>>(5000), bytes::<RcChaCha<chacha20::ChaCha20>>(5000));
        assert_eq!(r, bytes::<BufPrg<Port<4, 6>>>(5000));
        assert_eq!(r, bytes::<BufPrg<Port<8, 6>>>(5000));
        assert_eq!(r, bytes::<BufPrg<Port<16, 6>>>(5000));
        assert_eq!(r, bytes::<RcChaCha<chacha20::ChaCha12>>(5000));
        assert_eq!(bytes::<ours_v0::Prg<4>>(5000), bytes::<RcChaCha<chacha20::ChaCha8>>(5000));
        assert_eq!(bytes::<ours_v0::Prg<10>>(5000), bytes::<RcChaCha<chacha20::ChaCha20>>(5000));
    }
}

/// 1 when this module was compiled with `+simd128` (so the runner can refuse a silent scalar build).
#[export_name = "simd128_enabled"]
pub extern "C" fn simd128_enabled() -> u32 {
    cfg!(target_feature = "simd128") as u32
}
