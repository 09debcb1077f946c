//! The machine words the checks and the preprocessing compute in: an instance of `v` value
//! bits and `s` MAC bits needs `v + s` bits, which `u128` holds up to k = s = 32's instances
//! and [`U256`] for k = s = 64's (its random bits are sacrificed in 66 + 2·64 bits); its
//! triples, sacrificed in 64 + 2·64 = 192 bits, run in [`U192`]. Arithmetic wraps modulo 2^BITS; [`Word::reduce`] takes it to
//! an instance's width, which commutes with every ring operation used.

use crate::prg::Prg;
use crate::ring::Z64;

/// A wrapping unsigned word of `BITS` bits.
pub trait Word:
    Copy + Default + Eq + core::fmt::Debug + bytemuck::Pod + Send + Sync + 'static
{
    /// Its width.
    const BITS: u32;
    /// 64-bit words on the wire.
    const WORDS: usize;
    /// Zero.
    const ZERO: Self;
    /// `a + b`.
    fn wrapping_add(self, o: Self) -> Self;
    /// `a − b`.
    fn wrapping_sub(self, o: Self) -> Self;
    /// `a·b`.
    fn wrapping_mul(self, o: Self) -> Self;
    /// `a·2^n` (zero for `n ≥ BITS`).
    fn shl(self, n: u32) -> Self;
    /// `⌊a / 2^n⌋`.
    fn shr(self, n: u32) -> Self;
    /// `a mod 2^bits`.
    fn reduce(self, bits: u32) -> Self;
    /// A `u128`, zero-extended.
    fn from_u128(x: u128) -> Self;
    /// The low 128 bits.
    fn low_u128(self) -> u128;
    /// Appends the word as little-endian 64-bit words.
    fn push_words(self, out: &mut Vec<Z64>);
    /// The word from `WORDS` little-endian 64-bit words.
    fn from_words(w: &[Z64]) -> Self;

    /// The word where `bit` is set, zero otherwise (branch-free).
    fn and_mask(self, bit: bool) -> Self;

    /// Bit `i`.
    fn bit(self, i: u32) -> bool {
        self.shr(i).low_u128() & 1 == 1
    }
    /// `p` zero-extended (or truncated) to this word's width.
    fn widen<P: Word>(p: P) -> Self {
        let mut w = Vec::with_capacity(P::WORDS.max(Self::WORDS));
        p.push_words(&mut w);
        w.resize(Self::WORDS, Z64(0));
        Self::from_words(&w)
    }
    /// `n` uniformly random words reduced to `bits` bits.
    fn random(prg: &mut Prg, n: usize, bits: u32) -> Vec<Self> {
        let mut v = vec![Self::ZERO; n];
        prg.fill_bytes(bytemuck::cast_slice_mut(&mut v));
        v.iter_mut().for_each(|x| *x = x.reduce(bits));
        v
    }
}

impl Word for u128 {
    const BITS: u32 = 128;
    const WORDS: usize = 2;
    const ZERO: Self = 0;
    fn wrapping_add(self, o: Self) -> Self {
        Self::wrapping_add(self, o)
    }
    fn wrapping_sub(self, o: Self) -> Self {
        Self::wrapping_sub(self, o)
    }
    fn wrapping_mul(self, o: Self) -> Self {
        Self::wrapping_mul(self, o)
    }
    fn shl(self, n: u32) -> Self {
        self.checked_shl(n).unwrap_or(0)
    }
    fn shr(self, n: u32) -> Self {
        self.checked_shr(n).unwrap_or(0)
    }
    fn reduce(self, bits: u32) -> Self {
        super::check::reduce(self, bits)
    }
    fn from_u128(x: u128) -> Self {
        x
    }
    fn low_u128(self) -> u128 {
        self
    }
    fn push_words(self, out: &mut Vec<Z64>) {
        out.extend([Z64(self as u64), Z64((self >> 64) as u64)]);
    }
    fn and_mask(self, bit: bool) -> Self {
        self & 0u128.wrapping_sub(Self::from(bit))
    }
    fn from_words(w: &[Z64]) -> Self {
        Self::from(w[0].0) | Self::from(w[1].0) << 64
    }
}

