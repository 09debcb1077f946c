//! TinyOT bit triples for `n ≥ 2` parties, all but one possibly corrupt: authenticated bits
//! straight from correlated OT, leaky ANDs checked under the parties' OT correlations, and
//! bucketing that removes the leakage — after Wang, Ranellucci and Katz ("Global-Scale Secure
//! Multiparty Computation", CCS 2017, the n-party leaky AND and its combination). The
//! generator converts the result into the binary SPDZ2k instance ([`super::offline`], the
//! S&P 2019 paper's Fig. 2).
//!
//! * **Authenticated bits** `⟨x⟩`: party `i` holds its share `x^i`, for every peer `j` a MAC
//!   `M_j[x^i] = K_j[x^i] ⊕ x^i·Δ_j` and a key `K_i[x^j]` for the peer's share, where `Δ_j` is
//!   `j`'s OT-extension correlation. One correlated OT per bit and peer ([`Cot::extend`] with
//!   the shares as choices: the receiver's row is the MAC, the sender's the key). XOR and
//!   products with public bits are local.
//! * **Leaky AND** of random `⟨x⟩`, `⟨y⟩`: each cross product `x^i·y^j` by a half-AND over `x^i`'s
//!   key (the sender `j` sends `lsb H(K) ⊕ lsb H(K ⊕ Δ_j) ⊕ y^j`), `z` authenticated as
//!   `⟨r⟩ ⊕ d` with `d^i = z^i ⊕ r^i` sent. The check: the shares `Φ_i` of `y·Δ` (`Δ = ⊕ Δ_i`)
//!   are computable locally from `y`'s MACs and keys, shares of `x·y·Δ` come by the same
//!   half-AND with 128-bit messages, shares of `z·Δ` from `z`'s MACs and keys; a coin-tossed
//!   combination of their sums is committed, opened and must be zero. A sender that deviates
//!   adds an error multiplied by the receiver's `x^i`: it passes only by guessing `x^i`, so `x`
//!   may leak (one bit per deviation, with probability 1/2 of an abort each) and `y`, `z` do not;
//!   a wrong `z` passes only by guessing `Δ`.
//! * **Bucketing**: `B` leaky triples per output, assigned by a coin-tossed permutation after
//!   they are fixed; for each member after the first `d = y_1 ⊕ y_m` is opened (MAC-checked) and
//!   `x ← x ⊕ x_m`, `z ← z ⊕ z_m ⊕ d·x_m`. The output's `x` is hidden unless every member's
//!   leaked; [`bucket_size`] picks `B` for the batch from that bound.
//!
//! Costs per output and peer, `B = 4`: `3B` correlated OTs, `B` bits and `B` 128-bit
//! half-AND messages each way, `B` bits of `d`, `B − 1` opened bits; against `2 + 4s` OT
//! products of `1 + s` bits for a triple of the binary instance by SPDZ2k's own protocol.

use crate::net::{Ctx, PartyId, Roster, Transport};
use crate::ot::{gf128, Cot, Tccr};
use crate::prg::{Prg, Seed};
use crate::ring::Z64;
use crate::sharing::View;
use crate::Error;

use super::check::{coin_toss, commit_and_open, settle};

/// Statistical security of the bucketing: an output whose `x` leaked has probability at most
/// `2^−BUCKET_STAT` per batch.
pub(crate) const BUCKET_STAT: f64 = 40.0;

/// This party's part of authenticated bits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ABits {
    /// Its shares.
    pub(crate) bits: Vec<bool>,
    /// Per peer (by index; empty for itself): its MACs under the peer's `Δ`.
    macs: Vec<Vec<u128>>,
    /// Per peer: its keys for the peer's shares.
    keys: Vec<Vec<u128>>,
}

fn spread(b: bool) -> u128 {
    0u128.wrapping_sub(u128::from(b))
}

impl ABits {
    fn empty(n: usize) -> Self {
        Self { bits: Vec::new(), macs: vec![Vec::new(); n], keys: vec![Vec::new(); n] }
    }

