//! Shared bits of spdz2k ([`AuthBits`]: the binary instance, SPDZ2k with k = 1 under the same
//! key as an arithmetic instance), [`Gates`] and [`Boolean`]: the paper's section 2.
//!
//! * **Bits**: value and MAC shares mod 2^(1+s); XOR is addition, NOT `1 − x`, both local. An
//!   arithmetic sharing's low bit *is* a binary sharing under the same key (A2B of the least
//!   significant bit is free), and `2^(k−1)·[u]_2` is an arithmetic sharing of `2^(k−1)·u`
//!   (the lift).
//! * **AND**: Beaver with a bit triple; the openings send one bit per value to each party.
//!   Bit triples come from preprocessing: the dealer's in tests, and in the parties' own
//!   generation TinyOT's, converted into this instance by the paper's Fig. 2
//!   (`Generator::bit_triples` in [`super::offline`]).
//! * **Masks**: the paper masks with `k` random arithmetic bits (Π_RandBit); here an edaBit
//!   does it — a random `[r]` with its bits in the binary instance ([`super::offline`]'s
//!   edaBits, about a tenth of the preprocessing) — and `r mod 2^(k−1)` is `r` less the lift
//!   of its top bit. The online phase is the paper's.
//! * **MSB** (the paper's Fig. 6): an edaBit `r` and a random bit `b` of the binary instance,
//!   `c = a + r` opened, the carry circuit `u = [c mod 2^(k−1) < r mod 2^(k−1)]` (`2k − 4`
//!   ANDs, `⌈log₂(k−1)⌉` rounds), and `e = a − a' + 2^(k−1)·b` (`b` lifted) opened: `6k − 8`
//!   bits per party, `⌈log₂(k−1)⌉ + 2` rounds.
//! * **Equality** (Fig. 7): `c = a + r` opened, an AND tree over the bits where `c` and `r`
//!   agree: `3k − 2` bits per party, `⌈log₂ k⌉ + 1` rounds.
//! * **Bit decomposition** (Fig. 11): `c = a − r` opened and a log-depth prefix adder of `c` and
//!   `r`'s bits. **B2A** (Fig. 4): `b ⊕ r` opened for a random bit `r`. **Bit products**: B2A,
//!   then Beaver products with triples drawn when they are computed.
//!
//! Bits under the key of s = 64 serve boolean circuits ([`Gates`] alone); those made from ring
//! elements carry that ring's key, and operands under different keys are refused.

use core::ops::Range;

use super::check::{open_logged, reduce};
use super::prep::{EdaBits, RandBits, Triples};
use super::{Auth, Spdz2k, Spdz2kRing};
use crate::net::{PartyId, Transport};
use crate::ring::{Z32, Z64};
use crate::sharing::{check_input_values, Bitwise, Boolean, Gates, Linear, Store};
use crate::Error;

/// A vector of shared bits under the key of `s` MAC bits: value and MAC shares mod 2^(1+s)
/// (kept as `u128`), with what NOT needs locally (the party's key share, whether it is the
/// party that adds constants).
#[derive(Clone, PartialEq, Eq)]
pub struct AuthBits {
    s: u32,
    first: bool,
    alpha: u128,
    x: Vec<u128>,
    m: Vec<u128>,
}

impl core::fmt::Debug for AuthBits {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "AuthBits({} bits, s = {})", self.x.len(), self.s)
    }
}

impl AuthBits {
    fn w(&self) -> u32 {
        self.s + 1
    }

    fn same_key(&self, o: &Self, what: &str) -> Result<(), Error> {
        crate::sharing::same_len(self.x.len(), o.x.len(), what)?;
        if self.s != o.s {
            return Err(Error::ApiMisuse(format!(
                "{what}: bits under the keys of s = {} and s = {}",
                self.s, o.s
            )));
        }
        Ok(())
    }

    fn map2(&self, o: &Self, f: impl Fn(u128, u128) -> u128) -> Self {
        let w = self.w();
        Self {
            x: self.x.iter().zip(&o.x).map(|(&a, &b)| reduce(f(a, b), w)).collect(),
            m: self.m.iter().zip(&o.m).map(|(&a, &b)| reduce(f(a, b), w)).collect(),
            ..self.clone()
        }
    }

