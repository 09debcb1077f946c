//! Private inference on `rep3` ([`Inference`] for [`Rep3`]).
//!
//! Each dense or conv layer is one [`Rep3::matmul_fixed`] round (truncation folded in) plus a
//! local bias add, each ReLU is [`Rep3::relu`] (MSB extraction and one multiplexing round with
//! daBits), and the optional argmax a tournament of comparisons. The material of a run is
//! truncation pairs and daBits sized from the shape ([`crate::nn::PlanShape::needs`]), made in
//! the setup phase without inputs. The result stays shared; reveal it with [`Rep3::reveal`],
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

use std::borrow::Cow;

use super::{DaBits, Rep3, Rep3Vec, TruncPairs};
use crate::net::{PartyId, Transport};
use crate::nn::exec::{walk, Inference, Layers, SharedModel};
use crate::nn::trees::{self, TreeShape};
use crate::nn::{Output, PoolGeom};
use crate::ring::IntRing;
use crate::sharing::InputSlot;
use crate::Error;

/// The material of one run of a plan on a batch: consumed by [`Inference::infer`], never
/// reusable.
#[derive(Debug)]
pub struct NnPrep<R> {
    shape: crate::nn::PlanShape,
    batch: usize,
    output: Output,
    input: Option<InputSlot>,
    trunc: TruncPairs<R>,
    dabits: DaBits<R>,
}

impl<R> NnPrep<R> {
    /// The batch size this material is for.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// The same material for a run that gives `output`. Material made for [`Output::Argmax`]
    /// also serves [`Output::Logits`] (the argmax's daBits are then dropped unused, never kept
    /// for another run); the other way round it lacks daBits and is refused.
    pub fn for_output(mut self, output: Output) -> Result<Self, Error> {
        match (self.output, output) {
            (a, b) if a == b => Ok(self),
            (Output::Argmax, Output::Logits) => {
                self.output = output;
                Ok(self)
            }
            (made, _) => Err(Error::ApiMisuse(format!(
                "preprocessing made for {made:?} cannot give {output:?}"
            ))),
        }
    }
}

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
        let shape = &model.shape;
        let input = Some(InputSlot { owner: input_owner, n: batch * shape.input_len });
        let needs = shape.needs(batch, output);
        let trunc = self.trunc_pairs(needs.trunc_pairs, shape.frac_bits).await?;
        let dabits = self.dabits(needs.dabits).await?;
        Ok(NnPrep { shape: shape.clone(), batch, output, input, trunc, dabits })
    }

    fn for_output(prep: NnPrep<R>, output: Output) -> Result<NnPrep<R>, Error> {
        prep.for_output(output)
    }

    fn take_input(prep: &mut NnPrep<R>) -> Result<InputSlot, Error> {
        prep.input
            .take()
            .ok_or_else(|| Error::ApiMisuse("the input's slot was already taken".into()))
    }

    async fn infer(
        &mut self,
        model: &SharedModel<Rep3Vec<R>>,
        x: Rep3Vec<R>,
        prep: NnPrep<R>,
    ) -> Result<Rep3Vec<R>, Error> {
        if prep.shape != model.shape {
            return Err(Error::ApiMisuse("infer: preprocessing made for another plan".into()));
        }
        model.check_input(x.len(), prep.batch)?;
        let (batch, output) = (prep.batch, prep.output);
        let mut run = Run { p: self, prep };
        let h = walk(&mut run, &model.steps, model.shape.frac_bits, x, batch).await?;
        let Run { p, mut prep } = run;
        match output {
            Output::Logits => Ok(h),
            Output::Argmax => p.argmax(&h, model.shape.output_len(), &mut prep.dabits).await,
        }
    }
}

/// One online run: each layer takes its truncation pairs and daBits from the run's material.
struct Run<'p, T, R> {
    p: &'p mut Rep3<T>,
    prep: NnPrep<R>,
}