/// A word of `$n` little-endian 64-bit limbs, `Word` for Z_2^(64·$n).
macro_rules! limbs {
    ($(#[$doc:meta])* $name:ident, $n:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Default, PartialEq, Eq, Debug, bytemuck::Pod, bytemuck::Zeroable)]
        #[repr(transparent)]
        pub struct $name(pub [u64; $n]);

        // Limb loops index several arrays at once.
        #[allow(clippy::needless_range_loop)]
        impl Word for $name {
            const BITS: u32 = 64 * $n;
            const WORDS: usize = $n;
            const ZERO: Self = Self([0; $n]);
            fn wrapping_add(self, o: Self) -> Self {
                let mut r = [0u64; $n];
                let mut carry = false;
                for i in 0..$n {
                    let (s, c1) = self.0[i].overflowing_add(o.0[i]);
                    let (s, c2) = s.overflowing_add(u64::from(carry));
                    r[i] = s;
                    carry = c1 || c2;
                }
                Self(r)
            }
            fn wrapping_sub(self, o: Self) -> Self {
                let mut r = [0u64; $n];
                let mut borrow = false;
                for i in 0..$n {
                    let (d, b1) = self.0[i].overflowing_sub(o.0[i]);
                    let (d, b2) = d.overflowing_sub(u64::from(borrow));
                    r[i] = d;
                    borrow = b1 || b2;
                }
                Self(r)
            }
            fn wrapping_mul(self, o: Self) -> Self {
                let mut r = [0u64; $n];
                for i in 0..$n {
                    let mut carry = 0u128;
                    for j in 0..$n - i {
                        let t = u128::from(self.0[i]) * u128::from(o.0[j])
                            + u128::from(r[i + j])
                            + carry;
                        r[i + j] = t as u64;
                        carry = t >> 64;
                    }
                }
                Self(r)
            }
            fn shl(self, n: u32) -> Self {
                if n >= Self::BITS {
                    return Self::ZERO;
                }
                let (limbs, bits) = ((n / 64) as usize, n % 64);
                let mut r = [0u64; $n];
                for i in (limbs..$n).rev() {
                    r[i] = self.0[i - limbs] << bits;
                    if bits > 0 && i > limbs {
                        r[i] |= self.0[i - limbs - 1] >> (64 - bits);
                    }
                }
                Self(r)
            }
            fn shr(self, n: u32) -> Self {
                if n >= Self::BITS {
                    return Self::ZERO;
                }
                let (limbs, bits) = ((n / 64) as usize, n % 64);
                let mut r = [0u64; $n];
                for i in 0..$n - limbs {
                    r[i] = self.0[i + limbs] >> bits;
                    if bits > 0 && i + limbs + 1 < $n {
                        r[i] |= self.0[i + limbs + 1] << (64 - bits);
                    }
                }
                Self(r)
            }
            fn reduce(self, bits: u32) -> Self {
                if bits >= Self::BITS {
                    return self;
                }
                let mut r = self.0;
                for (i, limb) in r.iter_mut().enumerate() {
                    let lo = 64 * i as u32;
                    if bits <= lo {
                        *limb = 0;
                    } else if bits < lo + 64 {
                        *limb &= (1u64 << (bits - lo)) - 1;
                    }
                }
                Self(r)
            }
            fn from_u128(x: u128) -> Self {
                let mut r = [0u64; $n];
                r[0] = x as u64;
                r[1] = (x >> 64) as u64;
                Self(r)
            }
            fn low_u128(self) -> u128 {
                u128::from(self.0[0]) | u128::from(self.0[1]) << 64
            }
            fn push_words(self, out: &mut Vec<Z64>) {
                out.extend(self.0.map(Z64));
            }
            fn and_mask(self, bit: bool) -> Self {
                let m = 0u64.wrapping_sub(u64::from(bit));
                Self(self.0.map(|l| l & m))
            }
            fn from_words(w: &[Z64]) -> Self {
                Self(core::array::from_fn(|i| w[i].0))
            }
        }
    };
}

limbs!(
    /// An element of Z_2^256: k = s = 64's random bits (66 + 2·64 bits in their sacrifice).
    U256,
    4
);
limbs!(
    /// An element of Z_2^192: k = s = 64's triples, authenticated and sacrificed in
    /// 64 + 2·64 bits (a quarter fewer limbs than [`U256`] for every operation there).
    U192,
    3
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prg::Seed;

    /// The limb words against u128 arithmetic on values whose results fit 128 bits, against
    /// each other where their widths overlap, and against the identities of the ring on
    /// full-width values.
    #[test]
    fn limb_words_are_the_rings_z_2_192_and_z_2_256() {
        fn check<W: Word>(prg: &mut Prg) {
            for _ in 0..500 {
                let (a, b) = (u128::from(prg.next_u64()), u128::from(prg.next_u64()));
                let (x, y) = (W::from_u128(a), W::from_u128(b));
                assert_eq!(x.wrapping_mul(y).low_u128(), a * b);
                assert_eq!(x.wrapping_add(y).low_u128(), a + b);
                let w = W::random(prg, 3, W::BITS);
                let (p, q, r) = (w[0], w[1], w[2]);
                assert_eq!(p.wrapping_add(q).wrapping_sub(q), p);
                assert_eq!(
                    p.wrapping_mul(q.wrapping_add(r)),
                    p.wrapping_mul(q).wrapping_add(p.wrapping_mul(r))
                );
                let n = prg.next_u32() % W::BITS;
                assert_eq!(p.shl(n).shr(n), p.reduce(W::BITS - n), "shift by {n}");
                assert_eq!(p.shl(n), p.wrapping_mul(W::from_u128(1).shl(n)), "shift by {n}");
                assert_eq!(p.reduce(n).wrapping_add(p.shr(n).shl(n)), p, "split at {n}");
                let mut out = Vec::new();
                p.push_words(&mut out);
                assert_eq!(W::from_words(&out), p);
                // Z_2^192 is Z_2^256 reduced.
                let (u, v) = (U256::widen(p), U256::widen(q));
                let ops = [
                    (p.wrapping_mul(q), u.wrapping_mul(v)),
                    (p.wrapping_sub(q), u.wrapping_sub(v)),
                    (p.shl(n), u.shl(n)),
                ];
                for (narrow, wide) in ops {
                    assert_eq!(U256::widen(narrow), wide.reduce(W::BITS));
                }
            }
        }
        let mut prg = Prg::new(&Seed::from_bytes([2; 32]), 0, 0);
        check::<U192>(&mut prg);
        check::<U256>(&mut prg);
    }
}
