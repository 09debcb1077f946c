//! Private inference on METEOR ([`Inference`] for [`Meteor`]).
//!
//! 1. [`Inference::share_model`]: the model owner shares every weight and bias under
//!    owner-known masks (one round; the owner sends one element per weight to each other
//!    party). The shared weights keep their masks across inferences.
//! 2. [`Inference::preprocess`] (setup: needs the shared model and the batch size, never the
//!    input) walks the plan on masks only — the input's owner-known mask, every layer's output
//!    mask (truncation pairs for linear layers, fresh masks for ReLUs) — with the same walk as
//!    the online phase ([`crate::nn::exec`]), then makes every mask product of every linear
//!    layer in **one** round and the setup of every ReLU and max-pool comparison of the
//!    network in **one** batched run, so the setup's round count does not grow with the depth.
//!    The result, a [`MeteorPrep`], is consumed by [`Inference::infer`]. An input owned by an
//!    external client (id ≥ 3) is then handed its mask with [`Meteor::deliver_mask`] — in this
//!    session, or in a later one when the material was made ahead of demand
//!    ([`crate::service::stock`]).
//! 3. [`Inference::infer`] (online): share the input ([`MeteorPrep::take_input_mask`] +
//!    [`Meteor::share`]), then per layer: dense/conv = one [`Meteor::matmul_fixed`] reveal
//!    (8 bytes per output; grouped convolutions and standalone BatchNormalization, a depthwise
//!    1×1 convolution, likewise), ReLU = [`Meteor::relu`] (95 bytes, 7 rounds), max pooling =
//!    [`Meteor::maxpool`], sum pooling local (0 bytes), a public scale (an average pool with
//!    no linear layer after it) one reveal with the truncation folded in (8 bytes, 1 round).
//!    A tree ensemble is one batched MSB run for all node comparisons, one multiplexer reveal
//!    per level for the reach indicators and one product for the leaf weights (95 bytes per
//!    node and 8 per class, `6 + levels + 1` rounds; its setup takes a few rounds per level;
//!    see [`crate::nn::trees`]). The scores stay masked; [`Meteor::reveal_to`] gives them to
//!    the receiver, who takes the argmax in the clear (METEOR has no argmax protocol; the
//!    receiver learns the scores, and [`Output::Argmax`] is refused).
//!
//! [`online_cost`] is the paper's cost model for a shape (extract §7.7; for tree ensembles,
//! which the paper does not cover, the formula of [`crate::nn::trees`]); the tests assert that
//! a run sends exactly that.

use std::borrow::Cow;

use super::MeteorRing;
use super::{
    msb_online_cost, InputMask, MBits, MVec, MatMulPrep, Meteor, MsbPrep, MuxPrep, PoolPrep,
    PoolSchedule, ReluPrep,
};
use crate::net::{PartyId, Transport};
use crate::nn::exec::{walk, Inference, Layers, SharedModel};
use crate::nn::trees::{self, TreeShape};
use crate::nn::{plan, Output, PlanShape, PoolGeom, StepShape};
use crate::rep3::{Rep3Vec, TruncPairs};
use crate::ring::IntRing;
use crate::Error;

/// The material of one step's interactive part.
enum StepPrep<R> {
    Linear(Box<MatMulPrep<R>>),
    Relu(Box<ReluPrep<R>>),
    Pool(PoolPrep<R>),
    /// A public factor: the truncation pairs its reveal uses.
    Scale(TruncPairs<R>),
    Trees(Box<TreePrep<R>>),
}

/// Setup material for one run of a model on one batch: single use, consumed by
/// [`Inference::infer`]. `Debug` is redacted.
pub struct MeteorPrep<R> {
    shape: PlanShape,
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
            StepShape::Trees(t) => trees_online_cost(t, bits),
            StepShape::SumPool(_) | StepShape::Register(_) => (0, 0),
            StepShape::Scale { len, .. } => (word * *len as u64, 1),
            // One ReLU batch over every knot, then the sum's truncation.
            StepShape::Spline(sp) => {
                let (len, k) = (sp.len as u64, sp.knots.len() as u64);
                (relu.0 * len * k + word * len, relu.1 + 1)
            }
            // Never run: METEOR refuses integer plans.
            StepShape::Requant { .. } => (0, 0),
        };
        bytes += b * batch as u64;
        rounds += r;
    }
    (bytes, rounds)
}

