//! One party type for every scheme, chosen at run time: the seam where the SDK's `Party`
//! (the wasm bindings) meets the statically typed schemes.
//!
//! [`AnyParty`] is object-safe: its shares ([`AnyShares`], [`AnyBits`]) and its material made
//! ahead ([`AnyStock`]) are type-erased, and each call checks that what it is given belongs to
//! this party and this scheme. It is implemented once, for every scheme that has [`Arith`] on
//! a [`Rep3`] session, by forwarding to the scheme's own protocols; the dispatch cost is one
//! virtual call and one downcast per operation on a whole vector, never per element.
//!
//! What a scheme offers beyond [`Arith`] comes from [`Extras`]: comparisons ([`Boolean`]) and
//! material made before its operands exist (random sharings and products' material). Schemes
//! with [`Uniform`] material get both from the implementation here; another scheme states what
//! it has in one `impl` (METEOR: neither, so its comparisons are refused with `ApiMisuse`, and
//! its products make their material when they run). [`Backend::party`] starts one.
//!
//! ```
//! use ringfence_core::{net::PartyId, ring::Z64, service::Backend, testing};
//! // The same code for every family, picked by name at run time.
//! for name in ["rep3", "mal3", "meteor"] {
//!     let backend: Backend = name.parse().unwrap();
//!     let outs = testing::run_rep3(7, move |base| async move {
//!         let mut p = backend.party(base)?;
//!         let mine = (p.me() == PartyId(0)).then(|| vec![Z64(6), Z64(7)]);
//!         let x = p.input(PartyId(0), mine, 2).await?;
//!         let sq = p.mul(x.clone(), x, 0, None).await?;
//!         p.open(sq).await
//!     });
//!     assert_eq!(outs[2], vec![Z64(36), Z64(49)]);
//! }
//! ```

use core::any::Any;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use std::rc::Rc;

use crate::net::{PartyId, Roster, Stats, Transport};
use crate::nn::uniform::Uniform;
use crate::rep3::{Rep3, Rep3Vec};
use crate::ring::Z64;
#[cfg(doc)]
use crate::service::Backend;
use crate::service::{Catalog, Outcome, ServiceBase, Stage};
use crate::sharing::{same_len, Arith, Bitwise, Boolean, Gates, Len, Linear, Session, Store};
use crate::Error;

/// An operation's future: it borrows the party for its whole run.
pub type Op<'a, T> = Pin<Box<dyn Future<Output = Result<T, Error>> + 'a>>;

/// One party's shares of a vector, in some scheme. Cloning shares the vector (it is behind an
/// `Rc`), so an operation's future can own its operands without copying them.
#[derive(Clone)]
pub struct AnyShares {
    scheme: &'static str,
    holder: PartyId,
    v: Rc<dyn AnyLinear>,
}

/// One party's shares of bits (a comparison's result), in some scheme.
#[derive(Clone)]
pub struct AnyBits {
    scheme: &'static str,
    holder: PartyId,
    len: usize,
    b: Rc<dyn Any>,
}

/// What a store of material made ahead is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StockKind {
    /// Products (elementwise or matrix: one unit per output) truncated by `frac_bits`, 0 for
    /// exact ones.
    Products {
        /// The truncation of the products it serves.
        frac_bits: u32,
    },
    /// Bits for ReLUs (one per element).
    Bits,
}

/// Material made ahead of its operands, in some scheme: operations take what they need from the
/// front, and nothing is used twice.
pub struct AnyStock {
    scheme: &'static str,
    holder: PartyId,
    kind: StockKind,
    inner: Box<dyn ErasedStore>,
}

impl AnyShares {
    fn new<V: Linear<Z64> + 'static>(scheme: &'static str, holder: PartyId, v: V) -> Self {
        Self { scheme, holder, v: Rc::new(v) }
    }
    /// Number of shared elements.
    pub fn len(&self) -> usize {
        self.v.count()
    }
    /// True when no element is shared.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// `x + y` (local; no party needed, so it runs while the party is busy).
    pub fn add(&self, y: &Self) -> Result<Self, Error> {
        self.combine(y, "add", |a, b| a.add_any(b))
    }
    /// `x − y` (local).
    pub fn sub(&self, y: &Self) -> Result<Self, Error> {
        self.combine(y, "sub", |a, b| a.sub_any(b))
    }
    /// `−x` (local).
    pub fn neg(&self) -> Self {
        Self { v: self.v.neg_any(), ..self.clone() }
    }
    fn combine(
        &self,
        y: &Self,
        what: &str,
        f: impl FnOnce(&dyn AnyLinear, &dyn AnyLinear) -> Result<Rc<dyn AnyLinear>, Error>,
    ) -> Result<Self, Error> {
        mine(self.scheme, self.holder, y.scheme, y.holder, what)?;
        Ok(Self { v: f(&*self.v, &*y.v)?, ..self.clone() })
    }
    /// The party whose shares these are.
    pub fn holder(&self) -> PartyId {
        self.holder
    }
    /// The scheme they are shares of.
    pub fn scheme(&self) -> &'static str {
        self.scheme
    }
}

