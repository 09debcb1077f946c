//! spdz2k as a [`crate::sharing`] scheme: [`Arith`] with inputs by preprocessed masks, Beaver
//! products and matrix products, probabilistic truncation, and the MAC check before every
//! release.

use super::boolean::Planes;
use super::prep::{MatTriple, RandBits, Triples};
use super::{Auth, Spdz2k, Spdz2kRing};
use crate::net::{PartyId, Transport};
use crate::ring::Ring;
use crate::sharing::{check_dims, check_input_values, Arith, InputSlot, Len, Linear, Store};
use crate::Error;

/// The material of elementwise products: one triple per output, and `k` random bits per
/// output for truncation when they are fixed-point products.
#[derive(Debug)]
pub struct MulPrep<R: Spdz2kRing> {
    triples: Triples<R>,
    trunc: Option<(u32, RandBits<R>)>,
}

/// Taken per layer from one run's material: `n` triples and their truncation bits.
impl<R: Spdz2kRing> Store for MulPrep<R> {
    fn len(&self) -> usize {
        self.triples.len()
    }
    fn take(&mut self, n: usize) -> Result<Self, Error> {
        let triples = self.triples.take(n)?;
        let trunc = match &mut self.trunc {
            Some((d, bits)) => Some((*d, bits.take(n * R::BITS as usize)?)),
            None => None,
        };
        Ok(Self { triples, trunc })
    }
}

/// The material of one matrix product: its matrix triple, and truncation bits as
/// [`MulPrep`].
#[derive(Debug)]
pub struct MatMulPrep<R: Spdz2kRing> {
    triple: MatTriple<R>,
    trunc: Option<(u32, RandBits<R>)>,
}

impl<T: Transport> Spdz2k<T> {
    /// Public `c` as a sharing: party 0's value shares, every party's MAC shares `c·α_j`.
    pub fn constant<R: Spdz2kRing>(&self, c: &[R]) -> Auth<R> {
        let zero = Auth {
            x: vec![<R::Wide as Ring>::ZERO; c.len()],
            m: vec![<R::Wide as Ring>::ZERO; c.len()],
        };
        zero.add_public(self.me(), R::alpha(self), c).unwrap_or(zero)
    }

    /// `x + c` for public `c`.
    pub(crate) fn add_public<R: Spdz2kRing>(&self, x: &Auth<R>, c: &[R]) -> Result<Auth<R>, Error> {
        x.add_public(self.me(), R::alpha(self), c)
    }

    /// Truncation material for `n` outputs: `k` random bits each.
    async fn trunc_prep<R: Spdz2kRing>(
        &mut self,
        n: usize,
        frac_bits: u32,
    ) -> Result<Option<(u32, RandBits<R>)>, Error> {
        if frac_bits == 0 {
            return Ok(None);
        }
        if frac_bits >= R::BITS {
            return Err(Error::ApiMisuse(format!(
                "a truncation by {frac_bits} bits in a {}-bit ring",
                R::BITS
            )));
        }
        Ok(Some((frac_bits, self.rand_bits::<R>(n * R::BITS as usize).await?)))
    }

    /// Probabilistic truncation: the paper's Π_TruncP in the form `c = a + r`,
    /// `b = ⌊c / 2^d⌋ − r'`, gives `⌊a / 2^d⌋` or one more (unbiased stochastic rounding) for
    /// `|a| < 2^ℓ`, except with probability `2^(ℓ−k)`; this returns `b − 1`, the floor or one
    /// less, one low on average, as every scheme's truncation here does (the inference walk
    /// relies on it: its requantization adds the one back). One round, `k` bits per value.
    async fn truncate<R: Spdz2kRing>(
        &mut self,
        a: Auth<R>,
        d: u32,
        mut bits: RandBits<R>,
    ) -> Result<Auth<R>, Error> {
        let n = a.len();
        let k = R::BITS as usize;
        if bits.len() != n * k {
            return Err(Error::ApiMisuse(format!(
                "truncation of {n} values with {} random bits ({k} each)",
                bits.len()
            )));
        }
        let masks = Planes { bits: bits.take(n * k)?.b, n };
        let (r, r_hi) = (masks.sum(0..k)?, masks.sum(d as usize..k)?);
        let c = self.open_unchecked(&a.add(&r)?).await?;
        let low: Vec<R> = c.iter().map(|&c| c.shr_logical(d) - R::ONE).collect();
        self.constant(&low).sub(&r_hi)
    }

