//! `bin3`: three parties, semi-honest with an honest majority, on the π₂³ sharing of Faraji
//! and Kerschbaum's three-party protocol with multi-fan-in AND gates in one round (PoPETs
//! 2023(4)). The formulas are the implementation extract's corrected ones
//! (`papers/001_multifanin.md` §2.6, §2.7 and §7.1: the printed two-input AND is wrong in 16
//! of 64 cases, and the paper gives no ring formulas).
//!
//! # Sharing
//! Roles P1, P2, P3 are assigned per session ([`Roles`]). A value `x` is shared with two masks
//! `α`, `β`: P1 holds `(x + α, β)`, P2 `(x + β, α)`, P3 `(α, β)`. Each mask is known to two
//! parties (`α` to P2 and P3, `β` to P1 and P3), and any two parties reconstruct `x` by a
//! subtraction. Over [`Bits`](crate::ring::Bits) `+` is XOR and every sign below vanishes, so
//! one implementation, generic over [`Ring`], is the boolean engine (64 instances per word)
//! and the arithmetic one over Z_2^k.
//!
//! # Gates
//! Addition, negation, public scaling and public constants are local ([`Bin3Vec`]). A product
//! of `ℓ` operands (an `ℓ`-input AND over bits), `2 ≤ ℓ ≤ 8`, takes **one round** whatever `ℓ`
//! ([`gates`]): with `ℓ = 2` each party sends one element; with `ℓ ≥ 3` P1 and P2 each send
//! `2^ℓ − ℓ − 1` elements (masked products of every subset of at least two operands) and P3
//! one element to each. All gates of one layer travel in one message per directed link
//! ([`Bin3::mul_layer`]). **P3 receives nothing while a circuit runs**: its messages and its
//! output shares come from its own shares and the masks, so it can run ahead; a layer costs
//! the P1–P2 latency only, which is why the slowest participant (a phone's browser) belongs in
//! the P3 seat. Dot products cost one product ([`Bin3::dot`]).
//!
//! # Masks
//! Every message is masked by a PRG output known to its sender and the third party, never to
//! its receiver, and each mask is used for one message only. Four streams are consumed by
//! gates: `m₁₂` (P1→P2 messages) and `m₃₂` on the key of P1 and P3; `m₂₁` (P2→P1) and `m₃₁` on
//! the key of P2 and P3. The paper derives each pair's two streams (its `R` and `R'`) from two
//! independent keys, each the XOR of two PRFs seeded by both members; here they are two
//! domain-separated streams of the pair's one agreed key ([`crate::prg`]), with a fresh
//! operation number per layer, which is the same assumption (a PRF) with one key fewer.
//!
//! # Inputs and outputs (not specified by the paper; the extract's §2.3 and §2.8)
//! An input from P1 takes `α = 0` and `β` from the P1–P3 key and costs P1 one element to P2;
//! from P2 symmetrically; from P3, `α` and `β` from its keys with P2 and P1, two elements.
//! Opening to all is one round: P2 sends `α` to P1, P1 sends `β` to P2 and `x + α` to P3.
//!
//! Semi-honest only: a cheating party can change any output without being noticed.

mod bits;
pub mod gates;
pub(crate) mod msb;

pub use bits::Bin3Bits;
pub use msb::{from_rep3, to_rep3, Cost, FanIn, MAX_GROUP};

use core::fmt;
use core::marker::PhantomData;
use std::borrow::BorrowMut;

use crate::net::{PartyId, Roster, Transport};
use crate::prg::Prg;
use crate::rep3::{next, prev, Rep3};
use crate::ring::Ring;
use crate::sharing::Session;
use crate::Error;

/// The three seats of the protocol. P1 and P2 exchange a message in every layer; P3 only sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Role {
    /// Holds `(x + α, β)`.
    #[default]
    P1,
    /// Holds `(x + β, α)`.
    P2,
    /// Holds `(α, β)`; receives nothing while gates run.
    P3,
}

/// Which party plays which role: `seat[0]` is P1, `seat[1]` P2, `seat[2]` P3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Roles {
    seat: [PartyId; 3],
}

impl Default for Roles {
    /// P0 as P1, P1 as P2, P2 as P3.
    fn default() -> Self {
        Self { seat: core::array::from_fn(|i| PartyId(i as u8)) }
    }
}

