//! Ring elements: Z_2^32, Z_2^64, Z_2^128 and packed bit vectors (Z_2)^64, with the
//! ring-generic batch kernels over them, their backends, and the fixed-point codec.
//!
//! Every element type is a `#[repr(transparent)]` newtype over an unsigned machine word with
//! wrapping arithmetic, so a `&[Z64]` has the same layout as a `&[u64]` and batch loops over it
//! compile to plain vector code (x86-64 SSE/AVX, wasm32 `simd128`).
//!
//! [`Bits`] is the boolean ring used for bitsliced binary sharing: 64 independent elements of Z_2
//! per word, with XOR as addition and AND as multiplication. Protocols written against [`Ring`]
//! therefore run unchanged over arithmetic and boolean shares.
//!
//! [`Ring`] is open: a protocol may implement it for a ring of its own (a small prime field,
//! say) and override the hooks that have a faster form there ([`Ring::dot`],
//! [`Ring::first_invalid`]). Protocol-specific kernels live with their protocol; the one place
//! a kernel may use `unsafe` (run-time CPU feature dispatch) is `ring::backend`, shared by all.

pub(crate) mod backend;
pub mod fixed;
pub mod galois;
pub mod kernels;

use core::fmt::Debug;
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use bytemuck::{Pod, Zeroable};

use crate::prg::Prg;

/// A finite commutative ring with a fixed-width little-endian wire encoding.
///
/// Implemented by [`Z64`], [`Z32`], [`Z128`] and [`Bits`]. Arithmetic wraps modulo the ring's
/// size. No element is wider than [`MAX_ELEMENT_BYTES`].
pub trait Ring:
    Copy
    + Default
    + Eq
    + Debug
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
{
    /// Bytes of one element on the wire (at most [`MAX_ELEMENT_BYTES`]).
    const BYTES: usize;
    /// The additive identity.
    const ZERO: Self;
    /// The multiplicative identity (all ones for [`Bits`]).
    const ONE: Self;

    /// Appends `src` to `dst`, little-endian, `BYTES` per element.
    fn encode(src: &[Self], dst: &mut Vec<u8>);
    /// The wire encoding of `src` (as [`Ring::encode`] writes it), borrowed from `src` itself
    /// where the encoding is the in-memory layout (every type here on little-endian targets),
    /// otherwise encoded into `scratch`. Frames are sent from it without an encoding copy.
    fn wire_bytes<'a>(src: &'a [Self], scratch: &'a mut Vec<u8>) -> &'a [u8] {
        scratch.clear();
        Self::encode(src, scratch);
        scratch
    }
    /// Decodes exactly `src.len() / BYTES` elements; the caller checks that the length divides.
    fn decode(src: &[u8], dst: &mut Vec<Self>);
    /// Fills `out` with uniformly random elements drawn from `prg`.
    fn fill_random(prg: &mut Prg, out: &mut [Self]);
    /// The index of the first encoded element in `src` that is not a valid element (for
    /// encodings with unused byte patterns, such as a prime field stored in a byte); received
    /// frames are checked with it before decoding.
    fn first_invalid(_src: &[u8]) -> Option<usize> {
        None
    }
    /// `Σ a[i]·b[i]` over equal-length slices ([`kernels::dot`]); fields with a cheap lazy
    /// reduction override it to reduce once per sum instead of once per operation.
    fn dot(a: &[Self], b: &[Self]) -> Self {
        kernels::dot(a, b)
    }
}

/// The widest element of any [`Ring`] here, in bytes ([`Z128`]): a frame payload limit of at
/// least this many bytes always holds one element.
pub const MAX_ELEMENT_BYTES: usize = 16;

