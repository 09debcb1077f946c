//! Secure inference of a [`FixedPlan`] on the METEOR backend ([`crate::meteor`]).
//!
//! Three steps, each run by all three parties in the same order:
//! 1. [`share_model`]: the model owner shares every weight and bias under owner-known masks
//!    (one round; the owner sends one element per weight to each other party). The shared
//!    weights keep their masks across inferences.
//! 2. [`preprocess`] (setup: needs the shared model and the batch size, never the input):
//!    walks the plan on masks only — the input's owner-known mask, every layer's output mask
//!    (truncation pairs for linear layers, fresh masks for ReLUs), then makes every mask product
//!    of every linear layer in **one** round and the setup of every ReLU and max-pool comparison
//!    of the network in **one** batched run, so the setup's round count does not grow with the
//!    depth. The result, a [`MeteorPrep`], is consumed by [`infer`].
//! 3. [`infer`] (online): share the input ([`MeteorPrep::take_input_mask`] +
//!    [`Meteor::share`]), then per layer: dense/conv = one [`Meteor::matmul_fixed`] reveal
//!    (8 bytes per output; grouped convolutions and standalone BatchNormalization, a depthwise
//!    1×1 convolution, likewise), ReLU = [`Meteor::relu`] (95 bytes, 7 rounds), max pooling =
//!    [`Meteor::maxpool`], sum pooling local (0 bytes), a public scale (an average pool with
//!    no linear layer after it) one reveal with the truncation folded in (8 bytes, 1 round).
//!    A tree ensemble is one batched MSB run for all node comparisons, one multiplexer reveal
//!    per level for the reach indicators and one product for the leaf weights (95 bytes per
//!    node and 8 per class, `6 + levels + 1` rounds; its setup takes a few rounds per level;
//!    see [`super::trees`]). The scores stay masked; [`Meteor::reveal_to`] gives them to the
//!    receiver, who takes the argmax in the clear (METEOR has no argmax protocol; the receiver
//!    learns the scores).
//!
//! [`online_cost`] is the paper's cost model for a shape (extract §7.7; for tree ensembles,
//! which the paper does not cover, the formula of [`super::trees`]); the tests assert that a
//! run sends exactly that.

use std::borrow::Cow;

use super::plan::{
    grouped_gather, inverse, tile, window_columns, FixedPlan, Output, PlanShape, StepShape,
    WeightedStep,
};
use super::trees::{self, TreePrep};
use crate::meteor::{
    msb_online_cost, InputMask, MVec, MatMulPrep, Meteor, PoolPrep, PoolSchedule, ReluPrep,
};
use crate::net::{PartyId, Transport};
use crate::rep3::{Rep3Vec, TruncPairs};
use crate::ring::fixed::FixedPoint;
use crate::ring::IntRing;
use crate::Error;

/// A plan's weights as METEOR shares. `Debug` is redacted.
pub struct MeteorModel<R> {
    shape: PlanShape,
    steps: Vec<WeightedStep<MVec<R>>>,
}

impl<R> core::fmt::Debug for MeteorModel<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "MeteorModel({} steps, <redacted>)", self.steps.len())
    }
}

impl<R> MeteorModel<R> {
    /// The public architecture.
    pub fn shape(&self) -> &PlanShape {
        &self.shape
    }
}

enum StepPrep<R> {
    Linear(Box<MatMulPrep<R>>),
    Relu(Box<ReluPrep<R>>),
    Pool(PoolPrep<R>),
    /// Sum pooling: local, no material.
    Local,
    /// A public factor: the truncation pairs its reveal uses.
    Scale(TruncPairs<R>),
    Trees(Box<TreePrep<R>>),
}

/// Setup material for one run of a model on one batch: single use, consumed by [`infer`].
/// `Debug` is redacted.
pub struct MeteorPrep<R> {
    batch: usize,
    input: Option<InputMask<R>>,
    steps: Vec<StepPrep<R>>,
}

impl<R> core::fmt::Debug for MeteorPrep<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "MeteorPrep(batch {}, {} steps, <redacted>)", self.batch, self.steps.len())
    }
}

impl<R> MeteorPrep<R> {
    /// The batch size this material is for.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// The input's mask, until [`MeteorPrep::take_input_mask`] moves it out.
    pub fn input_mask(&self) -> Result<&InputMask<R>, Error> {
        self.input
            .as_ref()
            .ok_or_else(|| Error::ApiMisuse("the input mask was already taken".into()))
    }

    /// Moves the input's mask out (once) for [`Meteor::share`].
    pub fn take_input_mask(&mut self) -> Result<InputMask<R>, Error> {
        self.input.take().ok_or_else(|| Error::ApiMisuse("the input mask was already taken".into()))
    }
}

