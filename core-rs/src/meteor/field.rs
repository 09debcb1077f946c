//! The prime field F_67, used by METEOR's private compare (the smallest prime above ℓ + 1 = 65,
//! so a sum of at most 65 bits is zero mod q only when it is zero as an integer).
//!
//! Elements are canonical bytes in `0..67`; one byte each on the wire (as in the paper's cost
//! model: 64 + 21 + 1 + 1 bytes per MSB extraction). A received byte ≥ 67 is a protocol error
//! reported by [`Ring::first_invalid`], never reduced silently.
//!
//! The field's lazily reduced N-MULT kernels are in `meteor/kernels.rs`; its sampler and dot
//! product are here, with the type.

use core::fmt::Debug;
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use bytemuck::{Pod, Zeroable};

use crate::prg::Prg;
use crate::ring::backend::{self, Kernel};
use crate::ring::Ring;

/// An element of F_67, always in canonical form `0..67`.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
#[repr(transparent)]
pub struct F67(u8);

impl F67 {
    /// The modulus q = 67.
    pub const Q: u8 = 67;

    /// Reduces any integer into the field.
    pub fn new(v: u64) -> Self {
        Self((v % Self::Q as u64) as u8)
    }

    /// Reduces a 16-bit integer into the field (a lane-friendly [`F67::new`] for lazily
    /// reduced sums).
    #[inline(always)]
    pub fn from_small(v: u16) -> Self {
        Self((v % Self::Q as u16) as u8)
    }

    /// The canonical representative in `0..67`.
    #[inline(always)]
    pub fn value(self) -> u8 {
        self.0
    }
}

impl Debug for F67 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "F67({})", self.0)
    }
}

impl Add for F67 {
    type Output = Self;
    #[inline(always)]
    fn add(self, r: Self) -> Self {
        let s = self.0 + r.0; // < 134, no overflow
        Self(if s >= Self::Q { s - Self::Q } else { s })
    }
}
impl Sub for F67 {
    type Output = Self;
    #[inline(always)]
    fn sub(self, r: Self) -> Self {
        // One conditional subtraction instead of a negation and an addition (< 134, no
        // overflow).
        let d = self.0 + (Self::Q - r.0);
        Self(if d >= Self::Q { d - Self::Q } else { d })
    }
}
impl Neg for F67 {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Self(if self.0 == 0 { 0 } else { Self::Q - self.0 })
    }
}
impl Mul for F67 {
    type Output = Self;
    #[inline(always)]
    fn mul(self, r: Self) -> Self {
        Self(((self.0 as u16 * r.0 as u16) % Self::Q as u16) as u8)
    }
}
impl AddAssign for F67 {
    #[inline(always)]
    fn add_assign(&mut self, r: Self) {
        *self = *self + r;
    }
}
impl SubAssign for F67 {
    #[inline(always)]
    fn sub_assign(&mut self, r: Self) {
        *self = *self - r;
    }
}
impl MulAssign for F67 {
    #[inline(always)]
    fn mul_assign(&mut self, r: Self) {
        *self = *self * r;
    }
}

impl Ring for F67 {
    const BYTES: usize = 1;
    const ZERO: Self = Self(0);
    const ONE: Self = Self(1);

    fn encode(src: &[Self], dst: &mut Vec<u8>) {
        dst.extend_from_slice(bytemuck::cast_slice(src));
    }

    fn wire_bytes<'a>(src: &'a [Self], _scratch: &'a mut Vec<u8>) -> &'a [u8] {
        bytemuck::cast_slice(src)
    }

    fn decode(src: &[u8], dst: &mut Vec<Self>) {
        // Callers check `first_invalid` first; clamping here keeps the type's invariant even
        // if one does not (one lane-wise minimum, where a reduction costs a division).
        dst.extend(src.iter().map(|&b| Self(b.min(Self::Q - 1))));
    }