    /// `x ⊕ c` for public bits `c`: `x + c − 2c·x`.
    fn xor_public(&self, c: &[bool]) -> Self {
        let w = self.w();
        let mut out = self.clone();
        for (i, &c) in c.iter().enumerate() {
            if c {
                out.x[i] = reduce(u128::from(self.first).wrapping_sub(self.x[i]), w);
                out.m[i] = reduce(self.alpha.wrapping_sub(self.m[i]), w);
            }
        }
        out
    }

    /// `c·x` for public bits `c` (AND with a public bit).
    fn and_public(&self, c: &[bool]) -> Self {
        let mut out = self.clone();
        for (i, &c) in c.iter().enumerate() {
            if !c {
                out.x[i] = 0;
                out.m[i] = 0;
            }
        }
        out
    }

    /// The arithmetic sharing of `2^(k−1)·u` (the lift).
    fn lift<R: Spdz2kRing>(&self) -> Auth<R> {
        let top = |v: &[u128]| v.iter().map(|&v| R::wide_from_u128(v << (R::BITS - 1))).collect();
        Auth { x: top(&self.x), m: top(&self.m) }
    }
}

impl Bitwise for AuthBits {
    fn len(&self) -> usize {
        self.x.len()
    }
    fn xor(&self, o: &Self) -> Result<Self, Error> {
        self.same_key(o, "xor")?;
        Ok(self.map2(o, u128::wrapping_add))
    }
    fn not(&self) -> Self {
        self.xor_public(&vec![true; self.x.len()])
    }
    fn slice(&self, range: Range<usize>) -> Self {
        Self { x: self.x[range.clone()].to_vec(), m: self.m[range].to_vec(), ..self.clone() }
    }
    fn concat(parts: &[&Self]) -> Self {
        let Some(first) = parts.first() else {
            return Self { s: 64, first: false, alpha: 0, x: Vec::new(), m: Vec::new() };
        };
        Self {
            x: parts.iter().flat_map(|p| p.x.iter().copied()).collect(),
            m: parts.iter().flat_map(|p| p.m.iter().copied()).collect(),
            ..(*first).clone()
        }
    }
}

/// Random bits of `n` values laid out plane by plane: bit `i` of every value at
/// `[i·n, (i + 1)·n)`.
pub(crate) struct Planes<R: Spdz2kRing> {
    pub(crate) bits: Auth<R>,
    pub(crate) n: usize,
}

impl<R: Spdz2kRing> Planes<R> {
    /// Bit `i` of every value.
    pub(crate) fn bit(&self, i: usize) -> Auth<R> {
        self.bits.slice(i * self.n..(i + 1) * self.n)
    }

    /// `Σ_{i ∈ range} 2^(i − range.start)·r_i`, the value of those bits (local).
    pub(crate) fn sum(&self, range: Range<usize>) -> Result<Auth<R>, Error> {
        let zero = <R::Wide as crate::ring::Ring>::ZERO;
        let mut r = Auth { x: vec![zero; self.n], m: vec![zero; self.n] };
        for i in range.clone() {
            r = r.add(&self.bit(i).scale(R::ONE.shl((i - range.start) as u32)))?;
        }
        Ok(r)
    }
}

/// Bit `i` of every public value.
fn public_bits<R: Spdz2kRing>(c: &[R], i: usize) -> Vec<bool> {
    c.iter().map(|c| c.shr_logical(i as u32).to_u64() & 1 == 1).collect()
}

impl<R: Spdz2kRing> Auth<R> {
    /// The low bits (A2B of the least significant bit: local).
    fn low_bits(&self, first: bool, alpha: R) -> AuthBits {
        let w = R::S + 1;
        AuthBits {
            s: R::S,
            first,
            alpha: u128::from(alpha.to_u64()),
            x: self.x.iter().map(|&v| reduce(R::wide_u128(v), w)).collect(),
            m: self.m.iter().map(|&v| reduce(R::wide_u128(v), w)).collect(),
        }
    }
}

impl<T: Transport> Spdz2k<T> {
    pub(crate) fn bits_of<R: Spdz2kRing>(&self, x: &Auth<R>) -> AuthBits {
        x.low_bits(self.me() == PartyId(0), R::alpha(self))
    }

