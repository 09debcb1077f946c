//! `rss`: threshold replicated secret sharing among `n = 2t + 1` parties over Z_2^k
//! (semi-honest, honest majority), after Baccarini, Blanton and Yuan (PoPETs 2023), for
//! `(n, t)` = (3, 1), (5, 2) and (7, 3): any `t` parties together learn nothing, any `t + 1`
//! reconstruct.
//!
//! A secret `x = Σ_T x_T` has one share per `t`-subset `T` of the parties, and party `p` holds
//! the `C(n−1, t)` shares with `p ∉ T` ([`Access`] has the tables). Public constants go to
//! share 0, `{P0 … P(t−1)}`, at all of its holders.
//!
//! # Keys
//! Each share's holders agree a key `k_T` when the session starts: the lowest-id holder draws
//! it from its private randomness and sends it to the other `t` holders over the encrypted
//! links (one round, 32 bytes per key). Nothing public enters a key, so whoever sees only the
//! transcript (the relay) cannot recompute any. A key common to all parties is agreed in the
//! same round from everyone's contribution.
//!
//! Every operation takes a fresh number from [`Ctx::next_op`] and draws from PRG streams
//! `(k_T, op, purpose·256 + sub)`, one stream per use: no draw serves two masks (the paper's
//! reference code reuses draws in its 5- and 7-party products, which leaks; see
//! `docs/protocols.md`). [`Rss::prg_draws`] counts the elements drawn from the share keys, the
//! "crypto" column of the paper's Table 2.
//!
//! # Costs (elements sent per value and party, rounds)
//! | operation | rounds | sent |
//! |---|---|---|
//! | random sharing, constants, linear | 0 | 0 |
//! | input from a compute party | 1 | `t` by the owner |
//! | open to all | 1 | `t` |
//! | open to one compute party | 1 | 1 by each of `t` parties |
//! | open to a client | 1 | 1 |
//! | multiplication, dot and matrix product (per output) | 1 | `t` |
//! | multiply and open ([`Rss::mul_pub`]) | 1 | `n − 1` |
//! | fixed-point product (per output; [`Rss::mul_fixed`]) | 1 | `n − 1` |
//! | random bits ([`Rss::rand_bits`], setup) | 1 | `n − 1` of the wider ring |
//! | truncation material ([`Rss::trunc_pairs`], setup) | 1 | `k·(n − 1)` of the wider ring |

mod access;
mod arith;
mod bits;
mod boolean;
pub mod client;
mod convert;
mod edabits;
mod scheme;
mod trunc;

pub use access::{Access, Set, SUPPORTED};
pub use bits::Widen;
pub use boolean::{RandBits, RssBits};
pub use edabits::BitSource;
pub use trunc::TruncPairs;

use core::fmt;
use std::rc::Rc;

use crate::net::{Ctx, PartyId, Roster, Transport};
use crate::prg::{Prg, Seed};
use crate::ring::{Ring, Z64};
use crate::Error;

/// PRG stream purposes (`purpose·256 + sub` is the stream of [`Prg::new`]).
pub(crate) mod purpose {
    pub(crate) const KEYS: u32 = 1;
    pub(crate) const RANDOM: u32 = 2;
    /// A product's pseudo-random shares; `sub` is the party whose value they split.
    pub(crate) const MUL: u32 = 3;
    pub(crate) const INPUT: u32 = 4;
    /// Zero-sum masks of values every party sends one receiver; `sub` is the draw.
    pub(crate) const ZERO_SUM: u32 = 5;
    /// A client's shares expanded from the seeds it sent.
    pub(crate) const CLIENT: u32 = 6;
    /// A dealer's random bits of an edaBit.
    pub(crate) const DEALER: u32 = 7;
}

/// Words of a 32-byte key on the wire.
pub(crate) const KEY_WORDS: usize = 4;

/// A vector of `rss` shares held by one party: one component per share it holds, in the order
/// of [`Access`]'s sets.
///
/// `Debug` shows only the length and the holder.
#[derive(Clone, PartialEq, Eq)]
pub struct RssVec<R> {
    pub(crate) me: PartyId,
    /// Where the designated share (set 0) sits among this party's, if it holds it.
    pub(crate) designated: Option<usize>,
    pub(crate) shares: Vec<Vec<R>>,
}

