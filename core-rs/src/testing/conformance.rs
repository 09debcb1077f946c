//! Conformance suites for every [`Arith`] scheme, written once (feature `test-utils`).
//!
//! Each suite is a function generic over the ring `R`, the scheme `S` and the base session `B`
//! the scheme starts on, run on the in-memory [`Net`] and failing with a message that names the
//! scheme ([`Arith::NAME`]) and the ring's width. The suites are written for any [`Roster`]:
//! every party takes part, each input and opening is checked at every party. A scheme joins by
//! describing itself in a [`Scheme`]: its roster, the base session it starts on (a
//! [`TestBase`], `rep3` by default), and its online [`CostModel`] as data. The suites then
//! check it for
//!
//! * correctness against plaintext, on random and edge values: [`input_and_open`],
//!   [`mul_exact`], [`matmul_exact`], [`fixed_point`], [`linear`], [`chaining`];
//! * the cost of every online operation, byte for byte and round for round: [`costs`];
//! * misuse refused with [`Error::ApiMisuse`] before anything is sent: [`misuse`],
//!   [`misuse_of_input_values`];
//! * what goes on the wire: fresh randomness per operation ([`fresh_randomness`]) and a single
//!   party's view of an input ([`observer_view`]).
//!
//! Schemes with [`crate::sharing::Gates`] (boolean circuits) have [`gates`], and schemes with
//! [`crate::sharing::Boolean`] five more suites: [`bits_and_conversions`],
//! [`comparisons`], [`selections`], their costs against a [`BitCostModel`] ([`bit_costs`]) and
//! [`bit_misuse`].
//!
//! The suites give the operations' subjects as fixed ids (inputs from `P0`, `P1` and `P2`), so
//! a roster needs at least three parties.
//!
//! The instances (every scheme at both ring widths, each suite its own test) and the schemes'
//! descriptions are in `core-rs/tests/conformance.rs`.

mod boolean;
mod cost;
mod gates;
mod misuse;
mod ops;
mod wire;

pub use boolean::{
    bit_costs, bit_misuse, bits_and_conversions, comparisons, selections, BitCost, BitCostModel,
};
pub use cost::costs;
pub use gates::gates;
pub use misuse::{misuse, misuse_of_input_values};
pub use ops::{chaining, fixed_point, input_and_open, linear, matmul_exact, mul_exact};
pub use wire::{fresh_randomness, observer_view};

use core::future::Future;
use core::marker::PhantomData;

use super::{random_words, rep3_seeds, MemTransport, Net};
use crate::net::{Ctx, PartyId, Roster, Stats};
use crate::rep3::Rep3;
use crate::ring::IntRing;
use crate::sharing::{Arith, Linear, Session};
use crate::Error;

/// A base session the suites can start on the in-memory network.
#[allow(async_fn_in_trait)] // futures are not `Send` by design: a session is driven by one task
pub trait TestBase: Sized {
    /// Party `ctx.me()`'s base session of a session of `roster`, with the test keys derived
    /// from `seed` (every party passes the same seed).
    async fn setup(ctx: Ctx<MemTransport>, roster: Roster, seed: u64) -> Result<Self, Error>;
    /// The party's communication counters.
    fn stats(&self) -> Stats;
}

/// `rep3`'s session, with the keys of [`super::run_rep3_on`] (so the figures are the same).
impl TestBase for Rep3<MemTransport> {
    async fn setup(ctx: Ctx<MemTransport>, roster: Roster, seed: u64) -> Result<Self, Error> {
        if roster != Roster::THREE {
            return Err(Error::ApiMisuse(format!(
                "a rep3 session is for the roster Roster::THREE, not {roster:?}"
            )));
        }
        let me = ctx.me();
        let Some(seeds) = rep3_seeds(seed).into_iter().nth(me.index()) else {
            return Err(Error::ApiMisuse(format!("{me} is not a compute party of rep3")));
        };
        // The inherent `Rep3::setup` (it takes the seeds, not a roster and a seed).
        Self::setup(ctx, seeds).await
    }

    fn stats(&self) -> Stats {
        self.ctx().stats()
    }
}

/// A party the suites can run: a scheme's [`Arith`] started on a base session `B`.
pub trait Party<R: IntRing, B: TestBase>: Arith<R> + Session<B> {}

impl<R: IntRing, B: TestBase, S: Arith<R> + Session<B>> Party<R, B> for S {}

