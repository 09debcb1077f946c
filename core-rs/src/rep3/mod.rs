//! `rep3`: 2-out-of-3 replicated secret sharing among parties P0, P1, P2 (semi-honest, honest
//! majority), over any [`Ring`]: arithmetic over Z_2^k and boolean over packed
//! [`Bits`](crate::ring::Bits).
//!
//! A secret `x = x0 + x1 + x2`; party P_i holds the pair `(x_i, x_{i+1})` (indices mod 3), so any
//! two parties can reconstruct and any single one sees only random components. Public constants
//! are added to component 0, held by P0 (first) and P2 (second).
//!
//! # Correlated randomness
//! P_i shares the key `next` with P_{i+1} and `prev` with P_{i-1} (so P_i's `next` is P_{i+1}'s
//! `prev`), a key common to all three, and a private key. Each operation takes a fresh number
//! from [`Ctx::next_op`] and opens PRG streams `(key, op, purpose)` ([`crate::prg`]):
//! * random sharing ⟨r⟩: `r_i` comes from the key of its two holders, so P_i sets
//!   `(r_i, r_{i+1}) = (PRG(prev), PRG(next))` — no communication;
//! * zero sharing: `α_i = PRG(next) − PRG(prev)`, Σ α_i = 0; P_i knows only `α_i`.
//!
//! # Modules
//! `arith` (input, reveal, mul, dot, matmul), `binary` (bit planes, AND), `adder` (carry
//! circuits), `compare` (MSB, comparison, equality, bit injection, select, ReLU, max, argmax),
//! `trunc` (truncation pairs, fixed-point multiplication), `prep` (single-use preprocessing),
//! `nn` (private inference: [`crate::nn::Inference`] for [`Rep3`]).
//! The n-party scheme, METEOR's masked sharing and the malicious variant sit beside this module
//! and reuse [`Ctx`], the rings and the PRG; METEOR's mask shares are `rep3` shares.

pub(crate) mod adder;
mod arith;
pub mod binary;
pub mod client;
pub(crate) mod compare;
mod nn;
pub mod prep;
pub mod scheme;
pub(crate) mod trunc;

pub use compare::{Comparisons, SharedBits};
pub use nn::{comparison_runs, online_rounds, NnPrep};
pub use prep::{DaBits, TruncPairs};

use core::fmt;

use crate::net::{Ctx, PartyId, Transport};
use crate::prg::{Prg, Seed};
use crate::ring::Ring;
use crate::Error;

/// PRG stream purposes within one operation (the `stream` of [`Prg::new`]).
pub(crate) mod purpose {
    pub(crate) const RANDOM: u32 = 1;
    pub(crate) const ZERO: u32 = 2;
    pub(crate) const INPUT: u32 = 3;
    pub(crate) const COMMON: u32 = 4;
    /// METEOR's owner-known input masks: the owner's missing component, from the common key.
    pub(crate) const OWNER_MASK: u32 = 5;
    /// Keys of the digests that check a client's input (`client::check_client_input`).
    pub(crate) const DIGEST_KEY: u32 = 6;
    /// Keys of mal3's view MACs (`mal3::Tag`), with a label's hash mixed into the stream.
    pub(crate) const VIEW_MAC: u32 = 7;
}

/// The seeds a party brings to a session. `Debug` is redacted.
#[derive(Clone)]
pub struct Rep3Seeds {
    /// Key shared with P_{i-1}.
    pub prev: Seed,
    /// Key shared with P_{i+1}.
    pub next: Seed,
    /// This party's private randomness.
    pub own: Seed,
}

impl fmt::Debug for Rep3Seeds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Rep3Seeds(<redacted>)")
    }
}

/// A vector of `rep3` shares held by one party: components `(x_i, x_{i+1})` per element.
///
/// `Debug` shows only the length and the holder; opening ([`Rep3::reveal`]) consumes it.
#[derive(Clone, PartialEq, Eq)]
pub struct Rep3Vec<R> {
    pub(crate) me: PartyId,
    pub(crate) a: Vec<R>,
    pub(crate) b: Vec<R>,
}

impl<R> fmt::Debug for Rep3Vec<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Rep3Vec({} elements held by {}, <redacted>)", self.a.len(), self.me)
    }
}

crate::sharing::forward_linear!(Rep3Vec);

impl<R: Ring> Rep3Vec<R> {
    pub(crate) fn from_parts(me: PartyId, a: Vec<R>, b: Vec<R>) -> Self {
        debug_assert_eq!(a.len(), b.len());
        Self { me, a, b }
    }