    async fn finish<R: Spdz2kRing>(
        &mut self,
        z: Auth<R>,
        trunc: Option<(u32, RandBits<R>)>,
    ) -> Result<Auth<R>, Error> {
        match trunc {
            Some((d, bits)) => self.truncate(z, d, bits).await,
            None => Ok(z),
        }
    }
}

impl<T: Transport, R: Spdz2kRing> Arith<R> for Spdz2k<T> {
    type V = Auth<R>;
    type Tag = Len;
    type InputPrep = InputSlot;
    type MulPrep = MulPrep<R>;
    type MatMulPrep = MatMulPrep<R>;

    const NAME: &'static str = "spdz2k";

    fn me(&self) -> PartyId {
        Self::me(self)
    }

    fn tag(x: &Auth<R>) -> Len {
        Len(x.len())
    }

    fn constant(&self, c: &[R]) -> Auth<R> {
        Self::constant(self, c)
    }

    fn input_prep(&mut self, owner: PartyId, n: usize) -> (InputSlot, Len) {
        (InputSlot { owner, n }, Len(n))
    }

    async fn deliver_input_prep(&mut self, prep: &InputSlot) -> Result<(), Error> {
        self.refuse_client(prep.owner)
    }

    /// The owner broadcasts `ε = x − r` for a preprocessed mask `[r]` only it knows (one
    /// round, `k` bits per value to each party); everyone sets `[x] = [r] + ε`. The `ε` are
    /// compared by digest at the next check, so an owner that sent parties different ones
    /// is caught.
    async fn input(
        &mut self,
        owner: PartyId,
        values: Option<&[R]>,
        prep: InputSlot,
    ) -> Result<Auth<R>, Error> {
        prep.check(owner, values.map(<[R]>::len))?;
        self.refuse_client(owner)?;
        let me = self.me();
        check_input_values(me, owner, values, prep.n)?;
        let masks = self.input_masks::<R>(owner, prep.n).await?;
        let roster = self.roster();
        let ctx = self.ctx_mut();
        ctx.round();
        let eps = match (values, &masks.values) {
            (Some(x), Some(r)) => {
                let eps: Vec<R> = x.iter().zip(r).map(|(&x, &r)| x - r).collect();
                for peer in roster.others(me) {
                    ctx.send(peer, &eps)?;
                }
                eps
            }
            _ => ctx.recv::<R>(owner, prep.n).await?,
        };
        self.absorb_public(&eps);
        self.add_public(&masks.r, &eps)
    }

    async fn open(&mut self, x: Auth<R>) -> Result<Vec<R>, Error> {
        let opened = self.open_unchecked(&x).await?;
        self.check().await?;
        Ok(opened)
    }

    /// Checks everything opened so far, opens `x − r` for a mask `r` only `to` knows, checks
    /// that opening too, and `to` adds `r`. Two checks: the first keeps a cheater from
    /// learning an output of values it changed.
    async fn open_to(&mut self, to: PartyId, x: Auth<R>) -> Result<Option<Vec<R>>, Error> {
        self.refuse_client(to)?;
        if !self.roster().is_party(to) {
            return Err(Error::ApiMisuse(format!("open_to: {to} is not a compute party")));
        }
        self.check().await?;
        let masks = self.input_masks::<R>(to, x.len()).await?;
        let masked = self.open_unchecked(&x.sub(&masks.r)?).await?;
        self.check().await?;
        Ok(masks.values.map(|r| masked.iter().zip(r).map(|(&m, r)| m + r).collect()))
    }