    /// `n` bit triples under ring `R`'s key.
    async fn bit_triples<R: Spdz2kRing>(&mut self, n: usize) -> Result<[AuthBits; 3], Error> {
        let Triples { a, b, c } = self.bit_triple_shares::<R>(n).await?;
        Ok([self.bits_of(&a), self.bits_of(&b), self.bits_of(&c)])
    }

    /// `n` bit triples under ring `R`'s key, opened (MAC-checked), for tests of the material.
    #[cfg(any(test, feature = "test-utils"))]
    pub async fn bit_triples_for_test<R: Spdz2kRing>(
        &mut self,
        n: usize,
    ) -> Result<[Vec<bool>; 3], Error> {
        let [a, b, c] = self.bit_triples::<R>(n).await?;
        let all = self.open_bits_unchecked(&AuthBits::concat(&[&a, &b, &c])).await?;
        self.check().await?;
        Ok([all[..n].to_vec(), all[n..2 * n].to_vec(), all[2 * n..].to_vec()])
    }

    /// Beaver's product with `triples` (one round, logged openings).
    pub(crate) async fn beaver<R: Spdz2kRing>(
        &mut self,
        x: &Auth<R>,
        y: &Auth<R>,
        triples: Triples<R>,
    ) -> Result<Auth<R>, Error> {
        let n = x.len();
        let Triples { a, b, c } = triples;
        let open = self.open_unchecked(&Auth::concat(&[&x.sub(&a)?, &y.sub(&b)?])).await?;
        let (eps, delta) = open.split_at(n);
        let ed: Vec<R> = eps.iter().zip(delta).map(|(&e, &d)| e * d).collect();
        let z = c.add(&b.mul_public(eps)?)?.add(&a.mul_public(delta)?)?;
        self.add_public(&z, &ed)
    }

    /// Opens bits without checking them yet (one round, one bit per value to each party).
    async fn open_bits_unchecked(&mut self, b: &AuthBits) -> Result<Vec<bool>, Error> {
        let roster = self.roster();
        let (base, log, public) = match b.s {
            32 => self.split_bin::<Z32>(),
            _ => self.split_bin::<Z64>(),
        };
        let opened = open_logged(&mut base.ctx, roster, log, public, &b.x, &b.m).await?;
        self.unchecked = true;
        Ok(opened.into_iter().map(|v| v & 1 == 1).collect())
    }

    /// `x ∧ y` with bit triples of their key.
    async fn and_bits(&mut self, x: &AuthBits, y: &AuthBits) -> Result<AuthBits, Error> {
        x.same_key(y, "and")?;
        let n = x.len();
        let [a, b, c] = match x.s {
            32 => self.bit_triples::<Z32>(n).await?,
            _ => self.bit_triples::<Z64>(n).await?,
        };
        let open = self.open_bits_unchecked(&AuthBits::concat(&[&x.xor(&a)?, &y.xor(&b)?])).await?;
        let (eps, delta) = open.split_at(n);
        let ed: Vec<bool> = eps.iter().zip(delta).map(|(&e, &d)| e & d).collect();
        // z = c ⊕ ε·b ⊕ δ·a ⊕ εδ.
        c.xor(&b.and_public(eps))?.xor(&a.and_public(delta)).map(|z| z.xor_public(&ed))
    }