impl AnyBits {
    fn new<B: Bitwise + 'static>(scheme: &'static str, holder: PartyId, b: B) -> Self {
        Self { scheme, holder, len: b.len(), b: Rc::new(b) }
    }
    /// Number of shared bits.
    pub fn len(&self) -> usize {
        self.len
    }
    /// True when no bit is shared.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl AnyStock {
    fn new<P: Store + 'static>(
        scheme: &'static str,
        holder: PartyId,
        kind: StockKind,
        p: P,
    ) -> Self {
        Self { scheme, holder, kind, inner: Box::new(p) }
    }
    /// Units left.
    pub fn len(&self) -> usize {
        self.inner.len()
    }
    /// True when nothing is left.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// What it serves.
    pub fn kind(&self) -> StockKind {
        self.kind
    }
    /// Moves the first `n` units out (`PreprocessingExhausted` when fewer are left).
    pub fn take(&mut self, n: usize) -> Result<Self, Error> {
        Ok(Self { inner: self.inner.take(n)?, ..*self })
    }
}

// Shares and material never show their contents.
macro_rules! redacted_debug {
    ($($ty:ident),*) => {$(
        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({} of {}, {} units, redacted)", stringify!($ty), self.scheme,
                    self.holder, self.len())
            }
        }
    )*};
}
redacted_debug!(AnyShares, AnyBits, AnyStock);

/// A share vector behind an `Rc`, with its local operations.
trait AnyLinear {
    fn count(&self) -> usize;
    fn add_any(&self, o: &dyn AnyLinear) -> Result<Rc<dyn AnyLinear>, Error>;
    fn sub_any(&self, o: &dyn AnyLinear) -> Result<Rc<dyn AnyLinear>, Error>;
    fn neg_any(&self) -> Rc<dyn AnyLinear>;
    fn as_any(&self) -> &dyn Any;
    fn into_any(self: Rc<Self>) -> Rc<dyn Any>;
}

impl<V: Linear<Z64> + 'static> AnyLinear for V {
    fn count(&self) -> usize {
        Linear::len(self)
    }
    fn add_any(&self, o: &dyn AnyLinear) -> Result<Rc<dyn AnyLinear>, Error> {
        Ok(Rc::new(Linear::add(self, same_type(o, "add")?)?))
    }
    fn sub_any(&self, o: &dyn AnyLinear) -> Result<Rc<dyn AnyLinear>, Error> {
        Ok(Rc::new(Linear::sub(self, same_type(o, "sub")?)?))
    }
    fn neg_any(&self) -> Rc<dyn AnyLinear> {
        Rc::new(self.scale(Z64(u64::MAX)))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn into_any(self: Rc<Self>) -> Rc<dyn Any> {
        self
    }
}

