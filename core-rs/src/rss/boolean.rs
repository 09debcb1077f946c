//! Shared bits and comparisons on `rss`: binary replicated sharing over Z_2 (bits packed 64 per
//! word; an AND is Protocol 1 over words, `t` words per 64 bits and party), and on it the
//! primitives of [`Boolean`].
//!
//! * **Random bits** ([`Rss::rand_bits`]) serve both sides: the low bit of every share of a
//!   random bit `[r]_k` is a share of `r` over Z_2 (the low bit of a sum is the XOR of the low
//!   bits), so one RandBit is a bit in both worlds at no further cost.
//! * **MSB** (after the paper's Protocol 8, boolean output): `k` random bits give `r` and its
//!   bits; `c = a + r` is opened; with `c' = c mod 2^(k−1)` and `r' = r mod 2^(k−1)`, the carry
//!   into bit `k − 1` of `a + r` is `u = [c' < r']` (BitLT: a log-depth reduction of
//!   generate/propagate signals, 2 ANDs per node), and `msb(a) = c_{k−1} ⊕ r_{k−1} ⊕ u`. The
//!   paper's second opening and random bit turn the result arithmetic; the walk wants it
//!   boolean, so they are left out. Rounds: 1 (random bits) + 1 (opening) + ⌈log₂(k−1)⌉.
//! * **Bit decomposition** ([`Boolean::a2b`]): `c = x − r` is opened and `c + r` added with a
//!   Sklansky prefix adder over the shared bits of `r` (public `c`: generate and propagate are
//!   local), ⌈log₂ k⌉ AND rounds.
//! * **Bit injection** ([`Boolean::b2a`], after Damgård et al.): with a random bit `[r]`,
//!   `c = b ⊕ r` is opened and `b = c + r − 2cr` locally; a bit product injects, then
//!   multiplies (2 rounds).

use super::bits::Widen;
use super::{Rss, RssVec};
use crate::net::{PartyId, Transport};
use crate::ring::{Bits, IntRing, Ring};
use crate::sharing::{pack_bits, unpack_bools, Boolean, Gates, Packed, Store, WordShares};
use crate::Error;

/// `n` shared bits of rss, packed 64 per word.
pub type RssBits = Packed<RssVec<Bits>>;

impl WordShares for RssVec<Bits> {
    type Holder = (PartyId, Option<usize>);
    fn holder(&self) -> Self::Holder {
        (self.me, self.designated)
    }
    fn components(&self) -> Vec<&[Bits]> {
        self.shares.iter().map(Vec::as_slice).collect()
    }
    fn from_components((me, designated): Self::Holder, shares: Vec<Vec<Bits>>) -> Self {
        Self { me, designated, shares }
    }
    fn xor_words(&self, o: &Self) -> Result<Self, Error> {
        self.add(o)
    }
    fn not_words(&self) -> Self {
        self.add_public_scalar(Bits::ONE)
    }
}

/// Random bits as ring elements, one unit per bit: the material of bit injections and bit
/// products.
#[derive(Debug, Clone)]
pub struct RandBits<R> {
    arith: RssVec<R>,
}

impl<R: Ring> RandBits<R> {
    /// The number of bits held.
    pub(crate) fn arith_len(&self) -> usize {
        self.arith.len()
    }
}

impl<R: Ring> Store for RandBits<R> {
    fn len(&self) -> usize {
        self.arith.len()
    }
    fn take(&mut self, n: usize) -> Result<Self, Error> {
        let len = self.arith.len();
        if n > len {
            return Err(Error::PreprocessingExhausted(format!(
                "{n} random bits requested, {len} left"
            )));
        }
        Ok(Self { arith: self.arith.take_front(n) })
    }
}

/// The shared low bits of `x`'s elements: a share of each element's low bit over Z_2 (local).
fn low_bits<R: IntRing>(x: &RssVec<R>) -> RssBits {
    let shares = x
        .shares
        .iter()
        .map(|s| pack_bits(&s.iter().map(|v| v.to_u64() & 1 == 1).collect::<Vec<_>>()))
        .collect();
    Packed { n: x.len(), words: RssVec { me: x.me, designated: x.designated, shares } }
}

/// Bit `i` of every value, packed.
fn plane<R: IntRing>(values: &[R], i: u32) -> Vec<Bits> {
    pack_bits(&values.iter().map(|v| v.shr_logical(i).to_u64() & 1 == 1).collect::<Vec<_>>())
}

impl<T: Transport> Rss<T> {
    /// `x ∧ c` for public packed words `c` (local).
    fn and_public(x: &RssBits, c: &[Bits]) -> Result<RssBits, Error> {
        Ok(Packed { n: x.n, words: x.words.mul_public(c)? })
    }

    /// `x ⊕ c` for public packed words `c` (local).
    fn xor_public(x: &RssBits, c: &[Bits]) -> Result<RssBits, Error> {
        Ok(Packed { n: x.n, words: x.words.add_public(c)? })
    }