impl<T: Transport, R: IntRing + MeteorRing> Inference<R> for Meteor<T> {
    type Prep = MeteorPrep<R>;

    async fn preprocess(
        &mut self,
        model: &SharedModel<MVec<R>>,
        batch: usize,
        output: Output,
        input_owner: PartyId,
    ) -> Result<MeteorPrep<R>, Error> {
        let shape = &model.shape;
        if batch == 0 {
            return Err(Error::ApiMisuse("preprocess: batch of 0".into()));
        }
        if output != Output::Logits {
            return Err(no_argmax());
        }
        if shape.is_integer() {
            return Err(no_integer());
        }
        let input = self.input_mask::<R>(input_owner, batch * shape.input_len);
        let trunc_total = shape.needs(batch, Output::Logits).products;
        let pairs = self.rep3_mut().trunc_pairs::<R>(trunc_total, shape.frac_bits).await?;
        let mut setup = Setup {
            p: self,
            pairs,
            pending: Vec::new(),
            linear: Vec::new(),
            relu_in: Vec::new(),
            relu_out: Vec::new(),
        };
        let x = input.mask().clone();
        walk(&mut setup, &model.steps, shape, x, batch).await?;
        let steps = setup.finish().await?;
        Ok(MeteorPrep { shape: shape.clone(), batch, input: Some(input), steps })
    }

    /// METEOR's material gives the scores only.
    fn for_output(prep: MeteorPrep<R>, output: Output) -> Result<MeteorPrep<R>, Error> {
        match output {
            Output::Logits => Ok(prep),
            _ => Err(no_argmax()),
        }
    }

    fn take_input(prep: &mut MeteorPrep<R>) -> Result<InputMask<R>, Error> {
        prep.take_input_mask()
    }

    async fn infer(
        &mut self,
        model: &SharedModel<MVec<R>>,
        x: MVec<R>,
        prep: MeteorPrep<R>,
    ) -> Result<MVec<R>, Error> {
        if prep.shape != model.shape {
            return Err(Error::ApiMisuse("infer: preparation made for another model".into()));
        }
        model.check_input(x.len(), prep.batch)?;
        let mut run = Online { p: self, steps: prep.steps.into_iter() };
        let h = walk(&mut run, &model.steps, &model.shape, x, prep.batch).await?;
        if run.steps.next().is_some() {
            return Err(other_model());
        }
        Ok(h)
    }
}

fn no_argmax() -> Error {
    Error::ApiMisuse(
        "METEOR has no argmax protocol: it gives the scores (Output::Logits), and the receiver \
         takes the argmax in the clear"
            .into(),
    )
}

fn no_integer() -> Error {
    Error::ApiMisuse(
        "METEOR runs fixed-point plans; a quantized model's integer plan runs on rep3, rss and mal3"
            .into(),
    )
}

fn other_model() -> Error {
    Error::ApiMisuse("infer: preparation made for another model".into())
}

/// What a step's setup is made from, recorded during the walk on masks; the mask products of
/// linear layers and the ReLU setups are made after it, all layers together.
enum Pending<R> {
    Linear,
    Relu,
    Pool(PoolSchedule),
    Scale(TruncPairs<R>),
    Trees(Box<TreePrep<R>>),
}

/// A linear layer's mask product to make: input mask, weight mask (borrowed from the model
/// unless a grouped convolution built its block-diagonal one), dims, truncation pairs.
type LinearJob<'m, R> = (Rep3Vec<R>, Cow<'m, Rep3Vec<R>>, (usize, usize, usize), TruncPairs<R>);

/// The setup walk: the values are masks; every layer's output mask is drawn here.
struct Setup<'m, 'p, T, R: IntRing> {
    p: &'p mut Meteor<T>,
    /// The truncation pairs of every linear and scale step, in walk order.
    pairs: TruncPairs<R>,
    pending: Vec<Pending<R>>,
    linear: Vec<LinearJob<'m, R>>,
    /// The inputs and output masks of every ReLU comparison, max pooling's included.
    relu_in: Vec<Rep3Vec<R>>,
    relu_out: Vec<Rep3Vec<R>>,
}

