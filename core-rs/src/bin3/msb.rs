//! rep3's comparisons on multi-fan-in gates: the most significant bit of rep3-shared values,
//! computed on bin3's π₂³ sharing in `1 + ⌈log_ℓ ⌈(k−1)/r⌉⌉` rounds instead of rep3's
//! `2 + ⌈log₂(k−1)⌉` (for k = 64 with r = ℓ = 4: 3 rounds instead of 8). Not in the paper,
//! which evaluates circuits on inputs already shared; this is how its gates serve an
//! arithmetic scheme. Documented in `docs/protocols.md` ("Comparisons on multi-fan-in gates").
//!
//! # From arithmetic shares to two addends
//! rep3 holds `x = x₀ + x₁ + x₂` with party `i` knowing `xᵢ` and `xᵢ₊₁`. With `C` the party in
//! seat P3, `a = x_C + x_{C+1}` is known to `C` alone and `b = x_{C+2}` to the other two, the
//! seats P1 and P2; `MSB(x) = a_{k−1} ⊕ b_{k−1} ⊕ c`, where `c` is the carry into bit `k − 1`
//! of `a + b`: the generate signal `G` of positions `0..k−1` under `(G, P)_hi ∘ (G, P)_lo =
//! (G_hi ⊕ P_hi·G_lo, P_hi·P_lo)`, with `g_i = a_i·b_i` and `p_i = a_i ⊕ b_i`.
//!
//! # First round: a group's signals straight from `a` and `b`
//! Over a group of `r` consecutive positions, `G` and `P` are polynomials in the bits of `a`
//! whose coefficients depend on `b` only: `f = c_∅ ⊕ ⊕_S c_S·a^S` over the non-empty subsets
//! `S` of the group (`a^S` the AND of those bits). P1 and P2 know every `c_S`, P3 every `a^S`.
//! In one round, with P3 receiving nothing:
//! - P3 sends P1 `a^S ⊕ ρ_S` and P2 `a^S ⊕ ρ′_S` for every `S` (`2^r − 1` bits to each), with
//!   `ρ` from the P2–P3 key and `ρ′` from the P1–P3 key: each is P3's bin3 input of `a^S`.
//! - P2 sends P1 `u = α_f ⊕ ⊕_S c_S·ρ_S` and P1 sends P2 `u′ = β_f ⊕ ⊕_S c_S·ρ′_S` for every
//!   output `f` (one bit each), `α_f` from the P2–P3 key, `β_f` from the P1–P3 key.
//! - P1 holds `c_∅ ⊕ ⊕_S c_S·(a^S ⊕ ρ_S) ⊕ u = f ⊕ α_f` and `β_f`; P2 `f ⊕ β_f` and `α_f`;
//!   P3 `(α_f, β_f)`: the π₂³ sharing of `f`.
//!
//! Each message is masked by a fresh PRG output of a key its receiver does not hold, so every
//! view is uniform (semi-honest, as rep3 and bin3). The top bit's `p_{k−1}` is one more group
//! of one position.
//!
//! # Then: ℓ groups per gate layer
//! Runs of up to `ℓ` consecutive nodes combine in one round of bin3 gates:
//! `G = G_{m−1} ⊕ ⊕_{i<m−1} G_i·P_{i+1}⋯P_{m−1}` (gates of fan-in 2..m, XORed locally) and
//! `P = P_0⋯P_{m−1}` for every run but the lowest, whose `P` nothing uses.
//!
//! # Back to rep3
//! A bit shared as P1 `(x ⊕ α, β)`, P2 `(x ⊕ β, α)`, P3 `(α, β)` is the rep3 sharing with
//! components `β` (held by P1 and P3), `α` (P2 and P3) and `x ⊕ α ⊕ β` (P1 and P2), each
//! party computing its two locally ([`to_rep3_bits`]); [`from_rep3_bits`] is the inverse.

use std::borrow::BorrowMut;