    pub(crate) fn len(&self) -> usize {
        self.bits.len()
    }

    /// Every array through `f` (the shares as `bits`, each peer's MACs and keys as `words`;
    /// a party's empty arrays for itself stay empty).
    fn map_arrays(
        &self,
        bits: impl Fn(&[bool]) -> Vec<bool>,
        words: impl Fn(&[u128]) -> Vec<u128>,
    ) -> Self {
        let each = |v: &Vec<Vec<u128>>| -> Vec<Vec<u128>> {
            v.iter().map(|p| if p.is_empty() { Vec::new() } else { words(p) }).collect()
        };
        Self { bits: bits(&self.bits), macs: each(&self.macs), keys: each(&self.keys) }
    }

    /// Items `range`.
    pub(crate) fn slice(&self, r: core::ops::Range<usize>) -> Self {
        self.map_arrays(|b| b[r.clone()].to_vec(), |w| w[r.clone()].to_vec())
    }

    /// `o`'s items after these.
    pub(crate) fn append(&mut self, o: &Self) {
        self.bits.extend_from_slice(&o.bits);
        for (mine, theirs) in
            self.macs.iter_mut().zip(&o.macs).chain(self.keys.iter_mut().zip(&o.keys))
        {
            mine.extend_from_slice(theirs);
        }
    }

    /// The items of every part in turn.
    pub(crate) fn concat(parts: &[Self]) -> Self {
        let mut out = Self::empty(parts.first().map_or(0, |p| p.macs.len()));
        parts.iter().for_each(|p| out.append(p));
        out
    }

    /// Items `idx`, in that order.
    pub(crate) fn gather(&self, idx: &[usize]) -> Self {
        self.map_arrays(
            |b| idx.iter().map(|&i| b[i]).collect(),
            |w| idx.iter().map(|&i| w[i]).collect(),
        )
    }

    /// 64 items: item `j` the XOR of the items `l` whose `chi[l]` has bit `j` set (local).
    pub(crate) fn combinations(&self, chi: &[u64]) -> Self {
        fn comb<T: Copy + Default + core::ops::BitXorAssign>(v: &[T], chi: &[u64]) -> Vec<T> {
            let mut acc = vec![T::default(); 64];
            for (&x, &c) in v.iter().zip(chi) {
                let mut bits = c;
                while bits != 0 {
                    acc[bits.trailing_zeros() as usize] ^= x;
                    bits &= bits - 1;
                }
            }
            acc
        }
        self.map_arrays(|b| comb(b, chi), |w| comb(w, chi))
    }

    /// `self ⊕= o`, item by item (local).
    pub(crate) fn xor_assign(&mut self, o: &Self) {
        self.bits.iter_mut().zip(&o.bits).for_each(|(a, &b)| *a ^= b);
        for (mine, theirs) in
            self.macs.iter_mut().zip(&o.macs).chain(self.keys.iter_mut().zip(&o.keys))
        {
            mine.iter_mut().zip(theirs).for_each(|(a, &b)| *a ^= b);
        }
    }

    /// `self ⊕ o`, item by item (local).
    pub(crate) fn xor(&self, o: &Self) -> Self {
        let mut out = self.clone();
        out.xor_assign(o);
        out
    }

    /// `self ∧ c` for public bits `c` (local).
    fn and_public(&self, c: &[bool]) -> Self {
        self.map_arrays(
            |b| b.iter().zip(c).map(|(&x, &c)| x & c).collect(),
            |w| w.iter().zip(c).map(|(&x, &c)| x & spread(c)).collect(),
        )
    }

    /// `self ⊕ c` for public bits `c` (local): party 0's shares flip, and every other party
    /// moves its key for party 0's share by its `Δ`, so that the MACs still hold.
    fn xor_public(&self, c: &[bool], me: PartyId, delta: u128) -> Self {
        let mut out = self.clone();
        if me == PartyId(0) {
            out.bits.iter_mut().zip(c).for_each(|(b, &c)| *b ^= c);
        } else {
            out.keys[0].iter_mut().zip(c).for_each(|(k, &c)| *k ^= spread(c) & delta);
        }
        out
    }