/// An integer ring Z_2^k (k = 32, 64 or 128), interpreted as two's complement where signs
/// matter.
///
/// The conversions go through 64-bit integers: for k = 128 they are exact for values in the
/// range of `i64` (or `u64`), and `to_i64`/`to_u64` otherwise reduce mod 2^64. The protocols
/// that decompose values into bits work on 64-bit words and support k ≤ 64 (the bit-plane
/// transpose rejects a wider ring at build time).
pub trait IntRing: Ring + Ord {
    /// k, the bit width.
    const BITS: u32;
    /// Wraps a signed integer into the ring (reduction mod 2^k; sign-extended when k > 64).
    fn from_i64(v: i64) -> Self;
    /// Reads the element as a signed two's-complement integer (for k > 64: its low 64 bits,
    /// exact for values in the range of `i64`).
    fn to_i64(self) -> i64;
    /// Wraps an unsigned integer into the ring (zero-extended when k > 64).
    fn from_u64(v: u64) -> Self;
    /// The element's low 64 bits (all of them, zero-extended, when k ≤ 64).
    fn to_u64(self) -> u64;
    /// Arithmetic (sign-extending) right shift.
    fn shr_arith(self, d: u32) -> Self;
    /// Logical right shift.
    fn shr_logical(self, d: u32) -> Self;
    /// Left shift (multiplication by 2^d).
    fn shl(self, d: u32) -> Self;
    /// The most significant bit, bit k − 1 (1 for negative values).
    fn msb(self) -> bool {
        self.shr_logical(Self::BITS - 1) != Self::ZERO
    }
}

macro_rules! int_ring {
    ($(#[$doc:meta])* $name:ident, $word:ty, $signed:ty, $bits:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
        #[repr(transparent)]
        pub struct $name(pub $word);

        impl Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0 as $signed)
            }
        }

        impl PartialOrd for $name {
            fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }

        /// Orders elements as signed two's-complement integers.
        impl Ord for $name {
            fn cmp(&self, other: &Self) -> core::cmp::Ordering {
                (self.0 as $signed).cmp(&(other.0 as $signed))
            }
        }

        impl Add for $name {
            type Output = Self;
            #[inline(always)]
            fn add(self, r: Self) -> Self {
                Self(self.0.wrapping_add(r.0))
            }
        }
        impl Sub for $name {
            type Output = Self;
            #[inline(always)]
            fn sub(self, r: Self) -> Self {
                Self(self.0.wrapping_sub(r.0))
            }
        }
        impl Mul for $name {
            type Output = Self;
            #[inline(always)]
            fn mul(self, r: Self) -> Self {
                Self(self.0.wrapping_mul(r.0))
            }
        }
        impl Neg for $name {
            type Output = Self;
            #[inline(always)]
            fn neg(self) -> Self {
                Self(self.0.wrapping_neg())
            }
        }
        impl AddAssign for $name {
            #[inline(always)]
            fn add_assign(&mut self, r: Self) {
                self.0 = self.0.wrapping_add(r.0);
            }
        }
        impl SubAssign for $name {
            #[inline(always)]
            fn sub_assign(&mut self, r: Self) {
                self.0 = self.0.wrapping_sub(r.0);
            }
        }
        impl MulAssign for $name {
            #[inline(always)]
            fn mul_assign(&mut self, r: Self) {
                self.0 = self.0.wrapping_mul(r.0);
            }
        }

        impl Ring for $name {
            const BYTES: usize = core::mem::size_of::<$word>();
            const ZERO: Self = Self(0);
            const ONE: Self = Self(1);

            fn encode(src: &[Self], dst: &mut Vec<u8>) {
                codec::encode(src, dst);
            }

            fn wire_bytes<'a>(src: &'a [Self], scratch: &'a mut Vec<u8>) -> &'a [u8] {
                codec::wire_bytes(src, scratch)
            }

            fn decode(src: &[u8], dst: &mut Vec<Self>) {
                codec::decode(src, dst);
            }

            fn fill_random(prg: &mut Prg, out: &mut [Self]) {
                prg.fill_bytes(bytemuck::cast_slice_mut(out));
            }
        }

        impl IntRing for $name {
            const BITS: u32 = $bits;
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                Self(v as $word)
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self.0 as $signed as i64
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                Self(v as $word)
            }
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self.0 as u64
            }
            #[inline(always)]
            fn shr_arith(self, d: u32) -> Self {
                Self(((self.0 as $signed) >> d) as $word)
            }
            #[inline(always)]
            fn shr_logical(self, d: u32) -> Self {
                Self(self.0 >> d)
            }
            #[inline(always)]
            fn shl(self, d: u32) -> Self {
                Self(self.0 << d)
            }
            #[inline(always)]
            fn msb(self) -> bool {
                (self.0 as $signed) < 0
            }
        }
    };
}

