//! Ring conversion (the paper's Protocol 4): a sharing over Z_2^k becomes one over the wider
//! Z_2^k' — by bit decomposition and bit injection, never by casting shares (shares summing to
//! `x` mod 2^k sum to `x + j·2^k` over a wider ring, for an unknown `j`).
//!
//! The bits of `x` come from [`Boolean::a2b`] (an opening masked by `r` and an adder with `r`'s
//! bits), and each bit is injected into Z_2^k' ([`Boolean::b2a`], one round for all of them);
//! the value is their weighted sum, with the top bit weighted `−2^(k−1)` for a signed
//! (two's complement) value.

use super::bits::Widen;
use super::boolean::RandBits;
use super::{Rss, RssVec};
use crate::net::Transport;
use crate::sharing::{Boolean, Linear};
use crate::Error;

impl<T: Transport> Rss<T> {
    /// The material of converting `n` values from a `k`-bit ring: `k` random bits of the wider
    /// ring per value (setup).
    pub async fn convert_prep<R: Widen, W: Widen>(
        &mut self,
        n: usize,
    ) -> Result<RandBits<W>, Error> {
        self.injection_bits::<W>(n * R::BITS as usize).await
    }

    /// `x` over the wider ring `W` (`W::BITS > R::BITS`), as a signed (two's complement) or
    /// unsigned `k`-bit value: a bit decomposition, then one round of bit injection.
    pub async fn convert<R: Widen, W: Widen>(
        &mut self,
        x: &RssVec<R>,
        signed: bool,
        prep: RandBits<W>,
    ) -> Result<RssVec<W>, Error> {
        let (k, n) = (R::BITS, x.len());
        if W::BITS <= R::BITS {
            return Err(Error::ApiMisuse(format!(
                "convert: from Z_2^{k} to Z_2^{} does not grow the ring",
                W::BITS
            )));
        }
        crate::sharing::same_len(prep.arith_len(), n * k as usize, "convert (random bits)")?;
        let planes = Boolean::<R>::a2b(self, x).await?;
        let all = crate::sharing::Packed::concat(&planes.iter().collect::<Vec<_>>());
        let bits = Boolean::<W>::b2a(self, &all, prep).await?;
        let mut out = self.zeros::<W>(n);
        for i in 0..k {
            let weight = if signed && i == k - 1 { -W::ONE.shl(i) } else { W::ONE.shl(i) };
            let plane = bits.slice(i as usize * n..(i as usize + 1) * n);
            out = Linear::add(&out, &plane.scale(weight))?;
        }
        Ok(out)
    }
}
