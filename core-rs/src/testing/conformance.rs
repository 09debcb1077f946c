//! Conformance suites for every [`Arith`] scheme, written once (feature `test-utils`).
//!
//! Each suite is a function generic over the ring `R` and the scheme `S`, run on the in-memory
//! [`Net`] and failing with a message that names the scheme ([`Arith::NAME`]) and the ring's
//! width. A scheme joins by describing itself in a [`Scheme`]: how to make its party from a
//! `rep3` party, how to read its counters, and its online [`CostModel`] as data. The suites
//! then check it for
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

use super::{random_words, MemTransport, Net};
use crate::net::{PartyId, Roster, Stats};
use crate::rep3::Rep3;
use crate::ring::IntRing;
use crate::sharing::{Arith, Linear, Session};
use crate::Error;

/// A party the suites can run: a scheme's [`Arith`] started on a 3-party session.
pub trait Party<R: IntRing>: Arith<R> + Session<Rep3<MemTransport>> {}

impl<R: IntRing, S: Arith<R> + Session<Rep3<MemTransport>>> Party<R> for S {}

/// A party's communication counters.
fn stats_of<S: Session<Rep3<MemTransport>>>(s: &S) -> Stats {
    s.base().ctx().stats()
}

/// What the suites need to know of a scheme besides its [`Arith`] and [`Session`]
/// implementations.
pub struct Scheme<S> {
    /// The scheme's party type (the description is per scheme).
    pub party: core::marker::PhantomData<S>,
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
/// Arrays indexed "by party" hold P0, P1, P2; arrays indexed by role hold the party the
/// operation is about (the input's owner, the opening's receiver), then the next party around
/// the ring, then the one after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CostModel {
    /// Input of a compute party's values, by role (owner, next, previous).
    pub input: [PartyCost; 3],
    /// Opening to every compute party, by party.
    pub open: [PartyCost; 3],
    /// Opening to one compute party, by role (receiver, next, previous).
    pub open_to: [PartyCost; 3],
    /// Exact elementwise product, by party.
    pub mul: [PartyCost; 3],
    /// Fixed-point elementwise product, by party.
    pub mul_fixed: [PartyCost; 3],
    /// Exact matrix product, per output, by party.
    pub matmul: [PartyCost; 3],
    /// Fixed-point matrix product, per output, by party.
    pub matmul_fixed: [PartyCost; 3],
}

/// The compute parties of the 3-party schemes the suites describe, `P0` first.
const PARTIES: [PartyId; Roster::THREE.n()] = {
    let mut all = [PartyId(0); Roster::THREE.n()];
    let mut i = 0;
    while i < all.len() {
        all[i] = PartyId(i as u8);
        i += 1;
    }
    all
};

/// The scheme and ring a failure is about, for assertion messages.
fn label<R: IntRing, S: Arith<R>>() -> String {
    format!("{} over Z_2^{}", S::NAME, R::BITS)
}

/// Runs `f` as each party of a fresh session of `sc` on `net`.
fn run_on<S, O, F, Fut>(_: &Scheme<S>, net: &Net, seed: u64, f: F) -> Vec<Result<O, Error>>
where
    S: Session<Rep3<MemTransport>>,
    F: Fn(S) -> Fut,
    Fut: Future<Output = Result<O, Error>>,
{
    super::run_rep3_on(net, PARTIES.len(), seed, |p| f(S::start(p)))
}

/// [`run_on`], failing (with `at` in the message) if a party fails.
fn run_with<S, O, F, Fut>(sc: &Scheme<S>, at: &str, net: &Net, seed: u64, f: F) -> Vec<O>
where
    S: Session<Rep3<MemTransport>>,
    F: Fn(S) -> Fut,
    Fut: Future<Output = Result<O, Error>>,
{
    let outs = run_on(sc, net, seed, f).into_iter().enumerate();
    outs.map(|(i, o)| o.unwrap_or_else(|e| panic!("{at}: P{i} failed: {e}"))).collect()
}

/// [`run_with`] on a network of its own.
fn run<S, O, F, Fut>(sc: &Scheme<S>, at: &str, seed: u64, f: F) -> Vec<O>
where
    S: Session<Rep3<MemTransport>>,
    F: Fn(S) -> Fut,
    Fut: Future<Output = Result<O, Error>>,
{
    run_with(sc, at, &Net::new(PARTIES.len()), seed, f)
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