fn same_type<'a, V: 'static>(o: &'a dyn AnyLinear, what: &str) -> Result<&'a V, Error> {
    o.as_any().downcast_ref::<V>().ok_or_else(|| wrong_type(what))
}

/// A [`Store`] behind a box.
trait ErasedStore {
    fn len(&self) -> usize;
    fn take(&mut self, n: usize) -> Result<Box<dyn ErasedStore>, Error>;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<P: Store + 'static> ErasedStore for P {
    fn len(&self) -> usize {
        Store::len(self)
    }
    fn take(&mut self, n: usize) -> Result<Box<dyn ErasedStore>, Error> {
        Ok(Box::new(Store::take(self, n)?))
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// What [`AnyParty::serve`] gives: the party, started again on its session, and how the
/// request ended.
pub type Served<T> = (Box<dyn AnyParty<T>>, Outcome);

/// The session a scheme's party runs on (rep3, METEOR, mal3: [`Rep3`]'s; rss: its own), so that
/// an erased party can serve requests on it ([`AnyParty::serve`]).
pub trait SchemeSession<T: Transport>: Session<Self::Base> {
    /// The session.
    type Base: ServiceBase<T>;
}

/// A party of some scheme over Z_2^64 on its session (see [`SchemeSession`]) over transport
/// `T`, with its operations on type-erased shares. Every operation checks its operands (this
/// party's, this scheme's, matching lengths) before anything is sent.
pub trait AnyParty<T> {
    /// The scheme's name.
    fn scheme(&self) -> &'static str;
    /// This party's id.
    fn me(&self) -> PartyId;
    /// The session's communication counters.
    fn stats(&self) -> Stats;
    /// The session's compute parties (clients follow them).
    fn roster(&self) -> Roster;
    /// Serves one classification request of `client` with `catalog` on this party's session
    /// ([`serve`](crate::service::serve): the scheme the request names runs on the session,
    /// if it can), calling `observe` at each stage; then starts this party's scheme again on
    /// the session. A protocol error loses the party.
    fn serve<'a>(
        self: Box<Self>,
        client: PartyId,
        catalog: &'a Catalog,
        observe: &'a mut dyn FnMut(&Stage, Stats),
    ) -> Op<'a, Served<T>>;

    /// A fresh random sharing of `n` elements, without communication (schemes with uniform
    /// material).
    fn random(&mut self, n: usize) -> Result<AnyShares, Error>;
    /// Shares `n` values of compute party `owner`, who passes them (the others `None`).
    fn input(&mut self, owner: PartyId, values: Option<Vec<Z64>>, n: usize) -> Op<'_, AnyShares>;
    /// The elementwise product truncated by `frac_bits` (0: exact), from `stock` when given
    /// (made by [`AnyParty::products`] for the same `frac_bits`, `x.len()` units), else with
    /// material made now.
    fn mul(
        &mut self,
        x: AnyShares,
        y: AnyShares,
        frac_bits: u32,
        stock: Option<AnyStock>,
    ) -> Op<'_, AnyShares>;
    /// The matrix product of `a` (m×k) and `b` (k×n), as [`AnyParty::mul`] (`m·n` units).
    fn matmul(
        &mut self,
        a: AnyShares,
        b: AnyShares,
        dims: (usize, usize, usize),
        frac_bits: u32,
        stock: Option<AnyStock>,
    ) -> Op<'_, AnyShares>;
    /// Opens `x` to every compute party.
    fn open(&mut self, x: AnyShares) -> Op<'_, Vec<Z64>>;

    /// Material for `n` products' outputs truncated by `frac_bits`, made before the operands
    /// exist (schemes with uniform material).
    fn products(&mut self, n: usize, frac_bits: u32) -> Op<'_, AnyStock>;
    /// Material for `n` ReLUs (schemes with [`Boolean`]).
    fn bits(&mut self, n: usize) -> Op<'_, AnyStock>;
    /// `[x < y]` as signed integers (schemes with [`Boolean`]).
    fn lt(&mut self, x: AnyShares, y: AnyShares) -> Op<'_, AnyBits>;
    /// `max(x, 0)` as signed integers, from `stock` when given (`x.len()` units of
    /// [`AnyParty::bits`]), else with material made now (schemes with [`Boolean`]).
    fn relu(&mut self, x: AnyShares, stock: Option<AnyStock>) -> Op<'_, AnyShares>;
    /// Opens shared bits to every compute party.
    fn open_bits(&mut self, b: AnyBits) -> Op<'_, Vec<bool>>;
}

/// What a scheme offers a caller that picks it at run time beyond [`Arith`]. Both default to
/// nothing; schemes with [`Uniform`] material and [`Boolean`] get both below.
pub trait Extras<T> {
    /// Comparisons, if the scheme has [`Boolean`].
    fn boolean(&mut self) -> Option<&mut dyn AnyBoolean> {
        None
    }
    /// Material made before its operands exist, if the scheme's material is uniform.
    fn ahead(&mut self) -> Option<&mut dyn AnyAhead<T>> {
        None
    }
}

/// The [`Boolean`] part of an [`AnyParty`].
pub trait AnyBoolean {
    /// See [`AnyParty::bits`].
    fn bits(&mut self, n: usize) -> Op<'_, AnyStock>;
    /// See [`AnyParty::lt`].
    fn lt(&mut self, x: AnyShares, y: AnyShares) -> Op<'_, AnyBits>;
    /// See [`AnyParty::relu`].
    fn relu(&mut self, x: AnyShares, stock: Option<AnyStock>) -> Op<'_, AnyShares>;
    /// See [`AnyParty::open_bits`].
    fn open_bits(&mut self, b: AnyBits) -> Op<'_, Vec<bool>>;
}

/// The material-ahead part of an [`AnyParty`].
pub trait AnyAhead<T> {
    /// See [`AnyParty::random`].
    fn random(&mut self, n: usize) -> Result<AnyShares, Error>;
    /// See [`AnyParty::products`].
    fn products(&mut self, n: usize, frac_bits: u32) -> Op<'_, AnyStock>;
}

fn unsupported(scheme: &str, what: &str, why: &str) -> Error {
    Error::ApiMisuse(format!("{what} is not available on {scheme}: {why}"))
}

const NO_BOOLEAN: &str = "the scheme has no comparison protocol for a party API";
const NO_AHEAD: &str = "its material depends on the operands (products make theirs when they run)";

/// `x` as scheme `S`'s shares of party `me`, or why not.
fn view<'a, S: Arith<Z64>>(me: PartyId, x: &'a AnyShares, what: &str) -> Result<&'a S::V, Error>
where
    S::V: 'static,
{
    mine(S::NAME, me, x.scheme, x.holder, what)?;
    same_type(&*x.v, what)
}

/// `x` moved out as scheme `S`'s shares of party `me` (copied only if another handle shares it).
fn owned<S: Arith<Z64>>(me: PartyId, x: AnyShares, what: &str) -> Result<S::V, Error>
where
    S::V: 'static,
{
    view::<S>(me, &x, what)?;
    let v = x.v.into_any().downcast::<S::V>().map_err(|_| wrong_type(what))?;
    Ok(Rc::try_unwrap(v).unwrap_or_else(|v| (*v).clone()))
}

fn mine(scheme: &str, me: PartyId, of: &str, holder: PartyId, what: &str) -> Result<(), Error> {
    if of != scheme {
        return Err(Error::ApiMisuse(format!("{what}: {of} shares passed to a {scheme} party")));
    }
    if holder != me {
        return Err(Error::ApiMisuse(format!("{what}: shares held by {holder} passed to {me}")));
    }
    Ok(())
}

fn wrong_type(what: &str) -> Error {
    Error::ApiMisuse(format!("{what}: shares of an unexpected type for their scheme"))
}

impl AnyStock {
    /// The material as scheme `scheme`'s `P` for `n` units of `kind` at party `me`.
    fn into_prep<P: 'static>(
        self,
        scheme: &str,
        me: PartyId,
        kind: StockKind,
        n: usize,
        what: &str,
    ) -> Result<P, Error> {
        mine(scheme, me, self.scheme, self.holder, what)?;
        if self.kind != kind {
            return Err(Error::ApiMisuse(format!(
                "{what}: material made for {:?} cannot serve {kind:?}",
                self.kind
            )));
        }
        if self.len() != n {
            return Err(Error::ApiMisuse(format!(
                "{what}: {} units of material for {n} outputs",
                self.len()
            )));
        }
        self.inner.into_any().downcast::<P>().map(|p| *p).map_err(|_| wrong_type(what))
    }
}