    /// The sharing of a public vector (no communication): `c` in component 0.
    pub fn public(me: PartyId, c: &[R]) -> Self {
        let z = vec![R::ZERO; c.len()];
        match me.0 {
            0 => Self::from_parts(me, c.to_vec(), z),
            2 => Self::from_parts(me, z, c.to_vec()),
            _ => Self::from_parts(me, z.clone(), z),
        }
    }

    /// Number of shared elements.
    pub fn len(&self) -> usize {
        self.a.len()
    }

    /// True when no element is shared.
    pub fn is_empty(&self) -> bool {
        self.a.is_empty()
    }

    /// The holder of these shares.
    pub fn holder(&self) -> PartyId {
        self.me
    }

    pub(crate) fn check_len(&self, o: &Self, what: &str) -> Result<(), Error> {
        if self.len() != o.len() {
            return Err(Error::ApiMisuse(format!(
                "{what}: operands have {} and {} elements",
                self.len(),
                o.len()
            )));
        }
        Ok(())
    }

    fn zip_with(&self, o: &Self, f: impl Fn(R, R) -> R) -> Self {
        let a = self.a.iter().zip(&o.a).map(|(x, y)| f(*x, *y)).collect();
        let b = self.b.iter().zip(&o.b).map(|(x, y)| f(*x, *y)).collect();
        Self::from_parts(self.me, a, b)
    }

    /// `x + y` (local).
    pub fn add(&self, o: &Self) -> Result<Self, Error> {
        self.check_len(o, "add")?;
        Ok(self.zip_with(o, |x, y| x + y))
    }

    /// `x − y` (local).
    pub fn sub(&self, o: &Self) -> Result<Self, Error> {
        self.check_len(o, "sub")?;
        Ok(self.zip_with(o, |x, y| x - y))
    }

    /// `−x` (local).
    pub fn neg(&self) -> Self {
        Self::from_parts(
            self.me,
            self.a.iter().map(|x| -*x).collect(),
            self.b.iter().map(|x| -*x).collect(),
        )
    }

    /// `x + c` for a public vector `c` (local; only component 0 changes).
    pub fn add_public(&self, c: &[R]) -> Result<Self, Error> {
        self.add(&Self::public(self.me, c))
    }

    /// `x + c` for one public scalar added to every element.
    pub fn add_public_scalar(&self, c: R) -> Self {
        let mut out = self.clone();
        match self.me.0 {
            0 => out.a.iter_mut().for_each(|x| *x += c),
            2 => out.b.iter_mut().for_each(|x| *x += c),
            _ => {}
        }
        out
    }

    /// `c·x` elementwise for a public vector `c` (local).
    pub fn mul_public(&self, c: &[R]) -> Result<Self, Error> {
        if c.len() != self.len() {
            return Err(Error::ApiMisuse(format!(
                "mul_public: {} shares, {} constants",
                self.len(),
                c.len()
            )));
        }
        let a = self.a.iter().zip(c).map(|(x, y)| *x * *y).collect();
        let b = self.b.iter().zip(c).map(|(x, y)| *x * *y).collect();
        Ok(Self::from_parts(self.me, a, b))
    }

    /// `c·x` for one public scalar (local).
    pub fn scale(&self, c: R) -> Self {
        Self::from_parts(
            self.me,
            self.a.iter().map(|x| *x * c).collect(),
            self.b.iter().map(|x| *x * c).collect(),
        )
    }

    /// Elements `range` as a new vector.
    pub fn slice(&self, range: core::ops::Range<usize>) -> Self {
        Self::from_parts(self.me, self.a[range.clone()].to_vec(), self.b[range].to_vec())
    }

    /// Elements at `idx`, in that order (indices may repeat).
    pub fn gather(&self, idx: &[usize]) -> Self {
        Self::from_parts(
            self.me,
            idx.iter().map(|&i| self.a[i]).collect(),
            idx.iter().map(|&i| self.b[i]).collect(),
        )
    }

    /// Columns `range` of every row of a vector laid out as rows of `cols` elements
    /// (row-major), rows kept in order.
    pub(crate) fn cols(&self, cols: usize, range: core::ops::Range<usize>) -> Self {
        Self::cols_of(self.me, [&self.a, &self.b], cols, range)
    }