impl<'m, T: Transport, R: IntRing> Setup<'m, '_, T, R> {
    /// Makes the deferred setups (every mask product in one round, every comparison's setup in
    /// one batched run) and hands each step its material, in walk order.
    async fn finish(self) -> Result<Vec<StepPrep<R>>, Error> {
        let Setup { p, pending, linear, relu_in, relu_out, .. } = self;
        let (operands, pairs): (Vec<_>, Vec<_>) =
            linear.into_iter().map(|(x, w, dims, tp)| ((x, w, dims), tp)).unzip();
        let jobs = operands
            .iter()
            .zip(pairs)
            .map(|((x, w, dims), tp)| (x, w.as_ref(), *dims, tp))
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
                Pending::Linear => {
                    StepPrep::Linear(Box::new(linear_preps.next().ok_or_else(missing)?))
                }
                Pending::Relu => StepPrep::Relu(Box::new(relu_preps.next().ok_or_else(missing)?)),
                Pending::Pool(schedule) => {
                    let levels = relu_preps.by_ref().take(schedule.comparisons().len()).collect();
                    StepPrep::Pool(PoolPrep::new(schedule, levels)?)
                }
                Pending::Scale(tp) => StepPrep::Scale(tp),
                Pending::Trees(tp) => StepPrep::Trees(tp),
            });
        }
        Ok(steps)
    }
}

impl<'m, T: Transport, R: IntRing> Layers<'m, R> for Setup<'m, '_, T, R> {
    type V = Rep3Vec<R>;
    type W = MVec<R>;

    fn view(w: &'m MVec<R>) -> &'m Rep3Vec<R> {
        w.mask()
    }

    /// A public value's mask is zero.
    fn constant(&self, c: &[R]) -> Rep3Vec<R> {
        Rep3Vec::public(self.p.me(), &vec![R::ZERO; c.len()])
    }

    /// The output's mask is the truncation pair's shifted mask; the product is made later.
    async fn matmul(
        &mut self,
        x: Rep3Vec<R>,
        w: Cow<'m, Rep3Vec<R>>,
        (m, k, n): (usize, usize, usize),
        exact: bool,
    ) -> Result<Rep3Vec<R>, Error> {
        if exact {
            return Err(no_integer());
        }
        let tp = self.pairs.take(m * n)?;
        let out = tp.r_shifted.clone();
        self.pending.push(Pending::Linear);
        self.linear.push((x, w, (m, k, n), tp));
        Ok(out)
    }

    async fn relu(&mut self, x: Rep3Vec<R>) -> Result<Rep3Vec<R>, Error> {
        let out = self.p.mask::<R>(x.len());
        self.pending.push(Pending::Relu);
        self.relu_in.push(x);
        self.relu_out.push(out.clone());
        Ok(out)
    }

    async fn max_pool(
        &mut self,
        x: Rep3Vec<R>,
        g: &PoolGeom,
        batch: usize,
    ) -> Result<Rep3Vec<R>, Error> {
        let schedule = PoolSchedule::new(&g.windows(batch))?;
        let outs: Vec<Rep3Vec<R>> =
            schedule.comparisons().into_iter().map(|n| self.p.mask(n)).collect();
        let (ins, out) = schedule.relu_inputs(&x, &outs)?;
        self.relu_in.extend(ins);
        self.relu_out.extend(outs);
        self.pending.push(Pending::Pool(schedule));
        Ok(out)
    }

    async fn mul_truncated(&mut self, _: Rep3Vec<R>, _: Rep3Vec<R>) -> Result<Rep3Vec<R>, Error> {
        Err(no_integer())
    }

    async fn scale_fixed(&mut self, x: Rep3Vec<R>, _c: R) -> Result<Rep3Vec<R>, Error> {
        let tp = self.pairs.take(x.len())?;
        let out = tp.r_shifted.clone();
        self.pending.push(Pending::Scale(tp));
        Ok(out)
    }

    async fn trees(
        &mut self,
        s: &TreeShape,
        weights: (&'m Rep3Vec<R>, &'m Rep3Vec<R>, &'m Rep3Vec<R>),
        x: Rep3Vec<R>,
        batch: usize,
    ) -> Result<Rep3Vec<R>, Error> {
        let tp = setup_trees(self.p, s, weights, &x, batch).await?;
        let out = tp.out_mask().clone();
        self.pending.push(Pending::Trees(Box::new(tp)));
        Ok(out)
    }
}

/// The online walk: each interactive step consumes the next step's material.
struct Online<'p, T, R> {
    p: &'p mut Meteor<T>,
    steps: std::vec::IntoIter<StepPrep<R>>,
}

impl<'m, T: Transport, R: IntRing> Layers<'m, R> for Online<'_, T, R> {
    type V = MVec<R>;
    type W = MVec<R>;