impl<T: Transport + 'static, S> AnyParty<T> for S
where
    S: Arith<Z64> + SchemeSession<T> + Extras<T> + 'static,
    S::V: 'static,
    S::MulPrep: 'static,
    S::MatMulPrep: 'static,
{
    fn scheme(&self) -> &'static str {
        S::NAME
    }
    fn me(&self) -> PartyId {
        Arith::<Z64>::me(self)
    }
    fn stats(&self) -> Stats {
        ServiceBase::ctx(self.base()).stats()
    }
    fn roster(&self) -> Roster {
        self.base().roster()
    }
    fn serve<'a>(
        self: Box<Self>,
        client: PartyId,
        catalog: &'a Catalog,
        observe: &'a mut dyn FnMut(&Stage, Stats),
    ) -> Op<'a, Served<T>> {
        Box::pin(async move {
            let base = (*self).finish();
            let (base, outcome) = crate::service::serve(base, client, catalog, observe).await?;
            Ok((Box::new(S::start(base)) as Box<dyn AnyParty<T>>, outcome))
        })
    }

    fn random(&mut self, n: usize) -> Result<AnyShares, Error> {
        match self.ahead() {
            Some(a) => a.random(n),
            None => Err(unsupported(S::NAME, "random", NO_AHEAD)),
        }
    }

    fn input(&mut self, owner: PartyId, values: Option<Vec<Z64>>, n: usize) -> Op<'_, AnyShares> {
        Box::pin(async move {
            let (prep, _) = self.input_prep(owner, n);
            let v = Arith::input(self, owner, values.as_deref(), prep).await?;
            Ok(AnyShares::new(S::NAME, Arith::<Z64>::me(self), v))
        })
    }

    fn mul(
        &mut self,
        x: AnyShares,
        y: AnyShares,
        frac_bits: u32,
        stock: Option<AnyStock>,
    ) -> Op<'_, AnyShares> {
        Box::pin(async move {
            let me = Arith::<Z64>::me(self);
            let (xv, yv) = (view::<S>(me, &x, "mul")?, view::<S>(me, &y, "mul")?);
            same_len(xv.len(), yv.len(), "mul")?;
            let prep = match stock {
                Some(s) => {
                    s.into_prep(S::NAME, me, StockKind::Products { frac_bits }, xv.len(), "mul")?
                }
                None => self.mul_prep(&S::tag(xv), &S::tag(yv), frac_bits).await?.0,
            };
            let z = Arith::mul(self, xv, yv, prep).await?;
            Ok(AnyShares::new(S::NAME, me, z))
        })
    }

    fn matmul(
        &mut self,
        a: AnyShares,
        b: AnyShares,
        dims: (usize, usize, usize),
        frac_bits: u32,
        stock: Option<AnyStock>,
    ) -> Op<'_, AnyShares> {
        Box::pin(async move {
            let me = Arith::<Z64>::me(self);
            let (av, bv) = (view::<S>(me, &a, "matmul")?, view::<S>(me, &b, "matmul")?);
            let kind = StockKind::Products { frac_bits };
            let prep = match stock {
                Some(s) => s.into_prep(S::NAME, me, kind, dims.0 * dims.2, "matmul")?,
                None => self.matmul_prep(&S::tag(av), &S::tag(bv), dims, frac_bits).await?.0,
            };
            let z = Arith::matmul(self, av, bv, dims, prep).await?;
            Ok(AnyShares::new(S::NAME, me, z))
        })
    }

    fn open(&mut self, x: AnyShares) -> Op<'_, Vec<Z64>> {
        Box::pin(async move {
            let x = owned::<S>(Arith::<Z64>::me(self), x, "open")?;
            Arith::open(self, x).await
        })
    }

    fn products(&mut self, n: usize, frac_bits: u32) -> Op<'_, AnyStock> {
        match self.ahead() {
            Some(a) => a.products(n, frac_bits),
            None => Box::pin(async move { Err(unsupported(S::NAME, "products", NO_AHEAD)) }),
        }
    }

    fn bits(&mut self, n: usize) -> Op<'_, AnyStock> {
        match self.boolean() {
            Some(b) => b.bits(n),
            None => Box::pin(async move { Err(unsupported(S::NAME, "bits", NO_BOOLEAN)) }),
        }
    }

    fn lt(&mut self, x: AnyShares, y: AnyShares) -> Op<'_, AnyBits> {
        match self.boolean() {
            Some(b) => b.lt(x, y),
            None => Box::pin(async move { Err(unsupported(S::NAME, "lt", NO_BOOLEAN)) }),
        }
    }

    fn relu(&mut self, x: AnyShares, stock: Option<AnyStock>) -> Op<'_, AnyShares> {
        match self.boolean() {
            Some(b) => b.relu(x, stock),
            None => Box::pin(async move { Err(unsupported(S::NAME, "relu", NO_BOOLEAN)) }),
        }
    }

    fn open_bits(&mut self, b: AnyBits) -> Op<'_, Vec<bool>> {
        match self.boolean() {
            Some(s) => s.open_bits(b),
            None => Box::pin(async move { Err(unsupported(S::NAME, "open_bits", NO_BOOLEAN)) }),
        }
    }
}

