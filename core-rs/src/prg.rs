//! The one PRG of ringfence: ChaCha with a reduced round count, keyed by a 256-bit [`Seed`].
//!
//! Correlated randomness must be bit-identical between a browser party (wasm32) and a native
//! party, so this is the only generator used for shared randomness on every target. ChaCha was
//! chosen by benchmark over AES-128-CTR and BLAKE3-XOF: wasm has no AES instructions (bitsliced
//! AES-CTR runs ~8× slower there), and ChaCha's add-rotate-xor rounds map directly onto `simd128`
//! (hand-written path below; ~2× BLAKE3-XOF there). 12 rounds, not 8: ChaCha8 would be ~1.5×
//! faster, but ChaCha12 already runs far ahead of any link a party has, so we keep the larger
//! security margin (figures and reasoning in `BENCHMARKS.md`, section PRG).
//!
//! # Streams and draw order
//! A stream is addressed by `(seed, domain, stream)`: the 96-bit ChaCha nonce is
//! `domain (u64 LE) ‖ stream (u32 LE)` and the block counter starts at 0. Protocols take `domain`
//! from the context's operation counter (every party runs the same sequence of operations, so
//! they agree on it) and `stream` from a fixed per-purpose constant. A party that does not need a
//! stream simply does not open it; nothing can drift out of step. Within a stream, elements are
//! drawn in index order, each taking its width in bytes from the keystream, little-endian.

use core::fmt;

/// ChaCha double-round count: ChaCha12 (6 double rounds).
const DOUBLE_ROUNDS: usize = 6;
/// Blocks of the portable and `simd128` paths: 4 blocks fill the `v128` lanes of the wasm
/// `simd128` path (and 128-bit lanes where LLVM vectorises the portable path).
const LANES: usize = 4;
pub(crate) const BUF_BYTES: usize = 64 * LANES;

/// A 256-bit PRG key. `Debug` never prints the key; the key is zeroized on drop.
#[derive(Clone, PartialEq, Eq)]
pub struct Seed(pub(crate) [u8; 32]);

impl Drop for Seed {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.0);
    }
}

impl zeroize::ZeroizeOnDrop for Seed {}

impl Seed {
    /// Wraps 32 bytes of key material (from a key agreement or an OS RNG at the edge).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// Derives an independent seed for a labelled purpose.
    pub fn derive(&self, label: u32) -> Self {
        let mut out = [0u8; 32];
        Prg::new(self, u64::MAX, label).fill_bytes(&mut out);
        Self(out)
    }

    /// Combines seeds contributed by several parties into one (order matters).
    pub fn combine(parts: &[Self]) -> Self {
        let mut acc = [0u8; 32];
        for (i, p) in parts.iter().enumerate() {
            let mut d = [0u8; 32];
            Prg::new(p, u64::MAX - 1, i as u32).fill_bytes(&mut d);
            for (a, b) in acc.iter_mut().zip(d) {
                *a ^= b;
            }
        }
        Self(acc)
    }
}

impl fmt::Debug for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Seed(<redacted>)")
    }
}

/// Keystream bytes computed per refill: 8 blocks on x86-64 (one pass of the AVX2 path), 4
/// elsewhere (one pass of the `simd128` or portable path). Only the buffering depends on this,
/// never the output bytes.
#[cfg(target_arch = "x86_64")]
const GROUP: usize = 512;
#[cfg(not(target_arch = "x86_64"))]
const GROUP: usize = BUF_BYTES;

/// A ChaCha12 keystream positioned at `(seed, domain, stream)`. `Debug` is redacted.
///
/// Backends, chosen in `Prg::group` and nowhere else (all produce the same bytes, checked by
/// `native_backend_matches_reference`): on x86-64 with AVX2 eight blocks at once; on
/// wasm32 with `simd128` our `v128` path; elsewhere the portable 4-lane code.
pub struct Prg {
    key: [u32; 8],
    nonce: [u32; 3],
    counter: u32,
    /// Unread keystream of the last group: bytes `pos..`.
    buf: [u8; GROUP],
    pos: usize,
}

