//! Private inference written once for schemes whose material serves any values of its length.
//!
//! Such a scheme's tags are [`Len`]: its products' material does not depend on the operands
//! (rep3's truncation pairs, a malicious scheme's verified triples), one store serves
//! elementwise and matrix products, and its comparisons come from [`Boolean`]. Its
//! [`Inference`] is then `preprocess` and `infer` here: setup makes all
//! the products' material of a run in one call of [`Arith::mul_prep`] and all the bits'
//! material in one call of [`Boolean::bit_prep`], sized from the plan's shape
//! ([`super::PlanShape::needs`]); online, every layer takes its part of both. A scheme opts in
//! with [`Uniform`] and gets [`Inference`] from the implementation here (see `rep3/nn.rs`).
//! A scheme whose matrix products need material made for their shape (spdz2k's matrix
//! triples) makes one per layer in its own `preprocess` ([`PerProduct`]) and runs the same
//! `infer` (see `spdz2k/nn.rs`).

use std::borrow::Cow;
use std::collections::VecDeque;

use super::exec::{walk, Inference, Layers, SharedModel};
use super::plan::PlanShape;
use super::trees::{self, TreeShape};
use super::{Output, PoolGeom};
use crate::net::PartyId;
use crate::ring::IntRing;
use crate::sharing::{Arith, Boolean, InputSlot, Len, Linear, Store};
use crate::Error;

/// The material of one run of a plan on a batch: the input's (`I`), the elementwise
/// products' (`P`), the matrix products' (`M`: [`Pooled`] where `P` serves them too) and the
/// bits' (`B`). Consumed by the run, never reusable.
#[derive(Debug)]
pub struct UniformPrep<I, P, B, M = Pooled<P>> {
    pub(crate) shape: PlanShape,
    pub(crate) batch: usize,
    pub(crate) output: Output,
    pub(crate) input: Option<I>,
    pub(crate) products: P,
    pub(crate) matmuls: M,
    pub(crate) bits: B,
}

/// Matrix products' material where the products' store serves them, `m·n` units for an
/// (m×l)·(l×n) product: a fixed-point plan's come from the products' store, exact ones (an
/// integer plan's, a tree ensemble's) from their own, which serves exact elementwise products
/// too.
#[derive(Debug)]
pub struct Pooled<P> {
    exact: P,
}

/// Matrix products' material made for each product's shape (spdz2k's matrix triples), in
/// the order the walk takes it ([`PlanShape::matmuls`]), and the exact elementwise products'
/// (`P`: a tree ensemble's reach products).
#[derive(Debug)]
pub struct PerProduct<M, P> {
    pub(crate) matmuls: VecDeque<M>,
    pub(crate) exact: P,
}

/// Where a run's matrix products and exact elementwise products take their material (`M` is
/// the scheme's matrix product material, `P` its elementwise products').
pub(crate) trait MatMuls<P, M> {
    /// The material of the next matrix product, of shape `dims` (`products` is the run's
    /// store of truncated products).
    fn take(
        &mut self,
        products: &mut P,
        dims: (usize, usize, usize),
        exact: bool,
    ) -> Result<M, Error>;

    /// The material of `n` exact elementwise products.
    fn take_exact(&mut self, n: usize) -> Result<P, Error>;
}

impl<P: Store> MatMuls<P, P> for Pooled<P> {
    fn take(
        &mut self,
        products: &mut P,
        (m, _, n): (usize, usize, usize),
        exact: bool,
    ) -> Result<P, Error> {
        if exact { &mut self.exact } else { products }.take(m * n)
    }

    fn take_exact(&mut self, n: usize) -> Result<P, Error> {
        self.exact.take(n)
    }
}

impl<P: Store, M> MatMuls<P, M> for PerProduct<M, P> {
    fn take(&mut self, _: &mut P, dims: (usize, usize, usize), _: bool) -> Result<M, Error> {
        self.matmuls.pop_front().ok_or_else(|| {
            Error::PreprocessingExhausted(format!("no matrix product's material left for {dims:?}"))
        })
    }

    fn take_exact(&mut self, n: usize) -> Result<P, Error> {
        self.exact.take(n)
    }
}

impl<I, P, B, M> UniformPrep<I, P, B, M> {
    /// The batch size this material is for.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// The same material for a run that gives `output`. Material made for [`Output::Argmax`]
    /// also serves [`Output::Logits`] (the argmax's bits are then dropped unused, never kept
    /// for another run); the other way round it lacks them and is refused.
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

    /// Moves the input's material out (once).
    pub(crate) fn take_input(&mut self) -> Result<I, Error> {
        self.input
            .take()
            .ok_or_else(|| Error::ApiMisuse("the input's material was already taken".into()))
    }
}

/// Marks a scheme whose [`Inference`] is this module's walk: with [`Len`] tags, inputs that
/// need only a slot, one store of products' material for `mul` and `matmul`, and [`Boolean`],
/// it then gets `preprocess`, `infer` and the rest from the implementation below (rep3, mal3).
pub trait Uniform {}

impl<R, S, P> Inference<R> for S
where
    R: IntRing,
    S: Uniform
        + Boolean<R>
        + Arith<R, Tag = Len, InputPrep = InputSlot, MulPrep = P, MatMulPrep = P>,
    P: Store,
{
    type Prep = UniformPrep<InputSlot, P, S::BitPrep>;

    /// The products' material, then the bits' (the input needs none).
    async fn preprocess(
        &mut self,
        model: &SharedModel<S::V>,
        batch: usize,
        output: Output,
        input_owner: PartyId,
    ) -> Result<Self::Prep, Error> {
        preprocess(self, model, batch, output, input_owner).await
    }

    fn for_output(prep: Self::Prep, output: Output) -> Result<Self::Prep, Error> {
        prep.for_output(output)
    }

    fn take_input(prep: &mut Self::Prep) -> Result<InputSlot, Error> {
        prep.take_input()
    }

    async fn infer(
        &mut self,
        model: &SharedModel<S::V>,
        x: S::V,
        prep: Self::Prep,
    ) -> Result<S::V, Error> {
        infer(self, model, x, prep).await
    }
}