/// A party's communication counters.
fn stats_of<B: TestBase, S: Session<B>>(s: &S) -> Stats {
    s.base().stats()
}

/// What the suites need to know of a scheme besides its [`Arith`] and [`Session`]
/// implementations: the base session `B` its parties start on, and its roster.
pub struct Scheme<S, B = Rep3<MemTransport>> {
    /// The scheme's party type and its base session (the description is per scheme).
    pub party: PhantomData<fn() -> (S, B)>,
    /// The compute parties of the sessions the suites run (no clients).
    pub roster: Roster,
    /// Whether a preparation is bound to the operands it was made for (METEOR: their masks), so
    /// that one made for other operands of the same shape is refused. When it is not, material
    /// is interchangeable between operands of one shape, and the suites check that a
    /// preparation made for other operands still gives their exact product.
    pub binds_operands: bool,
    /// The online cost model, for a scheme whose operations cost a fixed amount per value
    /// (one that checks its products at each opening does not).
    pub cost: Option<CostModel>,
    /// The costs of its boolean primitives, for a scheme with [`crate::sharing::Boolean`].
    pub boolean: Option<BitCostModel>,
}

impl<S, B> Scheme<S, B> {
    /// The compute parties of the roster, `P0` first.
    pub fn parties(&self) -> Vec<PartyId> {
        self.roster.parties().collect()
    }
}

/// What one party sends in one online operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartyCost {
    /// Ring elements sent per value (per output for products), over all peers.
    pub elems: u64,
    /// Messages (frames, for batches below the frame limit) sent.
    pub msgs: u64,
    /// Rounds taken part in.
    pub rounds: u64,
}

/// A scheme's online cost per party: the figures of its documentation, as data.
///
/// Each field holds one entry per compute party of the scheme's roster. Fields indexed "by
/// party" hold P0, P1, …; fields indexed by role hold the party the operation is about (the
/// input's owner, the opening's receiver), then the next party around the ring, then the one
/// after, and so on: party `me` has role `(me − about) mod n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CostModel {
    /// Input of a compute party's values, by role (owner, next, …, previous).
    pub input: Vec<PartyCost>,
    /// Opening to every compute party, by party.
    pub open: Vec<PartyCost>,
    /// Opening to one compute party, by role (receiver, next, …, previous).
    pub open_to: Vec<PartyCost>,
    /// Exact elementwise product, by party.
    pub mul: Vec<PartyCost>,
    /// Fixed-point elementwise product, by party.
    pub mul_fixed: Vec<PartyCost>,
    /// Exact matrix product, per output, by party.
    pub matmul: Vec<PartyCost>,
    /// Fixed-point matrix product, per output, by party.
    pub matmul_fixed: Vec<PartyCost>,
}

/// The scheme and ring a failure is about, for assertion messages.
fn label<R: IntRing, S: Arith<R>>() -> String {
    format!("{} over Z_2^{}", S::NAME, R::BITS)
}

/// Runs `f` as each party of a fresh session of `sc` on `net`, passing it the party's id.
fn run_as_on<S, B, O, F, Fut>(
    sc: &Scheme<S, B>,
    net: &Net,
    seed: u64,
    f: F,
) -> Vec<Result<O, Error>>
where
    B: TestBase,
    S: Session<B>,
    F: Fn(PartyId, S) -> Fut,
    Fut: Future<Output = Result<O, Error>>,
{
    super::run_base(net, sc.roster, sc.roster.participants(0), seed, |me, base| {
        f(me, S::start(base))
    })
}

/// Runs `f` as each party of a fresh session of `sc` on `net`.
fn run_on<S, B, O, F, Fut>(sc: &Scheme<S, B>, net: &Net, seed: u64, f: F) -> Vec<Result<O, Error>>
where
    B: TestBase,
    S: Session<B>,
    F: Fn(S) -> Fut,
    Fut: Future<Output = Result<O, Error>>,
{
    run_as_on(sc, net, seed, |_, s| f(s))
}

/// Fails (with `at` in the message) if a party failed.
fn all_ok<O>(at: &str, outs: Vec<Result<O, Error>>) -> Vec<O> {
    let outs = outs.into_iter().enumerate();
    outs.map(|(i, o)| o.unwrap_or_else(|e| panic!("{at}: P{i} failed: {e}"))).collect()
}