use super::gates::MAX_FAN_IN;
use super::{stream, Bin3, Bin3Vec, Role, Roles};
use crate::circuit::bin3_gate_bits;
use crate::net::{PartyId, Transport};
use crate::prg::Prg;
use crate::rep3::binary::{to_planes_into, words};
use crate::rep3::{next, prev, Rep3, Rep3Vec, SharedBits};
use crate::ring::{kernels, Bits, IntRing, Ring};
use crate::Error;

/// The widest first-level group: its `2^r − 1` monomials go from P3 to each of P1 and P2.
pub const MAX_GROUP: usize = 8;

/// How rep3's comparisons run on multi-fan-in gates: the seats, the width `r` of the first
/// round's groups and the fan-in `ℓ` of the later gates.
///
/// ```
/// use ringfence_core::bin3::FanIn;
/// let f = FanIn::default(); // r = ℓ = 4, P2 in seat P3
/// let c = f.msb_cost(64);
/// assert_eq!(c.rounds, 3); // rep3's two-input network takes 8
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FanIn {
    roles: Roles,
    group: usize,
    fan_in: usize,
}

impl Default for FanIn {
    /// `r = ℓ = 4` with the default seats.
    fn default() -> Self {
        Self { roles: Roles::default(), group: 4, fan_in: 4 }
    }
}

/// What one operation costs per value: rounds, and bits sent by the parties in seats P1, P2
/// and P3 (values are packed 64 per word, so `n` values cost `⌈n/64⌉` words per bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cost {
    /// Communication rounds.
    pub rounds: usize,
    /// Bits sent per value by the parties in seats P1, P2, P3.
    pub bits: [usize; 3],
}

impl FanIn {
    /// Groups of `group` positions (1 to [`MAX_GROUP`]) in the first round, gates of up to
    /// `fan_in` inputs (2 to [`MAX_FAN_IN`]) after it.
    pub fn new(roles: Roles, group: usize, fan_in: usize) -> Result<Self, Error> {
        if !(1..=MAX_GROUP).contains(&group) || !(2..=MAX_FAN_IN).contains(&fan_in) {
            return Err(Error::ApiMisuse(format!(
                "multi-fan-in comparisons: groups of {group} (1..={MAX_GROUP}) and gates of \
                 {fan_in} inputs (2..={MAX_FAN_IN})"
            )));
        }
        Ok(Self { roles, group, fan_in })
    }

    /// The seats.
    pub fn roles(&self) -> Roles {
        self.roles
    }

    /// The first round's group width `r`.
    pub fn group(&self) -> usize {
        self.group
    }

    /// The later gates' largest fan-in `ℓ`.
    pub fn fan_in(&self) -> usize {
        self.fan_in
    }

    /// The cost of one `k`-bit MSB per value (exact: the protocol sends these counts).
    pub fn msb_cost(&self, k: usize) -> Cost {
        let groups = first_level(k, self.group);
        let mono: usize = groups.iter().map(|g| (1 << g.len) - 1).sum();
        let outs: usize = groups.iter().map(Group::outputs).sum();
        let mut bits = [outs, outs, 2 * mono];
        let mut rounds = 1;
        let mut nodes = groups.len() - 1;
        while nodes > 1 {
            for (run, m) in runs(nodes, self.fan_in) {
                let fan_ins = (2..=m).chain((run > 0).then_some(m));
                for f in fan_ins.filter(|_| m > 1) {
                    bits.iter_mut().zip(bin3_gate_bits(f)).for_each(|(b, g)| *b += g);
                }
            }
            nodes = nodes.div_ceil(self.fan_in);
            rounds += 1;
        }
        Cost { rounds, bits }
    }
}

/// A first-round group: positions `lo..lo + len`; which of its signals are needed.
#[derive(Debug, Clone, Copy)]
struct Group {
    lo: usize,
    len: usize,
    g: bool,
    p: bool,
}

impl Group {
    fn outputs(&self) -> usize {
        usize::from(self.g) + usize::from(self.p)
    }
}