impl<S> AnyBoolean for S
where
    S: Boolean<Z64>,
    S::V: 'static,
    S::Bits: 'static,
    S::BitPrep: 'static,
{
    fn bits(&mut self, n: usize) -> Op<'_, AnyStock> {
        Box::pin(async move {
            let p = self.bit_prep(n).await?;
            Ok(AnyStock::new(S::NAME, Arith::<Z64>::me(self), StockKind::Bits, p))
        })
    }

    fn lt(&mut self, x: AnyShares, y: AnyShares) -> Op<'_, AnyBits> {
        Box::pin(async move {
            let me = Arith::<Z64>::me(self);
            let (xv, yv) = (view::<S>(me, &x, "lt")?, view::<S>(me, &y, "lt")?);
            same_len(xv.len(), yv.len(), "lt")?;
            let c = Boolean::lt(self, xv, yv).await?;
            Ok(AnyBits::new(S::NAME, me, c))
        })
    }

    fn relu(&mut self, x: AnyShares, stock: Option<AnyStock>) -> Op<'_, AnyShares> {
        Box::pin(async move {
            let me = Arith::<Z64>::me(self);
            let xv = view::<S>(me, &x, "relu")?;
            let prep = match stock {
                Some(s) => s.into_prep(S::NAME, me, StockKind::Bits, xv.len(), "relu")?,
                None => self.bit_prep(xv.len()).await?,
            };
            let r = Boolean::relu(self, xv, prep).await?;
            Ok(AnyShares::new(S::NAME, me, r))
        })
    }

    fn open_bits(&mut self, b: AnyBits) -> Op<'_, Vec<bool>> {
        Box::pin(async move {
            mine(S::NAME, Arith::<Z64>::me(self), b.scheme, b.holder, "open_bits")?;
            let bits = b.b.downcast::<S::Bits>().map_err(|_| wrong_type("open_bits"))?;
            let bits = Rc::try_unwrap(bits).unwrap_or_else(|b| (*b).clone());
            Gates::open_bits(self, bits).await
        })
    }
}

impl<T: Transport, S> AnyAhead<T> for S
where
    S: Uniform + Arith<Z64, Tag = Len, V = Rep3Vec<Z64>> + Session<Rep3<T>>,
    S::MulPrep: Store + 'static,
{
    fn random(&mut self, n: usize) -> Result<AnyShares, Error> {
        let v = self.base_mut().random::<Z64>(n);
        Ok(AnyShares::new(S::NAME, Arith::<Z64>::me(self), v))
    }

    fn products(&mut self, n: usize, frac_bits: u32) -> Op<'_, AnyStock> {
        Box::pin(async move {
            let (p, _) = self.mul_prep(&Len(n), &Len(n), frac_bits).await?;
            let kind = StockKind::Products { frac_bits };
            Ok(AnyStock::new(S::NAME, Arith::<Z64>::me(self), kind, p))
        })
    }
}