impl<R> fmt::Debug for RssVec<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RssVec({} elements held by {}, <redacted>)",
            self.shares.first().map_or(0, Vec::len),
            self.me
        )
    }
}

crate::sharing::forward_linear!(RssVec);

impl<R: Ring> RssVec<R> {
    /// Number of shared elements.
    pub fn len(&self) -> usize {
        self.shares.first().map_or(0, Vec::len)
    }

    /// True when no element is shared.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The holder of these shares.
    pub fn holder(&self) -> PartyId {
        self.me
    }

    /// This party's shares, one vector per share it holds (tests of what a party sees).
    #[cfg(feature = "test-utils")]
    pub fn components(&self) -> &[Vec<R>] {
        &self.shares
    }

    fn map(&self, f: impl Fn(&[R]) -> Vec<R>) -> Self {
        Self {
            me: self.me,
            designated: self.designated,
            shares: self.shares.iter().map(|s| f(s)).collect(),
        }
    }

    fn zip_with(&self, o: &Self, what: &str, f: impl Fn(R, R) -> R) -> Result<Self, Error> {
        crate::sharing::same_len(self.len(), o.len(), what)?;
        if self.shares.len() != o.shares.len() || self.me != o.me {
            return Err(Error::ApiMisuse(format!("{what}: shares of different sessions")));
        }
        let shares = self
            .shares
            .iter()
            .zip(&o.shares)
            .map(|(a, b)| a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect())
            .collect();
        Ok(Self { me: self.me, designated: self.designated, shares })
    }

    /// `x + y` (local).
    pub fn add(&self, o: &Self) -> Result<Self, Error> {
        self.zip_with(o, "add", |x, y| x + y)
    }

    /// `x − y` (local).
    pub fn sub(&self, o: &Self) -> Result<Self, Error> {
        self.zip_with(o, "sub", |x, y| x - y)
    }

    /// `c·x` for one public scalar (local).
    pub fn scale(&self, c: R) -> Self {
        self.map(|s| s.iter().map(|&x| x * c).collect())
    }

    /// `x + c` for a public vector `c` (local: only the designated share changes).
    pub fn add_public(&self, c: &[R]) -> Result<Self, Error> {
        crate::sharing::same_len(self.len(), c.len(), "add_public")?;
        let mut out = self.clone();
        if let Some(d) = out.designated {
            crate::ring::kernels::add_assign(&mut out.shares[d], c);
        }
        Ok(out)
    }

    /// Elements at `idx`, in that order (indices may repeat).
    pub fn gather(&self, idx: &[usize]) -> Self {
        self.map(|s| idx.iter().map(|&i| s[i]).collect())
    }

    /// Elements `range`.
    pub fn slice(&self, range: core::ops::Range<usize>) -> Self {
        self.map(|s| s[range.clone()].to_vec())
    }

    /// Moves the first `n` elements out into a new vector; `self` keeps the rest (the pieces a
    /// store of single-use material hands out). `n` must be at most the length.
    pub(crate) fn take_front(&mut self, n: usize) -> Self {
        let shares = self
            .shares
            .iter_mut()
            .map(|s| {
                let tail = s.split_off(n);
                core::mem::replace(s, tail)
            })
            .collect();
        Self { me: self.me, designated: self.designated, shares }
    }

    /// The concatenation of `parts` (all held by one party).
    pub fn concat(parts: &[&Self]) -> Self {
        let Some(first) = parts.first() else {
            return Self { me: PartyId(0), designated: None, shares: Vec::new() };
        };
        let shares = (0..first.shares.len())
            .map(|i| parts.iter().flat_map(|p| p.shares[i].iter().copied()).collect())
            .collect();
        Self { me: first.me, designated: first.designated, shares }
    }
}

