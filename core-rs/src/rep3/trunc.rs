//! Fixed-point multiplication with probabilistic truncation by preprocessed pairs.
//!
//! **Pairs.** `r = a + b` with `a` from the key of P0 and P2 and `b` from P1's private seed,
//! so no single party knows `r`, which is uniform in the ring. Its arithmetic shift is
//! `r >> d = (a >> d) + (b >> d) + c_d − 2^(k−d)·(c_k + msb(r))` (logical shifts of `a`, `b`),
//! where `c_d` is the carry into bit `d` and `c_k` the carry out of the top bit of `a + b`: three
//! bits from one pruned carry network, injected into the ring with daBits. Setup only.
//!
//! **Online.** With `z_i` the additive components of `x·y` (or of a matrix product), the parties
//! open `c = z − r` to P0 and P2 only (the two holders of component 0, who add the public
//! `c >> d` to it) and keep `⟨r >> d⟩`: P1 sends 2 elements, P0 and P2 one each — 4/3 elements
//! per party on average, 1 round. The components are masked by a fresh zero sharing, since P0
//! knows `r_1`.
//!
//! **Error.** The result is `⌊x·y / 2^d⌋` or one less (−1 in the last place: the carry of the
//! dropped low bits of `c` and `r` is lost), and is wrong by about 2^(k−d) exactly when `z − r`
//! leaves the signed range [−2^(k−1), 2^(k−1)): with `r` uniform there, that has probability
//! |z| / 2^k (|z| here is the product of the *encoded* integers, i.e. with 2d fractional bits;
//! the failures over many truncations add up at most). With k = 64 and encoded products below
//! 2^40 that is below 2^-24 per multiplication. In Z_2^32 the margin is thin: with d = 8, real
//! products of magnitude 1000 fail about once in 64 multiplications, so use Z_2^32 fixed point
//! only for values of a few units, or Z_2^64.
//!
//! **Leakage caveat.** The rounding bit depends on the dropped low bits of `x·y` and on `r`; the
//! ideal functionality is "truncate with a random −1 error", not exact truncation. Revealing
//! many results computed from the same secret lets an observer estimate those low bits
//! statistically (as noted for probabilistic truncation in the literature); outputs that will
//! be revealed should be rounded or compared rather than published with full precision.

use super::binary::{to_planes, words};
use super::compare::SharedBits;
use super::prep::TruncPairs;
use super::{purpose, Rep3, Rep3Vec};
use crate::net::{PartyId, Transport};
use crate::ring::{kernels, IntRing};
use crate::Error;

/// A truncation pair shifts by `0 < d < k − 1` bits (an integer part and a sign must remain).
pub(crate) fn check_shift(d: u32, k: u32) -> Result<(), Error> {
    if d == 0 || d >= k - 1 {
        return Err(Error::ApiMisuse(format!("truncation by {d} bits in a {k}-bit ring")));
    }
    Ok(())
}

