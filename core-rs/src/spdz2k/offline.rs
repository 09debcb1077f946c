//! The parties' own preprocessing (no dealer), after Cramer, Damgård, Escudero, Scholl and
//! Xing (SPDZ2k, CRYPTO 2018) and the random bits of the S&P 2019 paper (Fig. 5).
//!
//! * **Setup**: base OTs with every peer ([`crate::ot::base`]), choosing this party's OT
//!   extension correlation `Δ` (128 bits) and its MAC key share `α_j` (`s` bits).
//! * **Authentication** (ΠAuth): each party's additive shares get MAC shares by a vector OLE
//!   per ordered pair: the key holder's base OTs fix the bits of `α_j`, so each batch is a PRG
//!   expansion and one message from the value's owner (`s` elements of `v + s` bits per value,
//!   "COPE"). A random linear combination of the batch, masked by one extra random value and
//!   opened whole, is then checked against the MACs: an owner that used different values for
//!   different key bits is caught.
//! * **Triples** for an instance of `k` value bits: each party draws `τ = 2k + 4s` random bits
//!   `a_h` and one `b` per triple; the cross products `a_h·b` come from correlated OT
//!   ([`crate::ot::Cot`]: the bits are the receiver's choices, `b` the sender's correlation);
//!   public random combinations give two triples `(a, b, c)`, `(â, b, ĉ)` with the same `b`
//!   (the combination removes what a cheating sender could learn of the `a_h` by a selective
//!   failure), authenticated in an instance of `k + s` value bits, where one sacrifices the
//!   other: `ρ = t·a − â` is opened, `σ = t·c − ĉ − ρ·b` must open to 0, and the MAC check
//!   runs over both openings. The survivor, reduced mod 2^(k+s), is a triple of the instance.
//! * **Random bits** (the paper's Π_RandBit): in an instance of `k + 2` value bits, `a = 2u + 1`
//!   for a random `u`, `a²` by a triple, `e = a²` opened and MAC-checked, `c` the canonical
//!   square root of `e`, and `(c^−1·a + 1) / 2` halved share by share.
//! * **Input masks**: the owner's random value authenticated with the others' zero shares;
//!   **check masks**: everyone's random shares authenticated.
//!
//! All arithmetic is in `u128` reduced to the instance's width, so the instances of k = s = 32
//! (triples sacrificed in 64 + 32 bits, random bits in 34 + 32) fit; k = s = 64 needs 192-bit
//! arithmetic for the sacrifice and is refused.

use super::check::{
    coin_toss, commit_and_open, mac_check, open_logged, recv_bits, reduce, send_bits, settle, Log,
};
use crate::net::{Ctx, PartyId, Roster, Transport};
use crate::ot::{base, BaseOts, Cot, Tccr, KAPPA};
use crate::prg::{Prg, Seed};
use crate::ring::Z64;
use crate::sharing::View;
use crate::Error;

/// Authenticated shares of an instance of any widths, as `u128` mod 2^(v+s).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Wide {
    pub(crate) x: Vec<u128>,
    pub(crate) m: Vec<u128>,
}

/// The widths of an instance: `v` value bits, `s` MAC bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Widths {
    pub(crate) v: u32,
    pub(crate) s: u32,
}

impl Widths {
    fn w(self) -> u32 {
        self.v + self.s
    }
}

/// Values authenticated in one vector OLE batch (its message holds `s` elements per value).
pub const AUTH_BATCH: usize = 16_384;

/// Random bits made in one run of Π_RandBit.
pub const BIT_BATCH: usize = 4096;

/// Triples made in one run of the protocol: memory stays bounded (about 13 kB a triple at
/// k = s = 32) and large requests run as several.
pub const TRIPLE_BATCH: usize = 4096;

fn random(own: &mut Prg, n: usize, bits: u32) -> Vec<u128> {
    let mut v = vec![0u128; n];
    own.fill_bytes(bytemuck::cast_slice_mut(&mut v));
    v.iter_mut().for_each(|x| *x = reduce(*x, bits));
    v
}