/// [`super::Inference::preprocess`]: the input's material, then the products' and the bits'.
pub(crate) async fn preprocess<R, S, P>(
    s: &mut S,
    model: &SharedModel<S::V>,
    batch: usize,
    output: Output,
    input_owner: PartyId,
) -> Result<UniformPrep<S::InputPrep, P, S::BitPrep>, Error>
where
    R: IntRing,
    S: Boolean<R> + Arith<R, Tag = Len, MulPrep = P, MatMulPrep = P>,
    P: Store,
{
    let shape = &model.shape;
    let (input, _) = s.input_prep(input_owner, batch * shape.input_len);
    let needs = shape.needs(batch, output);
    let all = Len(needs.products);
    let (products, _) = s.mul_prep(&all, &all, shape.product_bits()).await?;
    let all = Len(needs.exact);
    let (exact, _) = s.mul_prep(&all, &all, 0).await?;
    let bits = s.bit_prep(needs.bits).await?;
    let (input, matmuls) = (Some(input), Pooled { exact });
    Ok(UniformPrep { shape: shape.clone(), batch, output, input, products, matmuls, bits })
}

/// [`super::Inference::infer`]: the walk, each layer taking its material, then the argmax if
/// the material was made for one.
pub(crate) async fn infer<R, S, P, M>(
    s: &mut S,
    model: &SharedModel<S::V>,
    x: S::V,
    prep: UniformPrep<S::InputPrep, P, S::BitPrep, M>,
) -> Result<S::V, Error>
where
    R: IntRing,
    S: Boolean<R> + Arith<R, Tag = Len, MulPrep = P>,
    P: Store,
    M: MatMuls<P, S::MatMulPrep>,
{
    if prep.shape != model.shape {
        return Err(Error::ApiMisuse("infer: preprocessing made for another plan".into()));
    }
    model.check_input(x.len(), prep.batch)?;
    let (batch, output) = (prep.batch, prep.output);
    let mut run = Run { s, products: prep.products, matmuls: prep.matmuls, bits: prep.bits };
    let h = walk(&mut run, &model.steps, &model.shape, x, batch).await?;
    let Run { s, mut bits, .. } = run;
    match output {
        Output::Logits => Ok(h),
        // Fixed-point scores have headroom (products stay below 2^(k−2)): one MSB each.
        Output::Argmax => s.argmax_bounded(&h, model.shape.output_len(), &mut bits).await,
    }
}

/// One online run: each layer takes its part of the run's material.
struct Run<'p, S, P, M, B> {
    s: &'p mut S,
    products: P,
    matmuls: M,
    bits: B,
}

impl<'m, R, S, P, M> Layers<'m, R> for Run<'_, S, P, M, S::BitPrep>
where
    R: IntRing,
    S: Boolean<R> + Arith<R, Tag = Len, MulPrep = P>,
    S::V: 'm,
    P: Store,
    M: MatMuls<P, S::MatMulPrep>,
{
    type V = S::V;
    type W = S::V;

    fn view(w: &'m S::V) -> &'m S::V {
        w
    }

    fn constant(&self, c: &[R]) -> S::V {
        self.s.constant(c)
    }

    async fn matmul(
        &mut self,
        x: S::V,
        w: Cow<'m, S::V>,
        dims: (usize, usize, usize),
        exact: bool,
    ) -> Result<S::V, Error> {
        let prep = self.matmuls.take(&mut self.products, dims, exact)?;
        self.s.matmul(&x, &w, dims, prep).await
    }

    async fn mul_truncated(&mut self, x: S::V, y: S::V) -> Result<S::V, Error> {
        let prep = self.products.take(x.len())?;
        self.s.mul(&x, &y, prep).await
    }

    async fn relu(&mut self, x: S::V) -> Result<S::V, Error> {
        let bits = self.bits.take(x.len())?;
        self.s.relu(&x, bits).await
    }

    async fn max_pool(&mut self, x: S::V, g: &PoolGeom, batch: usize) -> Result<S::V, Error> {
        // Activations have headroom, as the scores: one MSB per comparison.
        self.s.max_windows_bounded(&x, &g.windows(batch), &mut self.bits).await
    }

    /// A product with the public factor, truncated (1 round in rep3).
    async fn scale_fixed(&mut self, x: S::V, c: R) -> Result<S::V, Error> {
        let prep = self.products.take(x.len())?;
        let cs = self.s.constant(&vec![c; x.len()]);
        self.s.mul(&x, &cs, prep).await
    }

    async fn trees(
        &mut self,
        shape: &TreeShape,
        weights: (&'m S::V, &'m S::V, &'m S::V),
        x: S::V,
        batch: usize,
    ) -> Result<S::V, Error> {
        let bits = self.bits.take(batch * shape.nodes.len())?;
        let reach = self.matmuls.take_exact(batch * shape.reach_products())?;
        let dims = (batch, shape.leaves.len(), shape.classes);
        let leaves = self.matmuls.take(&mut self.products, dims, true)?;
        let prep = trees::TreePrep { reach, leaves };
        trees::evaluate(self.s, shape, weights, &x, batch, bits, prep).await
    }
}