    /// `owner`'s shares alone, as a sharing of its bits: the other parties' shares, and their
    /// MACs and keys, zero (local).
    pub(crate) fn owned_by(&self, me: PartyId, owner: PartyId) -> Self {
        let zero = |v: &Vec<u128>| vec![0; v.len()];
        let mine = me == owner;
        Self {
            bits: if mine { self.bits.clone() } else { vec![false; self.bits.len()] },
            macs: self.macs.iter().map(|v| if mine { v.clone() } else { zero(v) }).collect(),
            keys: self
                .keys
                .iter()
                .enumerate()
                .map(|(q, v)| if q == owner.index() { v.clone() } else { zero(v) })
                .collect(),
        }
    }

    /// This party's share of `v·Δ` for every item (`Δ = ⊕ Δ_j`): `v^i·Δ_i ⊕ ⊕_j (K_i[v^j] ⊕
    /// M_j[v^i])`; the keys and MACs of each pair cancel in the sum, leaving `v^i·Δ_j` terms.
    fn times_delta(&self, delta: u128) -> Vec<u128> {
        let mut out: Vec<u128> = self.bits.iter().map(|&b| spread(b) & delta).collect();
        for (m, k) in self.macs.iter().zip(&self.keys).filter(|(m, _)| !m.is_empty()) {
            for ((o, m), k) in out.iter_mut().zip(m).zip(k) {
                *o ^= m ^ k;
            }
        }
        out
    }
}

/// `n` random authenticated bits: one correlated OT per bit with every peer (three rounds).
pub(crate) async fn random<T: Transport>(
    cot: &mut Cot,
    ctx: &mut Ctx<T>,
    own: &mut Prg,
    n: usize,
) -> Result<ABits, Error> {
    let bits = own.bits(n);
    authenticate(cot, ctx, own, bits).await
}

/// Authenticated bits whose shares are `bits` at this party (each party gives its own): one
/// correlated OT per bit with every peer, the shares as the choices (three rounds).
pub(crate) async fn authenticate<T: Transport>(
    cot: &mut Cot,
    ctx: &mut Ctx<T>,
    own: &mut Prg,
    bits: Vec<bool>,
) -> Result<ABits, Error> {
    let ext = cot.extend(ctx, own, &bits).await?;
    Ok(ABits { bits, macs: ext.received, keys: ext.sent })
}

/// `x ∧ y` by Beaver's method with the triple `(a, b, c)`: `d = x ⊕ a` and `e = y ⊕ b` opened
/// with their MACs checked (one round, absorbed into `seen` so that the parties can compare
/// what they saw), then `c ⊕ d·b ⊕ e·a ⊕ d·e` locally.
pub(crate) async fn and<T: Transport>(
    ctx: &mut Ctx<T>,
    roster: Roster,
    delta: u128,
    (x, y): (&ABits, &ABits),
    [a, b, c]: [ABits; 3],
    seen: &mut View,
) -> Result<ABits, Error> {
    let n = x.len();
    if y.len() != n || a.len() != n {
        return Err(Error::ApiMisuse(format!(
            "tinyot and: {n} and {} bits with {} triples",
            y.len(),
            a.len()
        )));
    }
    let opened = open(ctx, roster, delta, &ABits::concat(&[x.xor(&a), y.xor(&b)])).await?;
    seen.absorb(&pack(opened.iter().copied()));
    let (d, e) = opened.split_at(n);
    let de: Vec<bool> = d.iter().zip(e).map(|(&d, &e)| d & e).collect();
    Ok(c.xor(&b.and_public(d)).xor(&a.and_public(e)).xor_public(&de, ctx.me(), delta))
}

pub(crate) fn pack(bits: impl ExactSizeIterator<Item = bool>) -> Vec<Z64> {
    let mut w = vec![Z64(0); bits.len().div_ceil(64)];
    for (j, b) in bits.enumerate() {
        w[j / 64].0 |= u64::from(b) << (j % 64);
    }
    w
}