/// Positions `0..k−1` in groups of `r` from the bottom (the lowest group's `P` is never used),
/// then the top bit's `p` alone.
fn first_level(k: usize, r: usize) -> Vec<Group> {
    let mut out = Vec::with_capacity((k - 1).div_ceil(r) + 1);
    let mut lo = 0;
    while lo < k - 1 {
        let len = r.min(k - 1 - lo);
        out.push(Group { lo, len, g: true, p: lo > 0 });
        lo += len;
    }
    out.push(Group { lo: k - 1, len: 1, g: false, p: true });
    out
}

/// The runs of one level over `nodes` nodes: `(index, length)`, up to `l` nodes each, from
/// the bottom.
fn runs(nodes: usize, l: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..nodes.div_ceil(l)).map(move |i| (i, l.min(nodes - i * l)))
}

/// `a^S` for every non-empty subset `S` of the group's positions (plane `S − 1`), from the
/// flat planes of `a` (`w` words each).
fn monomials(a: &[Bits], w: usize, g: &Group) -> Vec<Bits> {
    let count = (1usize << g.len) - 1;
    let mut out = vec![Bits(0); count * w];
    for s in 1..=count {
        let low = s.trailing_zeros() as usize;
        let bit = &a[(g.lo + low) * w..][..w];
        let rest = s & (s - 1);
        let (done, cur) = out.split_at_mut((s - 1) * w);
        let cur = &mut cur[..w];
        if rest == 0 {
            cur.copy_from_slice(bit);
        } else {
            let prior = &done[(rest - 1) * w..][..w];
            cur.iter_mut().zip(prior.iter().zip(bit)).for_each(|(c, (p, b))| *c = *p * *b);
        }
    }
    out
}

/// The coefficients of the group's `G` and `P` as polynomials in `a` (entry `S`, `w` words
/// each, `2^len` entries), from the flat planes of `b`.
fn coefficients(b: &[Bits], w: usize, g: &Group) -> (Vec<Bits>, Vec<Bits>) {
    let size = 1usize << g.len;
    let mut gen = vec![Bits(0); size * w];
    let mut prop = vec![Bits(0); size * w];
    prop[..w].fill(Bits(!0));
    for i in 0..g.len {
        let bm = &b[(g.lo + i) * w..][..w];
        let half = 1usize << i;
        // Q ← p_m·Q with p_m = a_m ⊕ b_m: entries without a_m scale by b_m, and each gains a
        // twin with a_m.
        for q in [&mut gen, &mut prop] {
            let (low, high) = q.split_at_mut(half * w);
            high[..half * w].copy_from_slice(low);
            low.iter_mut().zip(bm.iter().cycle()).for_each(|(c, b)| *c *= *b);
        }
        // G ← G ⊕ g_m with g_m = a_m·b_m.
        gen[half * w..][..w].iter_mut().zip(bm).for_each(|(c, b)| *c += *b);
    }
    (gen, prop)
}

/// `⊕_S c_S·v_S` over the non-empty `S` (`v` holds plane `S − 1`), plus `c_∅` when asked.
fn apply(c: &[Bits], v: &[Bits], w: usize, constant: bool) -> Vec<Bits> {
    let mut out = if constant { c[..w].to_vec() } else { vec![Bits(0); w] };
    for (cs, vs) in c[w..].chunks_exact(w).zip(v.chunks_exact(w)) {
        out.iter_mut().zip(cs.iter().zip(vs)).for_each(|(o, (c, v))| *o += *c * *v);
    }
    out
}

fn draw(prg: &mut Prg, n: usize) -> Vec<Bits> {
    let mut m = vec![Bits(0); n];
    Bits::fill_random(prg, &mut m);
    m
}

fn xor(x: &[Bits], y: &[Bits]) -> Vec<Bits> {
    x.iter().zip(y).map(|(x, y)| *x + *y).collect()
}