int_ring!(
    /// An element of Z_2^64.
    Z64, u64, i64, 64
);
int_ring!(
    /// An element of Z_2^32.
    Z32, u32, i32, 32
);
int_ring!(
    /// An element of Z_2^128 (16 bytes on the wire, little-endian): room for SPDZ2k's
    /// Z_2^(k+s) with k + s ≤ 128. No protocol here runs over it yet.
    Z128, u128, i128, 128
);

/// 64 packed elements of Z_2: addition is XOR, multiplication is AND, negation is the identity.
///
/// (The operator impls use `^`/`&` on purpose: that *is* the ring structure of Z_2.)
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
#[repr(transparent)]
pub struct Bits(pub u64);

impl Debug for Bits {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Bits({:#018x})", self.0)
    }
}

#[allow(clippy::suspicious_arithmetic_impl, clippy::suspicious_op_assign_impl)]
impl Add for Bits {
    type Output = Self;
    #[inline(always)]
    fn add(self, r: Self) -> Self {
        Self(self.0 ^ r.0)
    }
}
#[allow(clippy::suspicious_arithmetic_impl, clippy::suspicious_op_assign_impl)]
impl Sub for Bits {
    type Output = Self;
    #[inline(always)]
    fn sub(self, r: Self) -> Self {
        Self(self.0 ^ r.0)
    }
}
#[allow(clippy::suspicious_arithmetic_impl, clippy::suspicious_op_assign_impl)]
impl Mul for Bits {
    type Output = Self;
    #[inline(always)]
    fn mul(self, r: Self) -> Self {
        Self(self.0 & r.0)
    }
}
impl Neg for Bits {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        self
    }
}
#[allow(clippy::suspicious_arithmetic_impl, clippy::suspicious_op_assign_impl)]
impl AddAssign for Bits {
    #[inline(always)]
    fn add_assign(&mut self, r: Self) {
        self.0 ^= r.0;
    }
}
#[allow(clippy::suspicious_arithmetic_impl, clippy::suspicious_op_assign_impl)]
impl SubAssign for Bits {
    #[inline(always)]
    fn sub_assign(&mut self, r: Self) {
        self.0 ^= r.0;
    }
}
#[allow(clippy::suspicious_arithmetic_impl, clippy::suspicious_op_assign_impl)]
impl MulAssign for Bits {
    #[inline(always)]
    fn mul_assign(&mut self, r: Self) {
        self.0 &= r.0;
    }
}

impl Ring for Bits {
    const BYTES: usize = 8;
    const ZERO: Self = Self(0);
    const ONE: Self = Self(!0);

    fn encode(src: &[Self], dst: &mut Vec<u8>) {
        codec::encode(src, dst);
    }

    fn wire_bytes<'a>(src: &'a [Self], scratch: &'a mut Vec<u8>) -> &'a [u8] {
        codec::wire_bytes(src, scratch)
    }

    fn decode(src: &[u8], dst: &mut Vec<Self>) {
        codec::decode(src, dst);
    }

    fn fill_random(prg: &mut Prg, out: &mut [Self]) {
        prg.fill_bytes(bytemuck::cast_slice_mut(out));
    }
}

/// Little-endian packing of one-word newtypes. On little-endian targets (x86-64, wasm32,
/// aarch64) this is a memcpy; the big-endian path swaps bytes per word.
mod codec {
    use bytemuck::Pod;

    pub(super) fn encode<T: Pod>(src: &[T], dst: &mut Vec<u8>) {
        let start = dst.len();
        dst.extend_from_slice(bytemuck::cast_slice(src));
        if cfg!(target_endian = "big") {
            swap_words::<T>(&mut dst[start..]);
        }
    }

    /// `src`'s encoding: `src`'s own bytes on little-endian targets, else encoded into `scratch`.
    pub(super) fn wire_bytes<'a, T: Pod>(src: &'a [T], scratch: &'a mut Vec<u8>) -> &'a [u8] {
        if cfg!(target_endian = "little") {
            return bytemuck::cast_slice(src);
        }
        scratch.clear();
        encode(src, scratch);
        scratch
    }