    /// `1 − Carry(c, ¬r, 1)` per value: `[c < r]` for public `c` and shared bits `r` (bit `i`
    /// of every value in `r[i]`), by the carry circuit of generate/propagate pairs combined in
    /// a tree: `2ℓ − 2` ANDs in `⌈log₂ ℓ⌉` rounds for `ℓ` bits.
    async fn bit_lt_public(&mut self, c: &[Vec<bool>], r: &[AuthBits]) -> Result<AuthBits, Error> {
        // With b = ¬r and carry-in 1: g_i = c_i ∧ b_i, p_i = c_i ⊕ b_i, g_0 ← g_0 ⊕ p_0.
        let mut level: Vec<(AuthBits, AuthBits)> = c
            .iter()
            .zip(r)
            .map(|(c, r)| {
                let b = r.not();
                (b.and_public(c), b.xor_public(c))
            })
            .collect();
        if let Some((g0, p0)) = level.first_mut() {
            *g0 = g0.xor(p0)?;
        }
        while level.len() > 1 {
            // Pairs (lo, hi): (g, p) = (g_hi ⊕ p_hi·g_lo, p_hi·p_lo); an odd top passes up.
            let pairs = level.len() / 2;
            let (mut left, mut right) = (Vec::new(), Vec::new());
            for i in 0..pairs {
                let (lo, hi) = (&level[2 * i], &level[2 * i + 1]);
                left.extend([&hi.1, &hi.1]);
                right.extend([&lo.0, &lo.1]);
            }
            let prod = self.and_bits(&AuthBits::concat(&left), &AuthBits::concat(&right)).await?;
            let n = level[0].0.len();
            let mut next = Vec::with_capacity(level.len().div_ceil(2));
            for i in 0..pairs {
                let hi = &level[2 * i + 1];
                let pg = prod.slice(2 * i * n..(2 * i + 1) * n);
                let pp = prod.slice((2 * i + 1) * n..(2 * i + 2) * n);
                next.push((hi.0.xor(&pg)?, pp));
            }
            if level.len() % 2 == 1 {
                next.push(level.pop().ok_or_else(|| Error::ApiMisuse("carry".into()))?);
            }
            level = next;
        }
        let (carry, _) = level.pop().ok_or_else(|| Error::ApiMisuse("carry of no bits".into()))?;
        Ok(carry.not())
    }

    /// The MSB of every element of `a` (the paper's Fig. 6).
    async fn msb<R: Spdz2kRing>(&mut self, a: &Auth<R>) -> Result<AuthBits, Error> {
        let (n, k) = (a.len(), R::BITS as usize);
        let EdaBits { r, bits } = self.eda_bits::<R>(n).await?;
        let masks = Planes { bits, n };
        // r mod 2^(k−1) = r − 2^(k−1)·r_{k−1}, the top bit lifted from its binary sharing.
        let r_low = r.sub(&self.bits_of(&masks.bit(k - 1)).lift::<R>())?;
        let c = self.open_unchecked(&a.add(&r)?).await?;
        let c_low: Vec<R> =
            c.iter().map(|&c| c - c.shr_logical(R::BITS - 1).shl(R::BITS - 1)).collect();
        let c_bits: Vec<Vec<bool>> = (0..k - 1).map(|i| public_bits(&c_low, i)).collect();
        let r_bits: Vec<AuthBits> = (0..k - 1).map(|i| self.bits_of(&masks.bit(i))).collect();
        let u = self.bit_lt_public(&c_bits, &r_bits).await?;
        // a' = c' − r' + 2^(k−1)·u ≡ a mod 2^(k−1); d = a − a' = 2^(k−1)·a_{k−1}.
        let a_low = self.constant(&c_low).sub(&r_low)?.add(&u.lift::<R>())?;
        // The output mask b: a random bit of the binary instance, lifted to 2^(k−1)·b.
        let b = self.binary_bits::<R>(n).await?;
        let b = self.bits_of(&b);
        let masked = a.sub(&a_low)?.add(&b.lift::<R>())?;
        let e = self.open_unchecked(&masked).await?;
        let top: Vec<bool> = e.iter().map(|e| e.msb()).collect();
        Ok(b.xor_public(&top))
    }

