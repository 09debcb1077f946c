//! Single-use preprocessing material: daBits and truncation pairs.
//!
//! Material is made ahead of time (a setup phase that needs no inputs), held in typed stores and
//! consumed by move: [`DaBits::take`] and [`TruncPairs::take`] split off the front of the store,
//! so a consumed item is no longer anywhere to be reused. Asking for more than a store holds is
//! [`Error::PreprocessingExhausted`], never a silent reuse.

use super::Rep3Vec;
use crate::ring::{Bits, Ring};
use crate::Error;

/// Random bits shared both ways: `bits` (boolean, packed 64 per word) and `arith` (the same
/// bits as ring elements), for bit injection and multiplexing.
#[derive(Debug, Clone)]
pub struct DaBits<R> {
    /// Boolean shares, bit `j` in word `j / 64`.
    pub(crate) bits: Rep3Vec<Bits>,
    /// The same bits in the ring.
    pub(crate) arith: Rep3Vec<R>,
}

impl<R: Ring> DaBits<R> {
    /// Number of random bits held.
    pub fn len(&self) -> usize {
        self.arith.len()
    }

    /// Refuses daBits that are not exactly one per bit of `n`.
    pub(crate) fn fits(&self, n: usize) -> Result<(), Error> {
        if self.len() != n {
            return Err(Error::ApiMisuse(format!("{n} bits but {} daBits", self.len())));
        }
        Ok(())
    }

    /// True when the store is empty.
    pub fn is_empty(&self) -> bool {
        self.arith.is_empty()
    }

    /// Moves the first `n` daBits out of the store. The boolean part is re-packed so the
    /// returned bits start at bit 0 of their first word.
    pub fn take(&mut self, n: usize) -> Result<Self, Error> {
        if n > self.len() {
            return Err(Error::PreprocessingExhausted(format!(
                "{n} daBits requested, {} left",
                self.len()
            )));
        }
        let rest = self.len() - n;
        let (head_a, tail_a) = split_bits(&self.bits.a, n, rest);
        let (head_b, tail_b) = split_bits(&self.bits.b, n, rest);
        let me = self.arith.me;
        let arith_tail = self.arith.slice(n..self.len());
        let arith_head = core::mem::replace(&mut self.arith, arith_tail).slice(0..n);
        self.bits = Rep3Vec::from_parts(me, tail_a, tail_b);
        Ok(Self { bits: Rep3Vec::from_parts(me, head_a, head_b), arith: arith_head })
    }
}

impl<R: Ring> crate::sharing::Store for DaBits<R> {
    fn len(&self) -> usize {
        Self::len(self)
    }
    fn take(&mut self, n: usize) -> Result<Self, Error> {
        Self::take(self, n)
    }
}

/// Splits a packed bit vector after `n` bits into two packed vectors (`n` and `rest` bits).
///
/// The head's unused high bits are cleared: they are the tail's first bits, and an opening of
/// the head (which reveals whole words) must never expose material the tail will still use.
fn split_bits(words: &[Bits], n: usize, rest: usize) -> (Vec<Bits>, Vec<Bits>) {
    let mut head = words[..n.div_ceil(64)].to_vec();
    if n % 64 != 0 {
        if let Some(last) = head.last_mut() {
            last.0 &= (1u64 << (n % 64)) - 1;
        }
    }
    let (q, r) = (n / 64, n % 64);
    let tail = (0..rest.div_ceil(64))
        .map(|i| {
            let lo = words.get(q + i).map_or(0, |w| w.0) >> r;
            let hi = if r == 0 { 0 } else { words.get(q + i + 1).map_or(0, |w| w.0) << (64 - r) };
            Bits(lo | hi)
        })
        .collect();
    (head, tail)
}

/// Truncation pairs `(⟨r⟩, ⟨r >> d⟩)` (arithmetic shift) with `r` uniform in the ring.
#[derive(Debug, Clone)]
pub struct TruncPairs<R> {
    pub(crate) frac_bits: u32,
    pub(crate) r: Rep3Vec<R>,
    pub(crate) r_shifted: Rep3Vec<R>,
}

impl<R: Ring> TruncPairs<R> {
    /// Number of pairs held.
    pub fn len(&self) -> usize {
        self.r.len()
    }

    /// Refuses pairs that are not exactly one per value of `n`.
    pub(crate) fn fits(&self, n: usize) -> Result<(), Error> {
        if self.len() != n {
            return Err(Error::ApiMisuse(format!(
                "{n} values but {} truncation pairs",
                self.len()
            )));
        }
        Ok(())
    }

    /// True when the store is empty.
    pub fn is_empty(&self) -> bool {
        self.r.is_empty()
    }

    /// The shift `d` these pairs truncate by.
    pub fn frac_bits(&self) -> u32 {
        self.frac_bits
    }

    /// Moves the first `n` pairs out of the store.
    pub fn take(&mut self, n: usize) -> Result<Self, Error> {
        if n > self.len() {
            return Err(Error::PreprocessingExhausted(format!(
                "{n} truncation pairs requested, {} left",
                self.len()
            )));
        }
        let len = self.len();
        let (r_tail, s_tail) = (self.r.slice(n..len), self.r_shifted.slice(n..len));
        let r = core::mem::replace(&mut self.r, r_tail).slice(0..n);
        let s = core::mem::replace(&mut self.r_shifted, s_tail).slice(0..n);
        Ok(Self { frac_bits: self.frac_bits, r, r_shifted: s })
    }
}

#[cfg(any(test, feature = "test-utils"))]
impl<R: Ring> DaBits<R> {
    /// The ring half (tests open it to check the bits).
    pub fn arith_for_test(&self) -> Rep3Vec<R> {
        self.arith.clone()
    }

    /// The boolean half, as shared bits.
    pub fn bits_for_test(&self) -> super::SharedBits {
        super::SharedBits { n: self.len(), words: self.bits.clone() }
    }
}

#[cfg(any(test, feature = "test-utils"))]
impl<R: Ring> TruncPairs<R> {
    /// `(⟨r⟩, ⟨r >> d⟩)` (tests open them to check the relation).
    pub fn into_parts_for_test(self) -> (Rep3Vec<R>, Rep3Vec<R>) {
        (self.r, self.r_shifted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_bits_repacks_the_tail() {
        let words = vec![Bits(0xffff_0000_0000_00f0), Bits(0x0000_0000_0000_0003)];
        let (h, t) = split_bits(&words, 4, 62);
        assert_eq!(h, vec![Bits(0)], "the head keeps only its own 4 bits");
        assert_eq!(t, vec![Bits(0x3fff_f000_0000_000f)]);
        let (h, _) = split_bits(&[Bits(0xff)], 3, 5);
        assert_eq!(h, vec![Bits(0x7)]);
        let (_, t) = split_bits(&words, 64, 2);
        assert_eq!(t, vec![Bits(3)]);
    }
}
