//! `spdz2k`: active security with abort against a dishonest majority (any `n − 1` of `n ≥ 2`
//! parties corrupt and deviating), over Z_2^k, after Cramer, Damgård, Escudero, Scholl and
//! Xing (SPDZ2k, CRYPTO 2018) and Damgård, Escudero, Frederiksen, Keller, Scholl and Volgushev
//! ("New Primitives for Actively-Secure MPC over Rings", IEEE S&P 2019).
//!
//! # Sharing
//! A value `x ∈ Z_2^k` is held as authenticated additive shares in the wider ring
//! Z_2^(k+s) ([`Spdz2kRing::Wide`]): party `j` holds a value share `x_j` and a MAC share
//! `m_j`, and a share `α_j ∈ Z_2^s` of the global MAC key `α`, with
//!
//! * `Σ x_j ≡ x (mod 2^k)`: the upper `s` bits of the sum are junk a cheater may influence;
//! * `Σ m_j ≡ α · Σ x_j (mod 2^(k+s))`: the MAC covers the whole wide sum.
//!
//! Here `s = k`: (k, s) = (32, 32) over [`Z32`] (shares in Z_2^64) and (64, 64) over [`Z64`]
//! (shares in Z_2^128). A cheater that changes an opened value passes the MAC check with
//! probability about `2^−(s − log₂ s)`: 2^−26 at s = 32 (weak, for tests and benchmarks
//! against the paper) and 2^−57 at s = 64.
//!
//! Linear operations are local ([`Auth`]); public constants enter party 0's value share and
//! every party's MAC share as `c·α_j`.
//!
//! # Opening and the MAC check
//! To open, each party sends only the low `k` bits of its value share, so the upper bits of
//! the share sums (which carry secret information: `2^(k−1)·[x]` holds bits of `x` there)
//! never leave it. The receivers sum the low parts *with* their carries in Z_2^(k+s). Every
//! opened value is logged, and before anything is released to anyone the batched MAC check
//! of the extract's section 1.4 (variant A) runs over the whole log ([`Spdz2k::check`]): coins
//! tossed after the openings give `χ_i ∈ Z_2^s`; each party sends its upper parts'
//! combination masked by a fresh random sharing (`s` bits), then commits to its share `z_j`
//! of `Σ χ_i·(m_i − α·x̂_i)` and opens it; the sum must be zero. With more than two parties
//! the commitments carry a digest of every public value (openings and input differences) so
//! that a party that sent different parties different values is caught too. A failed check
//! ends in [`Error::Abort`] at every honest party (they tell each other), and nothing after it
//! runs.
//!
//! # Preprocessing
//! Triples, input masks, random bits and the check's masks are made by the parties
//! themselves ([`offline`]: base OTs, OT extension with its consistency check, vector OLE for
//! the MACs with the authentication check, triples combined and sacrificed, random bits by the
//! square-root trick), for k = s = 32 in 128-bit words and k = s = 64 in 256-bit ones
//! ([`word`]). A matrix triple for an (m×l)·(l×n) product is random `[A]`, `[B]` and their
//! product from `m·l·n` elementwise triples, all input-independent, so the online matrix
//! product opens only `m·l + l·n` values. A test dealer ([`prep::Source::Dealer`], feature
//! `test-utils`) serves the tests of the online phase; it knows every secret and is no protocol.
//!
//! # Costs (online, per party)
//! | operation | rounds | sent |
//! |---|---|---|
//! | linear, constants | 0 | 0 |
//! | input from a party | 1 | `k` bits per value to each other party, by the owner |
//! | open | 1 | `k` bits per value to each other party |
//! | product (Beaver) | 1 | `2k` bits per value to each other party |
//! | matrix product (m×l)·(l×n) | 1 | `(ml + ln)·k` bits to each other party |
//! | fixed-point product | +1 | `k` bits per output more (probabilistic truncation) |
//! | MAC check (before any output) | 6 | fixed: two words of coins, `s` bits per ring, digests |

pub mod apps;
pub mod boolean;
mod check;
pub mod nn;
pub mod offline;
pub mod prep;
mod scheme;
mod stock;
mod tinyot;
pub mod word;

pub use prep::Source;

use core::fmt;

use crate::net::{Ctx, PartyId, Roster, Transport};
use crate::prg::{Prg, Seed};
use crate::ring::{IntRing, Ring, Z128, Z32, Z64};
use crate::sharing::{Linear, Session, View};
use crate::Error;

