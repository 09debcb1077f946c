//! rep3 as a [`crate::sharing`] scheme: [`Arith`] over its own protocols.
//!
//! rep3 needs no material for inputs or exact products, so their preparations are plain
//! records (checked against the online call) and cost nothing; a fixed-point product takes
//! truncation pairs, made in setup.

use super::client::Rep3Client;
use super::{Rep3, Rep3Vec, TruncPairs};
use crate::net::{Ctx, PartyId, Transport};
use crate::prg::Seed;
use crate::ring::{IntRing, Ring};
use crate::sharing::{check_dims, Arith, InputClient, InputSlot, Len, Session, Store};
use crate::Error;

/// rep3's material for products (and mal3's): truncation pairs for fixed-point ones.
pub type ProductPrep<R> = crate::sharing::ProductPrep<TruncPairs<R>>;

/// Truncation pairs are taken per layer from one run's material.
impl<R: Ring> Store for TruncPairs<R> {
    fn len(&self) -> usize {
        Self::len(self)
    }
    fn take(&mut self, n: usize) -> Result<Self, Error> {
        Self::take(self, n)
    }
}

impl<T: Transport> Rep3<T> {
    async fn product_prep<R: IntRing>(
        &mut self,
        outputs: usize,
        frac_bits: u32,
    ) -> Result<(ProductPrep<R>, Len), Error> {
        let trunc = match frac_bits {
            0 => None,
            d => Some(self.trunc_pairs(outputs, d).await?),
        };
        Ok((ProductPrep { outputs, trunc }, Len(outputs)))
    }
}

impl<T: Transport, R: IntRing> Arith<R> for Rep3<T> {
    type V = Rep3Vec<R>;
    type Tag = Len;
    type InputPrep = InputSlot;
    type MulPrep = ProductPrep<R>;
    type MatMulPrep = ProductPrep<R>;

    const NAME: &'static str = "rep3";

    fn me(&self) -> PartyId {
        Self::me(self)
    }

    fn tag(x: &Rep3Vec<R>) -> Len {
        Len(x.len())
    }

    fn constant(&self, c: &[R]) -> Rep3Vec<R> {
        Rep3Vec::public(Self::me(self), c)
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
    ) -> Result<Rep3Vec<R>, Error> {
        prep.check(owner, values.map(<[R]>::len))?;
        if owner.0 >= 3 {
            if values.is_some() {
                return Err(Error::ApiMisuse(format!(
                    "input from client {owner}: no party passes values"
                )));
            }
            return self.input_from_client(owner, prep.n).await;
        }
        Self::input(self, owner, values, prep.n).await
    }

    async fn open(&mut self, x: Rep3Vec<R>) -> Result<Vec<R>, Error> {
        self.reveal(x).await
    }

    async fn open_to(&mut self, to: PartyId, x: Rep3Vec<R>) -> Result<Option<Vec<R>>, Error> {
        if to.0 >= 3 {
            self.reveal_to_client(to, x).await?;
            return Ok(None);
        }
        self.reveal_to(to, x).await
    }

    async fn mul_prep(
        &mut self,
        x: &Len,
        y: &Len,
        frac_bits: u32,
    ) -> Result<(ProductPrep<R>, Len), Error> {
        crate::sharing::Linear::<R>::add(x, y)?;
        self.product_prep(x.0, frac_bits).await
    }

    async fn mul(
        &mut self,
        x: &Rep3Vec<R>,
        y: &Rep3Vec<R>,
        prep: ProductPrep<R>,
    ) -> Result<Rep3Vec<R>, Error> {
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
    ) -> Result<(ProductPrep<R>, Len), Error> {
        check_dims("matmul", a.0, b.0, dims)?;
        self.product_prep(dims.0 * dims.2, frac_bits).await
    }

    async fn matmul(
        &mut self,
        a: &Rep3Vec<R>,
        b: &Rep3Vec<R>,
        dims: (usize, usize, usize),
        prep: ProductPrep<R>,
    ) -> Result<Rep3Vec<R>, Error> {
        prep.check("matmul", dims.0 * dims.2)?;
        let (m, k, n) = dims;
        match prep.trunc {
            None => Self::matmul(self, a, b, m, k, n).await,
            Some(pairs) => self.matmul_fixed(a, b, dims, pairs).await,
        }
    }
}

/// rep3 runs on its own session.
impl<T> Session<Self> for Rep3<T> {
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

/// A rep3 client draws its own additive sharing: its input needs no setup.
impl<T: Transport, R: Ring> InputClient<T, R> for Rep3Client<T> {
    type Prep = ();

    fn new(ctx: Ctx<T>, own: Seed) -> Self {
        Self::new(ctx, own)
    }
    fn into_ctx(self) -> Ctx<T> {
        Self::into_ctx(self)
    }
    async fn receive_prep(&mut self, _: usize) -> Result<(), Error> {
        Ok(())
    }
    fn share(&mut self, values: &[R], (): ()) -> Result<Vec<Vec<R>>, Error> {
        Ok(Self::share(self, values)?.into())
    }
    async fn reconstruct(&mut self, n: usize) -> Result<Vec<R>, Error> {
        Self::reconstruct(self, n).await
    }
}