/// Schemes with uniform material and [`Boolean`] (rep3, mal3) have both extras.
impl<T: Transport, S> Extras<T> for S
where
    S: Uniform + Boolean<Z64, Tag = Len, V = Rep3Vec<Z64>> + Session<Rep3<T>>,
    S::MulPrep: Store + 'static,
    S::Bits: 'static,
    S::BitPrep: 'static,
{
    fn boolean(&mut self) -> Option<&mut dyn AnyBoolean> {
        Some(self)
    }
    fn ahead(&mut self) -> Option<&mut dyn AnyAhead<T>> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::fixed::FixedPoint;
    use crate::service::Backend;
    use crate::testing::{random_words, run_rep3, MemTransport};

    const EDGES: [u64; 5] = [0, 1, u64::MAX, 1 << 63, (1 << 63) - 1];

    /// Every ordered pair of edge values, then random words.
    fn operands(seed: u64) -> (Vec<Z64>, Vec<Z64>) {
        let mut xs: Vec<u64> = EDGES.iter().flat_map(|&a| EDGES.map(|_| a)).collect();
        let mut ys: Vec<u64> = EDGES.iter().flat_map(|_| EDGES).collect();
        xs.extend(random_words(seed, 20));
        ys.extend(random_words(seed + 1, 20));
        (xs.into_iter().map(Z64).collect(), ys.into_iter().map(Z64).collect())
    }

    /// The families that run on rep3's session (rss has its own).
    fn on_rep3() -> impl Iterator<Item = Backend> {
        Backend::all().filter(|b| b.servers() == [3])
    }

    #[test]
    fn rss_is_not_started_on_a_rep3_session() {
        let outs = run_rep3(10, |base| async move {
            let e = Backend::Rss.party(base).err().expect("refused");
            Ok(e.to_string())
        });
        assert!(outs[0].contains("its own session"), "{}", outs[0]);
    }

    /// `n` parties of `backend` joined on one in-memory network compute products,
    /// comparisons and ReLUs like the plaintext.
    fn joined_parties_compute_like_the_plaintext(backend: Backend, n: usize) {
        let net = crate::testing::Net::new(n);
        let (xs, ys) = operands(21);
        let futs: Vec<crate::testing::PartyFuture<'_, Result<Vec<Vec<Z64>>, Error>>> = (0..n)
            .map(|i| {
                let me = PartyId(i as u8);
                let ctx =
                    crate::net::Ctx::new(me, n, crate::net::SessionId([4; 16]), net.transport(me));
                let seeds = crate::testing::rep3_seeds(3)[0].clone();
                let own = crate::prg::Seed::from_bytes([me.0 + 1; 32]);
                let seeds = crate::rep3::Rep3Seeds { own, ..seeds };
                let (xs, ys) = (xs.clone(), ys.clone());
                Box::pin(async move {
                    let mut p = backend.join(ctx, n, seeds).await?;
                    assert_eq!(
                        (p.scheme(), p.roster()),
                        (backend.name(), backend.party_roster(n)?)
                    );
                    let (x, y) = shared(&mut *p, &xs, &ys).await?;
                    let z = p.mul(x.clone(), y.clone(), 0, None).await?;
                    let c = p.lt(x.clone(), y).await?;
                    let r = p.relu(x, None).await?;
                    let bits = p.open_bits(c).await?.into_iter().map(|b| Z64(b.into())).collect();
                    Ok(vec![p.open(z).await?, bits, p.open(r).await?])
                }) as crate::testing::PartyFuture<'_, _>
            })
            .collect();
        let outs: Vec<_> = net.run(futs).into_iter().map(Result::unwrap).collect();
        let each = |f: &dyn Fn(u64, u64) -> u64| -> Vec<Z64> {
            xs.iter().zip(&ys).map(|(x, y)| Z64(f(x.0, y.0))).collect()
        };
        for o in outs {
            assert_eq!(o[0], each(&|x, y| x.wrapping_mul(y)), "{}", backend.name());
            assert_eq!(o[1], each(&|x, y| u64::from((x as i64) < (y as i64))));
            assert_eq!(o[2], each(&|x, _| if (x as i64) > 0 { x } else { 0 }));
        }
    }

    #[test]
    fn spdz2k_parties_join_and_compute_like_the_plaintext() {
        // Their own material, made by OT as the operations draw it (90 comparisons at k = 64:
        // two parties only; the conformance suites run three and four).
        joined_parties_compute_like_the_plaintext(Backend::Spdz2k, 2);
        assert_eq!(Backend::Spdz2k.party_roster(7).unwrap(), Roster::new(7, 6).unwrap());
        let e = Backend::Spdz2k.party_roster(1).expect_err("one party");
        assert!(e.to_string().contains("spdz2k runs among 2 or more parties, not 1"), "{e}");
    }

    #[test]
    fn an_rss_party_joins_among_five_and_computes_like_the_plaintext() {
        joined_parties_compute_like_the_plaintext(Backend::Rss, 5);
        // A three-party family refuses five parties, and rss three, before anything is sent.
        let net = crate::testing::Net::new(5);
        let ctx = crate::net::Ctx::new(
            PartyId(0),
            5,
            crate::net::SessionId([4; 16]),
            net.transport(PartyId(0)),
        );
        let seeds = crate::testing::rep3_seeds(3)[0].clone();
        let e = ready_now(Backend::Rep3.join(ctx, 5, seeds)).err().expect("refused");
        assert!(e.to_string().contains("rep3 runs among 3 parties, not 5"), "{e}");
    }

    /// Polls a future that finishes without waiting on anything.
    fn ready_now<F: core::future::Future>(f: F) -> F::Output {
        let mut f = core::pin::pin!(f);
        let waker = std::task::Waker::noop();
        match f.as_mut().poll(&mut std::task::Context::from_waker(waker)) {
            core::task::Poll::Ready(v) => v,
            core::task::Poll::Pending => panic!("the future waited"),
        }
    }

    fn has_boolean(b: Backend) -> bool {
        b != Backend::Meteor
    }

    async fn shared(
        p: &mut dyn AnyParty<MemTransport>,
        xs: &[Z64],
        ys: &[Z64],
    ) -> Result<(AnyShares, AnyShares), Error> {
        let mine = |owner: u8, v: &[Z64]| (p.me() == PartyId(owner)).then(|| v.to_vec());
        let (mx, my) = (mine(0, xs), mine(1, ys));
        let x = p.input(PartyId(0), mx, xs.len()).await?;
        let y = p.input(PartyId(1), my, ys.len()).await?;
        Ok((x, y))
    }

    #[test]
    fn every_family_computes_like_the_plaintext() {
        for backend in on_rep3() {
            let (xs, ys) = operands(backend.name().len() as u64);
            let outs = run_rep3(11, |base| {
                let (xs, ys) = (xs.clone(), ys.clone());
                async move {
                    let mut p = backend.party(base)?;
                    let (x, y) = shared(&mut *p, &xs, &ys).await?;
                    let mut out = vec![
                        p.open(x.add(&y)?).await?,
                        p.open(x.sub(&y)?).await?,
                        p.open(x.neg()).await?,
                    ];
                    let z = p.mul(x.clone(), y.clone(), 0, None).await?;
                    out.push(p.open(z).await?);
                    // 3×5 by 5×2: the first 15 and 10 values, input again.
                    let (a, b) = shared(&mut *p, &xs[..15], &ys[..10]).await?;
                    let c = p.matmul(a, b, (3, 5, 2), 0, None).await?;
                    out.push(p.open(c).await?);
                    if has_boolean(backend) {
                        let c = p.lt(x.clone(), y.clone()).await?;
                        out.push(
                            p.open_bits(c).await?.into_iter().map(|b| Z64(b as u64)).collect(),
                        );
                        let r = p.relu(x.clone(), None).await?;
                        out.push(p.open(r).await?);
                        let r = p.random(4)?;
                        out.push(p.open(r).await?);
                    }
                    Ok(out)
                }
            });
            assert_eq!(outs[0], outs[1], "{backend:?}: the parties agree");
            assert_eq!(outs[0], outs[2], "{backend:?}: the parties agree");
            let o = &outs[0];
            let each = |f: &dyn Fn(u64, u64) -> u64| -> Vec<Z64> {
                xs.iter().zip(&ys).map(|(x, y)| Z64(f(x.0, y.0))).collect()
            };
            assert_eq!(o[0], each(&|x, y| x.wrapping_add(y)), "{backend:?} add");
            assert_eq!(o[1], each(&|x, y| x.wrapping_sub(y)), "{backend:?} sub");
            assert_eq!(o[2], each(&|x, _| x.wrapping_neg()), "{backend:?} neg");
            assert_eq!(o[3], each(&|x, y| x.wrapping_mul(y)), "{backend:?} mul");
            let mm: Vec<Z64> = (0..6)
                .map(|ij| {
                    let (i, j) = (ij / 2, ij % 2);
                    let dot = (0..5).fold(0u64, |acc, t| {
                        acc.wrapping_add(xs[i * 5 + t].0.wrapping_mul(ys[t * 2 + j].0))
                    });
                    Z64(dot)
                })
                .collect();
            assert_eq!(o[4], mm, "{backend:?} matmul");
            if has_boolean(backend) {
                assert_eq!(o[5], each(&|x, y| ((x as i64) < (y as i64)) as u64), "{backend:?} lt");
                assert_eq!(o[6], each(&|x, _| if (x as i64) > 0 { x } else { 0 }), "relu");
                assert_eq!(o[7].len(), 4);
            } else {
                assert_eq!(o.len(), 5);
            }
        }
    }

    #[test]
    fn material_made_ahead_serves_fixed_point_products_and_relus() {
        let fp = FixedPoint::DEFAULT_64;
        let f = fp.frac_bits;
        let xs: Vec<Z64> = fp.encode_slice(&[1.5, -2.25, 0.0, 1000.125, -0.5, 3.0]).unwrap();
        let ys: Vec<Z64> = fp.encode_slice(&[2.0, 4.0, -7.5, -0.25, -0.5, 1.0]).unwrap();
        for backend in on_rep3() {
            let outs = run_rep3(12, |base| {
                let (xs, ys) = (xs.clone(), ys.clone());
                async move {
                    let mut p = backend.party(base)?;
                    let (x, y) = shared(&mut *p, &xs, &ys).await?;
                    // METEOR makes its products' material when they run.
                    let (stock, bits) = match has_boolean(backend) {
                        true => (Some(p.products(8, f).await?), Some(p.bits(6).await?)),
                        false => (None, None),
                    };
                    let (mut stock, mut bits) = (stock, bits);
                    let take = |s: &mut Option<AnyStock>, n| s.as_mut().map(|s| s.take(n));
                    let z =
                        p.mul(x.clone(), y.clone(), f, take(&mut stock, 6).transpose()?).await?;
                    let r = match take(&mut bits, 6).transpose()? {
                        Some(b) => Some(p.relu(x.clone(), Some(b)).await?),
                        None => None,
                    };
                    let z = p.open(z).await?;
                    let r = match r {
                        Some(r) => Some(p.open(r).await?),
                        None => None,
                    };
                    Ok((z, r, stock.map(|s| s.len()), bits.map(|b| b.len())))
                }
            });
            let (z, r, stock_left, bits_left) = &outs[0];
            for i in 0..xs.len() {
                let exact = ((xs[i].0 as i64 as i128 * ys[i].0 as i64 as i128) >> f) as i64;
                let got = z[i].0 as i64;
                assert!(got == exact || got == exact - 1, "{backend:?} {i}: {got} vs {exact}");
            }
            if has_boolean(backend) {
                let want: Vec<Z64> =
                    xs.iter().map(|x| if (x.0 as i64) > 0 { *x } else { Z64(0) }).collect();
                assert_eq!(r.as_ref().unwrap(), &want);
                assert_eq!((*stock_left, *bits_left), (Some(2), Some(0)));
            }
        }
    }

    #[test]
    fn misuse_is_refused_before_anything_is_sent() {
        for backend in on_rep3() {
            let outs = run_rep3(13, |base| async move {
                let mut p = backend.party(base)?;
                let x =
                    p.input(PartyId(0), (p.me() == PartyId(0)).then(|| vec![Z64(5); 4]), 4).await?;
                let before = p.stats();
                let mut refusals = Vec::new();
                let mut refused = |r: Result<(), Error>| refusals.push(r.unwrap_err());
                // Another party's shares, and another scheme's.
                let other = crate::net::Roster::THREE.next(p.me());
                let foreign = AnyShares { holder: other, ..x.clone() };
                refused(p.open(foreign.clone()).await.map(drop));
                refused(x.add(&foreign).map(drop));
                let alien = AnyShares { scheme: "none", ..x.clone() };
                refused(p.mul(alien, x.clone(), 0, None).await.map(drop));
                let short =
                    AnyShares::new(p.scheme(), p.me(), Rep3Vec::public(p.me(), &[Z64(0); 3]));
                refused(x.sub(&short).map(drop));
                assert_eq!(p.stats(), before, "nothing was sent");
                if has_boolean(backend) {
                    // Material of the wrong kind, truncation or size.
                    let bits = p.bits(4).await?;
                    let products = p.products(4, 13).await?;
                    refused(p.mul(x.clone(), x.clone(), 0, Some(products)).await.map(drop));
                    refused(p.mul(x.clone(), x.clone(), 13, Some(bits)).await.map(drop));
                    let mut three = p.bits(3).await?;
                    let before3 = p.stats();
                    refused(p.relu(x.clone(), Some(three.take(3)?)).await.map(drop));
                    assert_eq!(p.stats(), before3, "nothing was sent");
                } else {
                    for r in [
                        p.lt(x.clone(), x.clone()).await.map(drop),
                        p.relu(x.clone(), None).await.map(drop),
                        p.bits(2).await.map(drop),
                        p.products(2, 13).await.map(drop),
                        p.random(2).map(drop),
                    ] {
                        refused(r);
                    }
                    assert_eq!(p.stats(), before, "nothing was sent");
                }
                // The party goes on.
                let sq = p.mul(x.clone(), x, 0, None).await?;
                Ok((refusals, p.open(sq).await?))
            });
            for (refusals, sq) in outs {
                assert_eq!(sq, vec![Z64(25); 4], "{backend:?}");
                assert!(refusals.len() >= 7, "{backend:?}: {refusals:?}");
                for e in refusals {
                    assert!(matches!(e, Error::ApiMisuse(_)), "{backend:?}: {e:?}");
                }
            }
        }
    }

    #[test]
    fn rep3_through_the_erased_party_costs_what_it_costs_directly() {
        let (xs, ys) = operands(3);
        let direct = run_rep3(14, |mut p| {
            let (xs, ys) = (xs.clone(), ys.clone());
            async move {
                let me = p.me();
                let x =
                    p.input(PartyId(0), (me == PartyId(0)).then_some(&xs[..]), xs.len()).await?;
                let y =
                    p.input(PartyId(1), (me == PartyId(1)).then_some(&ys[..]), ys.len()).await?;
                let z = Rep3::mul(&mut p, &x, &y).await?;
                let c = Boolean::<Z64>::lt(&mut p, &x, &y).await?;
                let (z, c) = (p.reveal(z).await?, p.reveal_bits(c).await?);
                Ok((z, c, p.ctx().stats()))
            }
        });
        let erased = run_rep3(14, |base| {
            let (xs, ys) = (xs.clone(), ys.clone());
            async move {
                let mut p = Backend::Rep3.party(base)?;
                let (x, y) = shared(&mut *p, &xs, &ys).await?;
                let z = p.mul(x.clone(), y.clone(), 0, None).await?;
                let c = p.lt(x, y).await?;
                let (z, c) = (p.open(z).await?, p.open_bits(c).await?);
                Ok((z, c, p.stats()))
            }
        });
        assert_eq!(direct, erased);
    }
}