    /// [`Rep3Vec::cols`] of the shares `parts` held by `me` (e.g. a range of a larger vector).
    pub(crate) fn cols_of(
        me: PartyId,
        parts: [&[R]; 2],
        cols: usize,
        range: core::ops::Range<usize>,
    ) -> Self {
        if cols == 0 {
            return Self::from_parts(me, Vec::new(), Vec::new());
        }
        let pick = |v: &[R]| -> Vec<R> {
            let mut out = Vec::with_capacity(v.len() / cols.max(1) * range.len());
            for row in v.chunks_exact(cols) {
                out.extend_from_slice(&row[range.clone()]);
            }
            out
        };
        Self::from_parts(me, pick(parts[0]), pick(parts[1]))
    }

    /// Rows `rows` (in that order) of a vector laid out as rows of `cols` elements.
    pub(crate) fn rows(&self, cols: usize, rows: impl Iterator<Item = usize> + Clone) -> Self {
        let pick = |v: &[R]| -> Vec<R> {
            let mut out = Vec::new();
            for r in rows.clone() {
                out.extend_from_slice(&v[r * cols..(r + 1) * cols]);
            }
            out
        };
        Self::from_parts(self.me, pick(&self.a), pick(&self.b))
    }

    /// Moves elements `at..` into a new vector (only they are copied); `self` keeps `..at`.
    pub(crate) fn split_off(&mut self, at: usize) -> Self {
        Self::from_parts(self.me, self.a.split_off(at), self.b.split_off(at))
    }

    /// Concatenates vectors (e.g. to batch several operations into one round).
    pub fn concat(parts: &[&Self]) -> Self {
        let me = parts.first().map_or(PartyId(0), |p| p.me);
        let mut a = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
        let mut b = Vec::with_capacity(a.capacity());
        for p in parts {
            a.extend_from_slice(&p.a);
            b.extend_from_slice(&p.b);
        }
        Self::from_parts(me, a, b)
    }

    /// Splits into consecutive pieces of the given lengths (they must sum to `len()`).
    pub fn split(&self, lens: &[usize]) -> Vec<Self> {
        let mut at = 0;
        lens.iter()
            .map(|&l| {
                let s = self.slice(at..at + l);
                at += l;
                s
            })
            .collect()
    }
}

/// One party of a `rep3` session: the context plus the correlated-randomness keys.
///
/// ```no_run
/// # async fn demo<T: ringfence_core::net::Transport>(ctx: ringfence_core::net::Ctx<T>, seeds: ringfence_core::rep3::Rep3Seeds) -> Result<(), ringfence_core::Error> {
/// use ringfence_core::{net::PartyId, rep3::Rep3, ring::Z64};
/// let mut p = Rep3::setup(ctx, seeds).await?;
/// let mine = [Z64(3), Z64(4)];
/// let owner = PartyId(0);
/// let x = p.input(owner, (p.me() == owner).then_some(&mine[..]), 2).await?;
/// let y = p.mul(&x, &x).await?;
/// assert_eq!(p.reveal(y).await?, vec![Z64(9), Z64(16)]);
/// # Ok(()) }
/// ```
pub struct Rep3<T> {
    ctx: Ctx<T>,
    prev: Seed,
    next: Seed,
    common: Seed,
    own: Seed,
    comparisons: Comparisons,
}

impl<T> fmt::Debug for Rep3<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rep3").field("ctx", &self.ctx).finish_non_exhaustive()
    }
}

impl<T: Transport> Rep3<T> {
    /// Joins the session: agrees a key common to all three parties (1 round, 32 bytes to each
    /// peer, sent over the already-encrypted links).
    pub async fn setup(mut ctx: Ctx<T>, seeds: Rep3Seeds) -> Result<Self, Error> {
        let me = ctx.me();
        if me.0 > 2 {
            return Err(Error::ApiMisuse(format!("rep3 has parties P0..P2, not {me}")));
        }
        let op = ctx.next_op();
        let mut mine = [crate::ring::Bits(0); 4];
        Ring::fill_random(&mut Prg::new(&seeds.own, op, purpose::COMMON), &mut mine);
        ctx.round();
        let (pn, pp) = (next(me), prev(me));
        ctx.send(pn, &mine)?;
        ctx.send(pp, &mine)?;
        let from_next = ctx.recv::<crate::ring::Bits>(pn, 4).await?;
        let from_prev = ctx.recv::<crate::ring::Bits>(pp, 4).await?;
        let mut parts: [Vec<crate::ring::Bits>; 3] = Default::default();
        parts[me.index()] = mine.to_vec();
        parts[pn.index()] = from_next;
        parts[pp.index()] = from_prev;
        let seeds_in_order: Vec<Seed> = parts
            .iter()
            .map(|p| {
                let mut b = [0u8; 32];
                for (c, w) in b.chunks_exact_mut(8).zip(p) {
                    c.copy_from_slice(&w.0.to_le_bytes());
                }
                Seed::from_bytes(b)
            })
            .collect();
        let common = Seed::combine(&seeds_in_order);
        Ok(Self {
            ctx,
            prev: seeds.prev,
            next: seeds.next,
            common,
            own: seeds.own,
            comparisons: Comparisons::default(),
        })
    }