impl<'m, T: Transport, R: IntRing> Layers<'m, R> for Run<'_, T, R> {
    type V = Rep3Vec<R>;
    type W = Rep3Vec<R>;

    fn view(w: &'m Rep3Vec<R>) -> &'m Rep3Vec<R> {
        w
    }

    fn constant(&self, c: &[R]) -> Rep3Vec<R> {
        Rep3Vec::public(self.p.me(), c)
    }

    async fn matmul_fixed(
        &mut self,
        x: Rep3Vec<R>,
        w: Cow<'m, Rep3Vec<R>>,
        (m, k, n): (usize, usize, usize),
    ) -> Result<Rep3Vec<R>, Error> {
        let pairs = self.prep.trunc.take(m * n)?;
        self.p.matmul_fixed(&x, &w, (m, k, n), pairs).await
    }

    async fn relu(&mut self, x: Rep3Vec<R>) -> Result<Rep3Vec<R>, Error> {
        let dab = self.prep.dabits.take(x.len())?;
        self.p.relu(&x, dab).await
    }

    async fn max_pool(
        &mut self,
        x: Rep3Vec<R>,
        g: &PoolGeom,
        batch: usize,
    ) -> Result<Rep3Vec<R>, Error> {
        self.p.max_windows(&x, &g.windows(batch), &mut self.prep.dabits).await
    }

    /// A local product with the public factor, truncated with a pair (1 round).
    async fn scale_fixed(&mut self, x: Rep3Vec<R>, c: R) -> Result<Rep3Vec<R>, Error> {
        let pairs = self.prep.trunc.take(x.len())?;
        let cs = Rep3Vec::public(self.p.me(), &vec![c; x.len()]);
        self.p.mul_fixed(&x, &cs, pairs).await
    }

    async fn trees(
        &mut self,
        s: &TreeShape,
        weights: (&'m Rep3Vec<R>, &'m Rep3Vec<R>, &'m Rep3Vec<R>),
        x: Rep3Vec<R>,
        batch: usize,
    ) -> Result<Rep3Vec<R>, Error> {
        let dab = self.prep.dabits.take(batch * s.nodes.len())?;
        eval_trees(self.p, s, weights, &x, batch, dab).await
    }
}

/// A tree ensemble's secure evaluation (see [`crate::nn::trees`]): `x` is `batch × features`,
/// `t`, `w` and `base` the shared thresholds, leaf weights and base values; consumes
/// `batch · nodes` daBits. The sign bits are injected into the ring with daBits (1 round), the
/// reach indicators multiplied level by level, and the leaf weights summed by one product.
/// Returns `batch × classes` shared scores.
async fn eval_trees<T: Transport, R: IntRing>(
    p: &mut Rep3<T>,
    s: &TreeShape,
    (t, w, base): (&Rep3Vec<R>, &Rep3Vec<R>, &Rep3Vec<R>),
    x: &Rep3Vec<R>,
    batch: usize,
    dabits: DaBits<R>,
) -> Result<Rep3Vec<R>, Error> {
    trees::check_fit(s, [x.len(), t.len(), w.len(), base.len()], batch)?;
    let (l, c) = (s.leaves.len(), s.classes);
    let me = p.me();
    let levels = trees::by_level(s);
    let order = levels.concat();
    let bits = if order.is_empty() {
        Rep3Vec::public(me, &[])
    } else {
        let neg = p.ltz(&trees::differences(s, &order, x, t, batch)?).await?;
        let c01 = p.bit_to_arith(&neg, dabits).await?;
        // b = c or 1 − c.
        let (mul, add): (Vec<R>, Vec<R>) = order
            .iter()
            .flat_map(|&i| {
                let v = if s.nodes[i].mode.negated() {
                    (R::ZERO - R::ONE, R::ONE)
                } else {
                    (R::ONE, R::ZERO)
                };
                core::iter::repeat_n(v, batch)
            })
            .unzip();
        c01.mul_public(&mul)?.add_public(&add)?
    };
    let mut reach = trees::Reach::new(s, batch, Rep3Vec::public(me, &vec![R::ONE; batch]));
    for (d, (level, range)) in levels.iter().zip(trees::level_ranges(&levels, batch)).enumerate() {
        let r = reach.reach(level)?;
        let b = bits.slice(range);
        // The roots' reach is the public 1: their products are the bits themselves.
        let prod = if d == 0 { b } else { p.mul(&r, &b).await? };
        reach.taken(level, &prod)?;
    }
    let scores = p.matmul(&reach.indicators()?, w, batch, l, c).await?;
    scores.add(&base.gather(&crate::nn::plan::tile(batch * c, c)))
}
