//! `meteor`: METEOR's masked sharing for 3-party inference (Dong et al., WWW 2023), semi-honest
//! with an honest majority (at most one corrupted party, no collusion).
//!
//! A value is held as `⟦x⟧ = (m_x, ⟨ψ_x⟩)`: the masked value `m_x = x − ψ_x` is public to all
//! three parties and the mask `ψ_x` is a `rep3` sharing. Masks never depend on data, so every
//! product of masks is made in a **setup phase** that needs the network's shape but no input;
//! the **online phase** is local linear algebra plus one reveal of a new masked value per gate
//! layer (one element per party to one neighbour, one round).
//!
//! # Phases and preprocessing
//! Setup functions (`*_setup`) take masks (`Rep3Vec`) and return typed preparation values
//! that the matching online function consumes by move; an online call checks that its inputs
//! carry the masks the preparation was made for (a mismatch is [`Error::ApiMisuse`], never a
//! wrong result). Every mask is drawn from the parties' PRG keys: fresh, uniform, single-use.
//!
//! # Layout
//! | file | holds |
//! |---|---|
//! | `mod.rs` | [`Meteor`], [`MVec`], masks, sharing and reveals |
//! | `mult.rs` | N-MULT, fixed-point multiplication, matrix products |
//! | `msb.rs` | MSB (private compare over F_67), MUX, ReLU, and the e-value kernel |
//! | `pool.rs` | max pooling |
//! | `client.rs` | the input/output client |
//! | `field.rs` | [`F67`], the prime field of the MSB, with its sampler and dot product |
//! | `kernels.rs` | [`MeteorRing`]: the N-MULT online sum per ring, F_67's lazily reduced forms |
//!
//! Everything METEOR-specific is here; `ring` is ring-generic. The F_67 kernels run on the
//! ring layer's kernel backends (`ring::backend`: an AVX2 copy chosen at run time on x86-64).
//!
//! # Online cost per party (ℓ = 64, F_67 elements sent as one byte)
//! | operation | bytes | rounds |
//! |---|---|---|
//! | share (owner → both) | 16 from the owner | 1 |
//! | reveal to all / to one | 8 / 8 in total | 1 |
//! | linear ops | 0 | 0 |
//! | 2-MULT, N-MULT, fixed-point mult (truncation folded in) | 8 | 1 |
//! | matmul / conv, per output | 8 | 1 |
//! | MSB | 64 + 16 + 4 + 1 + 1 + 1 = 87 | 6 |
//! | MUX | 8 | 1 |
//! | ReLU = MSB + MUX | 95 | 7 |
//! | max pooling over w values, per output | 95·(w − 1) | 7·⌈log₂ w⌉ |
//!
//! This is the paper's cost model (extract §7.7), asserted by `tests/meteor.rs` (MSB, ReLU,
//! pooling) and `tests/conformance.rs` (sharing, reveals, products).
//!
//! # Deviations from the paper (all documented where they are made)
//! * MSB compares against `b̃ = NOT(2m_x)` instead of `2^ℓ − 2m_x` (extract §9.1: the printed
//!   version is wrong for x = 0 and x = −2^63 half of the time, and when 2m_x ≡ 0).
//! * Each e-value of the private compare is revealed under its own fresh setup mask before the
//!   product tree (extract §9.2: the masks of the printed version depend on online data).
//! * The multiplier ζ is drawn non-zero (extract §9.6); the MSB's output mask is
//!   `msb(ψ_x) ⊕ λ` kept as a boolean sharing, which needs no setup reveals of `m_λ`, `m_ψx`.
//! * Owner-known input masks take the owner's missing component from the 3-party common key
//!   under a dedicated purpose, never from the other two parties' pairwise key (§9.12).
//!
//! ```
//! use ringfence_core::{meteor::Meteor, net::PartyId, ring::Z64, testing};
//! let outs = testing::run_rep3(3, |p| async move {
//!     let mut p = Meteor::new(p);
//!     let owner = PartyId(1);
//!     // Setup: masks and mask products, no data.
//!     let mx = p.input_mask::<Z64>(owner, 2);
//!     let prep = p.mult_setup(mx.mask(), mx.mask()).await?;
//!     // Online: share, multiply (1 round), reveal.
//!     let mine = [Z64(3), Z64(-4i64 as u64)];
//!     let x = p.share(owner, (p.me() == owner).then_some(&mine[..]), mx).await?;
//!     let y = p.mult(&x, &x, prep).await?;
//!     p.reveal(y).await
//! });
//! assert_eq!(outs[0], vec![Z64(9), Z64(16)]);
//! ```

