//! Fixed-point products with probabilistic truncation (the paper's Protocol 3, RandBit variant)
//! folded into one multiply-and-open.
//!
//! Material per value (setup): `k` random bits `r_i` ([`Rss::rand_bits`]), and from them
//! `r = Σ 2^i r_i`, `r̂ = Σ_{d ≤ i ≤ k−2} 2^(i−d) r_i` (bits `d … k−2` of `r`) and the top bit
//! `r_{k−1}`. Online, for a product `a` with `|a| < 2^(k−2)`: `a' = a + 2^(k−2)` is non-negative
//! below 2^(k−1), and `c = a' + r` is opened in one round with the masks of
//! [`Rss::mul_pub`] — each party sends its additive part of `a' + r`, never a share of the
//! unmasked product. With `c' = ⌊c / 2^d⌋ mod 2^(k−d−1)` and `b = c_{k−1} ⊕ r_{k−1}` (the carry
//! into bit `k − 1` of `a' + (r mod 2^(k−1))`),
//! `⌊a / 2^d⌋ + u = c' − r̂ + 2^(k−d−1)·b − 2^(k−2−d)`, with `u ∈ {0, 1}` and
//! `P[u = 1] = (a mod 2^d) / 2^d`. We return one less, `⌊a / 2^d⌋ − (1 − u)`, the floor or
//! one less like every scheme's truncation here (`rep3::trunc`). So a fixed-point product costs one round and `n − 1`
//! elements per output and party; the material costs `k` random bits per output.

use super::bits::Widen;
use super::boolean::RssBits;
use super::{Rss, RssVec};
use crate::net::{PartyId, Transport};
use crate::rep3::trunc::check_shift;
use crate::ring::{IntRing, Ring};
use crate::sharing::{Bitwise, Boolean, Store};
use crate::Error;

/// Truncation material `([r], [r̂], [r_{k−1}])` for a shift of `frac_bits`, one per value.
#[derive(Debug, Clone)]
pub struct TruncPairs<R> {
    frac_bits: u32,
    r: RssVec<R>,
    r_hat: RssVec<R>,
    top: RssVec<R>,
}

impl<R: Ring> Store for TruncPairs<R> {
    fn len(&self) -> usize {
        self.r.len()
    }
    fn take(&mut self, n: usize) -> Result<Self, Error> {
        let len = self.r.len();
        if n > len {
            return Err(Error::PreprocessingExhausted(format!(
                "{n} truncation pairs requested, {len} left"
            )));
        }
        let (r, r_hat, top) =
            (self.r.take_front(n), self.r_hat.take_front(n), self.top.take_front(n));
        Ok(Self { frac_bits: self.frac_bits, r, r_hat, top })
    }
}

impl<T: Transport> Rss<T> {
    /// Material for `n` truncations by `d` bits (setup), from the session's
    /// [`super::BitSource`]: `k` random bits per value (one round), or an edaBit per value whose
    /// dealers also input their `⌊r^(p) / 2^d⌋`, corrected by the adders' carries and the top
    /// bit, `2t + 1` bit injections per value (the paper's Protocol 3 as the extract corrects
    /// it: the carry out of the top bit weighs `2^(k−d)`).
    pub async fn trunc_pairs<R: Widen>(
        &mut self,
        n: usize,
        d: u32,
    ) -> Result<TruncPairs<R>, Error> {
        let k = R::BITS;
        check_shift(d, k)?;
        if self.bit_source() == super::BitSource::EdaBits {
            return self.trunc_pairs_from_edabits(n, d).await;
        }
        let bits = self.rand_bits::<R>(n * k as usize).await?;
        let plane = |i: u32| bits.slice(i as usize * n..(i as usize + 1) * n);
        let mut r = self.zeros::<R>(n);
        let mut r_hat = self.zeros::<R>(n);
        for i in 0..k {
            let b = plane(i);
            r = r.add(&b.scale(R::ONE.shl(i)))?;
            if (d..k - 1).contains(&i) {
                r_hat = r_hat.add(&b.scale(R::ONE.shl(i - d)))?;
            }
        }
        Ok(TruncPairs { frac_bits: d, r, r_hat, top: plane(k - 1) })
    }