/// Online cost of one run per party, excluding the input's sharing and the output's reveal
/// (as in the paper's tables): `(bytes, rounds)`.
pub fn online_cost(shape: &PlanShape, bits: usize, batch: usize) -> (u64, u64) {
    let word = (bits / 8) as u64;
    let (msb_bytes, msb_rounds) = msb_online_cost(bits);
    let relu = (msb_bytes as u64 + word, msb_rounds as u64 + 1);
    let (mut bytes, mut rounds) = (0u64, 0u64);
    for s in &shape.steps {
        let (b, r) = match s {
            StepShape::Dense { outputs, .. } => (word * *outputs as u64, 1),
            StepShape::Conv(g) => (word * g.out_len() as u64, 1),
            StepShape::Relu { len } => (relu.0 * *len as u64, relu.1),
            StepShape::MaxPool(g) => {
                let w = g.window_len() as u64;
                let levels = u64::from(usize::BITS - (g.window_len() - 1).leading_zeros());
                (relu.0 * (w - 1) * g.out_len() as u64, relu.1 * levels)
            }
            StepShape::Trees(t) => trees::meteor_online_cost(t, bits),
            StepShape::SumPool(_) => (0, 0),
            StepShape::Scale { len, .. } => (word * *len as u64, 1),
        };
        bytes += b * batch as u64;
        rounds += r;
    }
    (bytes, rounds)
}

/// Shares the weights of `plan`, owned by compute party `owner` (which passes `Some(plan)`;
/// the others pass `None`); every party passes the public `shape`. One round.
pub async fn share_model<T: Transport, R: IntRing>(
    p: &mut Meteor<T>,
    owner: PartyId,
    plan: Option<&FixedPlan<R>>,
    shape: &PlanShape,
) -> Result<MeteorModel<R>, Error> {
    let lens = shape.weight_lens();
    let values = plan.map(|p| p.weights_flat(shape)).transpose()?;
    let mask = p.input_mask::<R>(owner, lens.iter().sum());
    let all = p.share(owner, values.as_deref(), mask).await?;
    let mut at = 0;
    let blocks = lens
        .iter()
        .map(|&l| {
            at += l;
            all.slice(at - l..at)
        })
        .collect();
    Ok(MeteorModel { shape: shape.clone(), steps: shape.assemble(blocks)? })
}