    /// All bits of every element of `a` (the paper's Fig. 11): `c = a − r` opened, then a
    /// Sklansky prefix adder of `c` and `r`'s bits (`⌈log₂ k⌉` rounds).
    async fn bit_decompose<R: Spdz2kRing>(&mut self, a: &Auth<R>) -> Result<Vec<AuthBits>, Error> {
        let (n, k) = (a.len(), R::BITS as usize);
        let EdaBits { r, bits } = self.eda_bits::<R>(n).await?;
        let masks = Planes { bits, n };
        let c = self.open_unchecked(&a.sub(&r)?).await?;
        let cb: Vec<Vec<bool>> = (0..k).map(|i| public_bits(&c, i)).collect();
        let rb: Vec<AuthBits> = (0..k).map(|i| self.bits_of(&masks.bit(i))).collect();
        // Generate and propagate of c + r: g_i = c_i·r_i, p_i = c_i ⊕ r_i.
        let mut g: Vec<AuthBits> = rb.iter().zip(&cb).map(|(r, c)| r.and_public(c)).collect();
        let mut p: Vec<AuthBits> = rb.iter().zip(&cb).map(|(r, c)| r.xor_public(c)).collect();
        let sum_p = p.clone();
        // Sklansky: at distance d, position i with bit d set takes its group's prefix from the
        // top of the lower half: (g_i, p_i) ∘ (g_j, p_j), j = (i | (d − 1)) − d.
        let mut d = 1;
        while d < k {
            let targets: Vec<(usize, usize)> =
                (0..k).filter(|i| i & d != 0).map(|i| (i, (i & !(2 * d - 1)) + d - 1)).collect();
            let (mut left, mut right) = (Vec::new(), Vec::new());
            for &(i, j) in &targets {
                left.extend([&p[i], &p[i]]);
                right.extend([&g[j], &p[j]]);
            }
            let prod = self.and_bits(&AuthBits::concat(&left), &AuthBits::concat(&right)).await?;
            for (t, &(i, _)) in targets.iter().enumerate() {
                g[i] = g[i].xor(&prod.slice(2 * t * n..(2 * t + 1) * n))?;
                p[i] = prod.slice((2 * t + 1) * n..(2 * t + 2) * n);
            }
            d *= 2;
        }
        // sum_i = p_i ⊕ carry_i, carry_i = g_{i−1} (the prefix up to i − 1).
        let mut out = Vec::with_capacity(k);
        out.push(sum_p[0].clone());
        for i in 1..k {
            out.push(sum_p[i].xor(&g[i - 1])?);
        }
        Ok(out)
    }

    /// Equality with zero (the paper's Fig. 7, without its final B2A: the result stays
    /// binary): `c = a + r` opened for `k` random bits `r_i`, then the AND of the bits
    /// `¬(c_i ⊕ r_i)` by a tree (`k − 1` ANDs, `⌈log₂ k⌉` rounds): `3k − 2` bits per party.
    async fn eqz<R: Spdz2kRing>(&mut self, a: &Auth<R>) -> Result<AuthBits, Error> {
        let (n, k) = (a.len(), R::BITS as usize);
        let EdaBits { r, bits } = self.eda_bits::<R>(n).await?;
        let masks = Planes { bits, n };
        let c = self.open_unchecked(&a.add(&r)?).await?;
        // a = 0 exactly when c = r: every bit agrees.
        let agree: Vec<AuthBits> = (0..k)
            .map(|i| self.bits_of(&masks.bit(i)).xor_public(&public_bits(&c, i)).not())
            .collect();
        self.and_many(&agree.iter().collect::<Vec<_>>()).await
    }

    /// B2A (Fig. 4): `c = b ⊕ r` opened for a random arithmetic bit `r`, then
    /// `[b] = c + [r] − 2c·[r]`.
    async fn b2a_with<R: Spdz2kRing>(
        &mut self,
        b: &AuthBits,
        r: Auth<R>,
    ) -> Result<Auth<R>, Error> {
        if b.s != R::S {
            return Err(Error::ApiMisuse(format!(
                "b2a into a {}-bit ring of bits under the key of s = {}",
                R::BITS,
                b.s
            )));
        }
        let c = self.open_bits_unchecked(&b.xor(&self.bits_of(&r))?).await?;
        let signs: Vec<R> = c.iter().map(|&c| if c { -R::ONE } else { R::ONE }).collect();
        let cs: Vec<R> = c.iter().map(|&c| R::from_u64(u64::from(c))).collect();
        self.add_public(&r.mul_public(&signs)?, &cs)
    }

    fn split_bin<R: Spdz2kRing>(
        &mut self,
    ) -> (&mut super::Mesh<T>, &mut super::check::Log, &mut crate::sharing::View) {
        R::split_bin(self)
    }
}

impl<T: Transport> Gates for Spdz2k<T> {
    type Bits = AuthBits;

