//! METEOR as a [`crate::sharing`] scheme: [`Arith`] over its setup and online protocols.
//!
//! A tag is a value's mask ⟨ψ⟩: every preparation is made for the masks of the operands it
//! will meet online, and the online call checks them. An exact product is the fixed-point one
//! that shifts by nothing (its output mask is the fresh mask itself, no truncation pairs).

use super::client::{ClientMask, MeteorClient};
use super::{FixedMultPrep, InputMask, MVec, MatMulPrep, Meteor, MeteorRing};
use crate::net::{Ctx, PartyId, Transport};
use crate::prg::Seed;
use crate::rep3::{Rep3, Rep3Vec, TruncPairs};
use crate::ring::{IntRing, Ring};
use crate::sharing::{check_dims, Arith, InputClient, Session};
use crate::Error;

impl<T: Transport> Meteor<T> {
    /// Truncation pairs for `n` outputs, or for `d = 0` a fresh mask as both halves.
    async fn pairs_or_mask<R: IntRing>(
        &mut self,
        n: usize,
        d: u32,
    ) -> Result<TruncPairs<R>, Error> {
        if d == 0 {
            let r = self.mask(n);
            return Ok(TruncPairs { frac_bits: 0, r_shifted: r.clone(), r });
        }
        self.p.trunc_pairs(n, d).await
    }
}

impl<T: Transport, R: IntRing + MeteorRing> Arith<R> for Meteor<T> {
    type V = MVec<R>;
    type Tag = Rep3Vec<R>;
    type InputPrep = InputMask<R>;
    type MulPrep = FixedMultPrep<R>;
    type MatMulPrep = MatMulPrep<R>;

    const NAME: &'static str = "meteor";

    fn me(&self) -> PartyId {
        Self::me(self)
    }

    fn tag(x: &MVec<R>) -> Rep3Vec<R> {
        x.mask().clone()
    }

    fn constant(&self, c: &[R]) -> MVec<R> {
        MVec::public(Self::me(self), c)
    }

    fn input_prep(&mut self, owner: PartyId, n: usize) -> (InputMask<R>, Rep3Vec<R>) {
        let mask = self.input_mask(owner, n);
        let tag = mask.mask().clone();
        (mask, tag)
    }

    async fn deliver_input_prep(&mut self, prep: &InputMask<R>) -> Result<(), Error> {
        if prep.owner.0 >= 3 {
            self.deliver_mask(prep).await?;
        }
        Ok(())
    }

    async fn input(
        &mut self,
        owner: PartyId,
        values: Option<&[R]>,
        prep: InputMask<R>,
    ) -> Result<MVec<R>, Error> {
        self.share(owner, values, prep).await
    }

    async fn open(&mut self, x: MVec<R>) -> Result<Vec<R>, Error> {
        self.reveal(x).await
    }

    async fn open_to(&mut self, to: PartyId, x: MVec<R>) -> Result<Option<Vec<R>>, Error> {
        if to.0 >= 3 {
            self.reveal_to_client(to, x).await?;
            return Ok(None);
        }
        self.reveal_to(to, x).await
    }

    async fn mul_prep(
        &mut self,
        x: &Rep3Vec<R>,
        y: &Rep3Vec<R>,
        frac_bits: u32,
    ) -> Result<(FixedMultPrep<R>, Rep3Vec<R>), Error> {
        let pairs = self.pairs_or_mask(x.len(), frac_bits).await?;
        let prep = self.mult_fixed_setup(x, y, pairs).await?;
        let tag = prep.out_mask().clone();
        Ok((prep, tag))
    }

    async fn mul(
        &mut self,
        x: &MVec<R>,
        y: &MVec<R>,
        prep: FixedMultPrep<R>,
    ) -> Result<MVec<R>, Error> {
        self.mult_fixed(x, y, prep).await
    }

    async fn matmul_prep(
        &mut self,
        a: &Rep3Vec<R>,
        b: &Rep3Vec<R>,
        dims: (usize, usize, usize),
        frac_bits: u32,
    ) -> Result<(MatMulPrep<R>, Rep3Vec<R>), Error> {
        check_dims("matmul", a.len(), b.len(), dims)?;
        let pairs = self.pairs_or_mask(dims.0 * dims.2, frac_bits).await?;
        let prep = self
            .matmul_fixed_setup_many(vec![(a, b, dims, pairs)])
            .await?
            .pop()
            .ok_or_else(|| Error::ApiMisuse("matmul setup: nothing prepared".into()))?;
        let tag = prep.out_mask().clone();
        Ok((prep, tag))
    }

    async fn matmul(
        &mut self,
        a: &MVec<R>,
        b: &MVec<R>,
        dims: (usize, usize, usize),
        prep: MatMulPrep<R>,
    ) -> Result<MVec<R>, Error> {
        if dims != prep.dims() {
            return Err(Error::ApiMisuse(format!(
                "matmul: shape {dims:?}, the preparation is for {:?}",
                prep.dims()
            )));
        }
        self.matmul_fixed(a, b, prep).await
    }
}

/// METEOR's masks are rep3 sharings: it runs on a rep3 session.
impl<T> Session<Rep3<T>> for Meteor<T> {
    fn start(base: Rep3<T>) -> Self {
        Self { p: base }
    }
    fn finish(self) -> Rep3<T> {
        self.p
    }
    fn base(&self) -> &Rep3<T> {
        &self.p
    }
    fn base_mut(&mut self) -> &mut Rep3<T> {
        &mut self.p
    }
}

/// A METEOR client receives its input's mask in setup and sends the masked input online.
impl<T: Transport, R: Ring> InputClient<T, R> for MeteorClient<T> {
    type Prep = ClientMask<R>;

    fn new(ctx: Ctx<T>, _: Seed) -> Self {
        Self::new(ctx)
    }
    fn into_ctx(self) -> Ctx<T> {
        Self::into_ctx(self)
    }
    async fn receive_prep(&mut self, n: usize) -> Result<ClientMask<R>, Error> {
        self.receive_mask(n).await
    }
    /// Every party receives the same masked input `m`.
    fn share(&mut self, values: &[R], mask: ClientMask<R>) -> Result<Vec<Vec<R>>, Error> {
        let m = Self::share(self, values, mask)?;
        Ok(vec![m; 3])
    }
    async fn reconstruct(&mut self, n: usize) -> Result<Vec<R>, Error> {
        Self::reconstruct(self, n).await
    }
}