    fn view(w: &'m MVec<R>) -> &'m MVec<R> {
        w
    }

    fn constant(&self, c: &[R]) -> MVec<R> {
        MVec::public(self.p.me(), c)
    }

    async fn matmul(
        &mut self,
        x: MVec<R>,
        w: Cow<'m, MVec<R>>,
        _dims: (usize, usize, usize),
        _exact: bool,
    ) -> Result<MVec<R>, Error> {
        match self.steps.next() {
            Some(StepPrep::Linear(mm)) => self.p.matmul_fixed(&x, &w, *mm).await,
            _ => Err(other_model()),
        }
    }

    async fn relu(&mut self, x: MVec<R>) -> Result<MVec<R>, Error> {
        match self.steps.next() {
            Some(StepPrep::Relu(rp)) => self.p.relu(&x, *rp).await,
            _ => Err(other_model()),
        }
    }

    async fn max_pool(
        &mut self,
        x: MVec<R>,
        _g: &PoolGeom,
        _batch: usize,
    ) -> Result<MVec<R>, Error> {
        match self.steps.next() {
            Some(StepPrep::Pool(pp)) => self.p.maxpool(&x, pp).await,
            _ => Err(other_model()),
        }
    }

    async fn mul_truncated(&mut self, _: MVec<R>, _: MVec<R>) -> Result<MVec<R>, Error> {
        Err(no_integer())
    }

    async fn scale_fixed(&mut self, x: MVec<R>, c: R) -> Result<MVec<R>, Error> {
        match self.steps.next() {
            Some(StepPrep::Scale(tp)) => scale_fixed(self.p, &x, c, tp).await,
            _ => Err(other_model()),
        }
    }

    async fn trees(
        &mut self,
        s: &TreeShape,
        weights: (&'m MVec<R>, &'m MVec<R>, &'m MVec<R>),
        x: MVec<R>,
        _batch: usize,
    ) -> Result<MVec<R>, Error> {
        match self.steps.next() {
            Some(StepPrep::Trees(tp)) => eval_trees(self.p, s, weights, &x, *tp).await,
            _ => Err(other_model()),
        }
    }
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

/// Setup of one tree-ensemble evaluation on METEOR for one batch (see the module docs):
/// single use, consumed by [`eval_trees`]. `Debug` is redacted.
struct TreePrep<R> {
    batch: usize,
    /// The sign extraction of every comparison (`None` for an ensemble of single leaves).
    msb: Option<MsbPrep<R>>,
    /// One multiplexer per level: `reach·b`.
    levels: Vec<MuxPrep<R>>,
    /// `I·W` (integer indicators: no truncation).
    scores: MatMulPrep<R>,
    /// The output's mask (the product's plus the base's).
    out: Rep3Vec<R>,
}

impl<R> core::fmt::Debug for TreePrep<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "TreePrep(batch {}, {} levels, <redacted>)", self.batch, self.levels.len())
    }
}

impl<R: IntRing> TreePrep<R> {
    /// The scores' mask (for the setup of a later step).
    fn out_mask(&self) -> &Rep3Vec<R> {
        &self.out
    }
}

/// METEOR's online cost of an ensemble per sample and party, `(bytes, rounds)` in Z_2^ℓ: one
/// MSB extraction and one multiplexer reveal per node, one reveal per score; the MSB's
/// rounds, one per level, one for `I·W` (an ensemble of single leaves needs only the last).
fn trees_online_cost(s: &TreeShape, bits: usize) -> (u64, u64) {
    let word = (bits / 8) as u64;
    let (msb_bytes, msb_rounds) = msb_online_cost(bits);
    let n = s.nodes.len() as u64;
    let depth = trees::by_level(s).len() as u64;
    let compare_rounds = if n == 0 { 0 } else { msb_rounds as u64 + depth };
    (n * (msb_bytes as u64 + word) + word * s.classes as u64, compare_rounds + 1)
}