/// [`run_on`], failing (with `at` in the message) if a party fails.
fn run_with<S, B, O, F, Fut>(sc: &Scheme<S, B>, at: &str, net: &Net, seed: u64, f: F) -> Vec<O>
where
    B: TestBase,
    S: Session<B>,
    F: Fn(S) -> Fut,
    Fut: Future<Output = Result<O, Error>>,
{
    all_ok(at, run_on(sc, net, seed, f))
}

/// [`run_with`] on a network of its own.
fn run<S, B, O, F, Fut>(sc: &Scheme<S, B>, at: &str, seed: u64, f: F) -> Vec<O>
where
    B: TestBase,
    S: Session<B>,
    F: Fn(S) -> Fut,
    Fut: Future<Output = Result<O, Error>>,
{
    run_with(sc, at, &Net::new(sc.roster.n()), seed, f)
}

/// [`run`], passing `f` the party's id too.
fn run_as<S, B, O, F, Fut>(sc: &Scheme<S, B>, at: &str, seed: u64, f: F) -> Vec<O>
where
    B: TestBase,
    S: Session<B>,
    F: Fn(PartyId, S) -> Fut,
    Fut: Future<Output = Result<O, Error>>,
{
    all_ok(at, run_as_on(sc, &Net::new(sc.roster.n()), seed, f))
}

/// Setup and online input of `x` from `owner` in one go, for suites whose setup needs no tag
/// of a later operation: the owner passes its values, the others `None`.
async fn input_now<R: IntRing, S: Arith<R>>(
    s: &mut S,
    owner: PartyId,
    x: &[R],
) -> Result<S::V, Error> {
    let (prep, _) = s.input_prep(owner, x.len());
    let values = (s.me() == owner).then_some(x);
    s.input(owner, values, prep).await
}

/// 0, 1, −1 (all ones), the most negative value 2^(k−1) and the most positive 2^(k−1) − 1.
fn edges<R: IntRing>() -> [R; 5] {
    let min = R::from_u64(1 << (R::BITS - 1));
    [R::ZERO, R::ONE, -R::ONE, min, min - R::ONE]
}

/// `n` pseudo-random elements from `seed`, then the [`edges`].
fn values<R: IntRing>(seed: u64, n: usize) -> Vec<R> {
    let mut v = random(seed, n);
    v.extend(edges::<R>());
    v
}

/// `n` pseudo-random elements over the whole ring.
fn random<R: IntRing>(seed: u64, n: usize) -> Vec<R> {
    random_words(seed, n).into_iter().map(R::from_u64).collect()
}

/// Operand pairs for elementwise products: every pair of the `from` values (so every pair of
/// edges, in both orders), then ties (equal operands) `draw(0)`, then pairs `draw(1)`,
/// `draw(2)`.
fn pairs<R: IntRing>(from: &[R], draw: impl Fn(u64) -> Vec<R>) -> (Vec<R>, Vec<R>) {
    let (mut x, mut y): (Vec<R>, Vec<R>) =
        from.iter().flat_map(|&a| from.iter().map(move |&b| (a, b))).unzip();
    let ties = draw(0);
    x.extend(&ties);
    y.extend(&ties);
    x.extend(draw(1));
    y.extend(draw(2));
    (x, y)
}

/// A combination of every [`Linear`] operation, length-preserving, written once for shares,
/// tags and plain values alike: `a + 3x − c`, the first half read backwards, spliced to the
/// second half.
fn combine<R: IntRing, V: Linear<R>>(a: &V, x: &V, c: &V) -> Result<V, Error> {
    let n = a.len();
    let s = a.add(&x.scale(R::from_i64(3)))?.sub(c)?;
    let backwards: Vec<usize> = (0..n / 2).rev().collect();
    Ok(V::concat(&[&s.gather(&backwards), &s.slice(n / 2..n)]))
}

/// Plain elementwise product.
fn plain_mul<R: IntRing>(x: &[R], y: &[R]) -> Vec<R> {
    x.iter().zip(y).map(|(&a, &b)| a * b).collect()
}

/// Plain row-major matrix product, by the definition (not the kernels the schemes use).
fn plain_matmul<R: IntRing>(a: &[R], b: &[R], (m, k, n): (usize, usize, usize)) -> Vec<R> {
    let mut out = vec![R::ZERO; m * n];
    for i in 0..m {
        for j in 0..n {
            for t in 0..k {
                out[i * n + j] += a[i * k + t] * b[t * n + j];
            }
        }
    }
    out
}
