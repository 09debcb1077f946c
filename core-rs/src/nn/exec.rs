//! Secure inference of a [`FixedPlan`], written once for every scheme.
//!
//! Three steps, each run by all parties in the same order, through [`Inference`]:
//! 1. [`Inference::share_model`]: the model owner (a compute party) inputs every weight and
//!    bias in one round; the others know only the public [`PlanShape`].
//! 2. [`Inference::preprocess`]: the material of one run on a batch (setup phase, no inputs),
//!    single use.
//! 3. [`Inference::infer`]: the shared input goes through the layers and the scores (or, where
//!    the scheme has an argmax, the classes) come out shared.
//!
//! The walk over the steps is `walk`: it does every local part of a layer (im2col gathers,
//! block-diagonal weights of grouped convolutions, bias tiling, sum pooling, reordering) on any
//! [`Linear`] vector, and asks a `Layers` implementation for the interactive parts (a
//! fixed-point matrix product, ReLU, max pooling, a public scale, a tree ensemble). A scheme's
//! online run is one `Layers`; METEOR's setup is another, over the masks, that collects the
//! mask products of every layer and makes them in one batched round afterwards. So the layer
//! structure of a network is written here only, and a new layer kind is one arm of `walk`.
//!
//! The schemes' implementations live in their folders (`rep3/nn.rs`, `meteor/nn.rs`): `nn/`
//! names no scheme.

use std::borrow::Cow;

use super::plan::{
    grouped_gather, inverse, tile, window_columns, FixedPlan, Output, PlanShape, WeightedStep,
};
use super::spline::SplineShape;
use super::trees::TreeShape;
use super::PoolGeom;
use crate::net::PartyId;
use crate::ring::fixed::FixedPoint;
use crate::ring::IntRing;
use crate::sharing::{Arith, Linear};
use crate::Error;

/// A plan's weights as shares of one scheme (`V` is its share vector). `Debug` is redacted.
pub struct SharedModel<V> {
    pub(crate) shape: PlanShape,
    pub(crate) steps: Vec<WeightedStep<V>>,
}

impl<V> core::fmt::Debug for SharedModel<V> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "SharedModel({} steps, <redacted>)", self.steps.len())
    }
}

impl<V> SharedModel<V> {
    /// The public architecture.
    pub fn shape(&self) -> &PlanShape {
        &self.shape
    }

    /// Checks that `x_len` input values fit this model for a batch of `batch` (before any
    /// round runs).
    pub(crate) fn check_input(&self, x_len: usize, batch: usize) -> Result<(), Error> {
        if x_len != batch * self.shape.input_len {
            return Err(Error::ApiMisuse(format!(
                "infer: input has {x_len} values, the model takes {} per sample and the \
                 preprocessing is for a batch of {batch}",
                self.shape.input_len
            )));
        }
        Ok(())
    }
}

/// A scheme that runs plans: private inference for a protocol family.
///
/// ```
/// use ringfence_core::{net::PartyId, nn::{Dense, FixedPlan, Inference, Layer, Model, Output},
///     ring::Z64, testing};
/// // y = 2·x0 − x1, owned by P0; P1 inputs x.
/// let model = Model { input_name: "x".into(), input_shape: vec![2], class_labels: None,
///     dropped_transforms: vec![], input_range: None, layers: vec![Layer::Dense(Dense {
///         inputs: 2, outputs: 1, weights: vec![2.0, -1.0], bias: vec![0.0] })] };
/// let plan = FixedPlan::<Z64>::new(&model, 13).unwrap();
/// let x = plan.encode_input(&[1.5, 0.5]).unwrap();
/// let outs = testing::run_rep3(1, move |mut p| {
///     let (plan, x) = (plan.clone(), x.clone());
///     async move {
///         let me = p.me();
///         let owner = PartyId(0);
///         let model = p.share_model(owner, (me == owner).then_some(&plan), &plan.shape()).await?;
///         let prep = p.preprocess(&model, 1, Output::Logits, PartyId(1)).await?;
///         let x = p.input(PartyId(1), (me == PartyId(1)).then_some(&x[..]), 2).await?;
///         let y = p.infer(&model, x, prep).await?;
///         Ok(plan.decode(&p.reveal(y).await?))
///     }
/// });
/// assert!((outs[0][0] - 2.5).abs() < 1e-3);
/// ```
// The futures are not `Send` on purpose: the core is driven on one thread (natively by
// `block_on`, in wasm by the browser's event loop), and callers use concrete schemes.
#[allow(async_fn_in_trait)]
pub trait Inference<R: IntRing>: Arith<R> {
    /// The material of one run on one batch: consumed by [`Inference::infer`], never reusable.
    type Prep;

