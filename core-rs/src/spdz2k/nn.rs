//! Private inference on `spdz2k` ([`Inference`] for [`Spdz2k`]): the walk written once for
//! schemes with uniform material ([`crate::nn::uniform`]), with one difference: a matrix
//! product takes a matrix triple made for its shape, so the setup makes one per dense or
//! convolution layer ([`PlanShape::matmuls`]) and the online product opens only `X − A` and
//! `W − B`.
//!
//! Material made in setup, before any input: elementwise triples with truncation bits for
//! the public scales and requantizations, a matrix triple (with truncation bits) per layer,
//! and random bits for the comparisons' bit injections. The comparisons' own bits and bit
//! triples, and a tree ensemble's products, are made when they run. Every opening joins the
//! MAC check that runs before the result is released ([`crate::sharing::Arith::open_to`]),
//! so a deviating party makes the session abort instead of changing the class.
//!
//! The model owner and the input owner are compute parties (a client takes part as one).

use std::collections::VecDeque;

use super::prep::RandBits;
use super::scheme::{MatMulPrep, MulPrep};
use super::{Spdz2k, Spdz2kRing};
use crate::net::{PartyId, Transport};
use crate::nn::exec::{Inference, SharedModel};
use crate::nn::uniform::{self, PerProduct, UniformPrep};
use crate::nn::{Output, PlanShape};
use crate::sharing::{Arith, Boolean, InputSlot, Len};
use crate::Error;

/// The material of one run of a plan on a batch: consumed by [`Inference::infer`], never
/// reusable.
pub type NnPrep<R> = UniformPrep<InputSlot, MulPrep<R>, RandBits<R>, PerProduct<MatMulPrep<R>>>;

impl<T: Transport, R: Spdz2kRing> Inference<R> for Spdz2k<T> {
    type Prep = NnPrep<R>;

    async fn preprocess(
        &mut self,
        model: &SharedModel<Self::V>,
        batch: usize,
        output: Output,
        input_owner: PartyId,
    ) -> Result<NnPrep<R>, Error> {
        let shape: &PlanShape = model.shape();
        self.refuse_client(input_owner)?;
        let (input, _) = Arith::<R>::input_prep(self, input_owner, batch * shape.input_len);
        let needs = shape.needs(batch, output);
        let dims = shape.matmuls(batch);
        // The layers' products are matrix triples here: the elementwise ones are the rest.
        let (exact, bits) = (shape.is_integer(), shape.product_bits());
        let lin: usize = if exact { 0 } else { dims.iter().map(|&(m, _, n)| m * n).sum() };
        let elementwise = Len(needs.products - lin);
        let (products, _) = self.mul_prep(&elementwise, &elementwise, bits).await?;
        let mut matmuls = VecDeque::with_capacity(dims.len());
        for d @ (m, l, n) in dims {
            let (p, _) =
                self.matmul_prep(&Len(m * l), &Len(l * n), d, if exact { 0 } else { bits }).await?;
            matmuls.push_back(p);
        }
        let bits = Boolean::<R>::bit_prep(self, needs.bits).await?;
        Ok(UniformPrep {
            shape: shape.clone(),
            batch,
            output,
            input: Some(input),
            products,
            matmuls: PerProduct(matmuls),
            bits,
        })
    }

    fn for_output(prep: NnPrep<R>, output: Output) -> Result<NnPrep<R>, Error> {
        prep.for_output(output)
    }

    fn take_input(prep: &mut NnPrep<R>) -> Result<InputSlot, Error> {
        prep.take_input()
    }

    async fn infer(
        &mut self,
        model: &SharedModel<Self::V>,
        x: Self::V,
        prep: NnPrep<R>,
    ) -> Result<Self::V, Error> {
        uniform::infer(self, model, x, prep).await
    }
}