impl fmt::Debug for Prg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Prg(<redacted>)")
    }
}

impl Prg {
    /// Opens the stream `(seed, domain, stream)` at its start.
    pub fn new(seed: &Seed, domain: u64, stream: u32) -> Self {
        let mut key = [0u32; 8];
        for (k, c) in key.iter_mut().zip(seed.0.chunks_exact(4)) {
            *k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        let nonce = [domain as u32, (domain >> 32) as u32, stream];
        Self { key, nonce, counter: 0, buf: [0; GROUP], pos: GROUP }
    }

    /// Fills `out` with the next `out.len()` keystream bytes.
    ///
    /// Whole groups are computed straight into `out`; only a partial last group goes through
    /// the buffer (no zero-fill of the output, no XOR pass, no copy of bulk keystream).
    pub fn fill_bytes(&mut self, mut out: &mut [u8]) {
        if self.pos < GROUP {
            let n = out.len().min(GROUP - self.pos);
            out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
            self.pos += n;
            out = &mut out[n..];
        }
        while out.len() >= GROUP {
            let (head, rest) = out.split_at_mut(GROUP);
            self.group(head.try_into().expect("split at GROUP"));
            out = rest;
        }
        if !out.is_empty() {
            let mut buf = [0u8; GROUP];
            self.group(&mut buf);
            self.buf = buf;
            out.copy_from_slice(&self.buf[..out.len()]);
            self.pos = out.len();
        }
    }

    /// Computes the next `GROUP` bytes of keystream into `out` and advances the counter. 2^32
    /// blocks (256 GiB) per stream is far beyond any single operation's draw.
    fn group(&mut self, out: &mut [u8; GROUP]) {
        #[cfg(target_arch = "x86_64")]
        {
            if avx2::available() {
                avx2::blocks::<DOUBLE_ROUNDS>(&self.key, self.counter, &self.nonce, out);
            } else {
                for (i, half) in out.chunks_exact_mut(BUF_BYTES).enumerate() {
                    let ctr = self.counter.wrapping_add((i * LANES) as u32);
                    let half: &mut [u8; BUF_BYTES] = half.try_into().expect("a half group");
                    chacha_blocks::<DOUBLE_ROUNDS>(&self.key, ctr, &self.nonce, half);
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        chacha_blocks::<DOUBLE_ROUNDS>(&self.key, self.counter, &self.nonce, out);
        self.counter = self.counter.wrapping_add((GROUP / 64) as u32);
    }

    /// The next `n` keystream bits (bit `i` of byte `i / 8`), e.g. random OT choices.
    pub fn bits(&mut self, n: usize) -> Vec<bool> {
        let mut bytes = vec![0u8; n.div_ceil(8)];
        self.fill_bytes(&mut bytes);
        (0..n).map(|i| bytes[i / 8] >> (i % 8) & 1 == 1).collect()
    }

    /// The next 8 keystream bytes as a little-endian u64.
    pub fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        u64::from_le_bytes(b)
    }

    /// The next 4 keystream bytes as a little-endian u32.
    pub fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.fill_bytes(&mut b);
        u32::from_le_bytes(b)
    }
}

/// `LANES` ChaCha blocks with counters `ctr..ctr+LANES` into `out`, block `i` at `64 * i`.
#[inline(always)]
pub(crate) fn chacha_blocks<const DR: usize>(
    key: &[u32; 8],
    ctr: u32,
    nonce: &[u32; 3],
    out: &mut [u8; BUF_BYTES],
) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    simd128::chacha_blocks::<DR>(key, ctr, nonce, out);
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    portable_blocks::<DR>(key, ctr, nonce, out);
}

/// The ChaCha constants "expand 32-byte k".
/// `$dr` ChaCha double rounds (column round, then diagonal round) on state `$x` with quarter
/// round `$qr`, for every backend. A macro, not a generic function taking the quarter round:
/// the closure version measured 2× slower on wasm32+simd128 (0.5–0.6 vs 1.3–1.4 GB/s).
macro_rules! double_rounds {
    ($x:expr, $dr:expr, $qr:path) => {
        for _ in 0..$dr {
            $qr($x, 0, 4, 8, 12);
            $qr($x, 1, 5, 9, 13);
            $qr($x, 2, 6, 10, 14);
            $qr($x, 3, 7, 11, 15);
            $qr($x, 0, 5, 10, 15);
            $qr($x, 1, 6, 11, 12);
            $qr($x, 2, 7, 8, 13);
            $qr($x, 3, 4, 9, 14);
        }
    };
}

const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// Portable path: state held lane-major so each quarter-round step is a `LANES`-wide operation
/// that LLVM vectorises where the target has a vector rotate.
#[cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), allow(dead_code))]
// Lanes index several parallel arrays at once; an index loop says that more plainly than zips.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn portable_blocks<const DR: usize>(
    key: &[u32; 8],
    ctr: u32,
    nonce: &[u32; 3],
    out: &mut [u8; BUF_BYTES],
) {
    let mut init = [[0u32; LANES]; 16];
    for l in 0..LANES {
        init[0][l] = SIGMA[0];
        init[1][l] = SIGMA[1];
        init[2][l] = SIGMA[2];
        init[3][l] = SIGMA[3];
        for k in 0..8 {
            init[4 + k][l] = key[k];
        }
        init[12][l] = ctr.wrapping_add(l as u32);
        init[13][l] = nonce[0];
        init[14][l] = nonce[1];
        init[15][l] = nonce[2];
    }
    let mut x = init;
    double_rounds!(&mut x, DR, qr);
    for l in 0..LANES {
        for w in 0..16 {
            let v = x[w][l].wrapping_add(init[w][l]);
            out[l * 64 + w * 4..l * 64 + w * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
}

#[cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), allow(dead_code))]
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn qr(x: &mut [[u32; LANES]; 16], a: usize, b: usize, c: usize, d: usize) {
    for l in 0..LANES {
        x[a][l] = x[a][l].wrapping_add(x[b][l]);
        x[d][l] = (x[d][l] ^ x[a][l]).rotate_left(16);
        x[c][l] = x[c][l].wrapping_add(x[d][l]);
        x[b][l] = (x[b][l] ^ x[c][l]).rotate_left(12);
        x[a][l] = x[a][l].wrapping_add(x[b][l]);
        x[d][l] = (x[d][l] ^ x[a][l]).rotate_left(8);
        x[c][l] = x[c][l].wrapping_add(x[d][l]);
        x[b][l] = (x[b][l] ^ x[c][l]).rotate_left(7);
    }
}

/// x86-64 AVX2 path: eight blocks at once, word `w` of blocks 0..8 in one 256-bit register
/// (no shuffles between rounds, unlike a block-per-register layout); rotations by 16 and 8 are
/// byte shuffles; the output is a 4×8 transpose per group of four words. ~2× the throughput of
/// RustCrypto's `chacha20` AVX2 backend on this machine (`examples/prg_speed.rs`).
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use super::SIGMA;
    use core::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_or_si256, _mm256_permute2x128_si256, _mm256_set1_epi32,
        _mm256_setr_epi32, _mm256_setr_epi8, _mm256_shuffle_epi8, _mm256_slli_epi32,
        _mm256_srli_epi32, _mm256_storeu_si256, _mm256_unpackhi_epi32, _mm256_unpackhi_epi64,
        _mm256_unpacklo_epi32, _mm256_unpacklo_epi64, _mm256_xor_si256,
    };

    /// Whether this CPU runs [`blocks`] (the answer is cached by `std`).
    pub(super) fn available() -> bool {
        std::is_x86_feature_detected!("avx2")
    }

    /// Eight ChaCha blocks with counters `ctr..ctr+8` into `out`, block `i` at `64 * i`.
    /// Call only where [`available`] said yes.
    pub(super) fn blocks<const DR: usize>(
        key: &[u32; 8],
        ctr: u32,
        nonce: &[u32; 3],
        out: &mut [u8; 512],
    ) {
        assert!(available(), "the AVX2 ChaCha path on a CPU without AVX2");
        // SAFETY: the CPU has AVX2 (checked above).
        unsafe { inner::<DR>(key, ctr, nonce, out) }
    }

    /// One quarter round on four rows of the state, eight blocks wide.
    macro_rules! qr {
        ($x:ident, $r16:ident, $r8:ident, $a:literal, $b:literal, $c:literal, $d:literal) => {
            $x[$a] = _mm256_add_epi32($x[$a], $x[$b]);
            $x[$d] = _mm256_shuffle_epi8(_mm256_xor_si256($x[$d], $x[$a]), $r16);
            $x[$c] = _mm256_add_epi32($x[$c], $x[$d]);
            let t = _mm256_xor_si256($x[$b], $x[$c]);
            $x[$b] = _mm256_or_si256(_mm256_slli_epi32::<12>(t), _mm256_srli_epi32::<20>(t));
            $x[$a] = _mm256_add_epi32($x[$a], $x[$b]);
            $x[$d] = _mm256_shuffle_epi8(_mm256_xor_si256($x[$d], $x[$a]), $r8);
            $x[$c] = _mm256_add_epi32($x[$c], $x[$d]);
            let t = _mm256_xor_si256($x[$b], $x[$c]);
            $x[$b] = _mm256_or_si256(_mm256_slli_epi32::<7>(t), _mm256_srli_epi32::<25>(t));
        };
    }

    #[target_feature(enable = "avx2")]
    fn inner<const DR: usize>(key: &[u32; 8], ctr: u32, nonce: &[u32; 3], out: &mut [u8; 512]) {
        let r16 = _mm256_setr_epi8(
            2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11,
            8, 9, 14, 15, 12, 13,
        );
        let r8 = _mm256_setr_epi8(
            3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9,
            10, 15, 12, 13, 14,
        );
        let words = [
            SIGMA[0], SIGMA[1], SIGMA[2], SIGMA[3], key[0], key[1], key[2], key[3], key[4], key[5],
            key[6], key[7], 0, nonce[0], nonce[1], nonce[2],
        ];
        let mut init: [__m256i; 16] = core::array::from_fn(|w| _mm256_set1_epi32(words[w] as i32));
        init[12] = _mm256_add_epi32(
            _mm256_set1_epi32(ctr as i32),
            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
        );
        let mut x = init;
        for _ in 0..DR {
            qr!(x, r16, r8, 0, 4, 8, 12);
            qr!(x, r16, r8, 1, 5, 9, 13);
            qr!(x, r16, r8, 2, 6, 10, 14);
            qr!(x, r16, r8, 3, 7, 11, 15);
            qr!(x, r16, r8, 0, 5, 10, 15);
            qr!(x, r16, r8, 1, 6, 11, 12);
            qr!(x, r16, r8, 2, 7, 8, 13);
            qr!(x, r16, r8, 3, 4, 9, 14);
        }
        // Per group g of four words, `rows[g][l]` holds words 4g..4g+4 of block l in its low
        // 128 bits and of block l + 4 in its high 128 bits.
        let rows: [[__m256i; 4]; 4] = core::array::from_fn(|g| {
            let [a, b, c, d] =
                [0, 1, 2, 3].map(|i| _mm256_add_epi32(x[4 * g + i], init[4 * g + i]));
            let (t0, t1) = (_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b));
            let (t2, t3) = (_mm256_unpacklo_epi32(c, d), _mm256_unpackhi_epi32(c, d));
            [
                _mm256_unpacklo_epi64(t0, t2),
                _mm256_unpackhi_epi64(t0, t2),
                _mm256_unpacklo_epi64(t1, t3),
                _mm256_unpackhi_epi64(t1, t3),
            ]
        });
        let out = out.as_mut_ptr().cast::<__m256i>();
        // `l` picks a row of every group and places two blocks: an index says that plainly.
        #[allow(clippy::needless_range_loop)]
        for l in 0..4 {
            for half in 0..2 {
                // Bytes 32·half..32·half + 32 of blocks l and l + 4.
                let (p, q) = (rows[2 * half][l], rows[2 * half + 1][l]);
                let lo = _mm256_permute2x128_si256::<0x20>(p, q);
                let hi = _mm256_permute2x128_si256::<0x31>(p, q);
                // SAFETY: both stores lie inside the 512 bytes of `out` (unaligned stores).
                unsafe {
                    _mm256_storeu_si256(out.add(2 * l + half), lo);
                    _mm256_storeu_si256(out.add(2 * (l + 4) + half), hi);
                }
            }
        }
    }
}