impl Roles {
    /// The roles given as the parties playing P1, P2 and P3 (a permutation of the three).
    pub fn new(p1: PartyId, p2: PartyId, p3: PartyId) -> Result<Self, Error> {
        let seat = [p1, p2, p3];
        let ok =
            seat.iter().all(|&p| Roster::THREE.is_party(p)) && p1 != p2 && p2 != p3 && p1 != p3;
        if !ok {
            return Err(Error::ApiMisuse(format!(
                "bin3 roles: {p1}, {p2}, {p3} are not the three compute parties"
            )));
        }
        Ok(Self { seat })
    }

    /// The party in seat `role`.
    pub fn party(&self, role: Role) -> PartyId {
        self.seat[role as usize]
    }

    /// The role of party `p` (a compute party).
    pub fn role(&self, p: PartyId) -> Result<Role, Error> {
        [Role::P1, Role::P2, Role::P3]
            .into_iter()
            .find(|&r| self.party(r) == p)
            .ok_or_else(|| Error::ApiMisuse(format!("{p} has no bin3 role")))
    }
}

/// PRG stream purposes (the `stream` of [`Prg::new`]), on the key of the pair named.
pub(crate) mod stream {
    /// P1–P3: masks of P1→P2 messages (the paper's `R₂`).
    pub(crate) const M12: u32 = 16;
    /// P1–P3: P3's mask of its P3→P2 message in a gate of three or more inputs (`R'₂`).
    pub(crate) const M32: u32 = 17;
    /// P2–P3: masks of P2→P1 messages (`R'₁`).
    pub(crate) const M21: u32 = 18;
    /// P2–P3: P3's mask of its P3→P1 message (`R₁`).
    pub(crate) const M31: u32 = 19;
    /// The masks of an input from a party.
    pub(crate) const INPUT: u32 = 20;
}

/// A vector of π₂³ shares held by one party: per element, the two components of its role.
///
/// `Debug` shows only the length and the holder.
#[derive(Clone, PartialEq, Eq)]
pub struct Bin3Vec<R> {
    pub(crate) role: Role,
    /// P1: `x + α`; P2: `x + β`; P3: `α`.
    pub(crate) a: Vec<R>,
    /// P1: `β`; P2: `α`; P3: `β`.
    pub(crate) b: Vec<R>,
}

impl<R> fmt::Debug for Bin3Vec<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Bin3Vec({} elements held by {:?}, <redacted>)", self.a.len(), self.role)
    }
}

crate::sharing::forward_linear!(Bin3Vec);

impl<R: Ring> Bin3Vec<R> {
    pub(crate) fn from_parts(role: Role, a: Vec<R>, b: Vec<R>) -> Self {
        debug_assert_eq!(a.len(), b.len());
        Self { role, a, b }
    }

    /// The sharing of public values (no communication): `α = β = 0`.
    pub fn public(role: Role, c: &[R]) -> Self {
        let zero = vec![R::ZERO; c.len()];
        match role {
            Role::P1 | Role::P2 => Self::from_parts(role, c.to_vec(), zero),
            Role::P3 => Self::from_parts(role, zero.clone(), zero),
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

    /// The role of the holder.
    pub fn role(&self) -> Role {
        self.role
    }

    fn zip_with(&self, o: &Self, what: &str, f: impl Fn(R, R) -> R) -> Result<Self, Error> {
        crate::sharing::same_len(self.len(), o.len(), what)?;
        let a = self.a.iter().zip(&o.a).map(|(x, y)| f(*x, *y)).collect();
        let b = self.b.iter().zip(&o.b).map(|(x, y)| f(*x, *y)).collect();
        Ok(Self::from_parts(self.role, a, b))
    }

    /// `x + y` (local; XOR over bits).
    pub fn add(&self, o: &Self) -> Result<Self, Error> {
        self.zip_with(o, "add", |x, y| x + y)
    }

    /// `x − y` (local).
    pub fn sub(&self, o: &Self) -> Result<Self, Error> {
        self.zip_with(o, "sub", |x, y| x - y)
    }

    /// `−x` (local).
    pub fn neg(&self) -> Self {
        self.scale(-R::ONE)
    }

    /// `c·x` for a public scalar (local): both masks scale with the value.
    pub fn scale(&self, c: R) -> Self {
        let f = |v: &[R]| v.iter().map(|x| *x * c).collect();
        Self::from_parts(self.role, f(&self.a), f(&self.b))
    }

    /// `x + c` for public `c` (local): P1 and P2 add it to their first component, P3 does
    /// nothing. Over bits, `c = 1` (all ones) is NOT.
    pub fn add_public(&self, c: &[R]) -> Result<Self, Error> {
        self.add(&Self::public(self.role, c))
    }

    /// Elements `range` as a new vector.
    pub fn slice(&self, range: core::ops::Range<usize>) -> Self {
        Self::from_parts(self.role, self.a[range.clone()].to_vec(), self.b[range].to_vec())
    }

    /// Elements at `idx`, in that order (indices may repeat).
    pub fn gather(&self, idx: &[usize]) -> Self {
        let f = |v: &[R]| idx.iter().map(|&i| v[i]).collect();
        Self::from_parts(self.role, f(&self.a), f(&self.b))
    }

    /// The concatenation of `parts` (all held by one party).
    pub fn concat(parts: &[&Self]) -> Self {
        let role = parts.first().map_or(Role::P1, |p| p.role);
        let mut a = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
        let mut b = Vec::with_capacity(a.capacity());
        for p in parts {
            a.extend_from_slice(&p.a);
            b.extend_from_slice(&p.b);
        }
        Self::from_parts(role, a, b)
    }
}

/// A party of the `bin3` scheme on a 3-party session, with its seat.
///
/// It owns its session (`B = Rep3<T>`) or, for a step inside another 3-party scheme such as
/// rep3's comparisons on multi-fan-in gates, borrows it (`B = &mut Rep3<T>`).
pub struct Bin3<T, B = Rep3<T>> {
    pub(crate) p: B,
    roles: Roles,
    transport: PhantomData<fn() -> T>,
}

impl<T: Transport, B: BorrowMut<Rep3<T>>> fmt::Debug for Bin3<T, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Bin3({} as {:?})", self.me(), self.role())
    }
}