pub mod client;
mod field;
mod kernels;
mod msb;
mod mult;
mod nn;
mod pool;
mod scheme;

pub use field::F67;
pub use kernels::MeteorRing;
pub use msb::{msb_online_cost, MBits, MsbPrep, MuxPrep, ReluPrep};
pub use mult::{FixedMultPrep, MatMulJob, MatMulPrep, NMultPrep};
pub use nn::{online_cost, MeteorPrep};
pub use pool::{PoolPrep, PoolSchedule};

use core::fmt;

use crate::net::{PartyId, Transport};
use crate::rep3::{next, prev, purpose, Rep3, Rep3Vec};
use crate::ring::{self, Ring};
use crate::Error;

/// A vector of METEOR shares `⟦x⟧ = (m_x, ⟨ψ_x⟩)` held by one party. `Debug` is redacted.
#[derive(Clone, PartialEq, Eq)]
pub struct MVec<R> {
    pub(crate) m: Vec<R>,
    pub(crate) psi: Rep3Vec<R>,
}

impl<R> fmt::Debug for MVec<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MVec({} elements, <redacted>)", self.m.len())
    }
}

crate::sharing::forward_linear!(MVec);

impl<R: Ring> MVec<R> {
    pub(crate) fn new(m: Vec<R>, psi: Rep3Vec<R>) -> Result<Self, Error> {
        if m.len() != psi.len() {
            return Err(Error::ApiMisuse(format!(
                "{} masked values for {} masks",
                m.len(),
                psi.len()
            )));
        }
        Ok(Self { m, psi })
    }

    /// A public vector: `m = c`, `ψ = 0` (no communication).
    pub fn public(me: PartyId, c: &[R]) -> Self {
        Self { m: c.to_vec(), psi: Rep3Vec::public(me, &vec![R::ZERO; c.len()]) }
    }

    /// Number of shared elements.
    pub fn len(&self) -> usize {
        self.m.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.m.is_empty()
    }

    /// The mask's `rep3` shares (what setup functions take).
    pub fn mask(&self) -> &Rep3Vec<R> {
        &self.psi
    }

    /// `x + y` (local).
    pub fn add(&self, o: &Self) -> Result<Self, Error> {
        self.check_len(o, "add")?;
        let mut m = self.m.clone();
        ring::kernels::add_assign(&mut m, &o.m);
        Ok(Self { m, psi: self.psi.add(&o.psi)? })
    }

    /// `x − y` (local).
    pub fn sub(&self, o: &Self) -> Result<Self, Error> {
        self.check_len(o, "sub")?;
        let mut m = self.m.clone();
        ring::kernels::sub_assign(&mut m, &o.m);
        Ok(Self { m, psi: self.psi.sub(&o.psi)? })
    }

    /// `x + c` for a public vector (local; constants go into `m` only).
    pub fn add_public(&self, c: &[R]) -> Result<Self, Error> {
        if c.len() != self.len() {
            return Err(Error::ApiMisuse(format!(
                "add_public: {} values, {} constants",
                self.len(),
                c.len()
            )));
        }
        let mut m = self.m.clone();
        ring::kernels::add_assign(&mut m, c);
        Ok(Self { m, psi: self.psi.clone() })
    }

    /// `c·x` for a public scalar (local).
    pub fn scale(&self, c: R) -> Self {
        let mut m = self.m.clone();
        ring::kernels::scale(&mut m, c);
        Self { m, psi: self.psi.scale(c) }
    }

    /// Elements at `idx`, in that order.
    pub fn gather(&self, idx: &[usize]) -> Self {
        Self { m: idx.iter().map(|&i| self.m[i]).collect(), psi: self.psi.gather(idx) }
    }

    /// Elements `range`.
    pub fn slice(&self, range: core::ops::Range<usize>) -> Self {
        Self { m: self.m[range.clone()].to_vec(), psi: self.psi.slice(range) }
    }