fn unpack(w: &[Z64], n: usize) -> Vec<bool> {
    (0..n).map(|j| w[j / 64].0 >> (j % 64) & 1 == 1).collect()
}

fn blocks_out(v: &[u128], out: &mut Vec<Z64>) {
    out.extend(v.iter().flat_map(|&x| [Z64(x as u64), Z64((x >> 64) as u64)]));
}

fn blocks_in(w: &[Z64]) -> Vec<u128> {
    w.chunks_exact(2).map(|p| u128::from(p[0].0) | u128::from(p[1].0) << 64).collect()
}

/// Opens `b` to every party with its MACs checked (one round): each party sends its shares
/// and a digest of its MACs under the receiver's `Δ`; the receiver compares it with the digest
/// of its keys corrected by the shares. A party whose MACs do not match is blamed.
pub(crate) async fn open<T: Transport>(
    ctx: &mut Ctx<T>,
    roster: Roster,
    delta: u128,
    b: &ABits,
) -> Result<Vec<bool>, Error> {
    let me = ctx.me();
    let op = ctx.next_op();
    let n = b.len();
    let digest = |from: PartyId, to: PartyId, macs: &[u128]| {
        let mut v = View::new("tinyot open", op);
        v.absorb(&[Z64(u64::from(from.0) << 8 | u64::from(to.0))]);
        let mut words = Vec::with_capacity(2 * macs.len());
        blocks_out(macs, &mut words);
        v.absorb(&words);
        v.words()
    };
    ctx.round();
    for peer in roster.others(me) {
        let mut msg = pack(b.bits.iter().copied());
        msg.extend(digest(me, peer, &b.macs[peer.index()]));
        ctx.send(peer, &msg)?;
    }
    let mut out = b.bits.clone();
    let mut outcome = Ok(());
    for peer in roster.others(me) {
        let w = n.div_ceil(64);
        let msg = ctx.recv::<Z64>(peer, w + 4).await?;
        let theirs = unpack(&msg[..w], n);
        let expect: Vec<u128> = b.keys[peer.index()]
            .iter()
            .zip(&theirs)
            .map(|(&k, &x)| k ^ (spread(x) & delta))
            .collect();
        if digest(peer, me, &expect) != msg[w..] && outcome.is_ok() {
            outcome = Err(Error::Abort {
                blame: Some(peer),
                reason: format!("{peer} opened authenticated bits with wrong MACs"),
            });
        }
        out.iter_mut().zip(theirs).for_each(|(o, t)| *o ^= t);
    }
    settle(ctx, roster, outcome).await?;
    Ok(out)
}

/// The tweak of a half-AND hash: batch, sender, receiver, purpose (0: the bit, 1: the block)
/// and item; bit 126 keeps them apart from the triple generation's.
fn tweak(batch: u64, from: PartyId, to: PartyId, purpose: u8) -> impl Fn(usize) -> u128 {
    move |t| {
        1 << 126
            | u128::from(batch) << 64
            | u128::from(from.0) << 56
            | u128::from(to.0) << 48
            | u128::from(purpose) << 40
            | t as u128
    }
}

/// One run of the triple generation: this party's correlated OTs, the hash, and the run's
/// fresh counter (it keys the hashes).
pub(crate) struct Run<'a> {
    pub(crate) cot: &'a mut Cot,
    pub(crate) tccr: &'a Tccr,
    pub(crate) batch: u64,
}