/// Makes the setup material for one run of `model` on `batch` samples whose input is owned by
/// `input_owner`: a compute party, or an external client (id ≥ 3), which then receives its
/// input's mask with [`deliver_input_mask`] — in this session, or in a later one when the
/// material was made ahead of demand ([`crate::service::stock`]). No input is needed.
pub async fn preprocess<T: Transport, R: IntRing>(
    p: &mut Meteor<T>,
    model: &MeteorModel<R>,
    batch: usize,
    input_owner: PartyId,
) -> Result<MeteorPrep<R>, Error> {
    let shape = &model.shape;
    if batch == 0 {
        return Err(Error::ApiMisuse("preprocess: batch of 0".into()));
    }
    let me = p.me();
    let input = p.input_mask::<R>(input_owner, batch * shape.input_len);
    let trunc_total = shape.needs(batch, Output::Logits).trunc_pairs;
    let mut pairs = p.rep3_mut().trunc_pairs::<R>(trunc_total, shape.frac_bits).await?;

    // Walk the plan on masks: what each step's preparation is made from. ReLU inputs of all
    // steps are collected in order; each step later takes its own from the front.
    enum Pending<R> {
        Linear,
        Relu,
        Pool(PoolSchedule),
        Local,
        Scale(TruncPairs<R>),
        Trees(Box<TreePrep<R>>),
    }
    // Linear layers: input masks, weight masks (block-diagonal for grouped convolutions), and
    // (dims, truncation pairs).
    let mut lin_x: Vec<Rep3Vec<R>> = Vec::new();
    let mut lin_w: Vec<Cow<'_, Rep3Vec<R>>> = Vec::new();
    let mut lin_meta = Vec::new();
    let (mut relu_in, mut relu_out): (Vec<Rep3Vec<R>>, Vec<Rep3Vec<R>>) = (Vec::new(), Vec::new());
    let mut pending = Vec::with_capacity(model.steps.len());
    let mut h = input.mask().clone();
    for s in &model.steps {
        h = match s {
            WeightedStep::Dense { inputs, outputs, w, b } => {
                let tp = pairs.take(batch * outputs)?;
                let out = tp.r_shifted.add(&b.mask().gather(&tile(batch * outputs, *outputs)))?;
                pending.push(Pending::Linear);
                lin_x.push(h);
                lin_w.push(Cow::Borrowed(w.mask()));
                lin_meta.push(((batch, *inputs, *outputs), tp));
                out
            }
            WeightedStep::Conv { geom: g, w, b } => {
                let zero = Rep3Vec::public(me, &[R::ZERO]);
                let cols = Rep3Vec::concat(&[&h, &zero]).gather(&g.batch_patches(batch));
                let rows = batch * g.positions();
                let tp = pairs.take(rows * g.out_c)?;
                let out = tp
                    .r_shifted
                    .add(&b.mask().gather(&tile(rows * g.out_c, g.out_c)))?
                    .gather(&g.chw_order(batch));
                pending.push(Pending::Linear);
                lin_x.push(cols);
                lin_w.push(match grouped_gather(g) {
                    Some(idx) => Cow::Owned(Rep3Vec::concat(&[w.mask(), &zero]).gather(&idx)),
                    None => Cow::Borrowed(w.mask()),
                });
                lin_meta.push(((rows, g.full_patch_len(), g.out_c), tp));
                out
            }
            WeightedStep::SumPool(g) => {
                pending.push(Pending::Local);
                sum_pool_masks(&h, &window_columns(g, batch))?
            }
            WeightedStep::Scale { len, .. } => {
                let tp = pairs.take(batch * len)?;
                let out = tp.r_shifted.clone();
                pending.push(Pending::Scale(tp));
                out
            }
            WeightedStep::Relu { len } => {
                let out = p.mask::<R>(batch * len);
                pending.push(Pending::Relu);
                relu_in.push(h);
                relu_out.push(out.clone());
                out
            }
            WeightedStep::Trees { shape: ts, t, w, base } => {
                let masks = (t.mask(), w.mask(), base.mask());
                let tp = trees::meteor_setup(p, ts, masks, &h, batch).await?;
                let out = tp.out_mask().clone();
                pending.push(Pending::Trees(Box::new(tp)));
                out
            }
            WeightedStep::MaxPool(g) => {
                let schedule = PoolSchedule::new(&g.windows(batch))?;
                let outs: Vec<Rep3Vec<R>> =
                    schedule.comparisons().into_iter().map(|n| p.mask(n)).collect();
                let (ins, out) = schedule.relu_inputs(&h, &outs)?;
                relu_in.extend(ins);
                relu_out.extend(outs);
                pending.push(Pending::Pool(schedule));
                out
            }
        };
    }

    let jobs = lin_x
        .iter()
        .zip(&lin_w)
        .zip(lin_meta)
        .map(|((x, w), (dims, tp))| (x, w.as_ref(), dims, tp))
        .collect();
    let mut linear_preps = p.matmul_fixed_setup_many(jobs).await?.into_iter();
    let lens: Vec<usize> = relu_in.iter().map(Rep3Vec::len).collect();
    let mut relu_preps = if lens.is_empty() {
        Vec::new()
    } else {
        let all_in = Rep3Vec::concat(&relu_in.iter().collect::<Vec<_>>());
        let all_out = Rep3Vec::concat(&relu_out.iter().collect::<Vec<_>>());
        p.relu_setup(&all_in, all_out).await?.split(&lens)?
    }
    .into_iter();
    let missing = || Error::ApiMisuse("preprocess: fewer preparations than steps".into());
    let mut steps = Vec::with_capacity(pending.len());
    for pd in pending {
        steps.push(match pd {
            Pending::Linear => StepPrep::Linear(Box::new(linear_preps.next().ok_or_else(missing)?)),
            Pending::Relu => StepPrep::Relu(Box::new(relu_preps.next().ok_or_else(missing)?)),
            Pending::Pool(schedule) => {
                let levels = relu_preps.by_ref().take(schedule.comparisons().len()).collect();
                StepPrep::Pool(PoolPrep::new(schedule, levels)?)
            }
            Pending::Local => StepPrep::Local,
            Pending::Scale(tp) => StepPrep::Scale(tp),
            Pending::Trees(tp) => StepPrep::Trees(tp),
        });
    }
    Ok(MeteorPrep { batch, input: Some(input), steps })
}

/// Hands an external client (the input's owner, id ≥ 3, running
/// [`crate::meteor::client::MeteorClient::receive_mask`] meanwhile) its input's mask: it learns
/// the mask, never anything else. 1 round.
pub async fn deliver_input_mask<T: Transport, R: IntRing>(
    p: &mut Meteor<T>,
    prep: &MeteorPrep<R>,
) -> Result<(), Error> {
    p.deliver_mask(prep.input_mask()?).await
}