    fn dot(a: &[Self], b: &[Self]) -> Self {
        assert_eq!(a.len(), b.len(), "dot: length mismatch");
        // Products are below 67² < 2^13: 2^19 of them fit a u32 before reducing.
        let mut total = 0u64;
        for (ca, cb) in a.chunks(1 << 19).zip(b.chunks(1 << 19)) {
            let s: u32 = ca.iter().zip(cb).map(|(x, y)| u32::from(x.0) * u32::from(y.0)).sum();
            total += u64::from(s % u32::from(Self::Q));
        }
        Self::new(total)
    }

    fn first_invalid(src: &[u8]) -> Option<usize> {
        // A branch-free test per 64 bytes (vector code), then the position in the bad chunk.
        let bad =
            src.chunks(64).position(|c| c.iter().fold(false, |any, &b| any | (b >= Self::Q)))?;
        src[bad * 64..].iter().position(|&b| b >= Self::Q).map(|i| bad * 64 + i)
    }

    /// Four elements per 32-bit keystream word, exactly uniform (Lemire's multiply-and-reject
    /// onto `[0, 67^4)`, read out digit by digit): a little-endian word `r_0 = w` gives the
    /// elements `d_k = ⌊67·r_k / 2^32⌋` with `r_{k+1} = 67·r_k mod 2^32`, k = 0..4. These are
    /// the base-67 digits, most significant first, of `⌊w·67^4 / 2^32⌋`, and `r_4` is
    /// `w·67^4 mod 2^32`; the word is rejected when `r_4 < 2^32 mod 67^4` (probability
    /// 6.5·10^-4), which makes `⌊w·67^4 / 2^32⌋` exactly uniform on `[0, 67^4)` and so the four
    /// digits independent and uniform. Two parties drawing from the same stream get the same
    /// elements.
    ///
    /// Words are drawn in blocks of what is still needed (at most `SAMPLE_WORDS`); a block
    /// without a rejected word (all but ~15% of full blocks) is converted in one branch-free
    /// pass that runs in vector lanes, the rare other block word by word. A block whose digits
    /// all fit is converted straight into `out` (no staging copy); only a block whose last
    /// word is cut goes through a buffer. The last accepted word's unused digits are dropped.
    fn fill_random(prg: &mut Prg, out: &mut [Self]) {
        let mut words = [0u32; SAMPLE_WORDS];
        let mut spare = [[Self::ZERO; 4]; SAMPLE_WORDS];
        let mut filled = 0;
        while filled < out.len() {
            let left = out.len() - filled;
            let need = left.div_ceil(4).min(SAMPLE_WORDS);
            let block = &mut words[..need];
            prg.fill_bytes(bytemuck::cast_slice_mut(block));
            let fits = 4 * need <= left;
            let digits: &mut [[Self; 4]] = if fits {
                bytemuck::cast_slice_mut(&mut out[filled..filled + 4 * need])
            } else {
                &mut spare[..need]
            };
            if !sample_block(block, digits) {
                let k = (4 * need).min(left);
                if !fits {
                    let got = bytemuck::cast_slice::<[Self; 4], Self>(&spare[..need]);
                    out[filled..filled + k].copy_from_slice(&got[..k]);
                }
                filled += k;
            } else if fits {
                // Compacted in place: an accepted word's digits move to the fill position,
                // which never passes the word's own slot, so no digit is overwritten before
                // it is moved.
                let start = filled;
                for (j, w) in block.iter().enumerate() {
                    if accepted(*w) {
                        let from = start + 4 * j;
                        out.copy_within(from..from + 4, filled);
                        filled += 4;
                    }
                }
            } else {
                for (w, d) in block.iter().zip(&spare) {
                    if accepted(*w) {
                        let k = (out.len() - filled).min(4);
                        out[filled..filled + k].copy_from_slice(&d[..k]);
                        filled += k;
                    }
                }
            }
        }
    }
}

/// Keystream words per block of [`F67::fill_random`] (1 KiB).
const SAMPLE_WORDS: usize = 256;