    /// The carry out of the top position of `(p, g)` (planes, low first) by a tree of the
    /// operator `(p, g) ∘ (p', g') = (p ∧ p', g ⊕ (p ∧ g'))`: ⌈log₂ len⌉ rounds of batched
    /// ANDs, 2 per node.
    async fn final_carry(&mut self, mut seg: Vec<(RssBits, RssBits)>) -> Result<RssBits, Error> {
        while seg.len() > 1 {
            let pairs = seg.len() / 2;
            let (mut left, mut right) = (Vec::new(), Vec::new());
            for j in 0..pairs {
                let ((lo_p, lo_g), (hi_p, _)) = (&seg[2 * j], &seg[2 * j + 1]);
                left.extend([hi_p, hi_p]);
                right.extend([lo_p, lo_g]);
            }
            let prod = self.and(&RssBits::concat(&left), &RssBits::concat(&right)).await?;
            let n = seg[0].0.len();
            let mut next = Vec::with_capacity(seg.len().div_ceil(2));
            for j in 0..pairs {
                let pp = prod.slice(2 * j * n..(2 * j + 1) * n);
                let pg = prod.slice((2 * j + 1) * n..(2 * j + 2) * n);
                next.push((pp, seg[2 * j + 1].1.xor(&pg)?));
            }
            if seg.len() % 2 == 1 {
                next.extend(seg.pop());
            }
            seg = next;
        }
        seg.pop().map(|(_, g)| g).ok_or_else(|| Error::ApiMisuse("carry of no bits".into()))
    }

    /// Every prefix carry `G_i` (out of position `i`) of `(p, g)` (planes, low first), by a
    /// Sklansky network: ⌈log₂ len⌉ rounds of batched ANDs.
    pub(crate) async fn prefix_carries(
        &mut self,
        mut p: Vec<RssBits>,
        mut g: Vec<RssBits>,
    ) -> Result<Vec<RssBits>, Error> {
        let len = g.len();
        let mut span = 1;
        while span < len {
            // Position i in the upper half of its block of 2·span takes the block's lower half,
            // whose last position `base` already covers the whole lower half.
            let targets: Vec<(usize, usize)> = (0..len)
                .filter(|i| i & span != 0)
                .map(|i| (i, (i & !(2 * span - 1)) + span - 1))
                .collect();
            let (mut left, mut right) = (Vec::new(), Vec::new());
            for &(i, base) in &targets {
                left.extend([&p[i], &p[i]]);
                right.extend([&p[base], &g[base]]);
            }
            let prod = self.and(&RssBits::concat(&left), &RssBits::concat(&right)).await?;
            let n = g[0].len();
            for (j, &(i, _)) in targets.iter().enumerate() {
                let pg = prod.slice((2 * j + 1) * n..(2 * j + 2) * n);
                g[i] = g[i].xor(&pg)?;
                p[i] = prod.slice(2 * j * n..(2 * j + 1) * n);
            }
            span *= 2;
        }
        Ok(g)
    }

    /// `k` random bits per value of `n` by multiply-and-open: their bits (planes low first)
    /// and `r = Σ 2^i r_i`.
    pub(crate) async fn random_with_bits_by_rand_bits<R: Widen>(
        &mut self,
        n: usize,
    ) -> Result<(Vec<RssBits>, RssVec<R>), Error> {
        let k = R::BITS;
        let bits = self.rand_bits::<R>(n * k as usize).await?;
        let mut r = self.zeros::<R>(n);
        let mut planes = Vec::with_capacity(k as usize);
        for i in 0..k as usize {
            let b = bits.slice(i * n..(i + 1) * n);
            r = r.add(&b.scale(R::ONE.shl(i as u32)))?;
            planes.push(low_bits(&b));
        }
        Ok((planes, r))
    }
}

impl<T: Transport> Gates for Rss<T> {
    type Bits = RssBits;

    /// One round: the owner sends `t` words per 64 bits.
    async fn input_bits(
        &mut self,
        owner: PartyId,
        bits: Option<&[bool]>,
        n: usize,
    ) -> Result<RssBits, Error> {
        if let Some(b) = bits.filter(|b| b.len() != n) {
            return Err(Error::ApiMisuse(format!("input_bits: {} bits for n = {n}", b.len())));
        }
        let words = bits.map(pack_bits);
        let v = self.input::<Bits>(owner, words.as_deref(), n.div_ceil(64)).await?;
        Ok(Packed { n, words: v })
    }

    fn constant_bits(&self, bits: &[bool]) -> RssBits {
        Packed { n: bits.len(), words: self.constant(&pack_bits(bits)) }
    }

    /// Protocol 1 over words: 1 round, `t` words per 64 ANDs and party.
    async fn and(&mut self, x: &RssBits, y: &RssBits) -> Result<RssBits, Error> {
        crate::sharing::same_len(x.len(), y.len(), "and")?;
        Ok(Packed { n: x.n, words: self.mul(&x.words, &y.words).await? })
    }