/// One party of an `rss` session: the context, the tables of its `(n, t)` and the share keys.
///
/// ```
/// use ringfence_core::{net::{PartyId, Roster}, ring::Z64, testing};
/// // Five parties, any two of which learn nothing: P4's input squared, opened to all.
/// let outs = testing::run_rss(Roster::new(5, 2)?, 3, |mut p| async move {
///     let (mine, owner) = ([Z64(3), Z64(4)], PartyId(4));
///     let x = p.input(owner, (p.me() == owner).then_some(&mine[..]), 2).await?;
///     let y = p.mul(&x, &x).await?;
///     p.open(y).await
/// });
/// assert!(outs.iter().all(|o| o == &[Z64(9), Z64(16)]));
/// # Ok::<(), ringfence_core::Error>(())
/// ```
pub struct Rss<T> {
    ctx: Ctx<T>,
    access: Rc<Access>,
    /// `keys[s]`: share `s`'s key, for the shares this party holds.
    keys: Vec<Option<Seed>>,
    common: Seed,
    own: Seed,
    /// Where comparisons and bit decompositions get their random bits.
    bit_source: BitSource,
    /// Their masks made ahead ([`Rss::stock_masks`]), over one ring (an `edabits::Masks<R>`).
    masks: Option<Box<dyn core::any::Any>>,
    draws: u64,
    /// Every stream drawn from a share key, `(share, op, stream)`, for the test that no party
    /// draws one twice.
    #[cfg(feature = "test-utils")]
    draw_log: Vec<(usize, u64, u32)>,
}

impl<T> fmt::Debug for Rss<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rss")
            .field("ctx", &self.ctx)
            .field("roster", &self.access.roster())
            .finish_non_exhaustive()
    }
}

impl<T: Transport> Rss<T> {
    /// Joins a session of `roster` (one of [`SUPPORTED`]): agrees the share keys and a common
    /// key with the other parties in one round, over the context's (encrypted) links. `own` is
    /// this party's private randomness.
    pub async fn setup(mut ctx: Ctx<T>, roster: Roster, own: Seed) -> Result<Self, Error> {
        let access = Rc::new(Access::for_roster(roster)?);
        let me = ctx.me();
        if !roster.is_party(me) {
            return Err(Error::ApiMisuse(format!(
                "rss among {} parties has parties P0..P{}, not {me}",
                roster.n(),
                roster.n() - 1
            )));
        }
        let op = ctx.next_op();
        let mut draw = Prg::new(&own, op, purpose::KEYS << 8);
        let mut random_key = || {
            let mut b = [0u8; 32];
            draw.fill_bytes(&mut b);
            Seed::from_bytes(b)
        };
        let leader = |s: usize| access.holders(s).next();
        let mut keys: Vec<Option<Seed>> = vec![None; access.shares()];
        for &s in access.held(me) {
            if leader(s) == Some(me) {
                keys[s] = Some(random_key());
            }
        }
        let contribution = random_key();
        ctx.round();
        for peer in roster.others(me) {
            let mut words = seed_words(&contribution);
            for &s in access.held(me) {
                if leader(s) == Some(me) && access.position(peer, s).is_some() {
                    words.extend(seed_words(keys[s].as_ref().expect("drawn above")));
                }
            }
            ctx.send(peer, &words)?;
        }
        let mut parts: Vec<Seed> = Vec::with_capacity(roster.n());
        for peer in roster.parties() {
            if peer == me {
                parts.push(contribution.clone());
                continue;
            }
            let led: Vec<usize> =
                access.held(me).iter().copied().filter(|&s| leader(s) == Some(peer)).collect();
            let words = ctx.recv::<Z64>(peer, KEY_WORDS * (1 + led.len())).await?;
            let mut chunks = words.chunks_exact(KEY_WORDS);
            parts.push(words_seed(chunks.next().unwrap_or_default()));
            for (s, w) in led.into_iter().zip(chunks) {
                keys[s] = Some(words_seed(w));
            }
        }
        Ok(Self {
            ctx,
            access,
            keys,
            common: Seed::combine(&parts),
            own,
            bit_source: BitSource::default(),
            masks: None,
            draws: 0,
            #[cfg(feature = "test-utils")]
            draw_log: Vec::new(),
        })
    }

    /// This party's id.
    pub fn me(&self) -> PartyId {
        self.ctx.me()
    }