impl Run<'_> {
    /// `m` leaky AND triples (see the module's notes), checked; returns them with the check's
    /// coins (for the bucketing's permutation, drawn after the triples are fixed).
    async fn leaky_ands<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        m: usize,
    ) -> Result<([ABits; 3], Seed, u64), Error> {
        let (cot, tccr, batch) = (&mut *self.cot, self.tccr, self.batch);
        let me = ctx.me();
        let delta = cot.delta();
        let all = random(cot, ctx, own, 3 * m).await?;
        let (x, y, r) = (all.slice(0..m), all.slice(m..2 * m), all.slice(2 * m..3 * m));
        let phi = y.times_delta(delta);
        let mut z: Vec<bool> = x.bits.iter().zip(&y.bits).map(|(&a, &b)| a & b).collect();
        let mut xphi: Vec<u128> = x.bits.iter().zip(&phi).map(|(&a, &p)| spread(a) & p).collect();

        // Half-ANDs over each peer's x, as the sender: the bit y^i and the block Φ_i.
        ctx.round();
        for peer in roster.others(me) {
            let k0 = &x.keys[peer.index()];
            let (tb, tk) = (tweak(batch, me, peer, 0), tweak(batch, me, peer, 1));
            let (h0, h1) = (tccr.hash_all(&tb, k0, 0), tccr.hash_all(&tb, k0, delta));
            let (g0, g1) = (tccr.hash_all(&tk, k0, 0), tccr.hash_all(&tk, k0, delta));
            let mut msg = pack((0..m).map(|t| ((h0[t] ^ h1[t]) & 1 == 1) ^ y.bits[t]));
            let v: Vec<u128> = (0..m).map(|t| g0[t] ^ g1[t] ^ phi[t]).collect();
            blocks_out(&v, &mut msg);
            ctx.send(peer, &msg)?;
            for t in 0..m {
                z[t] ^= h0[t] & 1 == 1;
                xphi[t] ^= g0[t];
            }
        }
        // As the receiver over this party's x: H(M) ⊕ x^i·(message) is the sender's share plus
        // x^i times its input.
        let w = m.div_ceil(64);
        for peer in roster.others(me) {
            let msg = ctx.recv::<Z64>(peer, w + 2 * m).await?;
            let (u, v) = (unpack(&msg[..w], m), blocks_in(&msg[w..]));
            let mac = &x.macs[peer.index()];
            let h = tccr.hash_all(tweak(batch, peer, me, 0), mac, 0);
            let g = tccr.hash_all(tweak(batch, peer, me, 1), mac, 0);
            for t in 0..m {
                let xi = x.bits[t];
                z[t] ^= (h[t] & 1 == 1) ^ (xi & u[t]);
                xphi[t] ^= g[t] ^ (spread(xi) & v[t]);
            }
        }

        // z authenticated as r ⊕ d: d^i = z^i ⊕ r^i to every party.
        ctx.round();
        let d = pack(z.iter().zip(&r.bits).map(|(&a, &b)| a ^ b));
        for peer in roster.others(me) {
            ctx.send(peer, &d)?;
        }
        let mut zs = ABits { bits: z, macs: r.macs, keys: r.keys };
        for peer in roster.others(me) {
            let dp = unpack(&ctx.recv::<Z64>(peer, w).await?, m);
            for (k, d) in zs.keys[peer.index()].iter_mut().zip(dp) {
                *k ^= spread(d) & delta;
            }
        }

        // The check: Σ_t χ_t·(x·y·Δ ⊕ z·Δ)_t, shared, must be zero.
        let op = ctx.next_op();
        let seed = coin_toss(ctx, roster, own, op).await?;
        let mut chi = vec![0u128; m];
        Prg::new(&seed, op, 0).fill_bytes(bytemuck::cast_slice_mut(&mut chi));
        let h: Vec<u128> = zs.times_delta(delta).iter().zip(&xphi).map(|(a, b)| a ^ b).collect();
        let mut mine = Vec::with_capacity(2);
        blocks_out(&[gf128::dot(&chi, &h)], &mut mine);
        let opened = commit_and_open(ctx, roster, op, "leaky and", own, mine).await?;
        let sum = opened.iter().fold(0u128, |a, w| a ^ blocks_in(w)[0]);
        let outcome = if sum == 0 {
            Ok(())
        } else {
            Err(Error::Abort {
                blame: None,
                reason: "the leaky AND check failed: a party's half-AND messages were wrong".into(),
            })
        };
        settle(ctx, roster, outcome).await?;
        Ok(([x, y, zs], seed, op))
    }

    /// `n` bit triples `(⟨x⟩, ⟨y⟩, ⟨z⟩)`, `z = x·y`, from `n·B` checked leaky ANDs in buckets of
    /// [`bucket_size`].
    pub(crate) async fn triples<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        n: usize,
    ) -> Result<[ABits; 3], Error> {
        let b = bucket_size(n, BUCKET_STAT);
        let ([x, y, z], seed, op) = self.leaky_ands(ctx, roster, own, n * b).await?;
        let perm = permutation(&seed, op, n * b);
        // Member j of every bucket: bucket q's is perm[q·b + j].
        let member = |j: usize| -> Vec<usize> { (0..n).map(|q| perm[q * b + j]).collect() };
        let first = member(0);
        let others: Vec<Vec<usize>> = (1..b).map(member).collect();
        let y0 = y.gather(&first);
        let d: Vec<ABits> = others.iter().map(|o| y0.xor(&y.gather(o))).collect();
        let opened = open(ctx, roster, self.cot.delta(), &ABits::concat(&d)).await?;
        let (mut ox, mut oz) = (x.gather(&first), z.gather(&first));
        for (e, o) in others.iter().enumerate() {
            let xm = x.gather(o);
            oz.xor_assign(&z.gather(o));
            oz.xor_assign(&xm.and_public(&opened[e * n..(e + 1) * n]));
            ox.xor_assign(&xm);
        }
        Ok([ox, y0, oz])
    }
}