    /// Concatenation.
    pub fn concat(parts: &[&Self]) -> Self {
        Self {
            m: parts.iter().flat_map(|p| p.m.iter().copied()).collect(),
            psi: Rep3Vec::concat(&parts.iter().map(|p| &p.psi).collect::<Vec<_>>()),
        }
    }

    /// Equal lengths of `m` and `ψ` are an invariant, so the masks' check covers both.
    fn check_len(&self, o: &Self, what: &str) -> Result<(), Error> {
        self.psi.check_len(&o.psi, what)
    }
}

/// A mask for an input that one party owns and knows in the clear (setup of [`Meteor::share`]).
/// `Debug` is redacted.
pub struct InputMask<R> {
    owner: PartyId,
    psi: Rep3Vec<R>,
    clear: Option<Vec<R>>,
}

impl<R> fmt::Debug for InputMask<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InputMask({} elements for {}, <redacted>)", self.psi.a.len(), self.owner)
    }
}

impl<R: Ring> InputMask<R> {
    /// A mask from its parts: `owner`'s, this party's shares `psi`, and the mask in the clear
    /// at the owner only (a test dealer's, [`crate::testing::ideal::Dealer`]).
    #[cfg(any(test, feature = "test-utils"))]
    pub(crate) fn from_parts(owner: PartyId, psi: Rep3Vec<R>, clear: Option<Vec<R>>) -> Self {
        Self { owner, psi, clear }
    }

    /// The mask's `rep3` shares (for the setup of operations on the input).
    pub fn mask(&self) -> &Rep3Vec<R> {
        &self.psi
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.psi.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.psi.is_empty()
    }
}

/// One party of a METEOR session: a [`Rep3`] party (keys, context) plus the masked-sharing
/// protocols. Setup-phase functions use `rep3` multiplication and conversions on masks only.
pub struct Meteor<T> {
    pub(crate) p: Rep3<T>,
}

impl<T> fmt::Debug for Meteor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Meteor").field("p", &self.p).finish()
    }
}

impl<T: Transport> Meteor<T> {
    /// Wraps a `rep3` party.
    pub fn new(p: Rep3<T>) -> Self {
        Self { p }
    }

    /// This party's id.
    pub fn me(&self) -> PartyId {
        self.p.me()
    }

    /// The underlying `rep3` party (context, counters).
    pub fn rep3(&self) -> &Rep3<T> {
        &self.p
    }

    /// The underlying `rep3` party, mutably.
    pub fn rep3_mut(&mut self) -> &mut Rep3<T> {
        &mut self.p
    }

    /// Gives back the `rep3` party.
    pub fn into_rep3(self) -> Rep3<T> {
        self.p
    }

    /// A fresh random mask ⟨ψ⟩ of `n` elements (setup, no communication).
    pub fn mask<R: Ring>(&mut self, n: usize) -> Rep3Vec<R> {
        self.p.random(n)
    }

    /// A fresh mask that compute party `owner` knows in the clear (setup, no communication).
    ///
    /// Components `ψ_owner` and `ψ_owner+1` come from the pairwise keys as for any random
    /// sharing; the owner's missing component `ψ_owner+2` comes from the key common to all three
    /// under a purpose of its own, so the owner learns it while each other party still lacks
    /// one pairwise-key component (never the other two parties' pairwise key: extract §9.12).
    ///
    /// For an external client (`owner` ≥ 3) the mask is an ordinary random sharing; the parties
    /// hand it to the client with [`Meteor::deliver_mask`] during setup.
    pub fn input_mask<R: Ring>(&mut self, owner: PartyId, n: usize) -> InputMask<R> {
        if owner.0 >= 3 {
            return InputMask { owner, psi: self.p.random(n), clear: None };
        }
        let op = self.p.ctx_mut().next_op();
        let me = self.me();
        let known = (owner.0 as usize + 2) % 3;
        let comp = |c: usize| -> Vec<R> {
            let mut v = vec![R::ZERO; n];
            let mut prg = if c == known {
                self.p.prg_common(op, purpose::OWNER_MASK)
            } else if c == me.index() {
                self.p.prg_prev(op, purpose::RANDOM)
            } else {
                self.p.prg_next(op, purpose::RANDOM)
            };
            R::fill_random(&mut prg, &mut v);
            v
        };
        let a = comp(me.index());
        let b = comp((me.index() + 1) % 3);
        let clear = (me == owner).then(|| {
            let mut c = comp(known);
            ring::kernels::add_assign(&mut c, &a);
            ring::kernels::add_assign(&mut c, &b);
            c
        });
        InputMask { owner, psi: Rep3Vec::from_parts(me, a, b), clear }
    }