    /// This party's id.
    pub fn me(&self) -> PartyId {
        self.ctx.me()
    }

    /// The session's compute parties: rep3 is three.
    pub fn roster(&self) -> crate::net::Roster {
        crate::net::Roster::THREE
    }

    /// How comparisons run from now on (every party must choose the same).
    pub fn set_comparisons(&mut self, c: Comparisons) {
        self.comparisons = c;
    }

    /// How comparisons run.
    pub fn comparisons(&self) -> Comparisons {
        self.comparisons
    }

    /// The context (counters, session).
    pub fn ctx(&self) -> &Ctx<T> {
        &self.ctx
    }

    /// The context, mutably (for sub-protocols that talk directly).
    pub fn ctx_mut(&mut self) -> &mut Ctx<T> {
        &mut self.ctx
    }

    /// Gives back the context.
    pub fn into_ctx(self) -> Ctx<T> {
        self.ctx
    }

    pub(crate) fn prg_prev(&self, op: u64, purpose: u32) -> Prg {
        Prg::new(&self.prev, op, purpose)
    }

    pub(crate) fn prg_next(&self, op: u64, purpose: u32) -> Prg {
        Prg::new(&self.next, op, purpose)
    }

    pub(crate) fn prg_common(&self, op: u64, purpose: u32) -> Prg {
        Prg::new(&self.common, op, purpose)
    }

    pub(crate) fn prg_own(&self, op: u64, purpose: u32) -> Prg {
        Prg::new(&self.own, op, purpose)
    }

    /// A fresh random sharing ⟨r⟩ of `n` elements (no communication).
    pub fn random<R: Ring>(&mut self, n: usize) -> Rep3Vec<R> {
        let op = self.ctx.next_op();
        let mut a = vec![R::ZERO; n];
        let mut b = vec![R::ZERO; n];
        R::fill_random(&mut self.prg_prev(op, purpose::RANDOM), &mut a);
        R::fill_random(&mut self.prg_next(op, purpose::RANDOM), &mut b);
        Rep3Vec::from_parts(self.me(), a, b)
    }

    /// `n` public random elements, identical at all three parties (no communication).
    pub fn public_random<R: Ring>(&mut self, n: usize) -> Vec<R> {
        let op = self.ctx.next_op();
        let mut v = vec![R::ZERO; n];
        R::fill_random(&mut self.prg_common(op, purpose::RANDOM), &mut v);
        v
    }

    /// Adds this party's component of a fresh zero sharing to `z` (α_i = PRG(next) − PRG(prev)).
    ///
    /// Works in cache-sized chunks: both keystreams for a chunk stay in L1/L2 instead of
    /// making two passes over full-length temporaries.
    pub(crate) fn add_zero_share<R: Ring>(&mut self, z: &mut [R]) {
        const CHUNK: usize = 1024;
        let op = self.ctx.next_op();
        let mut next = self.prg_next(op, purpose::ZERO);
        let mut prev = self.prg_prev(op, purpose::ZERO);
        let mut pos = [R::ZERO; CHUNK];
        let mut neg = [R::ZERO; CHUNK];
        for c in z.chunks_mut(CHUNK) {
            let (p, q) = (&mut pos[..c.len()], &mut neg[..c.len()]);
            R::fill_random(&mut next, p);
            R::fill_random(&mut prev, q);
            for ((z, p), q) in c.iter_mut().zip(p.iter()).zip(q.iter()) {
                *z += *p - *q;
            }
        }
    }
}

/// P_{i+1}.
pub(crate) fn next(p: PartyId) -> PartyId {
    PartyId((p.0 + 1) % 3)
}

/// P_{i-1}.
pub(crate) fn prev(p: PartyId) -> PartyId {
    PartyId((p.0 + 2) % 3)
}

impl<T: Transport> Rep3<T> {
    /// One round in which every compute party sends one word to the other two and waits for
    /// theirs: afterwards each knows both others got this far (e.g. before closing links, so
    /// no party leaves while a peer still needs its messages). Clients take no part.
    pub async fn barrier(&mut self) -> Result<(), Error> {
        let me = self.me();
        self.ctx_mut().barrier(&[next(me), prev(me)]).await
    }
}