    /// Secret-shares the weights of `plan`, owned by compute party `owner` (which passes
    /// `Some(plan)`; the others pass `None`). Every party passes the public `shape`; the owner's
    /// plan must have exactly that shape. One round; the owner sends one element per weight
    /// to each party that needs it.
    async fn share_model(
        &mut self,
        owner: PartyId,
        plan: Option<&FixedPlan<R>>,
        shape: &PlanShape,
    ) -> Result<SharedModel<Self::V>, Error> {
        let lens = shape.weight_lens();
        let values = plan.map(|p| p.weights_flat(shape)).transpose()?;
        let (input, _) = self.input_prep(owner, lens.iter().sum());
        let all = self.input(owner, values.as_deref(), input).await?;
        let mut at = 0;
        let blocks = lens
            .iter()
            .map(|&l| {
                at += l;
                all.slice(at - l..at)
            })
            .collect();
        Ok(SharedModel { shape: shape.clone(), steps: shape.assemble(blocks)? })
    }

    /// Makes the material for one run of `model` on `batch` samples giving `output`, whose
    /// input is owned by `input_owner` (a compute party or an external client). No input is
    /// needed; a scheme that cannot give `output` refuses here.
    async fn preprocess(
        &mut self,
        model: &SharedModel<Self::V>,
        batch: usize,
        output: Output,
        input_owner: PartyId,
    ) -> Result<Self::Prep, Error>;

    /// The same material for a run that gives `output` (made for another output: an error
    /// where it cannot serve, e.g. it lacks an argmax's material).
    fn for_output(prep: Self::Prep, output: Output) -> Result<Self::Prep, Error>;

    /// The material of the run's input, made by [`Inference::preprocess`] for its
    /// `input_owner`: moved out once, for [`Arith::input`] (and, for a client owner,
    /// [`Arith::deliver_input_prep`] first).
    fn take_input(prep: &mut Self::Prep) -> Result<Self::InputPrep, Error>;

    /// Runs the shared model on the shared input `x` (`batch × input_len`, encoded with the
    /// plan's format), consuming `prep`. Returns shares of `batch × output_len` scores
    /// ([`Output::Logits`]) or `batch` class indices ([`Output::Argmax`]). Shape mismatches are
    /// errors before any round runs.
    async fn infer(
        &mut self,
        model: &SharedModel<Self::V>,
        x: Self::V,
        prep: Self::Prep,
    ) -> Result<Self::V, Error>;
}