    /// Online sharing of `values` owned by compute party `owner` (who passes `Some`), under a
    /// mask from [`Meteor::input_mask`]: the owner sends `m = x − ψ` to both others (1 round,
    /// one element per value to each).
    ///
    /// An external client (`owner` ≥ 3, see [`client`]) sends `m` to all three parties, and
    /// nothing makes it send the same `m` to each: with a different `m` at one party the first
    /// opening after a linear layer would carry the weights times the difference. So the parties
    /// then compare digests of the `m` they received (one more round, 32 bytes to each peer, as
    /// [`Rep3::input_from_client`] does) and fail naming the client if they differ. It is done
    /// here rather than by callers so that none can forget it; a compute party's input needs no
    /// check (the parties are trusted to follow the protocol).
    pub async fn share<R: Ring>(
        &mut self,
        owner: PartyId,
        values: Option<&[R]>,
        mask: InputMask<R>,
    ) -> Result<MVec<R>, Error> {
        let me = self.me();
        if mask.owner != owner {
            return Err(Error::ApiMisuse(format!(
                "share: the mask was made for {}, not {owner}",
                mask.owner
            )));
        }
        if (me == owner) != values.is_some() {
            return Err(Error::ApiMisuse(format!(
                "share from {owner}: exactly the owner passes values ({me} {})",
                if values.is_some() { "did" } else { "did not" }
            )));
        }
        let n = mask.len();
        if let Some(x) = values.filter(|x| x.len() != n) {
            return Err(Error::ApiMisuse(format!("share: {} values for a mask of {n}", x.len())));
        }
        self.p.ctx_mut().round();
        let m = match (values, mask.clear) {
            (Some(x), Some(clear)) => {
                let mut m = x.to_vec();
                ring::kernels::sub_assign(&mut m, &clear);
                self.p.ctx_mut().send(next(me), &m)?;
                self.p.ctx_mut().send(prev(me), &m)?;
                m
            }
            (None, _) => self.p.ctx_mut().recv(owner, n).await?,
            (Some(_), None) => {
                return Err(Error::ApiMisuse("share: the owner's mask lacks its clear part".into()))
            }
        };
        if owner.0 >= 3 {
            // Every party holds the one piece `m`.
            let held = |_: PartyId| vec![0];
            let op = self.p.ctx_mut().next_op();
            let key = [self.p.prg_common(op, crate::rep3::purpose::DIGEST_KEY)];
            self.p.check_client_input(owner, &held, &[&m], key, |_| "masked inputs".into()).await?;
        }
        MVec::new(m, mask.psi)
    }

    /// Setup for an external client's input: each party sends the client its first component
    /// of the mask, so the client alone learns ψ (1 round, one element per value per party).
    pub async fn deliver_mask<R: Ring>(&mut self, mask: &InputMask<R>) -> Result<(), Error> {
        if mask.owner.0 < 3 {
            return Err(Error::ApiMisuse(format!("deliver_mask: {} is not a client", mask.owner)));
        }
        self.p.ctx_mut().round();
        self.p.ctx_mut().send(mask.owner, &mask.psi.a)
    }

    /// Opens `x` to an external client only: each party sends its first component of the mask
    /// and P0 the public `m` (1 round; the client alone reconstructs).
    pub async fn reveal_to_client<R: Ring>(
        &mut self,
        client: PartyId,
        x: MVec<R>,
    ) -> Result<(), Error> {
        if client.0 < 3 {
            return Err(Error::ApiMisuse(format!("{client} is a compute party, not a client")));
        }
        self.p.ctx_mut().round();
        if self.me() == PartyId(0) {
            self.p.ctx_mut().send(client, &x.m)?;
        }
        self.p.ctx_mut().send(client, &x.psi.a)
    }