    pub(super) fn decode<T: Pod>(src: &[u8], dst: &mut Vec<T>) {
        // One pass, no zero-fill: each word is read unaligned straight into the vector.
        let w = core::mem::size_of::<T>();
        dst.extend(src.chunks_exact(w).map(|c| {
            let mut v: T = bytemuck::pod_read_unaligned(c);
            if cfg!(target_endian = "big") {
                swap_words::<T>(bytemuck::bytes_of_mut(&mut v));
            }
            v
        }));
    }

    fn swap_words<T>(bytes: &mut [u8]) {
        for c in bytes.chunks_exact_mut(core::mem::size_of::<T>()) {
            c.reverse();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_and_signed_views() {
        assert_eq!(Z64(u64::MAX) + Z64(1), Z64(0));
        assert_eq!(Z32::from_i64(-1), Z32(u32::MAX));
        assert_eq!(Z32(0x8000_0000).to_i64(), i32::MIN as i64);
        assert_eq!(Z64::from_i64(-8).shr_arith(2), Z64::from_i64(-2));
        assert_eq!(Z64::from_i64(-8).shr_logical(62), Z64(3));
        assert!(Z64::from_i64(-1) < Z64(0));
        assert!(Z32::from_i64(i32::MIN as i64).msb());
    }

    #[test]
    fn encode_decode_roundtrip() {
        let v = [Z32(1), Z32(0xdead_beef), Z32(u32::MAX)];
        let mut buf = Vec::new();
        Z32::encode(&v, &mut buf);
        assert_eq!(buf.len(), 12);
        assert_eq!(&buf[4..8], &0xdead_beefu32.to_le_bytes());
        let mut back = Vec::new();
        Z32::decode(&buf, &mut back);
        assert_eq!(back, v);
    }

    #[test]
    fn wire_bytes_are_the_encoding() {
        fn check<R: Ring>(v: &[R]) {
            let mut encoded = Vec::new();
            R::encode(v, &mut encoded);
            let mut scratch = Vec::new();
            assert_eq!(R::wire_bytes(v, &mut scratch), &encoded[..]);
        }
        check(&[Z32(1), Z32(0xdead_beef), Z32(u32::MAX)]);
        check(&[Z64(3), Z64(u64::MAX - 7)]);
        check(&[Z128(5), Z128(u128::MAX - 9), Z128(1 << 127)]);
        check(&[Bits(0x0123_4567_89ab_cdef)]);
        check::<Z64>(&[]);
    }

    /// The integer-ring laws every width shares, on the edges of its range.
    fn int_ring_edges<R: IntRing>() {
        let (zero, one, minus_one) = (R::ZERO, R::ONE, R::from_i64(-1));
        let min = R::ONE.shl(R::BITS - 1);
        let max = min - R::ONE;
        assert_eq!(minus_one + one, zero, "{} bits", R::BITS);
        assert_eq!(zero - one, minus_one);
        assert_eq!(max + one, min, "max wraps to min");
        assert_eq!(min + min, zero);
        assert_eq!(-min, min);
        assert_eq!(minus_one * minus_one, one);
        assert_eq!(min * R::from_i64(2), zero);
        assert!(min < minus_one && minus_one < zero && zero < one && one < max);
        assert!(min.msb() && minus_one.msb() && !max.msb() && !zero.msb());
        assert_eq!(min.shr_arith(R::BITS - 1), minus_one);
        assert_eq!(min.shr_logical(R::BITS - 1), one);
        assert_eq!(minus_one.shr_arith(R::BITS - 1), minus_one);
        assert_eq!(R::from_i64(-8).shr_arith(2), R::from_i64(-2));
        assert_eq!(R::from_i64(-8).shr_logical(R::BITS - 2), R::from_i64(3));
        assert_eq!(R::from_i64(-3).to_i64(), -3);
        assert_eq!(R::from_i64(i32::MIN.into()).to_i64(), i32::MIN.into());
        assert_eq!(R::from_u64(7).to_u64(), 7);
    }

    #[test]
    fn int_rings_wrap_at_their_width() {
        int_ring_edges::<Z32>();
        int_ring_edges::<Z64>();
        int_ring_edges::<Z128>();
    }

    /// Z_2^128 against `u128`/`i128` arithmetic, and the 64-bit views of the wider ring.
    #[test]
    fn z128_is_u128_wrapping_arithmetic() {
        let edges = [0, 1, u128::MAX, 1 << 127, (1 << 127) - 1, 1 << 64, u64::MAX as u128];
        let more = [0x0123_4567_89ab_cdef_fedc_ba98_7654_3210, 3 << 100, (1 << 64) + 5];
        for &a in edges.iter().chain(&more) {
            for &b in edges.iter().chain(&more) {
                assert_eq!(Z128(a) + Z128(b), Z128(a.wrapping_add(b)));
                assert_eq!(Z128(a) - Z128(b), Z128(a.wrapping_sub(b)));
                assert_eq!(Z128(a) * Z128(b), Z128(a.wrapping_mul(b)));
                assert_eq!(Z128(a).cmp(&Z128(b)), (a as i128).cmp(&(b as i128)));
            }
            assert_eq!(-Z128(a), Z128(a.wrapping_neg()));
            for d in [0, 1, 63, 64, 65, 127] {
                assert_eq!(Z128(a).shr_arith(d), Z128(((a as i128) >> d) as u128));
                assert_eq!(Z128(a).shr_logical(d), Z128(a >> d));
                assert_eq!(Z128(a).shl(d), Z128(a << d));
            }
            assert_eq!(Z128(a).msb(), (a as i128) < 0);
        }
        // An arithmetic shift of a negative value carries the sign across the 64-bit halves.
        assert_eq!(Z128((-1i128 << 70) as u128).shr_arith(66), Z128::from_i64(-16));
        // Bit 63 is not the sign of a 128-bit element.
        assert!(!Z128(1 << 63).msb());
        assert_eq!(Z128::from_i64(-1), Z128(u128::MAX));
        assert_eq!(Z128::from_i64(i64::MIN).to_i64(), i64::MIN);
        assert_eq!(Z128::from_u64(u64::MAX), Z128(u64::MAX as u128));
        assert_eq!(Z128((7 << 64) | 5).to_u64(), 5, "the low 64 bits");
        assert_eq!(format!("{:?}", Z128(u128::MAX)), "Z128(-1)");
        assert_eq!(Z128::BYTES, MAX_ELEMENT_BYTES);
    }

    #[test]
    fn z128_encodes_16_bytes_little_endian() {
        let v = [Z128(1), Z128(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210), Z128(u128::MAX)];
        let mut buf = Vec::new();
        Z128::encode(&v, &mut buf);
        assert_eq!(buf.len(), 48);
        assert_eq!(&buf[16..32], &v[1].0.to_le_bytes());
        let mut back = Vec::new();
        Z128::decode(&buf, &mut back);
        assert_eq!(back, v);
        // Unaligned input decodes too (a received frame's payload sits at offset 28).
        let mut shifted = vec![0u8; 3];
        shifted.extend_from_slice(&buf);
        let mut back = Vec::new();
        Z128::decode(&shifted[3..], &mut back);
        assert_eq!(back, v);
    }

    /// Sampling is a function of the stream: the same seed and stream give the same elements,
    /// each the next 16 keystream bytes read little-endian (two Z_2^64 draws, low word first).
    #[test]
    fn z128_sampling_is_deterministic() {
        use crate::prg::Seed;
        let seed = Seed::from_bytes([5; 32]);
        let draw = |stream: u64, n: usize| {
            let mut v = vec![Z128(0); n];
            Z128::fill_random(&mut Prg::new(&seed, stream, 1), &mut v);
            v
        };
        let x = draw(3, 37);
        assert_eq!(x, draw(3, 37));
        assert_ne!(x, draw(4, 37));
        let mut w = vec![Z64(0); 74];
        Z64::fill_random(&mut Prg::new(&seed, 3, 1), &mut w);
        for (i, v) in x.iter().enumerate() {
            assert_eq!(v.0, u128::from(w[2 * i].0) | u128::from(w[2 * i + 1].0) << 64);
        }
        assert!(x.iter().any(|v| v.0 >> 64 != 0) && x.iter().any(|v| v.msb()));
    }

    #[test]
    fn bits_is_a_boolean_ring() {
        let a = Bits(0b1100);
        let b = Bits(0b1010);
        assert_eq!(a + b, Bits(0b0110));
        assert_eq!(a * b, Bits(0b1000));
        assert_eq!(a * Bits::ONE, a);
        assert_eq!(-a, a);
    }
}