/// A rep3-shared bit vector as bin3 shares under `roles` (local).
pub(crate) fn from_rep3_bits(roles: Roles, x: &Rep3Vec<Bits>) -> Result<Bin3Vec<Bits>, Error> {
    let me = x.me;
    let role = roles.role(me)?;
    // My components: `a` shared with prev(me), `b` with next(me).
    let with = |p: PartyId| if p == prev(me) { &x.a } else { &x.b };
    let c = roles.party(Role::P3);
    Ok(match role {
        // P1: x ⊕ α = comp(P1,P2) ⊕ comp(P1,P3), β = comp(P1,P3); P2 alike with α.
        Role::P1 | Role::P2 => {
            let other = roles.party(if role == Role::P1 { Role::P2 } else { Role::P1 });
            let (to_c, to_other) = (with(c), with(other));
            Bin3Vec::from_parts(role, xor(to_other, to_c), to_c.clone())
        }
        // P3: α = comp(P2,P3), β = comp(P1,P3).
        Role::P3 => Bin3Vec::from_parts(
            role,
            with(roles.party(Role::P2)).clone(),
            with(roles.party(Role::P1)).clone(),
        ),
    })
}

/// bin3 shares of bits as the rep3 sharing with components `β`, `α` and `x ⊕ α ⊕ β` (local).
pub(crate) fn to_rep3_bits(roles: Roles, me: PartyId, x: &Bin3Vec<Bits>) -> Rep3Vec<Bits> {
    let comp = |p: PartyId| -> Vec<Bits> {
        match x.role {
            // The component shared with P3 is my second one; with the other, their sum.
            Role::P1 | Role::P2 if p == roles.party(Role::P3) => x.b.clone(),
            Role::P1 | Role::P2 => xor(&x.a, &x.b),
            Role::P3 if p == roles.party(Role::P2) => x.a.clone(),
            Role::P3 => x.b.clone(),
        }
    };
    Rep3Vec::from_parts(me, comp(prev(me)), comp(next(me)))
}

/// rep3's shared bits as bin3's, for bin3's one-round multi-fan-in gates (local: no message).
/// Every party passes the same `roles`; [`to_rep3`] converts back.
pub fn from_rep3(roles: Roles, x: &SharedBits) -> Result<super::Bin3Bits, Error> {
    Ok(crate::sharing::Packed { n: x.n, words: from_rep3_bits(roles, &x.words)? })
}

/// bin3's shared bits as rep3's (local: no message).
pub fn to_rep3(roles: Roles, me: PartyId, x: &super::Bin3Bits) -> SharedBits {
    SharedBits { n: x.n, words: to_rep3_bits(roles, me, &x.words) }
}