    /// Opens `x` to all three parties (1 round, one element per value per party).
    pub async fn reveal<R: Ring>(&mut self, x: MVec<R>) -> Result<Vec<R>, Error> {
        let mut out = self.p.reveal(x.psi).await?;
        ring::kernels::add_assign(&mut out, &x.m);
        Ok(out)
    }

    /// Opens `x` to compute party `to` only (1 round, one element per value in total).
    pub async fn reveal_to<R: Ring>(
        &mut self,
        to: PartyId,
        x: MVec<R>,
    ) -> Result<Option<Vec<R>>, Error> {
        Ok(self.p.reveal_to(to, x.psi).await?.map(|mut psi| {
            ring::kernels::add_assign(&mut psi, &x.m);
            psi
        }))
    }

    /// Opens `v − ψ` for a `rep3` value `⟨v⟩` and a fresh mask `⟨ψ⟩`, giving `⟦v⟧ = (v − ψ, ψ)`
    /// (1 round, one element per value per party).
    pub(crate) async fn remask<R: Ring>(
        &mut self,
        v: Rep3Vec<R>,
        psi: Rep3Vec<R>,
    ) -> Result<MVec<R>, Error> {
        let m = self.p.reveal(v.sub(&psi)?).await?;
        MVec::new(m, psi)
    }
}

/// `true` when this party's first component is component 0 (P0), `false` when its second one is
/// (P2); `None` for P1. Public constants of a `rep3` formula go there.
pub(crate) fn comp0_slot(me: PartyId) -> Option<bool> {
    match me.0 {
        0 => Some(true),
        2 => Some(false),
        _ => None,
    }
}

/// Checks that an online input carries the mask its preparation was made for.
pub(crate) fn check_mask<R: Ring>(
    what: &str,
    got: &Rep3Vec<R>,
    want: &Rep3Vec<R>,
) -> Result<(), Error> {
    if got.len() != want.len() {
        return Err(Error::ApiMisuse(format!(
            "{what}: {} values, the preparation is for {}",
            got.len(),
            want.len()
        )));
    }
    // Compared as encoded bytes (one `memcmp` per component; the encoding is injective and, on
    // little-endian targets, the memory itself): element by element, the weights' masks cost
    // ~11 M instructions per LeNet inference.
    let same = |x: &[R], y: &[R]| {
        let (mut sx, mut sy) = (Vec::new(), Vec::new());
        R::wire_bytes(x, &mut sx) == R::wire_bytes(y, &mut sy)
    };
    if got.me != want.me || !same(&got.a, &want.a) || !same(&got.b, &want.b) {
        return Err(Error::ApiMisuse(format!(
            "{what}: the input's mask is not the one this preparation was made for"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::Z64;

    fn vec_of<R: Ring>(me: u8, a: Vec<R>, b: Vec<R>) -> Rep3Vec<R> {
        Rep3Vec::from_parts(PartyId(me), a, b)
    }

    #[test]
    fn check_mask_accepts_only_the_same_mask() {
        let z = |v: &[u64]| v.iter().map(|&x| Z64(x)).collect::<Vec<_>>();
        let want = vec_of(1, z(&[1, 2, 3]), z(&[4, 5, u64::MAX]));
        assert!(check_mask("t", &want.clone(), &want).is_ok());
        for got in [
            vec_of(1, z(&[1, 2, 3]), z(&[4, 5, u64::MAX - 1])),
            vec_of(1, z(&[1, 2, 7]), z(&[4, 5, u64::MAX])),
            vec_of(2, z(&[1, 2, 3]), z(&[4, 5, u64::MAX])),
            vec_of(1, z(&[1, 2]), z(&[4, 5])),
        ] {
            assert!(matches!(check_mask("t", &got, &want), Err(Error::ApiMisuse(_))));
        }
        let f = |v: &[u64]| v.iter().map(|&x| F67::new(x)).collect::<Vec<_>>();
        let want = vec_of(0, f(&[1, 66]), f(&[0, 2]));
        assert!(check_mask("t", &want.clone(), &want).is_ok());
        assert!(check_mask("t", &vec_of(0, f(&[1, 65]), f(&[0, 2])), &want).is_err());
    }
}