/// `67^4`, the range one keystream word is mapped onto.
const SAMPLE_RANGE: u64 = 67 * 67 * 67 * 67;

/// `2^32 mod 67^4`: words whose product's low half falls below this are rejected.
const SAMPLE_REJECT_BELOW: u32 = ((1u64 << 32) % SAMPLE_RANGE) as u32;

/// The digits of every word of `words` into `digits` (same length); true when a word was
/// rejected. Branch-free, so it runs in vector lanes (with AVX2 where the CPU has it).
#[inline]
fn sample_block(words: &[u32], digits: &mut [[F67; 4]]) -> bool {
    backend::dispatch(SampleBlock { words, digits })
}

/// The arguments of [`sample_block`], for the backends.
struct SampleBlock<'a> {
    words: &'a [u32],
    digits: &'a mut [[F67; 4]],
}

impl Kernel for SampleBlock<'_> {
    type Output = bool;
    #[inline(always)]
    fn run(self) -> bool {
        sample_block_portable(self.words, self.digits)
    }
}

/// The body of [`sample_block`] (also compiled with AVX2 by the x86-64 backend).
#[inline(always)]
fn sample_block_portable(words: &[u32], digits: &mut [[F67; 4]]) -> bool {
    let mut rejected = false;
    for (w, d) in words.iter().zip(digits.iter_mut()) {
        let (ok, v) = sample_word(*w);
        rejected |= !ok;
        *d = v;
    }
    rejected
}

/// Whether a keystream word (as read from little-endian bytes) is accepted: `r_4 = w·67^4 mod
/// 2^32` (the last remainder of [`sample_word`], in one multiplication) is not below the
/// threshold.
#[inline(always)]
fn accepted(w: u32) -> bool {
    u32::from_le(w).wrapping_mul(SAMPLE_RANGE as u32) >= SAMPLE_REJECT_BELOW
}