/// The interactive parts of the layers, as one scheme does them in one phase. The walk hands
/// every value over by move, and weights as borrowed from the model where it can (a phase that
/// defers its work keeps them without copying).
#[allow(async_fn_in_trait)]
pub(crate) trait Layers<'m, R: IntRing> {
    /// The vectors walked: shares online; masks in METEOR's setup.
    type V: Linear<R> + 'm;
    /// The model's weight vectors.
    type W: 'm;

    /// The walked view of a weight vector (itself online; its mask in METEOR's setup).
    fn view(w: &'m Self::W) -> &'m Self::V;

    /// The walked value of a public vector (its sharing; in a walk over masks, zeros).
    fn constant(&self, c: &[R]) -> Self::V;

    /// `x · w / 2^f` for `x` of `m × k` and `w` of `k × n` (row-major), `dims = (m, k, n)`;
    /// `x · w` exactly when `exact` (an integer plan's layers).
    async fn matmul(
        &mut self,
        x: Self::V,
        w: Cow<'m, Self::V>,
        dims: (usize, usize, usize),
        exact: bool,
    ) -> Result<Self::V, Error>;

    /// `x · y` elementwise, truncated by the plan's [`PlanShape::product_bits`] (an integer
    /// plan's requantization by its secret multipliers).
    async fn mul_truncated(&mut self, x: Self::V, y: Self::V) -> Result<Self::V, Error>;

    /// `max(x, 0)` elementwise.
    async fn relu(&mut self, x: Self::V) -> Result<Self::V, Error>;

    /// The maximum of every window of `g` over a batch of `batch`.
    async fn max_pool(&mut self, x: Self::V, g: &PoolGeom, batch: usize) -> Result<Self::V, Error>;

    /// `c·x / 2^f` for a public fixed-point `c`.
    async fn scale_fixed(&mut self, x: Self::V, c: R) -> Result<Self::V, Error>;

    /// A tree ensemble's scores, `batch × classes`, from its shared thresholds, leaf weights
    /// and base values.
    async fn trees(
        &mut self,
        s: &TreeShape,
        weights: (&'m Self::V, &'m Self::V, &'m Self::V),
        x: Self::V,
        batch: usize,
    ) -> Result<Self::V, Error>;
}

/// Walks `steps` on `x` (`batch` samples), doing the local parts of each layer here and the
/// interactive ones with `l`. Returns the last step's output.
pub(crate) async fn walk<'m, R: IntRing, L: Layers<'m, R>>(
    l: &mut L,
    steps: &'m [WeightedStep<L::W>],
    shape: &PlanShape,
    x: L::V,
    batch: usize,
) -> Result<L::V, Error> {
    let (frac_bits, exact) = (shape.frac_bits, shape.is_integer());
    let mut h = x;
    let mut regs = Vec::new();
    for s in steps {
        h = match s {
            WeightedStep::Dense { inputs, outputs, w, b } => {
                let dims = (batch, *inputs, *outputs);
                let z = l.matmul(h, Cow::Borrowed(L::view(w)), dims, exact).await?;
                z.add(&L::view(b).gather(&tile(batch * outputs, *outputs)))?
            }
            WeightedStep::Relu => l.relu(h).await?,
            WeightedStep::Conv { geom: g, w, b } => {
                // im2col by a local gather; padding reads one appended public zero.
                let zero = l.constant(&[R::ZERO]);
                let cols = L::V::concat(&[&h, &zero]).gather(&g.batch_patches(batch));
                // A grouped convolution multiplies by the block-diagonal weight matrix (public
                // zeros outside the groups).
                let w = match grouped_gather(g) {
                    Some(idx) => Cow::Owned(L::V::concat(&[L::view(w), &zero]).gather(&idx)),
                    None => Cow::Borrowed(L::view(w)),
                };
                let (rows, oc) = (batch * g.positions(), g.out_c);
                let z = l.matmul(cols, w, (rows, g.full_patch_len(), oc), exact).await?;
                z.add(&L::view(b).gather(&tile(rows * oc, oc)))?.gather(&g.chw_order(batch))
            }
            WeightedStep::MaxPool(g) => l.max_pool(h, g, batch).await?,
            WeightedStep::SumPool(g) => sum_pool(&h, &window_columns(g, batch))?,
            WeightedStep::Scale { divisor } => {
                let c = inverse::<R>(FixedPoint::new(frac_bits), *divisor)?;
                l.scale_fixed(h, c).await?
            }
            WeightedStep::Trees { shape, t, w, base } => {
                let weights = (L::view(t), L::view(w), L::view(base));
                l.trees(shape, weights, h, batch).await?
            }
            WeightedStep::Requant { channels, inner, lo, hi, mult } => {
                let idx: Vec<usize> = (0..h.len()).map(|i| i / inner % channels).collect();
                let (lo, hi) = (L::view(lo).gather(&idx), L::view(hi).gather(&idx));
                // clamp(x, lo, hi) = x + relu(lo − x) − relu(x − hi) for lo ≤ hi: both
                // comparisons in one batch, so the clamp takes the rounds of one ReLU.
                let n = h.len();
                let r = l.relu(L::V::concat(&[&lo.sub(&h)?, &h.sub(&hi)?])).await?;
                let y = h.add(&r.slice(0..n))?.sub(&r.slice(n..2 * n))?;
                let z = l.mul_truncated(y, L::view(mult).gather(&idx)).await?;
                // Every scheme's truncation gives the floor or one less, one less than the
                // exact quotient on average: plus one makes it unbiased stochastic rounding, the
                // closest a truncation gets to onnxruntime's rounding to nearest.
                z.add(&l.constant(&vec![R::ONE; n]))?
            }
            WeightedStep::Register(r) => {
                r.apply(h, &mut regs, |a, b| a.add(&b), |a, b| a.sub(&b))?
            }
            WeightedStep::Spline(sp) => spline(l, sp, h, frac_bits).await?,
        };
    }
    // An integer plan's scores are quantized integers: in the plan's fixed point (exact,
    // local) like every plan's.
    Ok(if exact { h.scale(R::from_i64(1 << frac_bits)) } else { h })
}

/// A piecewise-linear activation (see [`super::spline`]): the ReLUs of `x − t_i` for every
/// knot in one batch, the slopes' sum locally in `2f` fractional bits, one truncation.
async fn spline<'m, R: IntRing, L: Layers<'m, R>>(
    l: &mut L,
    sp: &SplineShape,
    x: L::V,
    frac_bits: u32,
) -> Result<L::V, Error> {
    let n = x.len();
    let at = |l: &L, c: i64| l.constant(&vec![R::from_i64(c); n]);
    let shifted = sp.knots.iter().map(|&t| x.sub(&at(l, t))).collect::<Result<Vec<_>, _>>()?;
    let r = l.relu(L::V::concat(&shifted.iter().collect::<Vec<_>>())).await?;
    let r = |i: usize| r.slice(i * n..(i + 1) * n);
    let (k, s) = (sp.knots.len(), &sp.slopes);
    let slope = |i: usize| R::from_i64(s[i]);
    // f(t_0), in 2f fractional bits.
    let mut acc = at(l, sp.value).scale(R::ONE.shl(frac_bits));
    acc = acc.add(&shifted[0].sub(&r(0))?.scale(slope(0)))?;
    for i in 0..k - 1 {
        acc = acc.add(&r(i).sub(&r(i + 1))?.scale(slope(i + 1)))?;
    }
    acc = acc.add(&r(k - 1).scale(slope(k)))?;
    // A product with the public 1 (raw), truncated by f: the truncation alone.
    l.scale_fixed(acc, R::ONE).await
}

/// Adds the gathers of the window columns (local).
fn sum_pool<R, V: Linear<R>>(h: &V, cols: &[Vec<usize>]) -> Result<V, Error> {
    let mut it = cols.iter();
    let first = it.next().ok_or_else(|| Error::ApiMisuse("empty pooling window".into()))?;
    it.try_fold(h.gather(first), |acc, c| acc.add(&h.gather(c)))
}
