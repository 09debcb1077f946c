//! Private inference on `mal3` ([`Inference`] for [`Mal3`], with rep3's material type
//! [`NnPrep`]): the walk written once for schemes
//! whose material serves any values of its length ([`crate::nn::uniform`]), on mal3's checked
//! products, truncations and comparisons. Every product of a run is checked before the result
//! is opened, so a deviating server makes the opening abort instead of changing the answer.
//!
//! Material made in setup: truncation pairs, daBits, and validated triples for one product
//! per output (the pool). A dense or conv layer takes `m·k·n` triples (it is computed as
//! checked elementwise products), so most of a network's triples are validated when the
//! layer runs; the round counts grow accordingly (a pool batch is 9 rounds).

use super::scheme::Mal3Ring;
use super::Mal3;
use crate::net::{PartyId, Transport};
use crate::nn::exec::{Inference, SharedModel};
use crate::nn::uniform;
use crate::nn::Output;
use crate::rep3::{NnPrep, Rep3Vec};
use crate::ring::IntRing;
use crate::sharing::InputSlot;
use crate::Error;

impl<T: Transport, R: Mal3Ring + IntRing> Inference<R> for Mal3<T> {
    type Prep = NnPrep<R>;

    /// Truncation pairs and the pool's first triples, then daBits, each checked before it is
    /// returned (a service keeps the material for a later session).
    async fn preprocess(
        &mut self,
        model: &SharedModel<Rep3Vec<R>>,
        batch: usize,
        output: Output,
        input_owner: PartyId,
    ) -> Result<NnPrep<R>, Error> {
        uniform::preprocess(self, model, batch, output, input_owner).await
    }

    fn for_output(prep: NnPrep<R>, output: Output) -> Result<NnPrep<R>, Error> {
        prep.for_output(output)
    }

    fn take_input(prep: &mut NnPrep<R>) -> Result<InputSlot, Error> {
        prep.take_input()
    }

    async fn infer(
        &mut self,
        model: &SharedModel<Rep3Vec<R>>,
        x: Rep3Vec<R>,
        prep: NnPrep<R>,
    ) -> Result<Rep3Vec<R>, Error> {
        uniform::infer(self, model, x, prep).await
    }
}