    /// [`Rss::trunc_pairs`] from edaBits.
    async fn trunc_pairs_from_edabits<R: Widen>(
        &mut self,
        n: usize,
        d: u32,
    ) -> Result<TruncPairs<R>, Error> {
        let k = R::BITS;
        let eda = self.edabits_inner::<R>(n, Some(d)).await?;
        // Every carry and the top bit, injected in one round.
        let top = &eda.planes[k as usize - 1];
        let mut parts: Vec<&RssBits> = eda.into_shift.iter().chain(&eda.out_top).collect();
        parts.push(top);
        let all = RssBits::concat(&parts);
        let prep = self.injection_bits::<R>(all.len()).await?;
        let arith = Boolean::<R>::b2a(self, &all, prep).await?;
        let carries = eda.into_shift.iter().map(Bitwise::len).sum::<usize>();
        let sum_of = |from: usize, len: usize| -> Result<RssVec<R>, Error> {
            let mut acc = arith.slice(from..from + n);
            for at in (from + n..from + len).step_by(n) {
                acc = acc.add(&arith.slice(at..at + n))?;
            }
            Ok(acc)
        };
        // ⌊r / 2^d⌋ = Σ_p ⌊r^(p) / 2^d⌋ + Σ carries into bit d − 2^(k−d) Σ carries out of the top.
        let mut floor = eda.shifted_sum;
        if carries > 0 {
            floor = floor
                .add(&sum_of(0, carries)?)?
                .sub(&sum_of(carries, carries)?.scale(R::ONE.shl(k - d)))?;
        }
        let top = arith.slice(2 * carries..2 * carries + n);
        let r_hat = floor.sub(&top.scale(R::ONE.shl(k - 1 - d)))?;
        Ok(TruncPairs { frac_bits: d, r: eda.r, r_hat, top })
    }

    /// The sharing of `⌊a / 2^d⌋ − 1 + u` from every party's additive part `v` of `a`
    /// (`|a| < 2^(k−2)`), in one round.
    pub(crate) async fn open_truncated<R: IntRing>(
        &mut self,
        mut v: Vec<R>,
        pairs: TruncPairs<R>,
    ) -> Result<RssVec<R>, Error> {
        crate::sharing::same_len(v.len(), pairs.r.len(), "truncation")?;
        let (k, d) = (R::BITS, pairs.frac_bits);
        let offset = R::ONE.shl(k - 2);
        if self.me() == PartyId(0) {
            v.iter_mut().for_each(|x| *x += offset);
        }
        let r_part = self.additive_part(&pairs.r);
        crate::ring::kernels::add_assign(&mut v, &r_part);
        let c = self.open_parts(v).await?;
        let low_mask = R::ONE.shl(k - d - 1) - R::ONE;
        let (low, flip): (Vec<R>, Vec<R>) = c
            .iter()
            .map(|&c| {
                let c_low = R::from_u64(c.shr_logical(d).to_u64() & low_mask.to_u64());
                // One less than Protocol 3's result, to give what every scheme's truncation
                // gives: the floor or one less.
                let low = c_low - offset.shr_logical(d) - R::ONE;
                (low, if c.msb() { -R::ONE } else { R::ONE })
            })
            .unzip();
        // b = c_{k−1} ⊕ r_{k−1} = c_{k−1} + (1 − 2c_{k−1})·r_{k−1}.
        let top_public: Vec<R> =
            c.iter().map(|&c| if c.msb() { R::ONE } else { R::ZERO }).collect();
        let b = pairs.top.mul_public(&flip)?.add_public(&top_public)?;
        self.constant(&low).sub(&pairs.r_hat)?.add(&b.scale(R::ONE.shl(k - d - 1)))
    }

    /// Fixed-point `x·y` truncated by the material's shift (1 round, `n − 1` elements per
    /// product and party).
    pub async fn mul_fixed<R: IntRing>(
        &mut self,
        x: &RssVec<R>,
        y: &RssVec<R>,
        pairs: TruncPairs<R>,
    ) -> Result<RssVec<R>, Error> {
        crate::sharing::same_len(x.len(), y.len(), "mul_fixed")?;
        let v = self.local_mul(x, y);
        self.open_truncated(v, pairs).await
    }

    /// Truncation by private amounts (as in Dalskov et al.'s quantized networks, the paper's
    /// §6.3): `⌊x / 2^m⌋` (or one less) for each value, where the model owner supplies
    /// `[2^(M−m)]` privately and `M` (the material's shift) is a public bound on every `m`: one
    /// fixed-point product of `x` and the private power of two. Needs
    /// `|x·2^(M−m)| < 2^(k−2)` (1 round, `n − 1` elements per value and party).
    pub async fn trunc_private<R: IntRing>(
        &mut self,
        x: &RssVec<R>,
        pow2: &RssVec<R>,
        pairs: TruncPairs<R>,
    ) -> Result<RssVec<R>, Error> {
        self.mul_fixed(x, pow2, pairs).await
    }

    /// Fixed-point matrix product (m×k by k×n), truncated once per output (1 round).
    pub async fn matmul_fixed<R: IntRing>(
        &mut self,
        a: &RssVec<R>,
        b: &RssVec<R>,
        dims: (usize, usize, usize),
        pairs: TruncPairs<R>,
    ) -> Result<RssVec<R>, Error> {
        let v = self.local_matmul(a, b, dims)?;
        self.open_truncated(v, pairs).await
    }
}
