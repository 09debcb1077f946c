//! Secure inference of a [`FixedPlan`] on the `rep3` backend.
//!
//! Three steps, each run by all three parties in the same order:
//! 1. [`share_model`]: the model owner (a compute party) inputs every weight and bias in one
//!    round; the others know only the public [`PlanShape`].
//! 2. [`preprocess`]: truncation pairs and daBits sized from the shape for a batch (setup
//!    phase, no inputs needed), held in an [`NnPrep`] that [`infer`] consumes by move.
//! 3. [`infer`]: the input — shared by a party with [`Rep3::input`] or by an external client
//!    with [`Rep3::input_from_client`] — goes through the layers: each dense layer is one
//!    [`Rep3::matmul_fixed`] round (truncation folded in) plus a local bias add, each ReLU is
//!    [`Rep3::relu`] (MSB extraction and one multiplexing round with daBits), and the optional
//!    argmax a tournament of comparisons. The result stays shared; reveal it with
//!    [`Rep3::reveal`], [`Rep3::reveal_to`] or [`Rep3::reveal_to_client`].
//!
//! A batch of samples runs together: every round carries the whole batch, so the round count
//! does not depend on the batch size (in Z_2^64: 1 per dense or conv layer, grouped or
//! depthwise included; a standalone BatchNormalization is a depthwise 1×1 conv, 16 bytes per
//! value from P1 and 8 from P0 and P2; 1 per public scale step, 0 for a sum pool, 9 per ReLU
//! layer, 10 per tournament level of max pooling or argmax; a tree ensemble takes 8 for all
//! comparisons (one MSB run), 1 for their bit injection, one per tree level below the root and
//! 1 for the leaf-weight product; [`infer`] on NN-A takes 30 rounds for scores, 70 with the
//! argmax). Memory grows with the batch: a convolution materialises its im2col matrix of
//! shares (`batch · positions · patch_len` elements, 16 bytes each per party), so large conv
//! batches are best split into several runs.

use super::plan::{
    grouped_gather, inverse, tile, window_columns, FixedPlan, Output, PlanShape, WeightedStep,
};
use crate::net::{PartyId, Transport};
use crate::rep3::{DaBits, Rep3, Rep3Vec, TruncPairs};
use crate::ring::fixed::FixedPoint;
use crate::ring::IntRing;
use crate::Error;

/// A plan's weights as `rep3` shares. `Debug` is redacted.
pub struct SharedModel<R> {
    shape: PlanShape,
    steps: Vec<WeightedStep<Rep3Vec<R>>>,
}

impl<R> core::fmt::Debug for SharedModel<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "SharedModel({} steps, <redacted>)", self.steps.len())
    }
}

impl<R> SharedModel<R> {
    /// The public architecture.
    pub fn shape(&self) -> &PlanShape {
        &self.shape
    }
}

