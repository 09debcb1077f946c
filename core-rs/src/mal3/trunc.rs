//! Truncation pairs for mal3: `(r, r >> d)` with no single-party input, for fixed-point
//! products that stay secure against a cheating party.
//!
//! rep3's pairs (`rep3::trunc`) let P1 share its addend in both forms, which a cheating P1 could
//! make inconsistent. Here `r` is a random sharing: each component `s_j` is known to two parties,
//! so an honest party defines it and each holder can shift it locally. Then, exactly,
//!
//! `r >> d = Σ_j (s_j >> d) + L − 2^(k−d)·(W + msb(r))` (arithmetic shift of `r`, logical of the
//! components), where `L ∈ {0, 1, 2}` is the carry of the components' low `d` bits into bit
//! `d` and `W ∈ {0, 1, 2}` the carry out of bit `k − 1` of their sum.
//!
//! With the layer of full adders (`s0 + s1 + s2 = A + 2·C`, `k` checked ANDs per value) and
//! `B = 2·C mod 2^k`, `G_i` the carry out of bit `i` of `A + B`:
//! `L = G_{d−1} + C_{d−1}`, `W = G_{k−1} + C_{k−1}`, `msb(r) = A_{k−1} ⊕ B_{k−1} ⊕ G_{k−2}`.
//! The three carries come from one pruned carry network with checked ANDs. `W + msb(r) ∈ {0..3}`
//! is summed in binary first (one full adder, one checked AND: `u = G ⊕ C ⊕ m`,
//! `v = ((G ⊕ m) ∧ (C ⊕ m)) ⊕ m`, so `W + msb = u + 2v`), so four bits — `G_{d−1}`, `C_{d−1}`,
//! `u`, `v` — are injected into the ring with checked daBits ([`super::boolean`]) instead of
//! five: a daBit is two checked ring products, an AND one checked bit. Setup only.
//!
//! Online, a fixed-point product is the checked product `z = x·y`, the opening of the masked
//! `c = z − r` from both holders of each component, and `r >> d + (c >> d)`; its error is
//! rep3's (at most one in the last place, and a rare wrap: see `rep3::trunc`).

use super::boolean::doubled;
use super::check;
use super::scheme::{Mal3, Mal3Ring};
use crate::net::Transport;
use crate::rep3::adder::carries;
use crate::rep3::binary::words;
use crate::rep3::compare::SharedBits;
use crate::rep3::trunc::check_shift;
use crate::rep3::{Rep3Vec, TruncPairs};
use crate::ring::{Bits, IntRing};
use crate::sharing::{Boolean, Gates};
use crate::Error;

impl<T: Transport> Mal3<T> {
    /// Makes `n` truncation pairs for a shift of `d` bits (see the module documentation).
    pub async fn trunc_pairs<R: Mal3Ring + IntRing>(
        &mut self,
        n: usize,
        d: u32,
    ) -> Result<TruncPairs<R>, Error> {
        let k = R::BITS;
        check_shift(d, k)?;
        let (kk, dd) = (k as usize, d as usize);
        let r = self.p.random::<R>(n);
        let want = [dd - 1, kk - 2, kk - 1];
        let (a, carry, _) = self.full_adders(&[&r], kk, &want).await?;
        let b = doubled(&carry, kk);
        let g = carries(self, &a, &b, &want, false).await?;
        let msb = a.xor_one(&b, kk - 1).add(&g[1])?;
        let c_top = carry.to_vec(kk - 1);
        let packed = |words: Rep3Vec<Bits>| SharedBits { n, words };
        let x = packed(g[2].add(&msb)?);
        let y = packed(c_top.add(&msb)?);
        let v = self.and(&x, &y).await?.words.add(&msb)?;
        let u = g[2].add(&c_top)?.add(&msb)?;
        // Four padded blocks of w words: G_{d−1}, C_{d−1}, and W + msb(r) as u + 2v.
        let parts = [&g[0], &carry.to_vec(dd - 1), &u, &v];
        let block = words(n) * 64;
        let bits = SharedBits { n: parts.len() * block, words: Rep3Vec::concat(&parts) };
        let dab = self.dabits::<R>(bits.n).await?;
        let lifted = Boolean::<R>::b2a(self, &bits, dab).await?;
        let part = |j: usize| lifted.slice(j * block..j * block + n);
        let shift = |v: &[R]| -> Vec<R> { v.iter().map(|x| x.shr_logical(d)).collect() };
        let components = Rep3Vec::from_parts(r.me, shift(&r.a), shift(&r.b));
        let low = part(0).add(&part(1))?;
        let high = part(2).add(&part(3).scale(R::ONE.shl(1)))?;
        let r_shifted = components.add(&low)?.sub(&high.scale(R::ONE.shl(k - d)))?;
        Ok(TruncPairs { frac_bits: d, r, r_shifted })
    }

    /// `z >> d` for a (checked) double-precision result `z`, consuming `pairs`: the masked
    /// `z − r` is opened from both holders of each component (two rounds with the verdict).
    pub(super) async fn truncate<R: Mal3Ring + IntRing>(
        &mut self,
        z: Rep3Vec<R>,
        pairs: TruncPairs<R>,
    ) -> Result<Rep3Vec<R>, Error> {
        pairs.fits(z.len())?;
        let TruncPairs { frac_bits, r, r_shifted } = pairs;
        let c = check::open(&mut self.p, z.sub(&r)?).await?;
        let c: Vec<R> = c.iter().map(|v| v.shr_arith(frac_bits)).collect();
        r_shifted.add(&Rep3Vec::public(r.me, &c))
    }
}
