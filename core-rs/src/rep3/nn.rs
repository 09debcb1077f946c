//! Private inference on `rep3` ([`Inference`] for [`Rep3`]).
//!
//! rep3's material serves any values of its length, so its inference is the one written for
//! such schemes ([`crate::nn::uniform`]): each dense or conv layer is one
//! [`Rep3::matmul_fixed`] round (truncation folded in) plus a local bias add, each ReLU is
//! [`Boolean::relu`] (MSB extraction and one multiplexing round with daBits), and the optional
//! argmax a tournament of comparisons. The material of a run is truncation pairs and daBits
//! sized from the shape ([`crate::nn::PlanShape::needs`]), made in the setup phase without
//! inputs. The result stays shared; reveal it with [`Rep3::reveal`],
//! [`Rep3::reveal_to`] or [`Rep3::reveal_to_client`].
//!
//! A batch of samples runs together: every round carries the whole batch, so the round count
//! does not depend on the batch size (in Z_2^64: 1 per dense or conv layer, grouped or
//! depthwise included; a standalone BatchNormalization is a depthwise 1×1 conv, 16 bytes per
//! value from P1 and 8 from P0 and P2; 1 per public scale step, 0 for a sum pool, 9 per ReLU
//! layer, 10 per tournament level of max pooling or argmax; a tree ensemble takes 8 for all
//! comparisons (one MSB run), 1 for their bit injection, one per tree level below the root and
//! 1 for the leaf-weight product; NN-A takes 30 rounds for scores, 70 with the argmax).
//! Memory grows with the batch: a convolution materialises its im2col matrix of shares
//! (`batch · positions · patch_len` elements, 16 bytes each per party), so large conv batches
//! are best split into several runs.

use super::{DaBits, Rep3, Rep3Vec};
use crate::net::{PartyId, Transport};
use crate::nn::exec::{Inference, SharedModel};
use crate::nn::uniform::{self, UniformPrep};
use crate::nn::Output;
use crate::ring::IntRing;
#[cfg(doc)]
use crate::sharing::Boolean;
use crate::sharing::InputSlot;
use crate::Error;

use super::scheme::ProductPrep;

/// The material of one run of a plan on a batch: consumed by [`Inference::infer`], never
/// reusable.
pub type NnPrep<R> = UniformPrep<InputSlot, ProductPrep<R>, DaBits<R>>;

impl<T: Transport, R: IntRing> Inference<R> for Rep3<T> {
    type Prep = NnPrep<R>;

    /// Truncation pairs, then daBits (the input needs no material in rep3).
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