fn expand(seed: &Seed, batch: u64, n: usize) -> Vec<u128> {
    let mut v = vec![0u128; n];
    Prg::new(seed, batch, 0x2c).fill_bytes(bytemuck::cast_slice_mut(&mut v));
    v
}

/// One party's generator: its OT extension with every peer and the vector OLE of its key.
pub struct Generator {
    s: u32,
    alpha: u128,
    cot: Cot,
    /// Per peer (by index): as the key holder, the base-OT keys of this party's key bits.
    held: Vec<Vec<Seed>>,
    /// Per peer: as a value's owner, both keys of each of the peer's key bits.
    pairs: Vec<Vec<[Seed; 2]>>,
    batches: u64,
    tccr: Tccr,
}

impl core::fmt::Debug for Generator {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Generator(s = {}, {} batches)", self.s, self.batches)
    }
}

impl Generator {
    /// Base OTs with every peer (one round): `Δ` for the OT extension and the `s` bits of
    /// `alpha` for authentication, as this party's choices.
    pub(crate) async fn setup<T: Transport>(
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        alpha: u128,
        s: u32,
    ) -> Result<Self, Error> {
        let me = ctx.me();
        let delta = random(own, 1, 128)[0];
        let mut choices: Vec<bool> = (0..KAPPA).map(|l| delta >> l & 1 == 1).collect();
        choices.extend((0..s).map(|l| alpha >> l & 1 == 1));
        let peers: Vec<PartyId> = roster.others(me).collect();
        let tag = ctx.next_op();
        let count = KAPPA + s as usize;
        let ots = base::exchange(ctx, own, &peers, &choices, |_| count, tag).await?;
        let bases: Vec<(PartyId, &BaseOts)> = peers.iter().copied().zip(&ots).collect();
        let cot = Cot::new(delta, me, &bases, roster.n())?;
        let (mut held, mut pairs) = (vec![Vec::new(); roster.n()], vec![Vec::new(); roster.n()]);
        for (peer, o) in peers.iter().zip(ots) {
            held[peer.index()] = o.received[KAPPA..].to_vec();
            pairs[peer.index()] = o.sent[KAPPA..].to_vec();
        }
        Ok(Self { s, alpha, cot, held, pairs, batches: 0, tccr: Tccr::default() })
    }