impl<T: Transport> Rep3<T> {
    /// Makes `n` truncation pairs for a shift of `d` bits (setup phase; ~11 rounds).
    pub async fn trunc_pairs<R: IntRing>(
        &mut self,
        n: usize,
        d: u32,
    ) -> Result<TruncPairs<R>, Error> {
        let k = R::BITS;
        check_shift(d, k)?;
        let me = self.me();
        let op = self.ctx.next_op();
        let mut ra = vec![R::ZERO; n];
        match me.0 {
            0 => R::fill_random(&mut self.prg_prev(op, purpose::RANDOM), &mut ra),
            2 => R::fill_random(&mut self.prg_next(op, purpose::RANDOM), &mut ra),
            _ => {}
        }
        let rb = (me.0 == 1).then(|| {
            let mut v = vec![R::ZERO; n];
            R::fill_random(&mut self.prg_own(op, purpose::RANDOM), &mut v);
            v
        });
        let shift = |v: &[R]| -> Vec<R> { v.iter().map(|x| x.shr_logical(d)).collect() };
        let knows_a = me.0 != 1;
        let w = words(n);
        let a = Rep3Vec::public_component0(me, knows_a.then(|| ra.clone()), n);
        let a_sh = Rep3Vec::public_component0(me, knows_a.then(|| shift(&ra)), n);
        let a_pl = self.planes_of_component0(knows_a.then(|| to_planes(&ra)), k as usize, w);

        self.ctx.round();
        let p1 = PartyId(1);
        let b = self.share_from_one(p1, rb.as_deref(), n).await?;
        let rb_sh = rb.as_deref().map(shift);
        let b_sh = self.share_from_one(p1, rb_sh.as_deref(), n).await?;
        let b_pl = self.planes_from_one(p1, rb.as_deref().map(to_planes), k as usize, w).await?;

        let (k1, kk) = (k as usize - 1, k as usize);
        let g =
            super::adder::carries(self, &a_pl, &b_pl, &[d as usize - 1, kk - 2, k1], false).await?;
        let msb = a_pl.xor_one(&b_pl, k1).add(&g[1])?;
        // Inject c_d, c_k and msb(r) together: three padded blocks of w words.
        let bits = SharedBits { n: 3 * w * 64, words: Rep3Vec::concat(&[&g[0], &g[2], &msb]) };
        let dab = self.dabits::<R>(bits.n).await?;
        let lifted = self.bit_to_arith(&bits, dab).await?;
        let block = w * 64;
        let cd = lifted.slice(0..n);
        let ck = lifted.slice(block..block + n);
        let m = lifted.slice(2 * block..2 * block + n);
        let top = R::ONE.shl(k - d);
        let r_shifted = a_sh.add(&b_sh)?.add(&cd)?.sub(&ck.add(&m)?.scale(top))?;
        Ok(TruncPairs { frac_bits: d, r: a.add(&b)?, r_shifted })
    }

    /// Turns additive components `z` of a double-precision result into shares of `z >> d`,
    /// consuming `pairs` (1 round; P1 sends 2 elements per value, P0 and P2 one each).
    async fn reshare_truncated<R: IntRing>(
        &mut self,
        mut z: Vec<R>,
        pairs: TruncPairs<R>,
    ) -> Result<Rep3Vec<R>, Error> {
        pairs.fits(z.len())?;
        let TruncPairs { frac_bits, r, r_shifted: mut out } = pairs;
        self.add_zero_share(&mut z);
        kernels::sub_assign(&mut z, &r.a);
        let me = self.me();
        let (p0, p1, p2) = (PartyId(0), PartyId(1), PartyId(2));
        let n = z.len();
        self.ctx.round();
        if me == p1 {
            self.ctx.send(p0, &z)?;
            self.ctx.send(p2, &z)?;
            return Ok(out);
        }
        let other = if me == p0 { p2 } else { p0 };
        self.ctx.send(other, &z)?;
        for from in [p1, other] {
            let w = self.ctx.recv::<R>(from, n).await?;
            kernels::add_assign(&mut z, &w);
        }
        // c = z − r is public to P0 and P2, the holders of component 0: add c >> d there.
        let comp0 = if me == p0 { &mut out.a } else { &mut out.b };
        for (o, c) in comp0.iter_mut().zip(&z) {
            *o += c.shr_arith(frac_bits);
        }
        Ok(out)
    }

    /// Fixed-point `x·y` truncated by the pairs' `d` bits (1 round, 4/3 elements per party).
    pub async fn mul_fixed<R: IntRing>(
        &mut self,
        x: &Rep3Vec<R>,
        y: &Rep3Vec<R>,
        pairs: TruncPairs<R>,
    ) -> Result<Rep3Vec<R>, Error> {
        x.check_len(y, "mul_fixed")?;
        let z = Self::local_mul(x, y);
        self.reshare_truncated(z, pairs).await
    }

    /// Fixed-point matrix product (m×k by k×n), truncated once per output (1 round).
    pub async fn matmul_fixed<R: IntRing>(
        &mut self,
        a: &Rep3Vec<R>,
        b: &Rep3Vec<R>,
        (m, k, n): (usize, usize, usize),
        pairs: TruncPairs<R>,
    ) -> Result<Rep3Vec<R>, Error> {
        let z = Self::local_matmul(a, b, m, k, n)?;
        self.reshare_truncated(z, pairs).await
    }
}