/// Runs the shared model on the shared input `x` (`batch × input_len`, from
/// [`Meteor::share`] under the prep's input mask), consuming `prep`; returns the masked scores
/// (`batch × output_len`).
pub async fn infer<T: Transport, R: IntRing>(
    p: &mut Meteor<T>,
    model: &MeteorModel<R>,
    x: MVec<R>,
    prep: MeteorPrep<R>,
) -> Result<MVec<R>, Error> {
    let batch = prep.batch;
    if x.len() != batch * model.shape.input_len {
        return Err(Error::ApiMisuse(format!(
            "infer: input has {} values, the model takes {} per sample and the preparation is \
             for a batch of {batch}",
            x.len(),
            model.shape.input_len
        )));
    }
    if prep.steps.len() != model.steps.len() {
        return Err(Error::ApiMisuse("infer: preparation made for another model".into()));
    }
    let me = p.me();
    let mut h = x;
    for (s, sp) in model.steps.iter().zip(prep.steps) {
        h = match (s, sp) {
            (WeightedStep::Dense { outputs, w, b, .. }, StepPrep::Linear(mm)) => {
                let z = p.matmul_fixed(&h, w, *mm).await?;
                z.add(&b.gather(&tile(z.len(), *outputs)))?
            }
            (WeightedStep::Conv { geom: g, w, b }, StepPrep::Linear(mm)) => {
                let zero = MVec::public(me, &[R::ZERO]);
                let cols = MVec::concat(&[&h, &zero]).gather(&g.batch_patches(batch));
                let full = grouped_gather(g).map(|idx| MVec::concat(&[w, &zero]).gather(&idx));
                let z = p.matmul_fixed(&cols, full.as_ref().unwrap_or(w), *mm).await?;
                z.add(&b.gather(&tile(z.len(), g.out_c)))?.gather(&g.chw_order(batch))
            }
            (WeightedStep::Relu { .. }, StepPrep::Relu(rp)) => p.relu(&h, *rp).await?,
            (WeightedStep::MaxPool(_), StepPrep::Pool(pp)) => p.maxpool(&h, pp).await?,
            (WeightedStep::SumPool(g), StepPrep::Local) => {
                let cols = window_columns(g, batch);
                let mut it = cols.iter();
                let first = it.next().ok_or_else(|| Error::ApiMisuse("empty window".into()))?;
                it.try_fold(h.gather(first), |acc, c| acc.add(&h.gather(c)))?
            }
            (WeightedStep::Scale { divisor, .. }, StepPrep::Scale(tp)) => {
                let c = inverse::<R>(FixedPoint::new(model.shape.frac_bits), *divisor)?;
                scale_fixed(p, &h, c, tp).await?
            }
            (WeightedStep::Trees { shape: ts, t, w, base }, StepPrep::Trees(tp)) => {
                trees::eval_meteor(p, ts, (t, w, base), &h, *tp).await?
            }
            _ => return Err(Error::ApiMisuse("infer: preparation made for another model".into())),
        };
    }
    Ok(h)
}

/// Adds the gathers of the window columns of a mask (setup's view of a sum pool).
fn sum_pool_masks<R: IntRing>(h: &Rep3Vec<R>, cols: &[Vec<usize>]) -> Result<Rep3Vec<R>, Error> {
    let mut it = cols.iter();
    let first = it.next().ok_or_else(|| Error::ApiMisuse("empty pooling window".into()))?;
    it.try_fold(h.gather(first), |acc, c| acc.add(&h.gather(c)))
}

/// `⟦c·x / 2^d⟧` for a public fixed-point `c`: the product is local (`c·m`, `c·⟨ψ⟩`); the
/// truncation is folded into one reveal as in fixed-point multiplication — open
/// `⟨c·ψ_x − r⟩`, so `m' = c·m_x + (c·ψ_x − r) = c·x − r`, and keep `(m' >> d, ⟨r >> d⟩)`:
/// one element per value per party, 1 round, no mask product in setup.
async fn scale_fixed<T: Transport, R: IntRing>(
    p: &mut Meteor<T>,
    x: &MVec<R>,
    c: R,
    pairs: TruncPairs<R>,
) -> Result<MVec<R>, Error> {
    if pairs.len() != x.len() {
        return Err(Error::ApiMisuse(format!(
            "scale: {} values, {} truncation pairs",
            x.len(),
            pairs.len()
        )));
    }
    let y = x.scale(c);
    let TruncPairs { frac_bits, r, r_shifted } = pairs;
    let opened = p.rep3_mut().reveal(y.psi.sub(&r)?).await?;
    let m = y.m.iter().zip(opened).map(|(&m, o)| (m + o).shr_arith(frac_bits)).collect();
    MVec::new(m, r_shifted)
}