/// The value rings of SPDZ2k instances with `s = k`, and their share rings Z_2^(k+s).
pub trait Spdz2kRing: IntRing + slot::Slot {
    /// Z_2^(k+s), where shares and MAC shares live.
    type Wide: IntRing;
    /// `s`, the MAC's slack bits (equal to `k` here).
    const S: u32;
    /// `x` as a wide element, zero-extended.
    fn widen(self) -> Self::Wide;
    /// `x` as a wide element, sign-extended (public scalars, so that `−1` stays `−1`).
    fn widen_signed(self) -> Self::Wide;
    /// `w mod 2^k`.
    fn low(w: Self::Wide) -> Self;
    /// `⌊w / 2^k⌋`, the upper `s` bits.
    fn high(w: Self::Wide) -> Self;
    /// A wide element as a `u128`.
    fn wide_u128(w: Self::Wide) -> u128;
    /// `x mod 2^k` as an element.
    fn from_low_u128(x: u128) -> Self;
    /// `x mod 2^(k+s)` as a wide element.
    fn wide_from_u128(x: u128) -> Self::Wide;
}

impl Spdz2kRing for Z32 {
    type Wide = Z64;
    const S: u32 = 32;
    fn widen(self) -> Z64 {
        Z64(u64::from(self.0))
    }
    fn widen_signed(self) -> Z64 {
        Z64(self.0 as i32 as i64 as u64)
    }
    fn low(w: Z64) -> Self {
        Self(w.0 as u32)
    }
    fn high(w: Z64) -> Self {
        Self((w.0 >> 32) as u32)
    }
    fn wide_u128(w: Self::Wide) -> u128 {
        u128::from(w.0)
    }
    fn from_low_u128(x: u128) -> Self {
        Self(x as _)
    }
    fn wide_from_u128(x: u128) -> Self::Wide {
        Z64(x as u64)
    }
}

impl Spdz2kRing for Z64 {
    type Wide = Z128;
    const S: u32 = 64;
    fn widen(self) -> Z128 {
        Z128(u128::from(self.0))
    }
    fn widen_signed(self) -> Z128 {
        Z128(self.0 as i64 as i128 as u128)
    }
    fn low(w: Z128) -> Self {
        Self(w.0 as u64)
    }
    fn high(w: Z128) -> Self {
        Self((w.0 >> 64) as u64)
    }
    fn wide_u128(w: Self::Wide) -> u128 {
        w.0
    }
    fn from_low_u128(x: u128) -> Self {
        Self(x as _)
    }
    fn wide_from_u128(x: u128) -> Self::Wide {
        Z128(x)
    }
}

/// Where a party keeps each ring's state (private: the party's fields).
mod slot {
    use super::offline::Generator;
    use super::prep::Generators;
    use super::word::{Word, U256};
    use super::{check::Log, Instance, Mesh, Spdz2k, Spdz2kRing, View, Z32, Z64};

    pub trait Slot: Sized {
        /// This ring's state in a party.
        fn instance<T>(p: &mut Spdz2k<T>) -> &mut Instance<Self>
        where
            Self: Spdz2kRing;
        /// The party's share of this ring's MAC key.
        fn alpha<T>(p: &Spdz2k<T>) -> Self;
        /// The party's session, this ring's log and the public values' digest, apart.
        fn split<T>(p: &mut Spdz2k<T>) -> (&mut Mesh<T>, &mut Log, &mut View);
        /// The same with the log of the binary instance under this ring's key.
        fn split_bin<T>(p: &mut Spdz2k<T>) -> (&mut Mesh<T>, &mut Log, &mut View);
        /// The words this ring's preprocessing computes in.
        type Word: Word;
        /// This ring's slot among the parties' generators.
        fn generator(g: &mut Generators) -> &mut Option<Generator<Self::Word>>;
    }

    impl Slot for Z32 {
        type Word = u128;
        fn generator(g: &mut Generators) -> &mut Option<Generator<u128>> {
            &mut g.z32
        }
        fn instance<T>(p: &mut Spdz2k<T>) -> &mut Instance<Self> {
            &mut p.z32
        }
        fn alpha<T>(p: &Spdz2k<T>) -> Self {
            p.z32.alpha
        }
        fn split<T>(p: &mut Spdz2k<T>) -> (&mut Mesh<T>, &mut Log, &mut View) {
            (&mut p.base, &mut p.z32.log, &mut p.public)
        }
        fn split_bin<T>(p: &mut Spdz2k<T>) -> (&mut Mesh<T>, &mut Log, &mut View) {
            (&mut p.base, &mut p.z32.bin, &mut p.public)
        }
    }