impl<T: Transport, B: BorrowMut<Rep3<T>>> Bin3<T, B> {
    /// The first round: every group's needed `G` and `P` (in group order, `G` before `P`).
    async fn first_round(
        &mut self,
        groups: &[Group],
        a: Option<&[Bits]>,
        b: Option<&[Bits]>,
        w: usize,
    ) -> Result<Vec<Bin3Vec<Bits>>, Error> {
        let role = self.role();
        let mono: usize = groups.iter().map(|g| (1usize << g.len) - 1).sum::<usize>() * w;
        let outs: usize = groups.iter().map(Group::outputs).sum::<usize>() * w;
        let op = self.ctx_mut().next_op();
        self.ctx_mut().round();
        let prg = |s: &Self, with: Role, purpose| s.pair_prg(with, op, purpose);
        let split =
            |v: Vec<Bits>| -> Vec<Vec<Bits>> { v.chunks(w.max(1)).map(<[_]>::to_vec).collect() };
        if role == Role::P3 {
            let a = a.ok_or_else(|| Error::ApiMisuse("msb: P3 without its addend".into()))?;
            let m: Vec<Bits> = groups.iter().flat_map(|g| monomials(a, w, g)).collect();
            for (to, key, purpose) in
                [(Role::P1, Role::P2, stream::M31), (Role::P2, Role::P1, stream::M32)]
            {
                let mut masked = draw(&mut prg(self, key, purpose), mono);
                kernels::add_assign(&mut masked, &m);
                self.send(to, &masked)?;
            }
            let alpha = split(draw(&mut prg(self, Role::P2, stream::M21), outs));
            let beta = split(draw(&mut prg(self, Role::P1, stream::M12), outs));
            return Ok(alpha
                .into_iter()
                .zip(beta)
                .map(|(a, b)| Bin3Vec::from_parts(role, a, b))
                .collect());
        }
        let b = b.ok_or_else(|| Error::ApiMisuse("msb: P1 or P2 without its addend".into()))?;
        // P1's masks are on its key with P3 (β, ρ′), P2's on its key with P3 (α, ρ).
        let (rho, mine, to) = match role {
            Role::P1 => (stream::M32, stream::M12, Role::P2),
            _ => (stream::M31, stream::M21, Role::P1),
        };
        let rho = draw(&mut prg(self, Role::P3, rho), mono);
        let mask = draw(&mut prg(self, Role::P3, mine), outs);
        // Each output's coefficients and where its group's monomials lie in the messages.
        let polys: Vec<(Vec<Bits>, core::ops::Range<usize>)> = groups
            .iter()
            .scan(0, |at, g| {
                let (gen, prop) = coefficients(b, w, g);
                let span = *at..*at + ((1usize << g.len) - 1) * w;
                *at = span.end;
                Some(
                    [(g.g, gen), (g.p, prop)]
                        .into_iter()
                        .filter(|x| x.0)
                        .map(move |x| (x.1, span.clone())),
                )
            })
            .flatten()
            .collect();
        let mut u = Vec::with_capacity(outs);
        for ((c, span), m) in polys.iter().zip(mask.chunks(w.max(1))) {
            u.extend(xor(m, &apply(c, &rho[span.clone()], w, false)));
        }
        self.send(to, &u)?;
        let t = self.recv(Role::P3, mono).await?;
        let from = self.recv(to, outs).await?;
        let mut shares = Vec::with_capacity(polys.len());
        for (((c, span), m), v) in
            polys.iter().zip(mask.chunks(w.max(1))).zip(from.chunks(w.max(1)))
        {
            let first = xor(&apply(c, &t[span.clone()], w, true), v);
            shares.push(Bin3Vec::from_parts(role, first, m.to_vec()));
        }
        Ok(shares)
    }
}

