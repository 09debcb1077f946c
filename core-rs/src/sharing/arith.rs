//! [`Arith`]: the interactive arithmetic every scheme offers, in two phases.

use core::ops::Range;

use super::{Linear, Store};
use crate::net::PartyId;
use crate::ring::IntRing;
use crate::Error;

/// Arithmetic on secret-shared vectors over `R`, split into a setup phase (no inputs) and an
/// online phase, the way every scheme here works.
///
/// Each interactive operation has a `*_prep` function, run in setup, that returns its
/// single-use preparation (taken by move by the online call) and the [`Tag`](Self::Tag) of the
/// value the operation will produce. A tag is what setup knows of a value: METEOR's mask (its
/// preprocessing depends on which value it will be used for), or only the length for schemes
/// whose material is interchangeable ([`Len`]). Generic code can so lay out a whole
/// computation's setup before any input exists, then run it online. Where a scheme needs no
/// material (rep3's multiplication), the preparation is `()` and its `*_prep` sends nothing.
///
/// `frac_bits` of a product: 0 for the exact ring product, `d > 0` for a fixed-point product
/// truncated by `d` bits (probabilistically: the result may be off by one in its last place).
///
/// `open` and `open_to` are where a malicious scheme verifies (its MACs or triples) before
/// releasing anything, failing with [`Error::Abort`].
///
/// ```
/// use ringfence_core::{net::PartyId, rep3::Rep3, ring::Z64, sharing::Arith, testing};
/// // Written once, for any scheme: (x·y)² of P1's x and P2's y, opened to all.
/// async fn square_of_product<S: Arith<Z64>>(s: &mut S, x: Option<&[Z64]>, y: Option<&[Z64]>)
///     -> Result<Vec<Z64>, ringfence_core::Error> {
///     let (px, tx) = s.input_prep(PartyId(1), 2);
///     let (py, ty) = s.input_prep(PartyId(2), 2);
///     let (pm, tm) = s.mul_prep(&tx, &ty, 0).await?;
///     let (ps, _) = s.mul_prep(&tm, &tm, 0).await?;
///     // Online.
///     let x = s.input(PartyId(1), x, px).await?;
///     let y = s.input(PartyId(2), y, py).await?;
///     let m = s.mul(&x, &y, pm).await?;
///     let sq = s.mul(&m, &m, ps).await?;
///     s.open(sq).await
/// }
/// let outs = testing::run_rep3(5, |mut p| async move {
///     let (x, y) = ([Z64(3), Z64(5)], [Z64(2), Z64(u64::MAX)]);
///     let me = p.me();
///     square_of_product(&mut p, (me == PartyId(1)).then_some(&x[..]),
///         (me == PartyId(2)).then_some(&y[..])).await
/// });
/// assert_eq!(outs[0], vec![Z64(36), Z64(25)]);
/// ```
#[allow(async_fn_in_trait)] // futures are not `Send` by design: a session is driven by one task
pub trait Arith<R: IntRing> {
    /// A vector of shares.
    type V: Linear<R>;
    /// What setup knows of a value that will exist online.
    type Tag: Linear<R>;
    /// The material of one input.
    type InputPrep;
    /// The material of one elementwise product.
    type MulPrep;
    /// The material of one matrix product.
    type MatMulPrep;

    /// The scheme's name, as the service and the SDK spell it.
    const NAME: &'static str;

    /// This party's id.
    fn me(&self) -> PartyId;

    /// The tag of an existing value (setup for operations on values that exist already).
    fn tag(x: &Self::V) -> Self::Tag;

    /// Public constants as a sharing (no communication).
    fn constant(&self, c: &[R]) -> Self::V;

    /// Setup of an input of `n` values owned by `owner`: a compute party, or a client (which
    /// then needs [`Arith::deliver_input_prep`] once it is connected).
    fn input_prep(&mut self, owner: PartyId, n: usize) -> (Self::InputPrep, Self::Tag);

    /// Sends a client owner what it needs of an input's material to share its input (METEOR:
    /// its mask). Run in setup, once the client is connected; nothing where a scheme needs
    /// nothing.
    async fn deliver_input_prep(&mut self, prep: &Self::InputPrep) -> Result<(), Error>;

    /// Shares `owner`'s values: the owner (when a compute party) passes `Some`, every other
    /// party `None`; a client's input arrives over its links. Inputs from a client are checked
    /// to be consistent across the parties.
    async fn input(
        &mut self,
        owner: PartyId,
        values: Option<&[R]>,
        prep: Self::InputPrep,
    ) -> Result<Self::V, Error>;

    /// Opens `x` to every compute party.
    async fn open(&mut self, x: Self::V) -> Result<Vec<R>, Error>;

    /// Opens `x` to one participant only: a compute party (which gets `Some`) or a client
    /// (every compute party gets `None`; the client reconstructs).
    async fn open_to(&mut self, to: PartyId, x: Self::V) -> Result<Option<Vec<R>>, Error>;

    /// Setup of the elementwise product of values tagged `x` and `y` (see `frac_bits` above).
    async fn mul_prep(
        &mut self,
        x: &Self::Tag,
        y: &Self::Tag,
        frac_bits: u32,
    ) -> Result<(Self::MulPrep, Self::Tag), Error>;