impl<T> Session<Rep3<T>> for Bin3<T> {
    /// Starts with the default seats ([`Roles::default`]).
    fn start(base: Rep3<T>) -> Self {
        Self { p: base, roles: Roles::default(), transport: PhantomData }
    }
    fn finish(self) -> Rep3<T> {
        self.p
    }
    fn base(&self) -> &Rep3<T> {
        &self.p
    }
    fn base_mut(&mut self) -> &mut Rep3<T> {
        &mut self.p
    }
}

impl<T: Transport> Bin3<T> {
    /// Starts on `base` with the given seats (every party must pass the same roles).
    pub fn with_roles(base: Rep3<T>, roles: Roles) -> Self {
        Self { p: base, roles, transport: PhantomData }
    }
}

impl<'a, T: Transport> Bin3<T, &'a mut Rep3<T>> {
    /// Runs on a session borrowed for a while (every party must pass the same roles).
    pub(crate) fn borrowing(base: &'a mut Rep3<T>, roles: Roles) -> Self {
        Self { p: base, roles, transport: PhantomData }
    }
}

impl<T: Transport, B: BorrowMut<Rep3<T>>> Bin3<T, B> {
    fn rep(&self) -> &Rep3<T> {
        self.p.borrow()
    }

    pub(crate) fn ctx_mut(&mut self) -> &mut crate::net::Ctx<T> {
        self.p.borrow_mut().ctx_mut()
    }

    /// This party's id.
    pub fn me(&self) -> PartyId {
        self.rep().me()
    }

    /// This party's seat.
    pub fn role(&self) -> Role {
        // A session's roles name its three parties, so every party has one.
        self.roles.role(self.rep().me()).unwrap_or(Role::P3)
    }

    /// The seats of this session.
    pub fn roles(&self) -> Roles {
        self.roles
    }

    /// Operation counters of the underlying context.
    pub fn stats(&self) -> crate::net::Stats {
        self.rep().ctx().stats()
    }

    /// The PRG stream `purpose` of operation `op` on the key this party shares with `other`.
    pub(crate) fn pair_prg(&self, other: Role, op: u64, purpose: u32) -> Prg {
        let (me, them) = (self.rep().me(), self.roles.party(other));
        debug_assert_ne!(me, them, "a pair key needs two parties");
        if them == next(me) {
            self.rep().prg_next(op, purpose)
        } else {
            debug_assert_eq!(them, prev(me));
            self.rep().prg_prev(op, purpose)
        }
    }

    /// The public values `c` as shares (no communication).
    pub fn constant<R: Ring>(&self, c: &[R]) -> Bin3Vec<R> {
        Bin3Vec::public(self.role(), c)
    }