/// Setup of [`eval_trees`] from the masks of the input (`batch × features`) and of the shared
/// thresholds, leaf weights and base values: no data. The MSB setup of all comparisons in one
/// batched run, one multiplexer setup per level (its reach mask follows from the output masks
/// of the level above, all drawn here), and the mask product of `I·W`.
async fn setup_trees<T: Transport, R: IntRing>(
    p: &mut Meteor<T>,
    s: &TreeShape,
    (t, w, base): (&Rep3Vec<R>, &Rep3Vec<R>, &Rep3Vec<R>),
    x: &Rep3Vec<R>,
    batch: usize,
) -> Result<TreePrep<R>, Error> {
    trees::check_fit(s, [x.len(), t.len(), w.len(), base.len()], batch)?;
    let (l, c) = (s.leaves.len(), s.classes);
    let me = p.me();
    let levels = trees::by_level(s);
    let order = levels.concat();
    let msb = if order.is_empty() {
        None
    } else {
        Some(p.msb_setup(&trees::differences(s, &order, x, t, batch)?).await?)
    };
    let mut reach = trees::Reach::new(s, batch, Rep3Vec::public(me, &vec![R::ZERO; batch]));
    let mut muxes = Vec::with_capacity(levels.len());
    for (level, range) in levels.iter().zip(trees::level_ranges(&levels, batch)) {
        let bit = msb
            .as_ref()
            .map(|m| m.out_mask().slice(range))
            .ok_or_else(|| Error::ApiMisuse("tree setup: a level without comparisons".into()))?;
        let r = reach.reach(level)?;
        let out = p.mask::<R>(r.len());
        reach.taken(level, &out)?;
        muxes.push(p.mux_setup(&r, &bit, out).await?);
    }
    // The indicators are integers 0/1 and W is in fixed point: the product is already in the
    // format, so its "truncation pair" shifts by 0 (one fresh mask for the reveal).
    let r = p.mask::<R>(batch * c);
    let pairs = TruncPairs { frac_bits: 0, r: r.clone(), r_shifted: r };
    let ind = reach.indicators()?;
    let scores = p
        .matmul_fixed_setup_many(vec![(&ind, w, (batch, l, c), pairs)])
        .await?
        .pop()
        .ok_or_else(|| Error::ApiMisuse("tree setup: no leaf-weight product".into()))?;
    let out = scores.out_mask().add(&base.gather(&plan::tile(batch * c, c)))?;
    Ok(TreePrep { batch, msb, levels: muxes, scores, out })
}

/// The secure evaluation on METEOR (see the module docs), consuming `prep` made by
/// [`setup_trees`] for these shares' masks: `x` is `batch × features`, `t`, `w` and `base`
/// the shared thresholds, leaf weights and base values. Returns `batch × classes` scores.
async fn eval_trees<T: Transport, R: IntRing>(
    p: &mut Meteor<T>,
    s: &TreeShape,
    (t, w, base): (&MVec<R>, &MVec<R>, &MVec<R>),
    x: &MVec<R>,
    prep: TreePrep<R>,
) -> Result<MVec<R>, Error> {
    let TreePrep { batch, msb, levels: muxes, scores, .. } = prep;
    trees::check_fit(s, [x.len(), t.len(), w.len(), base.len()], batch)?;
    let c = s.classes;
    let me = p.me();
    let levels = trees::by_level(s);
    let order = levels.concat();
    let other = || Error::ApiMisuse("tree: preparation made for another ensemble".into());
    if muxes.len() != levels.len() {
        return Err(other());
    }
    let bits = match (msb, order.is_empty()) {
        (Some(msb), false) => {
            let sign = p.msb(&trees::differences(s, &order, x, t, batch)?, msb).await?;
            // b = c or ¬c: flip the public part (local).
            let flip =
                order.iter().flat_map(|&i| core::iter::repeat_n(s.nodes[i].mode.negated(), batch));
            Some(MBits { m: sign.m.iter().zip(flip).map(|(m, f)| m ^ f).collect(), psi: sign.psi })
        }
        (None, true) => None,
        _ => return Err(other()),
    };
    let mut reach = trees::Reach::new(s, batch, MVec::public(me, &vec![R::ONE; batch]));
    for ((level, range), mux) in levels.iter().zip(trees::level_ranges(&levels, batch)).zip(muxes) {
        let r = reach.reach(level)?;
        let bits = bits.as_ref().ok_or_else(other)?;
        let b = MBits { m: bits.m[range.clone()].to_vec(), psi: bits.psi.slice(range) };
        let zero = MVec::public(me, &vec![R::ZERO; r.len()]);
        let prod = p.mux(&r, &zero, &b, mux).await?;
        reach.taken(level, &prod)?;
    }
    let scores = p.matmul_fixed(&reach.indicators()?, w, scores).await?;
    scores.add(&base.gather(&plan::tile(batch * c, c)))
}