    /// Under the key of s = 64: the owner broadcasts `b ⊕ r` for input masks `r` it knows.
    async fn input_bits(
        &mut self,
        owner: PartyId,
        bits: Option<&[bool]>,
        n: usize,
    ) -> Result<AuthBits, Error> {
        if !self.roster().is_party(owner) {
            return Err(Error::ApiMisuse(format!("input_bits: {owner} is not a compute party")));
        }
        check_input_values(self.me(), owner, bits, n)?;
        let masks = self.input_masks::<Z64>(owner, n).await?;
        let (me, roster) = (self.me(), self.roster());
        let ctx = self.ctx_mut();
        ctx.round();
        let eps: Vec<bool> = match (bits, &masks.values) {
            (Some(b), Some(r)) => {
                let eps: Vec<bool> = b.iter().zip(r).map(|(&b, r)| b ^ (r.0 & 1 == 1)).collect();
                let words = crate::sharing::pack_bits(&eps);
                for peer in roster.others(me) {
                    ctx.send(peer, &words)?;
                }
                eps
            }
            _ => {
                let words = ctx.recv::<crate::ring::Bits>(owner, n.div_ceil(64)).await?;
                crate::sharing::unpack_bools(&words, n)
            }
        };
        let packed = crate::sharing::pack_bits(&eps);
        self.absorb_public(&packed);
        Ok(self.bits_of(&masks.r).xor_public(&eps))
    }

    fn constant_bits(&self, bits: &[bool]) -> AuthBits {
        let zero = self.bits_of(&Auth::<Z64> {
            x: vec![crate::ring::Z128(0); bits.len()],
            m: vec![crate::ring::Z128(0); bits.len()],
        });
        zero.xor_public(bits)
    }

    async fn and(&mut self, x: &AuthBits, y: &AuthBits) -> Result<AuthBits, Error> {
        self.and_bits(x, y).await
    }

    async fn open_bits(&mut self, b: AuthBits) -> Result<Vec<bool>, Error> {
        let opened = self.open_bits_unchecked(&b).await?;
        self.check().await?;
        Ok(opened)
    }
}

impl<T: Transport, R: Spdz2kRing> Boolean<R> for Spdz2k<T> {
    /// One random arithmetic bit per bit injection or bit product.
    type BitPrep = RandBits<R>;

    async fn bit_prep(&mut self, n: usize) -> Result<RandBits<R>, Error> {
        self.rand_bits::<R>(n).await
    }

    async fn msb_many(&mut self, xs: &[&Auth<R>]) -> Result<Vec<AuthBits>, Error> {
        let all = Auth::concat(xs);
        let m = self.msb(&all).await?;
        let mut at = 0;
        Ok(xs
            .iter()
            .map(|x| {
                let part = m.slice(at..at + x.len());
                at += x.len();
                part
            })
            .collect())
    }

    async fn a2b(&mut self, x: &Auth<R>) -> Result<Vec<AuthBits>, Error> {
        self.bit_decompose(x).await
    }

    /// The paper's EQZ of `x − y` (not the generic bit decomposition): `3k − 2` bits per party.
    async fn eq(&mut self, x: &Auth<R>, y: &Auth<R>) -> Result<AuthBits, Error> {
        self.eqz(&x.sub(y)?).await
    }

    async fn b2a(&mut self, b: &AuthBits, mut prep: RandBits<R>) -> Result<Auth<R>, Error> {
        let r = prep.take(b.len())?.b;
        self.b2a_with(b, r).await
    }

    /// B2A, then Beaver products with triples drawn now (two rounds).
    async fn bit_mul_many(
        &mut self,
        b: &AuthBits,
        xs: &[&Auth<R>],
        prep: RandBits<R>,
    ) -> Result<Vec<Auth<R>>, Error> {
        let n = b.len();
        if let Some(x) = xs.iter().find(|x| x.len() != n) {
            return Err(Error::ApiMisuse(format!("bit_mul: {} bits, {} values", n, x.len())));
        }
        let ba = Boolean::<R>::b2a(self, b, prep).await?;
        let copies: Vec<&Auth<R>> = xs.iter().map(|_| &ba).collect();
        let prod_prep = self.triples::<R>(n * xs.len()).await?;
        let z = self.beaver(&Auth::concat(&copies), &Auth::concat(xs), prod_prep).await?;
        Ok((0..xs.len()).map(|j| z.slice(j * n..(j + 1) * n)).collect())
    }
}
