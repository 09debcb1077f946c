//! Ring elements: Z_2^32, Z_2^64 and packed bit vectors (Z_2)^64, with the ring-generic batch
//! kernels over them, their backends, and the fixed-point codec.
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
pub mod kernels;

use core::fmt::Debug;
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use bytemuck::{Pod, Zeroable};

use crate::prg::Prg;

/// A finite commutative ring with a fixed-width little-endian wire encoding.
///
/// Implemented by [`Z64`], [`Z32`] and [`Bits`]. Arithmetic wraps modulo the ring's size.
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
    /// Bytes of one element on the wire.
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

/// An integer ring Z_2^k (k = 32 or 64), interpreted as two's complement where signs matter.
pub trait IntRing: Ring + Ord {
    /// k, the bit width.
    const BITS: u32;
    /// Wraps a signed integer into the ring (reduction mod 2^k).
    fn from_i64(v: i64) -> Self;
    /// Reads the element as a signed two's-complement integer.
    fn to_i64(self) -> i64;
    /// Wraps an unsigned integer into the ring.
    fn from_u64(v: u64) -> Self;
    /// The element's bits, zero-extended to 64.
    fn to_u64(self) -> u64;
    /// Arithmetic (sign-extending) right shift.
    fn shr_arith(self, d: u32) -> Self;
    /// Logical right shift.
    fn shr_logical(self, d: u32) -> Self;
    /// Left shift (multiplication by 2^d).
    fn shl(self, d: u32) -> Self;
    /// The most significant bit (1 for negative values).
    fn msb(self) -> bool {
        self.to_i64() < 0
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
        check(&[Bits(0x0123_4567_89ab_cdef)]);
        check::<Z64>(&[]);
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