    impl Slot for Z64 {
        type Word = U256;
        fn generator(g: &mut Generators) -> &mut Option<Generator<U256>> {
            &mut g.z64
        }
        fn instance<T>(p: &mut Spdz2k<T>) -> &mut Instance<Self> {
            &mut p.z64
        }
        fn alpha<T>(p: &Spdz2k<T>) -> Self {
            p.z64.alpha
        }
        fn split<T>(p: &mut Spdz2k<T>) -> (&mut Mesh<T>, &mut Log, &mut View) {
            (&mut p.base, &mut p.z64.log, &mut p.public)
        }
        fn split_bin<T>(p: &mut Spdz2k<T>) -> (&mut Mesh<T>, &mut Log, &mut View) {
            (&mut p.base, &mut p.z64.bin, &mut p.public)
        }
    }
}

/// A vector of authenticated shares held by one party: value shares and MAC shares in
/// Z_2^(k+s). Linear operations are local and keep the MAC relation.
#[derive(Clone, PartialEq, Eq)]
pub struct Auth<R: Spdz2kRing> {
    pub(crate) x: Vec<R::Wide>,
    pub(crate) m: Vec<R::Wide>,
}

impl<R: Spdz2kRing> fmt::Debug for Auth<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the shares themselves: a log line must not leak them.
        write!(f, "Auth({} values)", self.x.len())
    }
}

impl<R: Spdz2kRing> Auth<R> {
    /// No values.
    pub fn empty() -> Self {
        Self { x: Vec::new(), m: Vec::new() }
    }

    fn zip(
        &self,
        o: &Self,
        what: &str,
        f: impl Fn(R::Wide, R::Wide) -> R::Wide,
    ) -> Result<Self, Error> {
        crate::sharing::same_len(self.x.len(), o.x.len(), what)?;
        Ok(Self {
            x: self.x.iter().zip(&o.x).map(|(&a, &b)| f(a, b)).collect(),
            m: self.m.iter().zip(&o.m).map(|(&a, &b)| f(a, b)).collect(),
        })
    }

    /// Adds public `c` (one per element): party 0 adds it to its value shares, every party
    /// `c·α_j` to its MAC shares.
    pub(crate) fn add_public(&self, me: PartyId, alpha: R, c: &[R]) -> Result<Self, Error> {
        crate::sharing::same_len(self.x.len(), c.len(), "add_public")?;
        let a = alpha.widen();
        let mut out = self.clone();
        for (i, &c) in c.iter().enumerate() {
            let w = c.widen_signed();
            if me == PartyId(0) {
                out.x[i] += w;
            }
            out.m[i] += w * a;
        }
        Ok(out)
    }

    /// The sums of consecutive runs of `l > 0` elements (`len / l` of them).
    pub(crate) fn sum_runs(&self, l: usize) -> Self {
        let sums = |v: &[R::Wide]| -> Vec<R::Wide> {
            v.chunks_exact(l)
                .map(|c| c.iter().fold(<R::Wide as Ring>::ZERO, |a, &b| a + b))
                .collect()
        };
        Self { x: sums(&self.x), m: sums(&self.m) }
    }

    /// Multiplies element `i` by public `c[i]`.
    pub(crate) fn mul_public(&self, c: &[R]) -> Result<Self, Error> {
        crate::sharing::same_len(self.x.len(), c.len(), "mul_public")?;
        let w: Vec<R::Wide> = c.iter().map(|c| c.widen_signed()).collect();
        Ok(Self {
            x: self.x.iter().zip(&w).map(|(&x, &c)| x * c).collect(),
            m: self.m.iter().zip(&w).map(|(&m, &c)| m * c).collect(),
        })
    }
}

impl<R: Spdz2kRing> Linear<R> for Auth<R> {
    fn len(&self) -> usize {
        self.x.len()
    }
    fn add(&self, o: &Self) -> Result<Self, Error> {
        self.zip(o, "add", |a, b| a + b)
    }
    fn sub(&self, o: &Self) -> Result<Self, Error> {
        self.zip(o, "sub", |a, b| a - b)
    }
    fn scale(&self, c: R) -> Self {
        let c = c.widen_signed();
        Self {
            x: self.x.iter().map(|&x| x * c).collect(),
            m: self.m.iter().map(|&m| m * c).collect(),
        }
    }
    fn gather(&self, idx: &[usize]) -> Self {
        Self {
            x: idx.iter().map(|&i| self.x[i]).collect(),
            m: idx.iter().map(|&i| self.m[i]).collect(),
        }
    }
    fn slice(&self, range: core::ops::Range<usize>) -> Self {
        Self { x: self.x[range.clone()].to_vec(), m: self.m[range].to_vec() }
    }
    fn concat(parts: &[&Self]) -> Self {
        Self {
            x: parts.iter().flat_map(|p| p.x.iter().copied()).collect(),
            m: parts.iter().flat_map(|p| p.m.iter().copied()).collect(),
        }
    }
}

/// A session among `n ≥ 2` parties of which any `n − 1` may be corrupt: the links and the
/// party's private randomness, nothing agreed with anyone (a dishonest-majority scheme trusts
/// no key another party helped make).
pub struct Mesh<T> {
    ctx: Ctx<T>,
    roster: Roster,
    own: Seed,
    source: Source,
}

