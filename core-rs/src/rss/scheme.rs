//! rss as a [`crate::sharing`] scheme: [`Arith`] over its own protocols.
//!
//! Inputs and exact products need no material, so their preparations are plain records,
//! checked against the online call; fixed-point products take truncation material made in
//! setup from random bits ([`super::trunc`]).

use super::client::RssClient;
use super::{Rss, RssVec};
use super::{TruncPairs, Widen};
use crate::net::{Ctx, PartyId, Roster, Transport};
use crate::prg::Seed;
use crate::ring::Ring;
use crate::sharing::{check_dims, Arith, InputClient, InputSlot, Len, ProductPrep, Session};
use crate::Error;

impl<T: Transport> Rss<T> {
    /// The material of products with `outputs` results: truncation material when they are
    /// fixed-point ones.
    async fn product_prep<R: Widen>(
        &mut self,
        outputs: usize,
        frac_bits: u32,
    ) -> Result<(ProductPrep<TruncPairs<R>>, Len), Error> {
        let trunc = match frac_bits {
            0 => None,
            d => Some(self.trunc_pairs(outputs, d).await?),
        };
        Ok((ProductPrep { outputs, trunc }, Len(outputs)))
    }
}

impl<T: Transport, R: Widen> Arith<R> for Rss<T> {
    type V = RssVec<R>;
    type Tag = Len;
    type InputPrep = InputSlot;
    type MulPrep = ProductPrep<TruncPairs<R>>;
    type MatMulPrep = ProductPrep<TruncPairs<R>>;

    const NAME: &'static str = "rss";

    fn me(&self) -> PartyId {
        Self::me(self)
    }

    fn tag(x: &RssVec<R>) -> Len {
        Len(x.len())
    }

    fn constant(&self, c: &[R]) -> RssVec<R> {
        Self::constant(self, c)
    }

    fn input_prep(&mut self, owner: PartyId, n: usize) -> (InputSlot, Len) {
        (InputSlot { owner, n }, Len(n))
    }

    async fn deliver_input_prep(&mut self, _: &InputSlot) -> Result<(), Error> {
        Ok(())
    }

    async fn input(
        &mut self,
        owner: PartyId,
        values: Option<&[R]>,
        prep: InputSlot,
    ) -> Result<RssVec<R>, Error> {
        prep.check(owner, values.map(<[R]>::len))?;
        if self.roster().is_client(owner) {
            if values.is_some() {
                return Err(Error::ApiMisuse(format!(
                    "input from client {owner}: no party passes values"
                )));
            }
            return self.input_from_client(owner, prep.n).await;
        }
        Self::input(self, owner, values, prep.n).await
    }

    async fn open(&mut self, x: RssVec<R>) -> Result<Vec<R>, Error> {
        Self::open(self, x).await
    }

    async fn open_to(&mut self, to: PartyId, x: RssVec<R>) -> Result<Option<Vec<R>>, Error> {
        if self.roster().is_client(to) {
            self.open_to_client(to, x).await?;
            return Ok(None);
        }
        self.open_to_party(to, x).await
    }

    async fn mul_prep(
        &mut self,
        x: &Len,
        y: &Len,
        frac_bits: u32,
    ) -> Result<(ProductPrep<TruncPairs<R>>, Len), Error> {
        crate::sharing::Linear::<R>::add(x, y)?;
        self.product_prep(x.0, frac_bits).await
    }

    async fn mul(
        &mut self,
        x: &RssVec<R>,
        y: &RssVec<R>,
        prep: ProductPrep<TruncPairs<R>>,
    ) -> Result<RssVec<R>, Error> {
        prep.check("mul", x.len())?;
        match prep.trunc {
            None => Self::mul(self, x, y).await,
            Some(pairs) => self.mul_fixed(x, y, pairs).await,
        }
    }

    async fn matmul_prep(
        &mut self,
        a: &Len,
        b: &Len,
        dims: (usize, usize, usize),
        frac_bits: u32,
    ) -> Result<(ProductPrep<TruncPairs<R>>, Len), Error> {
        check_dims("matmul", a.0, b.0, dims)?;
        self.product_prep(dims.0 * dims.2, frac_bits).await
    }

    async fn matmul(
        &mut self,
        a: &RssVec<R>,
        b: &RssVec<R>,
        dims: (usize, usize, usize),
        prep: ProductPrep<TruncPairs<R>>,
    ) -> Result<RssVec<R>, Error> {
        prep.check("matmul", dims.0 * dims.2)?;
        match prep.trunc {
            None => Self::matmul(self, a, b, dims).await,
            Some(pairs) => self.matmul_fixed(a, b, dims, pairs).await,
        }
    }
}

/// rss runs on its own session.
impl<T> Session<Self> for Rss<T> {
    fn start(base: Self) -> Self {
        base
    }
    fn finish(self) -> Self {
        self
    }
    fn base(&self) -> &Self {
        self
    }
    fn base_mut(&mut self) -> &mut Self {
        self
    }
}

/// The client of an rss session is its first client: its id is the number of parties `n`, and
/// the threshold is `t = (n − 1) / 2`.
impl<T: Transport, R: Ring> InputClient<T, R> for RssClient<T> {
    type Prep = ();

    fn new(ctx: Ctx<T>, own: Seed) -> Self {
        let n = ctx.me().index();
        // An id that names no supported roster fails at the first share, with the reason.
        let roster = Roster::honest_majority(n).unwrap_or(Roster::THREE);
        Self::new(ctx, roster, own)
    }
    fn into_ctx(self) -> Ctx<T> {
        Self::into_ctx(self)
    }
    async fn receive_prep(&mut self, _: usize) -> Result<(), Error> {
        Ok(())
    }
    fn share(&mut self, values: &[R], (): ()) -> Result<Vec<Vec<R>>, Error> {
        Self::share(self, values)
    }
    async fn reconstruct(&mut self, n: usize) -> Result<Vec<R>, Error> {
        Self::reconstruct(self, n).await
    }
}

/// Truncation material, then random bits (the input needs no material in rss): private
/// inference is the walk written once for such schemes.
impl<T> crate::nn::uniform::Uniform for Rss<T> {}
