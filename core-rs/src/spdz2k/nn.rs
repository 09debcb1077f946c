//! Private inference on `spdz2k` ([`Inference`] for [`Spdz2k`]): the walk written once for
//! schemes with uniform material ([`crate::nn::uniform`]), with one difference: a matrix
//! product takes a matrix triple made for its shape, so the setup makes one per dense or
//! convolution layer ([`PlanShape::matmuls`]) and the online product opens only `X − A` and
//! `W − B`.
//!
//! Material made in setup, before any input: elementwise triples with truncation bits for
//! the public scales and requantizations, a matrix triple (with truncation bits) per layer,
//! random bits for the comparisons' bit injections, and what the comparisons draw when they
//! run (their random bits, bit triples and selection products, the output checks' masks: see
//! `online_material`), a tree ensemble's reach products and leaf matrix triple, and the
//! client's input and output masks, so the online phase's rounds are the protocol's own (a
//! logreg run: 2 s → 17 ms online in the tests' build). Every opening joins the
//! MAC check that runs before the result is released ([`crate::sharing::Arith::open_to`]),
//! so a deviating party makes the session abort instead of changing the class.
//!
//! The model owner and the input owner are compute parties (a client takes part as one).

use std::collections::VecDeque;

use super::prep::{Ahead, RandBits};
use super::scheme::{MatMulPrep, MulPrep};
use super::{Spdz2k, Spdz2kRing};
use crate::net::{PartyId, Transport};
use crate::nn::exec::{Inference, SharedModel};
use crate::nn::uniform::{self, PerProduct, UniformPrep};
use crate::nn::{Output, PlanShape, StepShape};
use crate::sharing::{Arith, Boolean, InputSlot, Len};
use crate::Error;

/// The material of one run of a plan on a batch: consumed by [`Inference::infer`], never
/// reusable.
pub type NnPrep<R> =
    UniformPrep<InputSlot, MulPrep<R>, RandBits<R>, PerProduct<MatMulPrep<R>, MulPrep<R>>>;

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
        let matmuls = shape.matmuls(batch);
        // The layers' and trees' matrix products take matrix triples here: the elementwise
        // products are the rest of each count.
        let in_matmuls = |exact: bool| -> usize {
            matmuls.iter().filter(|(_, e)| *e == exact).map(|&((m, _, n), _)| m * n).sum()
        };
        let bits = shape.product_bits();
        let truncated = Len(needs.products - in_matmuls(false));
        let (products, _) = self.mul_prep(&truncated, &truncated, bits).await?;
        let exact = Len(needs.exact - in_matmuls(true));
        let (exact, _) = self.mul_prep(&exact, &exact, 0).await?;
        let mut triples = VecDeque::with_capacity(matmuls.len());
        for (d @ (m, l, n), e) in matmuls {
            let (p, _) =
                self.matmul_prep(&Len(m * l), &Len(l * n), d, if e { 0 } else { bits }).await?;
            triples.push_back(p);
        }
        let bits = Boolean::<R>::bit_prep(self, needs.bits).await?;
        let ahead = online_material::<R>(shape, batch, output, needs.bits, input_owner);
        self.make_ahead::<R>(ahead).await?;
        Ok(UniformPrep {
            shape: shape.clone(),
            batch,
            output,
            input: Some(input),
            products,
            matmuls: PerProduct { matmuls: triples, exact },
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

/// What the online phase of a run draws from the generator, made ahead with the rest of the
/// setup: per comparison (`comparisons` = [`crate::nn::PrepNeeds::bits`]) an MSB's edaBit and
/// random binary bit and its carry circuit's `2(k − 2)` bit triples, and one triple for the
/// bit-by-value product of a ReLU, max or argmax selection (two for an argmax, whose index
/// follows its value; none for a tree node, whose bit is only converted); the masks of the
/// two MAC checks of the output's opening ([`Arith::open_to`]: the first checks the arithmetic
/// openings and, after comparisons, the binary ones); and the input owner's masks, for its
/// input and for the output opened to it (a spdz2k client is the input's owner and the
/// output's receiver: outputs opened to another party make their masks when opened).
fn online_material<R: Spdz2kRing>(
    shape: &PlanShape,
    batch: usize,
    output: Output,
    comparisons: usize,
    input_owner: PartyId,
) -> Ahead {
    let k = R::BITS as usize;
    let nodes: usize = shape
        .steps
        .iter()
        .map(|s| if let StepShape::Trees(t) = s { batch * t.nodes.len() } else { 0 })
        .sum();
    let classes = shape.output_len();
    let (payload, outputs) = match output {
        Output::Argmax => (batch * classes.saturating_sub(1), batch),
        Output::Logits => (0, batch * classes),
    };
    Ahead {
        eda_bits: comparisons,
        binary_bits: comparisons,
        rand_bits: 0,
        bit_triples: 2 * (k - 2) * comparisons,
        triples: comparisons - nodes + payload,
        random: if comparisons > 0 { 3 } else { 2 },
        masks: Some((input_owner, batch * shape.input_len + outputs)),
    }
}