impl<T: Transport> fmt::Debug for Mesh<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Mesh({} of {})", self.ctx.me(), self.roster.n())
    }
}

impl<T: Transport> Mesh<T> {
    /// A session of `roster` (`t = n − 1`: a dishonest majority) on `ctx`, with this party's
    /// private randomness `own` and where its preprocessing comes from.
    pub fn new(ctx: Ctx<T>, roster: Roster, own: Seed, source: Source) -> Result<Self, Error> {
        let me = ctx.me();
        if roster.t() + 1 != roster.n() {
            return Err(Error::ApiMisuse(format!(
                "spdz2k tolerates n − 1 corrupt parties: a roster of {} parties needs t = {}, not {}",
                roster.n(),
                roster.n() - 1,
                roster.t()
            )));
        }
        if !roster.is_party(me) {
            return Err(Error::ApiMisuse(format!("{me} is not a compute party of this session")));
        }
        Ok(Self { ctx, roster, own, source })
    }

    /// The links.
    pub fn ctx(&self) -> &Ctx<T> {
        &self.ctx
    }

    /// The links, mutably.
    pub fn ctx_mut(&mut self) -> &mut Ctx<T> {
        &mut self.ctx
    }

    /// Gives the links back (e.g. to close the transport).
    pub fn into_ctx(self) -> Ctx<T> {
        self.ctx
    }

    /// The compute parties.
    pub fn roster(&self) -> Roster {
        self.roster
    }

    /// One round in which every party hears from every other (before links close).
    pub async fn barrier(&mut self) -> Result<(), Error> {
        let others: Vec<PartyId> = self.roster.others(self.ctx.me()).collect();
        self.ctx.barrier(&others).await
    }
}

/// One ring's state in a party: its MAC key share and the openings not yet checked.
pub struct Instance<R: Spdz2kRing> {
    /// `α_j ∈ Z_2^s` (s = k, so an element of `R`).
    alpha: R,
    log: check::Log,
    /// The openings of the binary instance under the same key (k = 1).
    bin: check::Log,
}

impl<R: Spdz2kRing> Instance<R> {
    fn new(alpha: R) -> Self {
        let a = u128::from(alpha.to_u64());
        Self { alpha, log: check::Log::new(R::BITS, R::S, a), bin: check::Log::new(1, R::S, a) }
    }
}

/// A party of the `spdz2k` scheme over Z_2^32 and Z_2^64 (each with its own MAC key).
pub struct Spdz2k<T> {
    base: Mesh<T>,
    z32: Instance<Z32>,
    z64: Instance<Z64>,
    /// Every public value since the last check (openings, inputs' differences), which the
    /// parties must all have seen alike.
    public: View,
    /// Whether anything was opened or broadcast since the last check.
    unchecked: bool,
}

impl<T: Transport> fmt::Debug for Spdz2k<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Spdz2k({:?})", self.base)
    }
}

impl<T: Transport> Session<Mesh<T>> for Spdz2k<T> {
    fn start(mut base: Mesh<T>) -> Self {
        let me = base.ctx.me();
        let op = base.ctx.next_op();
        // The MAC keys: drawn privately, or the dealer's (which knows α; tests only).
        let (a32, a64) = base.source.alphas(me).unwrap_or_else(|| {
            let mut prg = Prg::new(&base.own, op, 0);
            (Z32(prg.next_u32()), Z64(prg.next_u64()))
        });
        Self {
            base,
            z32: Instance::new(a32),
            z64: Instance::new(a64),
            public: View::new("public", 0),
            unchecked: false,
        }
    }

    fn finish(self) -> Mesh<T> {
        self.base
    }

    fn base(&self) -> &Mesh<T> {
        &self.base
    }

    fn base_mut(&mut self) -> &mut Mesh<T> {
        &mut self.base
    }
}

impl<T: Transport> Spdz2k<T> {
    /// This party's id.
    pub fn me(&self) -> PartyId {
        self.base.ctx.me()
    }

    /// The session's roster.
    pub fn roster(&self) -> Roster {
        self.base.roster
    }

    /// The links (for their counters).
    pub fn ctx(&self) -> &Ctx<T> {
        &self.base.ctx
    }

    pub(crate) fn ctx_mut(&mut self) -> &mut Ctx<T> {
        &mut self.base.ctx
    }

    /// The session, ring `R`'s log and the public values' digest, apart (an opening writes
    /// to all three).
    fn split_log<R: Spdz2kRing>(&mut self) -> (&mut Mesh<T>, &mut check::Log, &mut View) {
        R::split(self)
    }
}
