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
        self + (-r)
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

    fn decode(src: &[u8], dst: &mut Vec<Self>) {
        // Callers check `first_invalid` first; reducing here keeps the type's invariant even
        // if one does not.
        dst.extend(src.iter().map(|&b| Self::new(b as u64)));
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
        src.iter().position(|&b| b >= Self::Q)
    }

    /// Rejection sampling: bytes below 201 = 3·67 map uniformly, the rest are redrawn, so two
    /// parties drawing from the same stream get the same elements.
    fn fill_random(prg: &mut Prg, out: &mut [Self]) {
        // Byte → element, or REJECT for the 55 bytes ≥ 201 (a table: no division per byte).
        const REJECT: u8 = 0xff;
        const MAP: [u8; 256] = {
            let mut t = [REJECT; 256];
            let mut b = 0;
            while b < 3 * F67::Q as usize {
                t[b] = (b % F67::Q as usize) as u8;
                b += 1;
            }
            t
        };
        let mut buf = [0u8; 1024];
        let mut filled = 0;
        while filled < out.len() {
            // 256 bytes yield ~201 elements; ask only for what is likely needed.
            let want = ((out.len() - filled) * 256).div_ceil(200).min(buf.len());
            prg.fill_bytes(&mut buf[..want]);
            for &b in &buf[..want] {
                let v = MAP[b as usize];
                if v != REJECT {
                    out[filled] = Self(v);
                    filled += 1;
                    if filled == out.len() {
                        return;
                    }
                }
            }
        }
    }
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

    #[test]
    fn lazy_dot_matches_the_field_operations() {
        let a: Vec<F67> = (0..1000u64).map(|i| F67::new(i * 7919 + 3)).collect();
        let b: Vec<F67> = (0..1000u64).map(|i| F67::new(i * 104_729 + 1)).collect();
        let slow = a.iter().zip(&b).fold(F67::ZERO, |s, (x, y)| s + *x * *y);
        assert_eq!(F67::dot(&a, &b), slow);
        assert_eq!(F67::dot(&[F67::new(66); 3], &[F67::new(66); 3]), F67::new(3));
    }

    #[test]
    fn out_of_range_bytes_are_reported() {
        assert_eq!(F67::first_invalid(&[0, 66, 12]), None);
        assert_eq!(F67::first_invalid(&[0, 67, 12]), Some(1));
        assert_eq!(F67::first_invalid(&[255]), Some(0));
    }
}