/// Preprocessing for one run of a plan on a batch: consumed by [`infer`], never reusable.
#[derive(Debug)]
pub struct NnPrep<R> {
    shape: PlanShape,
    batch: usize,
    output: Output,
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

/// Secret-shares the weights of `plan`, owned by compute party `owner` (which passes
/// `Some(plan)`; the others pass `None`). Every party passes the public `shape`; the owner's
/// plan must have exactly that shape. One round; the owner sends one element per weight.
pub async fn share_model<T: Transport, R: IntRing>(
    p: &mut Rep3<T>,
    owner: PartyId,
    plan: Option<&FixedPlan<R>>,
    shape: &PlanShape,
) -> Result<SharedModel<R>, Error> {
    let lens = shape.weight_lens();
    let values = plan.map(|p| p.weights_flat(shape)).transpose()?;
    let all = p.input(owner, values.as_deref(), lens.iter().sum()).await?;
    let steps = shape.assemble(all.split(&lens))?;
    Ok(SharedModel { shape: shape.clone(), steps })
}

/// Makes the preprocessing for one run of `batch` samples with output `output` (setup phase:
/// truncation pairs, then daBits).
pub async fn preprocess<T: Transport, R: IntRing>(
    p: &mut Rep3<T>,
    shape: &PlanShape,
    batch: usize,
    output: Output,
) -> Result<NnPrep<R>, Error> {
    let needs = shape.needs(batch, output);
    let trunc = p.trunc_pairs(needs.trunc_pairs, shape.frac_bits).await?;
    let dabits = p.dabits(needs.dabits).await?;
    Ok(NnPrep { shape: shape.clone(), batch, output, trunc, dabits })
}

/// Runs the shared model on the shared input `x` (`batch × input_len`, encoded with the
/// plan's format), consuming `prep`. Returns shares of `batch × output_len` scores
/// ([`Output::Logits`]) or `batch` class indices ([`Output::Argmax`]). Shape mismatches are
/// errors before any round runs.
pub async fn infer<T: Transport, R: IntRing>(
    p: &mut Rep3<T>,
    model: &SharedModel<R>,
    x: Rep3Vec<R>,
    mut prep: NnPrep<R>,
) -> Result<Rep3Vec<R>, Error> {
    let batch = prep.batch;
    if prep.shape != model.shape {
        return Err(Error::ApiMisuse("infer: preprocessing made for another plan".into()));
    }
    if x.len() != batch * model.shape.input_len {
        return Err(Error::ApiMisuse(format!(
            "infer: input has {} values, the model takes {} per sample and the preprocessing \
             is for a batch of {batch}",
            x.len(),
            model.shape.input_len
        )));
    }
    let mut h = x;
    for s in &model.steps {
        h = match s {
            WeightedStep::Dense { inputs, outputs, w, b } => {
                let pairs = prep.trunc.take(batch * outputs)?;
                let z = p.matmul_fixed(&h, w, (batch, *inputs, *outputs), pairs).await?;
                z.add(&b.gather(&tile(batch * outputs, *outputs)))?
            }
            WeightedStep::Relu { len } => {
                let dab = prep.dabits.take(batch * len)?;
                p.relu(&h, dab).await?
            }
            WeightedStep::Conv { geom: g, w, b } => {
                // im2col by a local gather; padding reads one appended public zero.
                let zero = Rep3Vec::public(p.me(), &[R::ZERO]);
                let cols = Rep3Vec::concat(&[&h, &zero]).gather(&g.batch_patches(batch));
                let (rows, oc) = (batch * g.positions(), g.out_c);
                let pairs = prep.trunc.take(rows * oc)?;
                // A grouped convolution multiplies by the block-diagonal weight matrix (public
                // zeros outside the groups).
                let full = grouped_gather(g).map(|idx| Rep3Vec::concat(&[w, &zero]).gather(&idx));
                let w = full.as_ref().unwrap_or(w);
                let z = p.matmul_fixed(&cols, w, (rows, g.full_patch_len(), oc), pairs).await?;
                z.add(&b.gather(&tile(rows * oc, oc)))?.gather(&g.chw_order(batch))
            }
            WeightedStep::MaxPool(g) => {
                p.max_windows(&h, &g.windows(batch), &mut prep.dabits).await?
            }
            WeightedStep::SumPool(g) => sum_pool(&h, &window_columns(g, batch))?,
            WeightedStep::Trees { shape, t, w, base } => {
                let dab = prep.dabits.take(batch * shape.nodes.len())?;
                super::trees::eval_rep3(p, shape, (t, w, base), &h, batch, dab).await?
            }
            WeightedStep::Scale { len, divisor } => {
                // A public fixed-point factor: local product, truncated with a pair (1 round).
                let c = inverse::<R>(FixedPoint::new(model.shape.frac_bits), *divisor)?;
                let pairs = prep.trunc.take(batch * len)?;
                let cs = Rep3Vec::public(p.me(), &vec![c; h.len()]);
                p.mul_fixed(&h, &cs, pairs).await?
            }
        };
    }
    match prep.output {
        Output::Logits => Ok(h),
        Output::Argmax => p.argmax(&h, model.shape.output_len(), &mut prep.dabits).await,
    }
}

/// Adds the gathers of the window columns (local).
fn sum_pool<R: IntRing>(h: &Rep3Vec<R>, cols: &[Vec<usize>]) -> Result<Rep3Vec<R>, Error> {
    let mut it = cols.iter();
    let first = it.next().ok_or_else(|| Error::ApiMisuse("empty pooling window".into()))?;
    it.try_fold(h.gather(first), |acc, c| acc.add(&h.gather(c)))
}
