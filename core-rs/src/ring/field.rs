//! The prime field F_67, used by METEOR's private compare (the smallest prime above ℓ + 1 = 65,
//! so a sum of at most 65 bits is zero mod q only when it is zero as an integer).
//!
//! Elements are canonical bytes in `0..67`; one byte each on the wire (as in the paper's cost
//! model: 64 + 21 + 1 + 1 bytes per MSB extraction). A received byte ≥ 67 is a protocol error
//! reported by [`Ring::first_invalid`], never reduced silently.

use core::fmt::Debug;
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use bytemuck::{Pod, Zeroable};

use super::Ring;
use crate::prg::Prg;

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

    /// N = 2 (the MSB's product with ζ) and N = 4 (its product tree) run lazily reduced
    /// kernels ([`subset_sum2`], [`subset_sum4`]); other N the generic one.
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
            _ => super::kernels::subset_sum(m, terms, sub, public, out),
        }
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
    /// Words are drawn in blocks of what is still needed (at most [`SAMPLE_WORDS`]); a block
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

/// [`super::kernels::subset_sum`] for N = 2 in F_67 with one reduction per element:
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
    let v = |x: F67| u16::from(x.0);
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

/// [`super::kernels::subset_sum`] for N = 4 in F_67, lazily reduced in 16-bit lanes.
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
    #[cfg(target_arch = "x86_64")]
    if super::kernels::x86::has_avx2() {
        return super::kernels::x86::subset_sum4(m, terms, sub, public, out);
    }
    subset_sum4_portable(m, terms, sub, public, out);
}

/// The body of [`subset_sum4`] (also compiled with AVX2 by the x86-64 backend).
#[inline(always)]
pub(crate) fn subset_sum4_portable(
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
        let v = |x: F67| u16::from(x.0);
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
            out[c][e] = F67(((acc + q - v(sub[c][e])) % q) as u8);
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
    #[cfg(target_arch = "x86_64")]
    if super::kernels::x86::has_avx2() {
        return super::kernels::x86::sample_block(words, digits);
    }
    sample_block_portable(words, digits)
}

/// The body of [`sample_block`] (also compiled with AVX2 by the x86-64 backend).
#[inline(always)]
pub(crate) fn sample_block_portable(words: &[u32], digits: &mut [[F67; 4]]) -> bool {
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

    /// Runs the N-factor kernel of [`F67::subset_sum`] and the generic one on `len` random
    /// values, then on all-66 values (the largest lazy sums), with the public term in either
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
                    v.iter_mut().for_each(|x| *x = F67(66));
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
                crate::ring::kernels::subset_sum(
                    &mr,
                    [&ta, &tb],
                    [&sub[0], &sub[1]],
                    public,
                    [sa, sb],
                );
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

    #[test]
    fn out_of_range_bytes_are_reported() {
        assert_eq!(F67::first_invalid(&[0, 66, 12]), None);
        assert_eq!(F67::first_invalid(&[0, 67, 12]), Some(1));
        assert_eq!(F67::first_invalid(&[255]), Some(0));
    }
}