/// The most significant bits of several rep3-shared vectors, on bin3 gates (see the module
/// documentation); the results are rep3-shared.
pub(crate) async fn msb_many<T: Transport, R: IntRing>(
    rep: &mut Rep3<T>,
    fan: FanIn,
    xs: &[&Rep3Vec<R>],
) -> Result<Vec<SharedBits>, Error> {
    let k = R::BITS as usize;
    let me = rep.me();
    let ws: Vec<usize> = xs.iter().map(|x| words(x.len())).collect();
    let w: usize = ws.iter().sum();
    if w == 0 {
        // Nothing to compare: no round, as on two-input gates.
        return Ok(xs
            .iter()
            .map(|_| SharedBits { n: 0, words: Rep3Vec::from_parts(me, vec![], vec![]) })
            .collect());
    }
    let c = fan.roles.party(Role::P3);
    // P3's addend `a = x_C + x_{C+1}`; the others' `b = x_{C+2}`: next(C)'s second
    // component, prev(C)'s first.
    let planes = |f: &dyn Fn(&Rep3Vec<R>) -> Vec<R>| {
        let mut out = vec![Bits(0); k * w];
        let mut off = 0;
        for (x, wx) in xs.iter().zip(&ws) {
            to_planes_into(&f(x), &mut out, w, off);
            off += wx;
        }
        out
    };
    let (a, b) = if me == c {
        (Some(planes(&|x| x.a.iter().zip(&x.b).map(|(p, q)| *p + *q).collect())), None)
    } else if me == next(c) {
        (None, Some(planes(&|x| x.b.clone())))
    } else {
        (None, Some(planes(&|x| x.a.clone())))
    };
    let groups = first_level(k, fan.group);
    let mut b3 = Bin3::borrowing(rep, fan.roles);
    let mut first = b3.first_round(&groups, a.as_deref(), b.as_deref(), w).await?.into_iter();
    let mut missing = || first.next().ok_or_else(|| Error::ApiMisuse("msb: a group lost".into()));
    // Nodes low to high: (G, P), P absent for the lowest.
    let mut nodes = Vec::with_capacity(groups.len());
    for g in &groups[..groups.len() - 1] {
        let gen = missing()?;
        nodes.push((gen, if g.p { Some(missing()?) } else { None }));
    }
    let top = missing()?;
    while nodes.len() > 1 {
        let l = fan.fan_in;
        let mut gates: Vec<Vec<&Bin3Vec<Bits>>> = Vec::new();
        for (run, m) in runs(nodes.len(), l).filter(|&(_, m)| m > 1) {
            let nd = &nodes[run * l..run * l + m];
            let prop =
                |j: usize| nd[j].1.as_ref().ok_or_else(|| Error::ApiMisuse("msb: a P lost".into()));
            for (i, (gen, _)) in nd[..m - 1].iter().enumerate() {
                let mut gate = vec![gen];
                for j in i + 1..m {
                    gate.push(prop(j)?);
                }
                gates.push(gate);
            }
            if run > 0 {
                gates.push((0..m).map(prop).collect::<Result<_, _>>()?);
            }
        }
        let refs: Vec<&[&Bin3Vec<Bits>]> = gates.iter().map(|g| &g[..]).collect();
        let mut out = b3.mul_layer(&refs).await?.into_iter();
        let mut take = || out.next().ok_or_else(|| Error::ApiMisuse("msb: a gate lost".into()));
        let mut next_nodes = Vec::with_capacity(nodes.len().div_ceil(l));
        for (run, m) in runs(nodes.len(), l) {
            let nd = &nodes[run * l..run * l + m];
            if m == 1 {
                next_nodes.push(nd[0].clone());
                continue;
            }
            let mut gen = nd[m - 1].0.clone();
            for _ in 0..m - 1 {
                gen = gen.add(&take()?)?;
            }
            next_nodes.push((gen, if run > 0 { Some(take()?) } else { None }));
        }
        nodes = next_nodes;
    }
    let msb = top.add(&nodes[0].0)?;
    let rep3 = to_rep3_bits(fan.roles, me, &msb);
    let ns = xs.iter().map(|x| x.len());
    Ok(rep3.split(&ws).into_iter().zip(ns).map(|(words, n)| SharedBits { n, words }).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The polynomials expand `G` and `P` of a group exactly, for every `a` and `b` of 4 bits.
    #[test]
    fn coefficients_expand_the_carry_signals() {
        let g = Group { lo: 0, len: 4, g: true, p: true };
        for av in 0u64..16 {
            for bv in 0u64..16 {
                let bit = |v: u64, i: usize| Bits(if (v >> i) & 1 == 1 { !0 } else { 0 });
                let a: Vec<Bits> = (0..4).map(|i| bit(av, i)).collect();
                let b: Vec<Bits> = (0..4).map(|i| bit(bv, i)).collect();
                let (gen, prop) = coefficients(&b, 1, &g);
                let m = monomials(&a, 1, &g);
                let got_g = apply(&gen, &m, 1, true)[0].0 & 1;
                let got_p = apply(&prop, &m, 1, true)[0].0 & 1;
                // Carry out of position 3 of a + b, and whether all four positions propagate.
                let want_g = u64::from((av + bv) >> 4 & 1 == 1);
                let want_p = u64::from(av ^ bv == 15);
                assert_eq!((got_g, got_p), (want_g, want_p), "a {av} b {bv}");
            }
        }
    }

    #[test]
    fn the_cost_follows_the_plan() {
        let f = FanIn::default();
        // 63 positions: 16 groups (15 of 4, one of 3), 2 levels of fan-in 4.
        assert_eq!(f.msb_cost(64).rounds, 3);
        assert_eq!(FanIn::new(Roles::default(), 8, 8).unwrap().msb_cost(64).rounds, 2);
        assert_eq!(FanIn::new(Roles::default(), 1, 2).unwrap().msb_cost(64).rounds, 1 + 6);
        assert!(FanIn::new(Roles::default(), 9, 4).is_err());
        assert!(FanIn::new(Roles::default(), 4, 1).is_err());
    }
}
