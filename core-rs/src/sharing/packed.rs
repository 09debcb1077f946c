//! Shared bits packed 64 per word, for any scheme whose share vector of words is a few
//! components per party (rep3's two replicated shares, bin3's two masked ones, rss's
//! `C(n−1, t)`): [`Packed`].

use core::ops::Range;

use super::Bitwise;
use crate::ring::Bits;
use crate::Error;

/// A scheme's share vector of [`Bits`] words, as components of equal length per party: what
/// [`Packed`] needs to move bits between words without knowing the scheme.
pub trait WordShares: Clone {
    /// Who holds the shares (carried over to every vector made from them).
    type Holder: Copy + Default;
    /// The holder.
    fn holder(&self) -> Self::Holder;
    /// This party's components.
    fn components(&self) -> Vec<&[Bits]>;
    /// Shares of `holder` with the given components (as many as [`WordShares::components`]
    /// gives).
    fn from_components(holder: Self::Holder, components: Vec<Vec<Bits>>) -> Self;
    /// `x ⊕ y` wordwise (local).
    fn xor_words(&self, o: &Self) -> Result<Self, Error>;
    /// `¬x` wordwise (local; the scheme adds the public all-ones word).
    fn not_words(&self) -> Self;
}

/// `n` shared bits packed 64 per word in a scheme's share vector `V`. Bits beyond `n` in the
/// last word are padding: nothing reads them, and slicing and concatenation clear them.
#[derive(Clone, Debug)]
pub struct Packed<V> {
    pub(crate) n: usize,
    pub(crate) words: V,
}

impl<V: WordShares> Packed<V> {
    /// Number of bits.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// `¬b` (local).
    pub fn not(&self) -> Self {
        Self { n: self.n, words: self.words.not_words() }
    }

    /// `a ⊕ b` (local).
    pub fn xor(&self, o: &Self) -> Result<Self, Error> {
        super::same_len(self.n, o.n, "xor")?;
        Ok(Self { n: self.n, words: self.words.xor_words(&o.words)? })
    }

    /// The `n` low bits of packed words (padding beyond `n` cleared).
    pub(crate) fn from_words(n: usize, words: &V) -> Self {
        Self::concat(&[&Self { n, words: words.clone() }])
    }

    /// Bits `range` as a new packed vector starting at bit 0.
    pub fn slice(&self, range: Range<usize>) -> Self {
        let n = range.len();
        let w = n.div_ceil(64);
        let comps = self
            .words
            .components()
            .into_iter()
            .map(|src| {
                let mut dst = vec![Bits(0); w];
                copy_bits(&mut dst, 0, src, range.start, n);
                dst
            })
            .collect();
        Self { n, words: V::from_components(self.words.holder(), comps) }
    }

    /// The bits of `parts` one after another, packed.
    pub fn concat(parts: &[&Self]) -> Self {
        let n: usize = parts.iter().map(|p| p.n).sum();
        let holder = parts.first().map_or_else(V::Holder::default, |p| p.words.holder());
        let count = parts.first().map_or(0, |p| p.words.components().len());
        let w = n.div_ceil(64);
        let mut comps = vec![vec![Bits(0); w]; count];
        let mut at = 0;
        for p in parts {
            for (dst, src) in comps.iter_mut().zip(p.words.components()) {
                copy_bits(dst, at, src, 0, p.n);
            }
            at += p.n;
        }
        Self { n, words: V::from_components(holder, comps) }
    }
}

impl<V: WordShares> Bitwise for Packed<V> {
    fn len(&self) -> usize {
        self.n
    }
    fn xor(&self, o: &Self) -> Result<Self, Error> {
        Self::xor(self, o)
    }
    fn not(&self) -> Self {
        Self::not(self)
    }
    fn slice(&self, range: Range<usize>) -> Self {
        Self::slice(self, range)
    }
    fn concat(parts: &[&Self]) -> Self {
        Self::concat(parts)
    }
}

/// Copies `n` bits from `src` starting at bit `from` into the zeroed `dst` at bit `to`, up to
/// one destination word at a time.
fn copy_bits(dst: &mut [Bits], to: usize, src: &[Bits], from: usize, n: usize) {
    // Word-aligned whole words (vectors of a multiple of 64 bits laid end to end, the common
    // case in circuits over many instances) are a plain copy.
    let mut i = 0;
    if from % 64 == 0 && to % 64 == 0 {
        let words = n / 64;
        dst[to / 64..to / 64 + words].copy_from_slice(&src[from / 64..from / 64 + words]);
        i = words * 64;
    }
    while i < n {
        let (s, d) = (from + i, to + i);
        let take = (64 - d % 64).min(n - i);
        let lo = src[s / 64].0 >> (s % 64);
        let hi = match src.get(s / 64 + 1) {
            Some(w) if s % 64 != 0 => w.0 << (64 - s % 64),
            _ => 0,
        };
        let bits = if take == 64 { lo | hi } else { (lo | hi) & ((1u64 << take) - 1) };
        dst[d / 64].0 |= bits << (d % 64);
        i += take;
    }
}

/// `bits` packed 64 per word, bit `j` at word `j / 64`, position `j % 64`.
pub fn pack_bits(bits: &[bool]) -> Vec<Bits> {
    let mut w = vec![Bits(0); bits.len().div_ceil(64)];
    for (j, &b) in bits.iter().enumerate() {
        w[j / 64].0 |= u64::from(b) << (j % 64);
    }
    w
}

/// The first `n` bits of packed words.
pub fn unpack_bools(words: &[Bits], n: usize) -> Vec<bool> {
    (0..n).map(|j| (words[j / 64].0 >> (j % 64)) & 1 == 1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_bits_matches_a_bit_by_bit_copy() {
        let src: Vec<Bits> = crate::testing::random_words(1, 5).into_iter().map(Bits).collect();
        for from in [0usize, 1, 63, 64, 65, 100] {
            for to in [0usize, 3, 64, 127] {
                for n in [0usize, 1, 5, 63, 64, 65, 200] {
                    if from + n > 64 * src.len() {
                        continue;
                    }
                    let mut fast = vec![Bits(0); (to + n).div_ceil(64) + 1];
                    let mut slow = fast.clone();
                    copy_bits(&mut fast, to, &src, from, n);
                    for i in 0..n {
                        let (s, d) = (from + i, to + i);
                        slow[d / 64].0 |= ((src[s / 64].0 >> (s % 64)) & 1) << (d % 64);
                    }
                    assert_eq!(fast, slow, "from {from}, to {to}, n {n}");
                }
            }
        }
    }

    #[test]
    fn packing_round_trips() {
        let bits: Vec<bool> = (0..130).map(|i| i % 5 == 0 || i == 129).collect();
        assert_eq!(unpack_bools(&pack_bits(&bits), bits.len()), bits);
    }
}