/// One keystream word (as read from little-endian bytes) → (accepted, four elements).
#[inline(always)]
fn sample_word(w: u32) -> (bool, [F67; 4]) {
    let mut r = u32::from_le(w);
    let d = core::array::from_fn(|_| {
        let y = u64::from(r) * u64::from(F67::Q);
        r = y as u32;
        F67((y >> 32) as u8)
    });
    (r >= SAMPLE_REJECT_BELOW, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prg::Seed;

    #[test]
    fn field_laws_hold_exhaustively() {
        for a in 0..67u64 {
            for b in 0..67u64 {
                let (x, y) = (F67::new(a), F67::new(b));
                assert_eq!((x + y).value() as u64, (a + b) % 67);
                assert_eq!((x * y).value() as u64, (a * b) % 67);
                assert_eq!(((x - y) + y), x);
                assert_eq!((-x + x), F67::ZERO);
            }
        }
    }

    #[test]
    fn sampling_is_in_range_and_covers_the_field() {
        let mut prg = Prg::new(&Seed::from_bytes([7; 32]), 1, 1);
        let mut v = vec![F67::ZERO; 67 * 200];
        F67::fill_random(&mut prg, &mut v);
        let mut counts = [0usize; 67];
        for x in &v {
            counts[x.value() as usize] += 1;
        }
        // Expected 200 each; a 5σ band is about ±70.
        assert!(counts.iter().all(|&c| (130..=270).contains(&c)), "{counts:?}");
    }

    /// The sampler written plainly, word by word (Lemire's reduction of `w·67^4`, then the
    /// digits by division): what the block version must reproduce.
    fn fill_random_reference(prg: &mut Prg, out: &mut [F67]) {
        let mut filled = 0;
        while filled < out.len() {
            let need = (out.len() - filled).div_ceil(4).min(SAMPLE_WORDS);
            let mut bytes = vec![0u8; 4 * need];
            prg.fill_bytes(&mut bytes);
            for c in bytes.chunks_exact(4) {
                let w = u64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
                let x = w * 67u64.pow(4);
                if (x % (1 << 32)) < (1 << 32) % 67u64.pow(4) {
                    continue;
                }
                let v = x >> 32;
                for k in (0..4).rev() {
                    if filled < out.len() {
                        out[filled] = F67((v / 67u64.pow(k) % 67) as u8);
                        filled += 1;
                    }
                }
            }
        }
    }

    #[test]
    fn sampler_matches_the_plain_loop() {
        let seed = Seed::from_bytes([9; 32]);
        // Lengths around the block size, drawn one after another from one stream (later
        // draws see where earlier ones left the stream); the long ones hit rejected words.
        let lens = [0usize, 1, 2, 3, 4, 5, 66, 67, 1023, 1024, 1025, 1027, 50_000, 17, 3, 99_999];
        let (mut fast, mut slow) = (Prg::new(&seed, 4, 2), Prg::new(&seed, 4, 2));
        for &n in &lens {
            let (mut a, mut b) = (vec![F67(0); n], vec![F67(0); n]);
            F67::fill_random(&mut fast, &mut a);
            fill_random_reference(&mut slow, &mut b);
            assert_eq!(a, b, "length {n}");
            assert!(a.iter().all(|x| x.0 < 67));
        }
        assert_eq!(fast.next_u64(), slow.next_u64(), "same keystream position afterwards");
    }

    /// Words just below and at the rejection threshold, and the largest accepted range value.
    #[test]
    fn sampler_rejects_exactly_the_biased_words() {
        // w·67^4 mod 2^32 for w = 0 is 0 < threshold: rejected.
        assert!(!sample_word(0u32.to_le()).0);
        let (mut kept, mut rejected) = (0u64, 0u64);
        // Over a full period of the low half's pattern the rejected count is 2^32 mod 67^4
        // words in total; check a sample of consecutive words against the definition.
        for w in (0u32..2_000_000).chain(u32::MAX - 2_000_000..=u32::MAX) {
            let x = u64::from(w) * SAMPLE_RANGE;
            let want = (x as u32) >= SAMPLE_REJECT_BELOW;
            let (ok, d) = sample_word(w.to_le());
            assert_eq!(ok, want, "word {w}");
            assert_eq!(accepted(w.to_le()), want, "one-multiplication test of word {w}");
            let v = (x >> 32) as u32;
            let back = d.iter().fold(0u32, |acc, x| acc * 67 + u32::from(x.0));
            assert_eq!(back, v, "digits of word {w}");
            if ok {
                kept += 1
            } else {
                rejected += 1
            }
        }
        assert!(rejected > 0 && kept > rejected);
    }

    /// Exact uniformity: every value `v ∈ [0, R)`, `R = 67^4`, has exactly ⌊2^32 / R⌋ = 213
    /// accepted words, all of which decode to `v` (the words with `⌊w·R / 2^32⌋ = v` are the
    /// integers of `[⌈v·2^32 / R⌉, ⌈(v+1)·2^32 / R⌉)`). Checked on the ends of the range, on
    /// the values of the words whose low half sits at the threshold (where an off-by-one would
    /// show), and on a spread of values in between.
    #[test]
    fn sampler_accepts_equally_many_words_per_value() {
        let r = u128::from(SAMPLE_RANGE);
        let first_word = |v: u128| ((v << 32).div_ceil(r)) as u64;
        // R is odd, so w ↦ w·R mod 2^32 is a bijection: the word with low half x is x·R⁻¹.
        let mut inv = SAMPLE_RANGE as u32;
        for _ in 0..5 {
            inv = inv.wrapping_mul(2u32.wrapping_sub((SAMPLE_RANGE as u32).wrapping_mul(inv)));
        }
        assert_eq!(inv.wrapping_mul(SAMPLE_RANGE as u32), 1);
        let t = SAMPLE_REJECT_BELOW;
        let edge = [0, 1, t - 2, t - 1, t, t + 1, u32::MAX]
            .map(|x| (u128::from(x.wrapping_mul(inv)) * r) >> 32);
        let spread = (0..20_000u128).map(|i| i * 1_000_003 % r);
        for v in (0..500u128).chain(r - 500..r).chain(edge).chain(spread) {
            let mut hits = 0;
            for w in first_word(v)..first_word(v + 1) {
                let (ok, d) = sample_word((w as u32).to_le());
                let value = d.iter().fold(0u128, |acc, x| acc * 67 + u128::from(x.0));
                assert_eq!(value, v, "word {w} lies in the interval of {v}");
                hits += usize::from(ok);
            }
            assert_eq!(hits, 213, "accepted words for value {v}");
        }
    }

    /// Uniformity on a fixed seed: every value occurs and the chi-square statistic of the
    /// counts (66 degrees of freedom) stays below 110 (p ≈ 0.0005 for a uniform source), over
    /// all elements and over each digit position of a word (a biased digit would show there:
    /// a length that is a multiple of 4 keeps positions aligned). The test can fail: bytes
    /// reduced mod 67 (0..=54 with probability 4/256 each, 55..=66 with 3/256) do.
    #[test]
    fn sampler_counts_pass_a_chi_square_test() {
        let chi2 = |v: &mut dyn Iterator<Item = F67>| -> (f64, [u64; 67]) {
            let mut counts = [0u64; 67];
            for x in v {
                counts[x.value() as usize] += 1;
            }
            let expect = counts.iter().sum::<u64>() as f64 / 67.0;
            (counts.iter().map(|&c| (c as f64 - expect).powi(2) / expect).sum(), counts)
        };
        let mut prg = Prg::new(&Seed::from_bytes([3; 32]), 11, 1);
        let n = 67 * 3000 * 4;
        let mut v = vec![F67::ZERO; n];
        F67::fill_random(&mut prg, &mut v);
        let (all, counts) = chi2(&mut v.iter().copied());
        assert!(counts.iter().all(|&c| c > 0), "every element occurs: {counts:?}");
        assert!(all < 110.0, "chi-square {all} over 66 degrees of freedom: {counts:?}");
        for k in 0..4 {
            let (x, counts) = chi2(&mut v.iter().skip(k).step_by(4).copied());
            assert!(x < 110.0, "digit {k} of a word: chi-square {x}: {counts:?}");
        }
        let mut bytes = vec![0u8; n];
        Prg::new(&Seed::from_bytes([3; 32]), 11, 2).fill_bytes(&mut bytes);
        let (biased, _) = chi2(&mut bytes.iter().map(|&b| F67(b % 67)));
        assert!(biased > 110.0, "a biased source passes: chi-square {biased}");
    }

    #[test]
    fn lazy_dot_matches_the_field_operations() {
        let a: Vec<F67> = (0..1000u64).map(|i| F67::new(i * 7919 + 3)).collect();
        let b: Vec<F67> = (0..1000u64).map(|i| F67::new(i * 104_729 + 1)).collect();
        let slow = a.iter().zip(&b).fold(F67::ZERO, |s, (x, y)| s + *x * *y);
        assert_eq!(F67::dot(&a, &b), slow);
        assert_eq!(F67::dot(&[F67::new(66); 3], &[F67::new(66); 3]), F67::new(3));
    }

    #[test]
    fn wire_bytes_are_the_encoding() {
        let v = [F67::new(0), F67::new(66), F67::new(5)];
        let mut encoded = Vec::new();
        F67::encode(&v, &mut encoded);
        assert_eq!(encoded, [0, 66, 5]);
        let mut scratch = Vec::new();
        assert_eq!(F67::wire_bytes(&v, &mut scratch), &encoded[..]);
    }

    #[test]
    fn out_of_range_bytes_are_reported() {
        assert_eq!(F67::first_invalid(&[0, 66, 12]), None);
        assert_eq!(F67::first_invalid(&[0, 67, 12]), Some(1));
        assert_eq!(F67::first_invalid(&[255]), Some(0));
    }
}
