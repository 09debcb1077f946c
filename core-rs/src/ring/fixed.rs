//! Fixed-point encoding of reals into Z_2^k.
//!
//! A real `x` is stored as the integer `round(x · 2^f)` in two's complement mod 2^k, with `f`
//! fractional bits ([`FixedPoint::frac_bits`]).
//!
//! * **Precision**: the step is 2^-f (f = 13: 1.2e-4; f = 16: 1.5e-5). Encoding rounds to nearest,
//!   so the encoding error is at most 2^-(f+1).
//! * **Range**: encodable values satisfy |x · 2^f| < 2^(k-1), i.e. |x| < 2^(k-1-f)
//!   (k = 64, f = 16: |x| < 1.4e14; k = 32, f = 13: |x| < 262144). Anything else, and NaN or
//!   infinities, is an [`Error::OutOfRange`], never a silent wrap. Reals pass through `i64`,
//!   so rings wider than 64 bits have Z_2^64's range: |x| < 2^(63-f).
//! * **Products** carry 2f fractional bits until truncated, so a product is exact only while
//!   |x·y| < 2^(k-1-2f); probabilistic truncation (see `rep3::trunc`) further needs the product
//!   far below 2^(k-1), because it fails with probability |x·y·2^(2f)| / 2^k (the encoded
//!   product's magnitude over the ring size).

use super::IntRing;
use crate::error::Error;

/// A fixed-point format: `frac_bits` fractional bits in a ring of width `R::BITS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedPoint {
    /// Number of fractional bits f.
    pub frac_bits: u32,
}

impl FixedPoint {
    /// The default for Z_2^64: 13 fractional bits (METEOR's d), the format of every served
    /// model ([`crate::nn::DEFAULT_FRAC_BITS`]) and of the SDK's `DEFAULT_FRAC_BITS`.
    pub const DEFAULT_64: Self = Self { frac_bits: 13 };
    /// The default for Z_2^32: 8 fractional bits. Products then need |x·y| ≪ 2^15 to truncate
    /// reliably (see `rep3::trunc`); prefer Z_2^64 for anything but small values.
    pub const DEFAULT_32: Self = Self { frac_bits: 8 };

    /// A format with `frac_bits` fractional bits.
    pub const fn new(frac_bits: u32) -> Self {
        Self { frac_bits }
    }

    /// The largest magnitude encodable in ring `R` (exclusive bound).
    pub fn max_abs<R: IntRing>(self) -> f64 {
        2f64.powi(Self::range_bits::<R>() as i32 - 1 - self.frac_bits as i32)
    }

    /// The bits an encoding may use: `R::BITS`, at most 64 (reals pass through `i64`).
    fn range_bits<R: IntRing>() -> u32 {
        R::BITS.min(64)
    }

    /// Encodes one real.
    ///
    /// ```
    /// use ringfence_core::ring::{fixed::FixedPoint, Z64};
    /// let fp = FixedPoint::new(16);
    /// let x: Z64 = fp.encode(-1.5).unwrap();
    /// assert_eq!(fp.decode(x), -1.5);
    /// assert!(fp.encode::<Z64>(f64::NAN).is_err());
    /// ```
    pub fn encode<R: IntRing>(self, x: f64) -> Result<R, Error> {
        let bits = Self::range_bits::<R>();
        if self.frac_bits >= bits {
            return Err(Error::ApiMisuse(format!(
                "{} fractional bits do not fit a {bits}-bit ring",
                self.frac_bits
            )));
        }
        let scaled = (x * 2f64.powi(self.frac_bits as i32)).round();
        let bound = 2f64.powi(bits as i32 - 1);
        if !scaled.is_finite() || scaled >= bound || scaled < -bound {
            return Err(Error::OutOfRange(format!(
                "{x} does not fit {bits} bits with {} fractional bits (|x| < {})",
                self.frac_bits,
                self.max_abs::<R>()
            )));
        }
        Ok(R::from_i64(scaled as i64))
    }

    /// Encodes a slice of reals.
    pub fn encode_slice<R: IntRing>(self, xs: &[f64]) -> Result<Vec<R>, Error> {
        xs.iter().map(|&x| self.encode(x)).collect()
    }

    /// Decodes one ring element as a real.
    pub fn decode<R: IntRing>(self, v: R) -> f64 {
        v.to_i64() as f64 / 2f64.powi(self.frac_bits as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::{Z128, Z32, Z64};

    #[test]
    fn roundtrip_and_edges() {
        let fp = FixedPoint::new(13);
        for x in [0.0, 1.0, -1.0, 0.5, -3.25, 1234.125, 1e-4] {
            let e: Z64 = fp.encode(x).unwrap();
            assert!((fp.decode(e) - x).abs() <= 2f64.powi(-14), "{x}");
        }
        let max = fp.max_abs::<Z32>();
        assert!(fp.encode::<Z32>(max).is_err());
        assert!(fp.encode::<Z32>(-max).is_ok());
        assert!(fp.encode::<Z32>(max - 1.0).is_ok());
        assert!(fp.encode::<Z64>(f64::INFINITY).is_err());
        assert!(FixedPoint::new(64).encode::<Z64>(1.0).is_err());
    }

    /// Z_2^128 encodes reals as Z_2^64 does (sign-extended), and rejects what an `i64`
    /// cannot hold instead of saturating.
    #[test]
    fn wider_rings_have_the_64_bit_range() {
        let fp = FixedPoint::new(16);
        assert_eq!(fp.max_abs::<Z128>(), fp.max_abs::<Z64>());
        for x in [0.0, -1.5, 3.25, -(2f64.powi(46)), 2f64.powi(47) - 1.0] {
            let e: Z128 = fp.encode(x).unwrap();
            assert_eq!(e.0 as i128, fp.encode::<Z64>(x).unwrap().0 as i64 as i128, "{x}");
            assert_eq!(fp.decode(e), x);
        }
        assert!(fp.encode::<Z128>(2f64.powi(47)).is_err());
        assert!(fp.encode::<Z128>(-(2f64.powi(47))).is_ok());
        assert!(fp.encode::<Z128>(1e30).is_err());
        assert!(FixedPoint::new(64).encode::<Z128>(0.0).is_err());
    }
}