    async fn open_bits(&mut self, b: RssBits) -> Result<Vec<bool>, Error> {
        let n = b.n;
        Ok(unpack_bools(&self.open(b.words).await?, n))
    }
}

impl<T: Transport> Rss<T> {
    /// `n` random bits for injecting bits into the ring ([`Boolean::b2a`]): one round. What
    /// truncation material and ring conversion need; comparisons' material is
    /// [`Boolean::bit_prep`], which adds their masks.
    pub(crate) async fn injection_bits<R: Widen>(
        &mut self,
        n: usize,
    ) -> Result<RandBits<R>, Error> {
        Ok(RandBits { arith: self.rand_bits(n).await? })
    }
}

impl<T: Transport, R: Widen> Boolean<R> for Rss<T> {
    type BitPrep = RandBits<R>;

    /// One round of random bits for the comparisons' selections, and the masks of as many
    /// MSBs made now ([`Rss::stock_masks`]): an inference's setup makes one unit per
    /// comparison, so its online comparisons open and add, and make nothing.
    async fn bit_prep(&mut self, n: usize) -> Result<RandBits<R>, Error> {
        let bits = self.injection_bits(n).await?;
        self.stock_masks::<R>(n).await?;
        Ok(bits)
    }

    async fn msb_many(&mut self, xs: &[&RssVec<R>]) -> Result<Vec<RssBits>, Error> {
        let k = R::BITS;
        let all = RssVec::concat(xs);
        let n = all.len();
        if n == 0 {
            return Ok(xs.iter().map(|_| self.constant_bits(&[])).collect());
        }
        let (planes, r) = self.random_with_bits::<R>(n).await?;
        let c = self.open(all.add(&r)?).await?;
        // BitLT(c', r'): the carry out of c' + ¬r' + 1 is [c' ≥ r'].
        let mut seg = Vec::with_capacity(k as usize - 1);
        for (i, r_i) in planes.iter().take(k as usize - 1).enumerate() {
            let ci = plane(&c, i as u32);
            let not_r = r_i.not();
            let p = Self::xor_public(&not_r, &ci)?;
            let mut g = Self::and_public(&not_r, &ci)?;
            if i == 0 {
                g = g.xor(&p)?;
            }
            seg.push((p, g));
        }
        let geq = self.final_carry(seg).await?;
        // msb = c_{k−1} ⊕ r_{k−1} ⊕ [c' < r'].
        let top = plane(&c, k - 1);
        let msb = Self::xor_public(&planes[k as usize - 1].xor(&geq.not())?, &top)?;
        let mut at = 0;
        Ok(xs
            .iter()
            .map(|x| {
                let out = msb.slice(at..at + x.len());
                at += x.len();
                out
            })
            .collect())
    }

    async fn a2b(&mut self, x: &RssVec<R>) -> Result<Vec<RssBits>, Error> {
        let k = R::BITS;
        let n = x.len();
        let (planes, r) = self.random_with_bits::<R>(n).await?;
        let c = self.open(x.sub(&r)?).await?;
        let (mut p, mut g) = (Vec::new(), Vec::new());
        for (i, rb) in planes.iter().enumerate() {
            let ci = plane(&c, i as u32);
            p.push(Self::xor_public(rb, &ci)?);
            g.push(Self::and_public(rb, &ci)?);
        }
        let carries = self.prefix_carries(p.clone(), g).await?;
        let mut out = vec![p[0].clone()];
        for i in 1..k as usize {
            out.push(p[i].xor(&carries[i - 1])?);
        }
        Ok(out)
    }

    async fn b2a(&mut self, b: &RssBits, prep: RandBits<R>) -> Result<RssVec<R>, Error> {
        crate::sharing::same_len(b.len(), prep.len(), "b2a")?;
        let masked = b.xor(&low_bits(&prep.arith))?;
        let c = self.open_bits(masked).await?;
        // b = c + r − 2cr: r where c = 0, 1 − r where c = 1.
        let sign: Vec<R> = c.iter().map(|&c| if c { -R::ONE } else { R::ONE }).collect();
        let offset: Vec<R> = c.iter().map(|&c| if c { R::ONE } else { R::ZERO }).collect();
        prep.arith.mul_public(&sign)?.add_public(&offset)
    }

    async fn bit_mul_many(
        &mut self,
        b: &RssBits,
        xs: &[&RssVec<R>],
        prep: RandBits<R>,
    ) -> Result<Vec<RssVec<R>>, Error> {
        let n = b.len();
        if let Some(x) = xs.iter().find(|x| x.len() != n) {
            return Err(Error::ApiMisuse(format!(
                "bit_mul_many: {n} bits and a vector of {} elements",
                x.len()
            )));
        }
        let arith = self.b2a(b, prep).await?;
        let repeated = RssVec::concat(&vec![&arith; xs.len()]);
        let prod = self.mul(&repeated, &RssVec::concat(xs)).await?;
        Ok((0..xs.len()).map(|j| prod.slice(j * n..(j + 1) * n)).collect())
    }
}