    async fn mul_prep(
        &mut self,
        x: &Len,
        y: &Len,
        frac_bits: u32,
    ) -> Result<(MulPrep<R>, Len), Error> {
        crate::sharing::same_len(x.0, y.0, "mul_prep")?;
        let triples = self.triples::<R>(x.0).await?;
        let trunc = self.trunc_prep::<R>(x.0, frac_bits).await?;
        Ok((MulPrep { triples, trunc }, Len(x.0)))
    }

    /// Beaver: open `ε = x − a` and `δ = y − b` (one round, `2k` bits per value to each
    /// party), then `[z] = [c] + ε·[b] + δ·[a] + ε·δ`.
    async fn mul(&mut self, x: &Auth<R>, y: &Auth<R>, prep: MulPrep<R>) -> Result<Auth<R>, Error> {
        let n = x.len();
        if y.len() != n || prep.triples.len() != n {
            return Err(Error::ApiMisuse(format!(
                "mul: operands of {n} and {} values, a preparation for {}",
                y.len(),
                prep.triples.len()
            )));
        }
        let z = self.beaver(x, y, prep.triples).await?;
        self.finish(z, prep.trunc).await
    }

    async fn matmul_prep(
        &mut self,
        a: &Len,
        b: &Len,
        dims: (usize, usize, usize),
        frac_bits: u32,
    ) -> Result<(MatMulPrep<R>, Len), Error> {
        check_dims("matmul_prep", a.0, b.0, dims)?;
        let triple = self.mat_triple::<R>(dims).await?;
        let trunc = self.trunc_prep::<R>(dims.0 * dims.2, frac_bits).await?;
        Ok((MatMulPrep { triple, trunc }, Len(dims.0 * dims.2)))
    }

    /// Beaver with a matrix triple: open `E = X − A` and `D = Y − B` (one round,
    /// `(ml + ln)·k` bits to each party), then `[Z] = [C] + E·[B] + [A]·D + E·D`.
    async fn matmul(
        &mut self,
        x: &Auth<R>,
        y: &Auth<R>,
        dims: (usize, usize, usize),
        prep: MatMulPrep<R>,
    ) -> Result<Auth<R>, Error> {
        check_dims("matmul", x.len(), y.len(), dims)?;
        let MatTriple { dims: made, a, b, c } = prep.triple;
        if made != dims {
            return Err(Error::ApiMisuse(format!(
                "matmul of shapes {dims:?} with a preparation for {made:?}"
            )));
        }
        let (m, l, n) = dims;
        let open = self.open_unchecked(&Auth::concat(&[&x.sub(&a)?, &y.sub(&b)?])).await?;
        let (e, d) = open.split_at(m * l);
        // E·[B] and [A]·D on the wide shares (value and MAC alike), E·D public.
        let wide = |v: &[R]| -> Vec<R::Wide> { v.iter().map(|x| x.widen_signed()).collect() };
        let (ew, dw) = (wide(e), wide(d));
        let mut z = c;
        for (share, (sa, sb)) in [(&mut z.x, (&a.x, &b.x)), (&mut z.m, (&a.m, &b.m))] {
            for i in 0..m {
                for j in 0..n {
                    let mut acc = share[i * n + j];
                    for t in 0..l {
                        acc += ew[i * l + t] * sb[t * n + j] + sa[i * l + t] * dw[t * n + j];
                    }
                    share[i * n + j] = acc;
                }
            }
        }
        let mut ed = vec![R::ZERO; m * n];
        for i in 0..m {
            for j in 0..n {
                ed[i * n + j] = (0..l).fold(R::ZERO, |acc, t| acc + e[i * l + t] * d[t * n + j]);
            }
        }
        let z = self.add_public(&z, &ed)?;
        self.finish(z, prep.trunc).await
    }
}

impl<T: Transport> Spdz2k<T> {
    /// Clients that are not compute parties have no place in a dishonest-majority session:
    /// one joins as a party.
    pub(crate) fn refuse_client(&self, who: PartyId) -> Result<(), Error> {
        if self.roster().is_party(who) {
            Ok(())
        } else {
            Err(Error::ApiMisuse(format!(
                "spdz2k: {who} is not a compute party; a client takes part as one (its inputs \
                 and outputs are a party's)"
            )))
        }
    }
}