    /// The elementwise product `x·y` (one round in every scheme here).
    async fn mul(
        &mut self,
        x: &Self::V,
        y: &Self::V,
        prep: Self::MulPrep,
    ) -> Result<Self::V, Error>;

    /// Setup of the matrix product of `a` (m×k) and `b` (k×n), row-major.
    async fn matmul_prep(
        &mut self,
        a: &Self::Tag,
        b: &Self::Tag,
        dims: (usize, usize, usize),
        frac_bits: u32,
    ) -> Result<(Self::MatMulPrep, Self::Tag), Error>;

    /// The matrix product `a·b` (at the cost of one multiplication per output).
    async fn matmul(
        &mut self,
        a: &Self::V,
        b: &Self::V,
        dims: (usize, usize, usize),
        prep: Self::MatMulPrep,
    ) -> Result<Self::V, Error>;
}

/// The tag of schemes whose material does not depend on the values it is used for: only the
/// number of elements. Its "linear operations" are those on the length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Len(pub usize);

impl<R> Linear<R> for Len {
    fn len(&self) -> usize {
        self.0
    }
    fn add(&self, o: &Self) -> Result<Self, Error> {
        super::same_len(self.0, o.0, "add")?;
        Ok(*self)
    }
    fn sub(&self, o: &Self) -> Result<Self, Error> {
        super::same_len(self.0, o.0, "sub")?;
        Ok(*self)
    }
    fn scale(&self, _: R) -> Self {
        *self
    }
    fn gather(&self, idx: &[usize]) -> Self {
        Self(idx.len())
    }
    fn slice(&self, range: Range<usize>) -> Self {
        Self(range.len())
    }
    fn concat(parts: &[&Self]) -> Self {
        Self(parts.iter().map(|p| p.0).sum())
    }
}

/// Checks that matrix operands of `len_a` and `len_b` elements are m×k and k×n.
pub(crate) fn check_dims(
    what: &str,
    len_a: usize,
    len_b: usize,
    (m, k, n): (usize, usize, usize),
) -> Result<(), Error> {
    if len_a != m * k || len_b != k * n {
        return Err(Error::ApiMisuse(format!(
            "{what}: shapes {m}x{k} and {k}x{n} do not match {len_a} and {len_b} elements"
        )));
    }
    Ok(())
}

/// The material of an input in a scheme that needs none: who owns it and how many values.
/// Checked against the online call, so an input cannot be taken for another's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputSlot {
    /// The input's owner.
    pub owner: PartyId,
    /// The number of values.
    pub n: usize,
}

impl InputSlot {
    /// Checks that the online call is the input this slot was made for.
    pub(crate) fn check(&self, owner: PartyId, values: Option<usize>) -> Result<(), Error> {
        if owner != self.owner || values.is_some_and(|n| n != self.n) {
            return Err(Error::ApiMisuse(format!(
                "input from {owner} of {} values: the preparation is for {} values from {}",
                values.map_or("some".to_string(), |n| n.to_string()),
                self.n,
                self.owner
            )));
        }
        Ok(())
    }
}

/// The material of products with `outputs` results: the scheme's truncation material `P`
/// (one unit per output) when they are fixed-point ones, nothing for exact ones. Checked
/// against the online call, so material cannot be taken for another product's.
#[derive(Debug)]
pub struct ProductPrep<P> {
    pub(crate) outputs: usize,
    pub(crate) trunc: Option<P>,
}

impl<P> ProductPrep<P> {
    pub(crate) fn check(&self, what: &str, outputs: usize) -> Result<(), Error> {
        if outputs != self.outputs {
            return Err(Error::ApiMisuse(format!(
                "{what}: {outputs} outputs, the preparation is for {}",
                self.outputs
            )));
        }
        Ok(())
    }
}

/// Taken per layer from one run's material: `n` outputs' truncation material (none for exact
/// products).
impl<P: Store> Store for ProductPrep<P> {
    fn len(&self) -> usize {
        self.outputs
    }
    fn take(&mut self, n: usize) -> Result<Self, Error> {
        if n > self.outputs {
            return Err(Error::PreprocessingExhausted(format!(
                "{n} products' material requested, {} left",
                self.outputs
            )));
        }
        let trunc = self.trunc.as_mut().map(|t| t.take(n)).transpose()?;
        self.outputs -= n;
        Ok(Self { outputs: n, trunc })
    }
}

/// Checks an input call's arguments: exactly the owner passes values, `n` of them.
pub(crate) fn check_input_values<R>(
    me: PartyId,
    owner: PartyId,
    values: Option<&[R]>,
    n: usize,
) -> Result<(), Error> {
    if (me == owner) != values.is_some() {
        return Err(Error::ApiMisuse(format!(
            "input from {owner}: exactly the owner passes values ({me} {})",
            if values.is_some() { "did" } else { "did not" }
        )));
    }
    match values {
        Some(x) if x.len() != n => {
            Err(Error::ApiMisuse(format!("input: {} values for n = {n}", x.len())))
        }
        _ => Ok(()),
    }
}