    /// Shares `n` values owned by compute party `owner`, who passes `Some(values)` (the others
    /// `None`). One round: an owner in seat P1 or P2 sends one element per value, P3 two.
    pub async fn input<R: Ring>(
        &mut self,
        owner: PartyId,
        values: Option<&[R]>,
        n: usize,
    ) -> Result<Bin3Vec<R>, Error> {
        let who = self.roles.role(owner)?;
        let me = self.role();
        if (self.me() == owner) != values.is_some() {
            return Err(Error::ApiMisuse(format!(
                "bin3 input from {owner}: exactly the owner passes values"
            )));
        }
        if let Some(v) = values {
            crate::sharing::same_len(v.len(), n, "bin3 input")?;
        }
        let op = self.ctx_mut().next_op();
        self.ctx_mut().round();
        let draw = |s: &Self, other: Role| {
            let mut m = vec![R::ZERO; n];
            R::fill_random(&mut s.pair_prg(other, op, stream::INPUT), &mut m);
            m
        };
        let zero = || vec![R::ZERO; n];
        let plus = |x: &[R], m: &[R]| -> Vec<R> { x.iter().zip(m).map(|(x, m)| *x + *m).collect() };
        let (a, b) = match (who, me) {
            // Owner P1: α = 0, β from the P1–P3 key; P2 receives x + β.
            (Role::P1, Role::P1) => {
                let beta = draw(self, Role::P3);
                let x = values.unwrap_or_default();
                self.send(Role::P2, &plus(x, &beta))?;
                (x.to_vec(), beta)
            }
            (Role::P1, Role::P2) => (self.recv(Role::P1, n).await?, zero()),
            (Role::P1, Role::P3) => (zero(), draw(self, Role::P1)),
            // Owner P2: β = 0, α from the P2–P3 key; P1 receives x + α.
            (Role::P2, Role::P2) => {
                let alpha = draw(self, Role::P3);
                let x = values.unwrap_or_default();
                self.send(Role::P1, &plus(x, &alpha))?;
                (x.to_vec(), alpha)
            }
            (Role::P2, Role::P1) => (self.recv(Role::P2, n).await?, zero()),
            (Role::P2, Role::P3) => (draw(self, Role::P2), zero()),
            // Owner P3: α from the P2–P3 key, β from the P1–P3 key; two messages.
            (Role::P3, Role::P3) => {
                let (alpha, beta) = (draw(self, Role::P2), draw(self, Role::P1));
                let x = values.unwrap_or_default();
                self.send(Role::P1, &plus(x, &alpha))?;
                self.send(Role::P2, &plus(x, &beta))?;
                (alpha, beta)
            }
            (Role::P3, Role::P1) => (self.recv(Role::P3, n).await?, draw(self, Role::P3)),
            (Role::P3, Role::P2) => (self.recv(Role::P3, n).await?, draw(self, Role::P3)),
        };
        Ok(Bin3Vec::from_parts(me, a, b))
    }

    /// Opens `x` to all three parties. One round: P2 sends `α` to P1, P1 sends `β` to P2 and
    /// `x + α` to P3 (one element per value for P2, two for P1, none for P3).
    pub async fn open<R: Ring>(&mut self, x: Bin3Vec<R>) -> Result<Vec<R>, Error> {
        self.check_holder(&x)?;
        let n = x.len();
        self.ctx_mut().round();
        let diff = |u: &[R], v: &[R]| -> Vec<R> { u.iter().zip(v).map(|(u, v)| *u - *v).collect() };
        match self.role() {
            Role::P1 => {
                self.send(Role::P2, &x.b)?;
                self.send(Role::P3, &x.a)?;
                let alpha = self.recv(Role::P2, n).await?;
                Ok(diff(&x.a, &alpha))
            }
            Role::P2 => {
                self.send(Role::P1, &x.b)?;
                let beta = self.recv(Role::P1, n).await?;
                Ok(diff(&x.a, &beta))
            }
            Role::P3 => {
                let masked = self.recv(Role::P1, n).await?;
                Ok(diff(&masked, &x.a))
            }
        }
    }

    fn check_holder<R>(&self, x: &Bin3Vec<R>) -> Result<(), Error> {
        if x.role != self.role() {
            return Err(Error::ApiMisuse(format!(
                "bin3: shares held by {:?}, used by {:?}",
                x.role,
                self.role()
            )));
        }
        Ok(())
    }

    pub(crate) fn send<R: Ring>(&mut self, to: Role, v: &[R]) -> Result<(), Error> {
        let to = self.roles.party(to);
        self.ctx_mut().send(to, v)
    }

    pub(crate) async fn recv<R: Ring>(&mut self, from: Role, n: usize) -> Result<Vec<R>, Error> {
        let from = self.roles.party(from);
        self.ctx_mut().recv(from, n).await
    }
}