    /// Where comparisons and bit decompositions get their random bits from now on (every
    /// party must choose the same).
    pub fn set_bit_source(&mut self, source: BitSource) {
        self.bit_source = source;
    }

    /// Where comparisons and bit decompositions get their random bits.
    pub fn bit_source(&self) -> BitSource {
        self.bit_source
    }

    /// This party's private randomness for operation `op`.
    pub(crate) fn prg_own(&self, op: u64, purpose: u32) -> Prg {
        Prg::new(&self.own, op, purpose << 8)
    }

    /// The parties of the session.
    pub fn roster(&self) -> Roster {
        self.access.roster()
    }

    /// The tables of the session's `(n, t)`.
    pub fn access(&self) -> &Access {
        &self.access
    }

    /// The context (counters, session).
    pub fn ctx(&self) -> &Ctx<T> {
        &self.ctx
    }

    /// The context, mutably.
    pub fn ctx_mut(&mut self) -> &mut Ctx<T> {
        &mut self.ctx
    }

    /// Gives back the context.
    pub fn into_ctx(self) -> Ctx<T> {
        self.ctx
    }

    /// Ring elements drawn from the share keys so far (the paper's "crypto operations").
    pub fn prg_draws(&self) -> u64 {
        self.draws
    }

    /// The sharing of public values (no communication): `c` in the designated share.
    pub fn constant<R: Ring>(&self, c: &[R]) -> RssVec<R> {
        let mut v = self.zeros(c.len());
        if let Some(d) = v.designated {
            v.shares[d].copy_from_slice(c);
        }
        v
    }

    /// A sharing of `n` zeros with every share zero.
    pub(crate) fn zeros<R: Ring>(&self, n: usize) -> RssVec<R> {
        let me = self.me();
        RssVec {
            me,
            designated: self.access.position(me, 0),
            shares: vec![vec![R::ZERO; n]; self.access.held_per_party()],
        }
    }

    /// Fills `out` from share `s`'s key (which this party must hold), stream `(op, purpose, sub)`.
    pub(crate) fn draw<R: Ring>(
        &mut self,
        s: usize,
        op: u64,
        purpose: u32,
        sub: u32,
        out: &mut [R],
    ) {
        let key = self.keys[s].as_ref().expect("a party draws only from keys it holds");
        R::fill_random(&mut Prg::new(key, op, purpose << 8 | sub), out);
        self.draws += out.len() as u64;
        #[cfg(feature = "test-utils")]
        self.draw_log.push((s, op, purpose << 8 | sub));
    }

    /// Every PRG stream this party drew from a share key so far: `(share, op, stream)`.
    #[cfg(feature = "test-utils")]
    pub fn draw_log(&self) -> &[(usize, u64, u32)] {
        &self.draw_log
    }

    /// A fresh random sharing of `n` elements (PRandR: no communication, one draw per share).
    pub fn random<R: Ring>(&mut self, n: usize) -> RssVec<R> {
        let op = self.ctx.next_op();
        let mut v = self.zeros(n);
        for (pos, &s) in self.access.held(self.me()).to_vec().iter().enumerate() {
            self.draw(s, op, purpose::RANDOM, 0, &mut v.shares[pos]);
        }
        v
    }

    /// `n` public random elements, the same at every party (no communication).
    pub fn public_random<R: Ring>(&mut self, n: usize) -> Vec<R> {
        let op = self.ctx.next_op();
        let mut v = vec![R::ZERO; n];
        R::fill_random(&mut Prg::new(&self.common, op, purpose::RANDOM << 8), &mut v);
        v
    }

    /// One round in which every party sends one word to every other and waits for theirs
    /// (e.g. before closing links).
    pub async fn barrier(&mut self) -> Result<(), Error> {
        let others: Vec<PartyId> = self.roster().others(self.me()).collect();
        self.ctx.barrier(&others).await
    }
}

fn seed_words(s: &Seed) -> Vec<Z64> {
    crate::net::digest_words(&s.0)
}

fn words_seed(w: &[Z64]) -> Seed {
    Seed::from_bytes(crate::net::words_digest(w))
}