    /// MAC shares of `values` (this party's additive shares) in an instance of widths `wd`,
    /// with ΠAuth's check. Each party sends every other `s` elements of `v + s` bits per
    /// value (and per check mask); seven rounds with the check.
    pub(crate) async fn authenticate<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        wd: Widths,
        values: &[u128],
    ) -> Result<Vec<u128>, Error> {
        if wd.s != self.s || wd.w() > 128 {
            return Err(Error::ApiMisuse(format!("authentication in an instance of {wd:?}")));
        }
        if values.len() > AUTH_BATCH {
            // One vector OLE message holds s elements per value: bounded batches.
            let mut macs = Vec::with_capacity(values.len());
            for chunk in values.chunks(AUTH_BATCH) {
                macs.extend(Box::pin(self.authenticate(ctx, roster, own, wd, chunk)).await?);
            }
            return Ok(macs);
        }
        let (me, w) = (ctx.me(), wd.w());
        let mut xs: Vec<u128> = values.iter().map(|&x| reduce(x, w)).collect();
        // The check's mask: one more random value, authenticated alike, never used otherwise.
        xs.extend(random(own, 1, w));
        let n = xs.len();
        self.batches += 1;
        let batch = self.batches;
        let mut mac: Vec<u128> = xs.iter().map(|&x| self.alpha.wrapping_mul(x)).collect();
        ctx.round();
        for peer in roster.others(me) {
            let mut u = Vec::with_capacity(self.s as usize * n);
            for (l, [k0, k1]) in self.pairs[peer.index()].iter().enumerate() {
                let (t0, t1) = (expand(k0, batch, n), expand(k1, batch, n));
                for i in 0..n {
                    u.push(reduce(t0[i].wrapping_sub(t1[i]).wrapping_add(xs[i]), w));
                    mac[i] = mac[i].wrapping_sub(t0[i] << l);
                }
            }
            send_bits(ctx, peer, w, &u)?;
        }
        for peer in roster.others(me) {
            let u = recv_bits(ctx, peer, w, self.s as usize * n).await?;
            for (l, k) in self.held[peer.index()].iter().enumerate() {
                let t = expand(k, batch, n);
                let bit = self.alpha >> l & 1 == 1;
                for i in 0..n {
                    let q = if bit { t[i].wrapping_add(u[l * n + i]) } else { t[i] };
                    mac[i] = mac[i].wrapping_add(q << l);
                }
            }
        }
        mac.iter_mut().for_each(|m| *m = reduce(*m, w));
        let outcome = self.auth_check(ctx, roster, own, wd, &xs, &mac).await;
        settle(ctx, roster, outcome).await?;
        mac.pop();
        Ok(mac)
    }

    /// ΠAuth's check: coins `χ` after the batch; `y = x_0 + Σ χ_h x_h` opened whole (the mask
    /// `x_0` hides it); every party commits to `z_j = m_0j + Σ χ_h m_hj − α_j·y` and to the
    /// digest of the `y_j` it received, then opens; the `z_j` must sum to zero.
    async fn auth_check<T: Transport>(
        &self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        wd: Widths,
        xs: &[u128],
        mac: &[u128],
    ) -> Result<(), Error> {
        let (me, w) = (ctx.me(), wd.w());
        let op = ctx.next_op();
        let seed = coin_toss(ctx, roster, own, op).await?;
        let n = xs.len() - 1;
        let mut chi = vec![0u128; n];
        Prg::new(&seed, op, 0).fill_bytes(bytemuck::cast_slice_mut(&mut chi));
        chi.iter_mut().for_each(|c| *c = reduce(*c, wd.s));
        let comb = |v: &[u128]| {
            let sum = chi.iter().zip(v).fold(v[n], |a, (&c, &x)| a.wrapping_add(c.wrapping_mul(x)));
            reduce(sum, w)
        };
        let mine = comb(xs);
        ctx.round();
        for peer in roster.others(me) {
            send_bits(ctx, peer, w, &[mine])?;
        }
        let mut ys = vec![0u128; roster.n()];
        ys[me.index()] = mine;
        for peer in roster.others(me) {
            ys[peer.index()] = recv_bits(ctx, peer, w, 1).await?[0];
        }
        let y = reduce(ys.iter().fold(0u128, |a, &b| a.wrapping_add(b)), w);
        let z = reduce(comb(mac).wrapping_sub(self.alpha.wrapping_mul(y)), w);
        let mut seen = View::new("auth check", op);
        seen.absorb(&ys.iter().map(|&v| crate::ring::Z128(v)).collect::<Vec<_>>());
        let digest = seen.words();
        let mut payload = vec![Z64(z as u64), Z64((z >> 64) as u64)];
        payload.extend_from_slice(&digest);
        let opened = commit_and_open(ctx, roster, op, "auth check", own, payload).await?;
        let mut total = 0u128;
        for (j, p) in opened.iter().enumerate() {
            if p[2..] != digest[..] {
                return Err(Error::Abort {
                    blame: Some(PartyId(j as u8)),
                    reason: format!("P{j} saw other authentication checks than {me}"),
                });
            }
            total = total.wrapping_add(u128::from(p[0].0) | u128::from(p[1].0) << 64);
        }
        if reduce(total, w) != 0 {
            return Err(Error::Abort {
                blame: None,
                reason: "the authentication check failed: a party's vector OLE inputs disagree"
                    .into(),
            });
        }
        Ok(())
    }

    /// Authenticated random values of an instance: every party's random shares.
    pub(crate) async fn random_values<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        wd: Widths,
        n: usize,
    ) -> Result<Wide, Error> {
        let x = random(own, n, wd.w());
        let m = self.authenticate(ctx, roster, own, wd, &x).await?;
        Ok(Wide { x, m })
    }

    /// Input masks of an instance for `owner`: its random values (which it returns, mod 2^v),
    /// the others' zero shares, authenticated.
    pub(crate) async fn input_masks<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        wd: Widths,
        owner: PartyId,
        n: usize,
    ) -> Result<(Wide, Option<Vec<u128>>), Error> {
        let mine = ctx.me() == owner;
        let x = if mine { random(own, n, wd.w()) } else { vec![0; n] };
        let m = self.authenticate(ctx, roster, own, wd, &x).await?;
        let values = mine.then(|| x.iter().map(|&r| reduce(r, wd.v)).collect());
        Ok((Wide { x, m }, values))
    }

    /// `n` multiplication triples of the instance of `k` value bits (and this generator's
    /// `s`): made by OT, combined, authenticated in `k + s` value bits and sacrificed there, in
    /// batches of at most [`TRIPLE_BATCH`] (a batch's OT rows take `τ·32` bytes per triple).
    pub(crate) async fn triples<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        k: u32,
        n: usize,
    ) -> Result<[Wide; 3], Error> {
        let mut out: [Wide; 3] = Default::default();
        let mut left = n;
        while left > 0 || n == 0 {
            let m = left.min(TRIPLE_BATCH);
            let batch = self.triple_batch(ctx, roster, own, k, m).await?;
            for (o, b) in out.iter_mut().zip(batch) {
                o.x.extend(b.x);
                o.m.extend(b.m);
            }
            left -= m;
            if n == 0 {
                break;
            }
        }
        Ok(out)
    }

    /// One batch of [`Generator::triples`].
    async fn triple_batch<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        k: u32,
        n: usize,
    ) -> Result<[Wide; 3], Error> {
        let s = self.s;
        let vt = k + s;
        let sac = Widths { v: vt, s };
        if sac.w() > 128 {
            return Err(Error::ApiMisuse(format!(
                "triples for k = {k}, s = {s} are sacrificed in {} bits: more than 128",
                sac.w()
            )));
        }
        let me = ctx.me();
        let tau = (2 * k + 4 * s) as usize;
        let bits: Vec<bool> = (0..n * tau).map(|_| own.next_u32() & 1 == 1).collect();
        let b = random(own, n, vt);
        let ext = self.cot.extend(ctx, own, &bits).await?;
        self.batches += 1;
        let batch = u128::from(self.batches);
        let tweak = |from: PartyId, to: PartyId, o: usize| {
            batch << 64 | u128::from(from.0) << 56 | u128::from(to.0) << 48 | o as u128
        };
        // c_o = a_o·b: the own products, then the cross products with every peer. Arithmetic
        // mod 2^128 throughout (reduced where it leaves); bits as all-zero/all-one masks.
        let ones: Vec<u128> = bits.iter().map(|&b| 0u128.wrapping_sub(u128::from(b))).collect();
        let mut c: Vec<u128> = (0..n * tau).map(|o| b[o / tau] & ones[o]).collect();
        let delta = self.cot.delta();
        ctx.round();
        for peer in roster.others(me) {
            let q = &ext.sent[peer.index()];
            let m0 = self.tccr.hash_all(|o| tweak(me, peer, o), q);
            let flipped: Vec<u128> = q.iter().map(|&q| q ^ delta).collect();
            let m1 = self.tccr.hash_all(|o| tweak(me, peer, o), &flipped);
            let mut d = Vec::with_capacity(n * tau);
            for (o, ((&m0, &m1), c)) in m0.iter().zip(&m1).zip(c.iter_mut()).enumerate() {
                d.push(reduce(m0.wrapping_sub(m1).wrapping_add(b[o / tau]), vt));
                *c = c.wrapping_sub(m0);
            }
            send_bits(ctx, peer, vt, &d)?;
        }
        for peer in roster.others(me) {
            let d = recv_bits(ctx, peer, vt, n * tau).await?;
            let m = self.tccr.hash_all(|o| tweak(peer, me, o), &ext.received[peer.index()]);
            for (((c, &m), &d), &one) in c.iter_mut().zip(&m).zip(&d).zip(&ones) {
                *c = c.wrapping_add(m).wrapping_add(d & one);
            }
        }
        // Two combinations with public coins drawn after the products are fixed.
        let op = ctx.next_op();
        let g = coin_toss(ctx, roster, own, op).await?;
        let mut r = vec![0u128; 2 * n * tau];
        Prg::new(&g, op, 1).fill_bytes(bytemuck::cast_slice_mut(&mut r));
        let (r1, r2) = r.split_at(n * tau);
        let mut vals = vec![0u128; 5 * n + 1];
        for t in 0..n {
            let span = t * tau..(t + 1) * tau;
            let (mut a1, mut c1, mut a2, mut c2) = (0u128, 0u128, 0u128, 0u128);
            for ((&one, &c), (&x, &y)) in ones[span.clone()]
                .iter()
                .zip(&c[span.clone()])
                .zip(r1[span.clone()].iter().zip(&r2[span]))
            {
                a1 = a1.wrapping_add(x & one);
                a2 = a2.wrapping_add(y & one);
                c1 = c1.wrapping_add(x.wrapping_mul(c));
                c2 = c2.wrapping_add(y.wrapping_mul(c));
            }
            vals[t] = reduce(a1, sac.w());
            vals[n + t] = b[t];
            vals[2 * n + t] = reduce(c1, sac.w());
            vals[3 * n + t] = reduce(a2, sac.w());
            vals[4 * n + t] = reduce(c2, sac.w());
        }
        vals[5 * n] = random(own, 1, sac.w())[0];
        let macs = self.authenticate(ctx, roster, own, sac, &vals).await?;
        let part = |i: usize| Wide {
            x: vals[i * n..(i + 1) * n].to_vec(),
            m: macs[i * n..(i + 1) * n].to_vec(),
        };
        let (a, bb, cc, ah, ch) = (part(0), part(1), part(2), part(3), part(4));
        self.sacrifice(
            ctx,
            roster,
            own,
            sac,
            [&a, &bb, &cc],
            [&ah, &ch],
            (vals[5 * n], macs[5 * n]),
        )
        .await?;
        let narrow = |p: Wide| Wide {
            x: p.x.iter().map(|&x| reduce(x, k + s)).collect(),
            m: p.m.iter().map(|&m| reduce(m, k + s)).collect(),
        };
        Ok([narrow(a), narrow(bb), narrow(cc)])
    }

    /// Checks `(a, b, c)` against `(â, b, ĉ)` with public random `t`: `ρ = t·a − â` opened,
    /// `σ = t·c − ĉ − ρ·b` opened and zero, then the MAC check of both openings with `mask`.
    #[allow(clippy::too_many_arguments)]
    async fn sacrifice<T: Transport>(
        &self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        wd: Widths,
        [a, b, c]: [&Wide; 3],
        [ah, ch]: [&Wide; 2],
        mask: (u128, u128),
    ) -> Result<(), Error> {
        let w = wd.w();
        let op = ctx.next_op();
        let seed = coin_toss(ctx, roster, own, op).await?;
        let mut t = vec![0u128; a.x.len()];
        Prg::new(&seed, op, 2).fill_bytes(bytemuck::cast_slice_mut(&mut t));
        let lin = |p: &[u128], q: &[u128]| -> Vec<u128> {
            t.iter()
                .zip(p.iter().zip(q))
                .map(|(&t, (&p, &q))| reduce(t.wrapping_mul(p).wrapping_sub(q), w))
                .collect()
        };
        let mut log = Log::new(wd.v, wd.s, self.alpha);
        let mut public = View::new("sacrifice", op);
        let rho =
            open_logged(ctx, roster, &mut log, &mut public, &lin(&a.x, &ah.x), &lin(&a.m, &ah.m))
                .await?;
        let sig = |cs: &[u128], chs: &[u128], bs: &[u128]| -> Vec<u128> {
            lin(cs, chs)
                .iter()
                .zip(rho.iter().zip(bs))
                .map(|(&v, (&r, &b))| reduce(v.wrapping_sub(r.wrapping_mul(b)), w))
                .collect()
        };
        let sigma = open_logged(
            ctx,
            roster,
            &mut log,
            &mut public,
            &sig(&c.x, &ch.x, &b.x),
            &sig(&c.m, &ch.m, &b.m),
        )
        .await?;
        if let Some(i) = sigma.iter().position(|&s| s != 0) {
            return settle(
                ctx,
                roster,
                Err(Error::Abort {
                    blame: None,
                    reason: format!("triple {i} failed its sacrifice"),
                }),
            )
            .await;
        }
        mac_check(ctx, roster, own, public, &mut [(&mut log, Some(mask))]).await
    }

    /// `n` random bits of the instance of `k` value bits (Π_RandBit in `k + 2` value bits),
    /// in batches of at most [`BIT_BATCH`].
    pub(crate) async fn rand_bits<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        k: u32,
        n: usize,
    ) -> Result<Wide, Error> {
        let mut out = Wide::default();
        let mut left = n;
        while left > 0 {
            let m = left.min(BIT_BATCH);
            let b = self.bit_batch(ctx, roster, own, k, m).await?;
            out.x.extend(b.x);
            out.m.extend(b.m);
            left -= m;
        }
        Ok(out)
    }

    /// One batch of [`Generator::rand_bits`].
    async fn bit_batch<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        k: u32,
        n: usize,
    ) -> Result<Wide, Error> {
        let me = ctx.me();
        let s = self.s;
        let wd = Widths { v: k + 2, s };
        let w = wd.w();
        let first = me == PartyId(0);
        let alpha = self.alpha;
        let [x, y, z] = self.triples(ctx, roster, own, k + 2, n).await?;
        let u = self.random_values(ctx, roster, own, wd, n + 1).await?;
        // a = 2u + 1 (the constant at party 0's value share, α_j·1 at every MAC share).
        let a = Wide {
            x: u.x[..n]
                .iter()
                .map(|&v| reduce((v << 1).wrapping_add(u128::from(first)), w))
                .collect(),
            m: u.m[..n].iter().map(|&m| reduce((m << 1).wrapping_add(alpha), w)).collect(),
        };
        let mask = (u.x[n], u.m[n]);
        let op = ctx.next_op();
        let mut log = Log::new(wd.v, s, alpha);
        let mut public = View::new("random bits", op);
        let sub = |p: &[u128], q: &[u128]| -> Vec<u128> {
            p.iter().zip(q).map(|(&p, &q)| reduce(p.wrapping_sub(q), w)).collect()
        };
        let mut ex = sub(&a.x, &x.x);
        ex.extend(sub(&a.x, &y.x));
        let mut em = sub(&a.m, &x.m);
        em.extend(sub(&a.m, &y.m));
        let opened = open_logged(ctx, roster, &mut log, &mut public, &ex, &em).await?;
        let (eps, del) = opened.split_at(n);
        // a² = z + ε·y + δ·x + εδ.
        let square =
            |zs: &[u128], ys: &[u128], xs: &[u128], constant: &dyn Fn(u128) -> u128| -> Vec<u128> {
                (0..n)
                    .map(|i| {
                        let v = zs[i]
                            .wrapping_add(eps[i].wrapping_mul(ys[i]))
                            .wrapping_add(del[i].wrapping_mul(xs[i]))
                            .wrapping_add(constant(eps[i].wrapping_mul(del[i])));
                        reduce(v, w)
                    })
                    .collect()
            };
        let sq_x = square(&z.x, &y.x, &x.x, &|c| if first { c } else { 0 });
        let sq_m = square(&z.m, &y.m, &x.m, &|c| c.wrapping_mul(alpha));
        let e = open_logged(ctx, roster, &mut log, &mut public, &sq_x, &sq_m).await?;
        mac_check(ctx, roster, own, public, &mut [(&mut log, Some(mask))]).await?;
        let mut out = Wide { x: Vec::with_capacity(n), m: Vec::with_capacity(n) };
        for (i, &e) in e.iter().enumerate() {
            if e & 7 != 1 {
                return Err(Error::Abort {
                    blame: None,
                    reason: format!("random bit {i}: the opened square {e} is not 1 mod 8"),
                });
            }
            let c = sqrt_2k(e, wd.v);
            let ci = inverse_2k(c, w);
            // d = c^−1·a + 1, even share by share; halved, it shares the bit mod 2^(k+s).
            let dx = reduce(ci.wrapping_mul(a.x[i]).wrapping_add(u128::from(first)), w);
            let dm = reduce(ci.wrapping_mul(a.m[i]).wrapping_add(alpha), w);
            if dx & 1 == 1 || dm & 1 == 1 {
                return Err(Error::Abort {
                    blame: None,
                    reason: "random bits: an odd share".into(),
                });
            }
            out.x.push(reduce(dx >> 1, k + s));
            out.m.push(reduce(dm >> 1, k + s));
        }
        Ok(out)
    }
}