/// wasm32 `simd128` path (LLVM leaves the portable loop mostly scalar on wasm: ~3-4× slower, see
/// `BENCHMARKS.md`). Four blocks at once: `x[w]` holds word `w` of blocks 0..4, rotations by 16
/// and 8 are byte shuffles, and the output is a 4×4 transpose per group of four words. The wasm
/// intrinsics are safe functions; no `unsafe` here.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128 {
    use super::{BUF_BYTES, LANES, SIGMA};
    use core::arch::wasm32::{
        i8x16_shuffle, u32x4, u32x4_add, u32x4_shl, u32x4_shr, u32x4_shuffle, u32x4_splat,
        u64x2_extract_lane, u64x2_shuffle, v128, v128_or, v128_xor,
    };

    const _: () = assert!(LANES == 4, "the simd128 path computes exactly 4 blocks");

    #[inline(always)]
    fn rotl16(v: v128) -> v128 {
        i8x16_shuffle::<2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13>(v, v)
    }

    #[inline(always)]
    fn rotl8(v: v128) -> v128 {
        i8x16_shuffle::<3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14>(v, v)
    }

    /// Rotate left by `L` (`R` = 32 - `L`).
    #[inline(always)]
    fn rotl<const L: u32, const R: u32>(v: v128) -> v128 {
        v128_or(u32x4_shl(v, L), u32x4_shr(v, R))
    }

    #[inline(always)]
    fn qr(x: &mut [v128; 16], a: usize, b: usize, c: usize, d: usize) {
        x[a] = u32x4_add(x[a], x[b]);
        x[d] = rotl16(v128_xor(x[d], x[a]));
        x[c] = u32x4_add(x[c], x[d]);
        x[b] = rotl::<12, 20>(v128_xor(x[b], x[c]));
        x[a] = u32x4_add(x[a], x[b]);
        x[d] = rotl8(v128_xor(x[d], x[a]));
        x[c] = u32x4_add(x[c], x[d]);
        x[b] = rotl::<7, 25>(v128_xor(x[b], x[c]));
    }

    #[inline(always)]
    pub(super) fn chacha_blocks<const DR: usize>(
        key: &[u32; 8],
        ctr: u32,
        nonce: &[u32; 3],
        out: &mut [u8; BUF_BYTES],
    ) {
        let words = [
            SIGMA[0], SIGMA[1], SIGMA[2], SIGMA[3], key[0], key[1], key[2], key[3], key[4], key[5],
            key[6], key[7], 0, nonce[0], nonce[1], nonce[2],
        ];
        let mut init: [v128; 16] = core::array::from_fn(|w| u32x4_splat(words[w]));
        init[12] = u32x4_add(u32x4_splat(ctr), u32x4(0, 1, 2, 3));
        let mut x = init;
        double_rounds!(&mut x, DR, qr);
        for g in 0..4 {
            let [a, b, c, d] = [0, 1, 2, 3].map(|i| u32x4_add(x[4 * g + i], init[4 * g + i]));
            // Transpose: row `l` = words 4g..4g+4 of block `l`.
            let t0 = u32x4_shuffle::<0, 4, 1, 5>(a, b);
            let t1 = u32x4_shuffle::<0, 4, 1, 5>(c, d);
            let t2 = u32x4_shuffle::<2, 6, 3, 7>(a, b);
            let t3 = u32x4_shuffle::<2, 6, 3, 7>(c, d);
            let rows = [
                u64x2_shuffle::<0, 2>(t0, t1),
                u64x2_shuffle::<1, 3>(t0, t1),
                u64x2_shuffle::<0, 2>(t2, t3),
                u64x2_shuffle::<1, 3>(t2, t3),
            ];
            for (l, r) in rows.into_iter().enumerate() {
                let o = l * 64 + g * 16;
                out[o..o + 8].copy_from_slice(&u64x2_extract_lane::<0>(r).to_le_bytes());
                out[o + 8..o + 16].copy_from_slice(&u64x2_extract_lane::<1>(r).to_le_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8439 §2.3.2 block function test vector (20 rounds), checking our core against the
    /// standard before we use it with fewer rounds.
    #[test]
    fn chacha20_rfc8439_block() {
        let key: [u32; 8] = core::array::from_fn(|i| {
            let b = (4 * i) as u32;
            u32::from_le_bytes([b as u8, (b + 1) as u8, (b + 2) as u8, (b + 3) as u8])
        });
        let nonce = [0x0900_0000, 0x4a00_0000, 0];
        let mut out = [0u8; BUF_BYTES];
        chacha_blocks::<10>(&key, 1, &nonce, &mut out);
        let expect_first_words = [0xe4e7_f110u32, 0x1559_3bd1, 0x1fdd_0f50, 0xc471_20a3];
        for (i, w) in expect_first_words.iter().enumerate() {
            assert_eq!(u32::from_le_bytes(out[4 * i..4 * i + 4].try_into().unwrap()), *w);
        }
        let last = u32::from_le_bytes(out[60..64].try_into().unwrap());
        assert_eq!(last, 0x4e3c_50a2);
    }

    #[test]
    fn streams_are_reproducible_and_split_independent() {
        let s = Seed::from_bytes([7; 32]);
        let mut a = Prg::new(&s, 3, 1);
        let mut whole = vec![0u8; 1000];
        a.fill_bytes(&mut whole);
        let mut b = Prg::new(&s, 3, 1);
        let mut parts = vec![0u8; 1000];
        let (x, y) = parts.split_at_mut(37);
        b.fill_bytes(x);
        let (y1, y2) = y.split_at_mut(300);
        b.fill_bytes(y1);
        b.fill_bytes(y2);
        assert_eq!(whole, parts);
        let mut c = Prg::new(&s, 3, 2);
        assert_ne!(c.next_u64(), Prg::new(&s, 3, 1).next_u64());
    }

    /// One ChaCha block, written as plainly as RFC 8439 §2.3 states it: the reference for the
    /// vectorised paths.
    fn reference_block(key: &[u32; 8], ctr: u32, nonce: &[u32; 3], rounds: usize) -> [u8; 64] {
        let mut s = [0u32; 16];
        s[..4].copy_from_slice(&SIGMA);
        s[4..12].copy_from_slice(key);
        s[12] = ctr;
        s[13..].copy_from_slice(nonce);
        let mut x = s;
        let q = |x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize| {
            x[a] = x[a].wrapping_add(x[b]);
            x[d] = (x[d] ^ x[a]).rotate_left(16);
            x[c] = x[c].wrapping_add(x[d]);
            x[b] = (x[b] ^ x[c]).rotate_left(12);
            x[a] = x[a].wrapping_add(x[b]);
            x[d] = (x[d] ^ x[a]).rotate_left(8);
            x[c] = x[c].wrapping_add(x[d]);
            x[b] = (x[b] ^ x[c]).rotate_left(7);
        };
        for _ in 0..rounds / 2 {
            q(&mut x, 0, 4, 8, 12);
            q(&mut x, 1, 5, 9, 13);
            q(&mut x, 2, 6, 10, 14);
            q(&mut x, 3, 7, 11, 15);
            q(&mut x, 0, 5, 10, 15);
            q(&mut x, 1, 6, 11, 12);
            q(&mut x, 2, 7, 8, 13);
            q(&mut x, 3, 4, 9, 14);
        }
        let mut out = [0u8; 64];
        for (w, o) in out.chunks_exact_mut(4).enumerate() {
            o.copy_from_slice(&x[w].wrapping_add(s[w]).to_le_bytes());
        }
        out
    }

    /// The optimised block function (whichever path this target compiles) and `Prg`'s buffering
    /// agree with the scalar reference over several thousand bytes, drawn in odd-sized pieces.
    #[test]
    fn native_backend_matches_reference() {
        let seed = Seed::from_bytes(core::array::from_fn(|i| (i as u8).wrapping_mul(29) ^ 0x5c));
        let key: [u32; 8] = core::array::from_fn(|i| {
            u32::from_le_bytes(seed.0[4 * i..4 * i + 4].try_into().expect("4 bytes"))
        });
        for (domain, stream) in [(0u64, 0u32), (0x0123_4567_89ab_cdef, 7), (u64::MAX, u32::MAX)] {
            let mut expect = Vec::new();
            for ctr in 0..80u32 {
                expect.extend_from_slice(&reference_block(
                    &key,
                    ctr,
                    &[domain as u32, (domain >> 32) as u32, stream],
                    2 * DOUBLE_ROUNDS,
                ));
            }
            let mut p = Prg::new(&seed, domain, stream);
            let mut got = Vec::new();
            for n in [1usize, 7, 63, 64, 65, 129, 255, 256, 257, 3, 511, 513, 1021, 8, 4] {
                let mut piece = vec![0u8; n];
                p.fill_bytes(&mut piece);
                got.extend_from_slice(&piece);
            }
            got.extend_from_slice(&p.next_u64().to_le_bytes());
            got.extend_from_slice(&p.next_u32().to_le_bytes());
            let mut rest = vec![0u8; expect.len() - got.len()];
            p.fill_bytes(&mut rest);
            got.extend_from_slice(&rest);
            assert_eq!(got.len(), 80 * 64);
            assert!(
                got == expect,
                "keystream differs from the scalar reference ({domain}, {stream})"
            );
        }
        // The block function itself, at other round counts and a counter that wraps.
        for dr in [4usize, 6, 10] {
            let key = [0x0302_0100, 0x0706_0504, 9, 10, 11, 12, 13, u32::MAX];
            let nonce = [1, 2, 3];
            let ctr = u32::MAX - 1;
            let mut out = [0u8; BUF_BYTES];
            match dr {
                4 => chacha_blocks::<4>(&key, ctr, &nonce, &mut out),
                6 => chacha_blocks::<6>(&key, ctr, &nonce, &mut out),
                _ => chacha_blocks::<10>(&key, ctr, &nonce, &mut out),
            }
            for (l, blk) in out.chunks_exact(64).enumerate() {
                let r = reference_block(&key, ctr.wrapping_add(l as u32), &nonce, 2 * dr);
                assert_eq!(blk, &r[..], "double rounds {dr}, block {l}");
            }
            #[cfg(target_arch = "x86_64")]
            if avx2::available() {
                let mut out = [0u8; 512];
                match dr {
                    4 => avx2::blocks::<4>(&key, ctr, &nonce, &mut out),
                    6 => avx2::blocks::<6>(&key, ctr, &nonce, &mut out),
                    _ => avx2::blocks::<10>(&key, ctr, &nonce, &mut out),
                }
                for (l, blk) in out.chunks_exact(64).enumerate() {
                    let r = reference_block(&key, ctr.wrapping_add(l as u32), &nonce, 2 * dr);
                    assert_eq!(blk, &r[..], "AVX2, double rounds {dr}, block {l}");
                }
            }
        }
    }

    #[test]
    fn seed_debug_is_redacted() {
        let s = Seed::from_bytes([0xab; 32]);
        let text = format!("{s:?} {:?}", Prg::new(&s, 0, 0));
        assert!(!text.contains("ab") && !text.contains("171"), "{text}");
    }
}