/// `ln C(a, b)`.
pub(crate) fn ln_choose(a: f64, b: usize) -> f64 {
    (0..b).map(|i| (a - i as f64).ln() - ((i + 1) as f64).ln()).sum()
}

/// The smallest bucket size `B ≥ 2` for which the bucketing of `n` outputs from `n·B` leaky
/// triples leaves an output's `x` leaked with probability at most `2^−stat`: an adversary that
/// attacks `t` triples passes the check with probability `2^−t`, and a given bucket lies among
/// them with probability `C(t, B) / C(nB, B)` (union over the `n` buckets, maximised over `t`).
pub(crate) fn bucket_size(n: usize, stat: f64) -> usize {
    let ln2 = core::f64::consts::LN_2;
    (2..)
        .find(|&b| {
            let total = (n * b) as f64;
            let ln_buckets = (n as f64).ln() - ln_choose(total, b);
            let worst = (b..=(n * b).min(b + 400))
                .map(|t| -(t as f64) * ln2 + (ln_buckets + ln_choose(t as f64, b)).min(0.0))
                .fold(f64::NEG_INFINITY, f64::max);
            worst <= -stat * ln2
        })
        .unwrap_or(usize::MAX)
}

/// A uniformly random permutation of `0..n` from public coins (Fisher–Yates).
pub(crate) fn permutation(seed: &Seed, op: u64, n: usize) -> Vec<usize> {
    let mut prg = Prg::new(seed, op, 1);
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        // The bias of a 64-bit draw reduced below i + 1 ≤ 2^32 is under 2^−32 per draw.
        let j = (prg.next_u64() % (i as u64 + 1)) as usize;
        p.swap(i, j);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_shrink_as_batches_grow() {
        assert_eq!(bucket_size(1, 40.0), 40);
        let sizes: Vec<usize> =
            [256, 1024, 4096, 16_384, 1 << 20].iter().map(|&n| bucket_size(n, 40.0)).collect();
        assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
        assert_eq!(bucket_size(4096, 40.0), 4, "{sizes:?}");
        assert_eq!(bucket_size(1 << 20, 40.0), 3, "{sizes:?}");
    }

    #[test]
    fn permutations_are_permutations() {
        let p = permutation(&Seed::from_bytes([5; 32]), 3, 1000);
        let mut s = p.clone();
        s.sort_unstable();
        assert_eq!(s, (0..1000).collect::<Vec<_>>());
        assert_ne!(p, s);
    }
}