/// The canonical (smallest) square root mod 2^bits of `e ≡ 1 (mod 8)`, `bits ≥ 3`.
pub(crate) fn sqrt_2k(e: u128, bits: u32) -> u128 {
    let mut x = 1u128;
    for i in 3..bits {
        if reduce(x.wrapping_mul(x), i + 1) != reduce(e, i + 1) {
            x = x.wrapping_add(1 << (i - 1));
        }
    }
    let x = reduce(x, bits);
    let half = 1u128 << (bits - 1);
    let neg = reduce(x.wrapping_neg(), bits);
    [x, neg, reduce(x.wrapping_add(half), bits), reduce(neg.wrapping_add(half), bits)]
        .into_iter()
        .min()
        .unwrap_or(x)
}

/// `c^−1 mod 2^bits` for odd `c` (Newton: each step doubles the correct low bits).
pub(crate) fn inverse_2k(c: u128, bits: u32) -> u128 {
    let mut y = c;
    for _ in 0..7 {
        y = y.wrapping_mul(2u128.wrapping_sub(c.wrapping_mul(y)));
    }
    reduce(y, bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_roots_and_inverses_mod_powers_of_two() {
        let mut prg = Prg::new(&Seed::from_bytes([1; 32]), 0, 0);
        for bits in [5u32, 34, 66] {
            for _ in 0..200 {
                let a = reduce(u128::from(prg.next_u64()) << 3 | 1, bits) | 1;
                let e = reduce(a.wrapping_mul(a), bits);
                let c = sqrt_2k(e, bits);
                assert_eq!(reduce(c.wrapping_mul(c), bits), e, "{bits} bits");
                // a = ±c mod 2^(bits−1).
                let (p, q) =
                    (reduce(a.wrapping_sub(c), bits - 1), reduce(a.wrapping_add(c), bits - 1));
                assert!(p == 0 || q == 0, "{bits} bits");
                assert_eq!(reduce(c.wrapping_mul(inverse_2k(c, bits)), bits), 1);
            }
        }
    }
}
