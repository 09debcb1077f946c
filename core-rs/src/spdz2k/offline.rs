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
//! * **Bit triples** (the binary instance's): TinyOT's (`spdz2k/tinyot.rs`), converted by the
//!   S&P 2019 paper's Fig. 2 (`Generator::bit_triples`).
//! * **Random bits** (the paper's Π_RandBit): in an instance of `k + 2` value bits, `a = 2u + 1`
//!   for a random `u`, `a²` by a triple, `e = a²` opened and MAC-checked, `c` the canonical
//!   square root of `e`, and `(c^−1·a + 1) / 2` halved share by share.
//! * **Input masks**: the owner's random value authenticated with the others' zero shares;
//!   **check masks**: everyone's random shares authenticated.
//!
//! Arithmetic is in machine words reduced to the instance's width ([`Word`]): `u128` for
//! k = s = 32 (triples sacrificed in 64 + 32 bits, random bits in 34 + 32), [`super::word::U256`]
//! for k = s = 64 (sacrificed in 128 + 64 bits, random bits in 66 + 64, their triples in
//! 130 + 64).

mod edabits;
pub use edabits::EDA_BATCH;

use super::check::{
    coin_toss, commit_and_open, mac_check, open_logged, recv_bits, recv_rows, send_bits, send_rows,
    settle, Log,
};
use super::stock::{Kind, Stock};
use super::tinyot;
use super::word::{Word, U192};
use crate::net::{Ctx, PartyId, Roster, Transport};
use crate::ot::{base, BaseOts, Cot, Tccr, KAPPA};
use crate::prg::{Prg, Seed};
use crate::progress::Progress;
use crate::ring::Z64;
use crate::sharing::View;
use crate::Error;

/// Authenticated shares of an instance of any widths, as words mod 2^(v+s).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Wide<W = u128> {
    pub(crate) x: Vec<W>,
    pub(crate) m: Vec<W>,
}

impl<W> Wide<W> {
    /// `o`'s shares after these (batches of one request).
    pub(crate) fn append(&mut self, o: Self) {
        self.x.extend(o.x);
        self.m.extend(o.m);
    }

    /// Shares `at..`, leaving the first `at`.
    pub(crate) fn split_off(&mut self, at: usize) -> Self {
        Self { x: self.x.split_off(at), m: self.m.split_off(at) }
    }

    /// The first `n` shares (all, if fewer), leaving the rest.
    pub(crate) fn split_front(&mut self, n: usize) -> Self {
        let n = n.min(self.x.len());
        let (rx, rm) = (self.x.split_off(n), self.m.split_off(n));
        Self { x: core::mem::replace(&mut self.x, rx), m: core::mem::replace(&mut self.m, rm) }
    }
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

/// Bit triples made in one run of TinyOT at least (smaller batches need larger buckets; a
/// draw of fewer leaves the rest in the stock) and at most (memory stays bounded).
pub const BIT_TRIPLE_BATCH: std::ops::RangeInclusive<usize> = 4096..=16_384;

/// Random combinations in the check of the conversion from TinyOT (the paper's σ): a wrong
/// input passes with probability 2^−σ.
const CONVERSION_CHECKS: usize = 64;
// Each input's coins χ_l are one u64: a bit per check ([`tinyot::ABits::combinations`]).
const _: () = assert!(CONVERSION_CHECKS == 64);

/// Triples made in one run of the protocol: memory stays bounded (about 13 kB a triple at
/// k = s = 32) and large requests run as several.
pub const TRIPLE_BATCH: usize = 2048;

/// Correlated-OT rows hashed at a time: their hashes stay in cache until used.
const HASH_CHUNK: usize = 4096;

/// Fills `out` with the PRG expansion of a vector OLE key for this batch, each element drawn in
/// the `⌈bits/8⌉` bytes that count (`bytes` is scratch).
fn expand<W: Word>(seed: &Seed, batch: u64, bits: u32, bytes: &mut Vec<u8>, out: &mut [W]) {
    let (width, size) = (bits.div_ceil(8) as usize, core::mem::size_of::<W>());
    // Each element is read as a whole word from its offset (an unaligned load of fixed size)
    // and reduced: the tail pads the last one's read.
    bytes.resize(out.len() * width + size, 0);
    let n = out.len() * width;
    Prg::new(seed, batch, 0x2c).fill_bytes(&mut bytes[..n]);
    for (i, x) in out.iter_mut().enumerate() {
        *x = bytemuck::pod_read_unaligned::<W>(&bytes[i * width..i * width + size]).reduce(bits);
    }
}

/// One party's generator: its OT extension with every peer and the vector OLE of its key.
pub struct Generator<W = u128> {
    s: u32,
    alpha: W,
    cot: Cot,
    /// Per peer (by index): as the key holder, the base-OT keys of this party's key bits.
    held: Vec<Vec<Seed>>,
    /// Per peer: as a value's owner, both keys of each of the peer's key bits.
    pairs: Vec<Vec<[Seed; 2]>>,
    batches: u64,
    tccr: Tccr,
    /// Material made ahead ([`Generator::make_ahead`]), drawn first by [`Generator::take`].
    stock: Stock<W>,
    /// Draws that found the stock short and made the rest then.
    made_on_demand: u64,
    /// A deviation for tests ([`super::Spdz2k::deviate_in_edabits_for_test`]): this party
    /// flips bit `i` of its part of edaBit candidate `c` before authenticating the bits.
    pub(crate) eda_deviation: Option<(usize, u32)>,
    /// Where a caller reads how far a request has come.
    progress: Progress,
}

impl<W> core::fmt::Debug for Generator<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Generator(s = {}, {} batches)", self.s, self.batches)
    }
}

impl<W: Word> Generator<W> {
    /// Base OTs with every peer (one round): `Δ` for the OT extension and the `s` bits of
    /// `alpha` for authentication, as this party's choices.
    pub(crate) async fn setup<T: Transport>(
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        alpha: W,
        s: u32,
        progress: Progress,
    ) -> Result<Self, Error> {
        let me = ctx.me();
        let delta = u128::random(own, 1, 128)[0];
        let mut choices: Vec<bool> = (0..KAPPA).map(|l| delta >> l & 1 == 1).collect();
        choices.extend((0..s).map(|l| alpha.bit(l)));
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
        Ok(Self {
            s,
            alpha,
            cot,
            held,
            pairs,
            batches: 0,
            tccr: Tccr::default(),
            stock: Stock::default(),
            made_on_demand: 0,
            eda_deviation: None,
            progress,
        })
    }

    /// Reports this generator's work to `p` from now on.
    pub(crate) fn set_progress(&mut self, p: Progress) {
        self.progress = p;
    }

    /// `n` items of `kind`, made now.
    async fn make<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        kind: Kind,
        n: usize,
    ) -> Result<Vec<Wide<W>>, Error> {
        self.progress.start(kind.label(), n);
        let made = match kind {
            Kind::Triples(1) => self.bit_triples(ctx, roster, own, n).await?.into(),
            Kind::Triples(k) => self.triples(ctx, roster, own, k, n).await?.into(),
            Kind::RandBits(1) => vec![self.binary_bits(ctx, roster, own, n).await?],
            Kind::RandBits(k) => vec![self.rand_bits(ctx, roster, own, k, n).await?],
            Kind::EdaBits(k) => self.eda_bits(ctx, roster, own, k, n).await?,
            Kind::Random(wd) => vec![self.random_values(ctx, roster, own, wd, n).await?],
            Kind::Masks(wd, owner) => vec![self.input_masks(ctx, roster, own, wd, owner, n).await?],
        };
        self.progress.finish();
        Ok(made)
    }

    /// `n` items of `kind` into the stock, for draws to come.
    pub(crate) async fn make_ahead<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        kind: Kind,
        n: usize,
    ) -> Result<(), Error> {
        if n > 0 {
            let parts = self.make(ctx, roster, own, kind, n).await?;
            self.stock.put(kind, parts);
        }
        Ok(())
    }

    /// `n` items of `kind`: the stock's first, the rest made now (one component per element of
    /// the result: three for triples).
    pub(crate) async fn take<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        kind: Kind,
        n: usize,
    ) -> Result<Vec<Wide<W>>, Error> {
        self.stock.count(kind, n);
        let mut got = self.stock.take(kind, n);
        let have = got[0].x.len();
        if have < n {
            self.made_on_demand += 1;
            let mut more = self.make(ctx, roster, own, kind, n - have).await?;
            got.iter_mut().zip(&mut more).for_each(|(g, m)| g.append(m.split_front(n - have)));
            // Bit triples come in whole batches: the rest waits for the next draws.
            if !more[0].x.is_empty() {
                self.stock.put(kind, more);
            }
        }
        Ok(got)
    }

    /// Draws that found the stock short (and made the rest then).
    pub(crate) fn made_on_demand(&self) -> u64 {
        self.made_on_demand
    }

    /// Items of every kind drawn so far.
    pub(crate) fn drawn(&self) -> &[(Kind, usize)] {
        self.stock.drawn()
    }

    /// MAC shares of `values` (this party's additive shares) in an instance of widths `wd`,
    /// with ΠAuth's check. Each party sends every other `s` elements per value (and per check
    /// mask), the `l`-th in `v + s − l` bits (it counts times 2^l); seven rounds with the check.
    pub(crate) async fn authenticate<T: Transport, P: Word>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        wd: Widths,
        values: &[P],
    ) -> Result<Vec<P>, Error> {
        if wd.s != self.s || wd.w() > P::BITS {
            return Err(Error::ApiMisuse(format!("authentication in an instance of {wd:?}")));
        }
        if values.is_empty() {
            return Ok(Vec::new());
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
        // The key share has s bits: the same in any word.
        let alpha = P::from_u128(self.alpha.low_u128());
        let mut xs: Vec<P> = values.iter().map(|&x| x.reduce(w)).collect();
        // The check's mask: one more random value, authenticated alike, never used otherwise.
        xs.extend(P::random(own, 1, w));
        let n = xs.len();
        self.batches += 1;
        let batch = self.batches;
        let mut mac: Vec<P> = xs.iter().map(|&x| alpha.wrapping_mul(x)).collect();
        // Element l is used times 2^l mod 2^w: its low w − l bits are all that count.
        let widths: Vec<u32> = (0..self.s).map(|l| w - l).collect();
        let (mut t0, mut t1, mut bytes) = (vec![P::ZERO; n], vec![P::ZERO; n], Vec::new());
        ctx.round();
        for peer in roster.others(me) {
            let mut u = Vec::with_capacity(self.s as usize * n);
            for (l, [k0, k1]) in self.pairs[peer.index()].iter().enumerate() {
                expand(k0, batch, widths[l], &mut bytes, &mut t0);
                expand(k1, batch, widths[l], &mut bytes, &mut t1);
                for ((&t0, &t1), (&x, mac)) in t0.iter().zip(&t1).zip(xs.iter().zip(&mut mac)) {
                    u.push(t0.wrapping_sub(t1).wrapping_add(x).reduce(widths[l]));
                    *mac = mac.wrapping_sub(t0.shl(l as u32));
                }
            }
            send_rows(ctx, peer, &widths, &u)?;
        }
        for peer in roster.others(me) {
            let u: Vec<P> = recv_rows(ctx, peer, &widths, n).await?;
            for ((l, k), u) in self.held[peer.index()].iter().enumerate().zip(u.chunks_exact(n)) {
                expand(k, batch, widths[l], &mut bytes, &mut t0);
                let bit = alpha.bit(l as u32);
                for ((&t, &u), mac) in t0.iter().zip(u).zip(&mut mac) {
                    *mac = mac.wrapping_add(t.wrapping_add(u.and_mask(bit)).shl(l as u32));
                }
            }
        }
        mac.iter_mut().for_each(|m| *m = m.reduce(w));
        let outcome = Self::auth_check(ctx, roster, own, (wd, alpha), &xs, &mac).await;
        settle(ctx, roster, outcome).await?;
        mac.pop();
        Ok(mac)
    }

    /// ΠAuth's check: coins `χ` after the batch; `y = x_0 + Σ χ_h x_h` opened whole (the mask
    /// `x_0` hides it); every party commits to `z_j = m_0j + Σ χ_h m_hj − α_j·y` and to the
    /// digest of the `y_j` it received, then opens; the `z_j` must sum to zero.
    async fn auth_check<T: Transport, P: Word>(
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        (wd, alpha): (Widths, P),
        xs: &[P],
        mac: &[P],
    ) -> Result<(), Error> {
        let (me, w) = (ctx.me(), wd.w());
        let op = ctx.next_op();
        let seed = coin_toss(ctx, roster, own, op).await?;
        let n = xs.len() - 1;
        let chi = P::random(&mut Prg::new(&seed, op, 0), n, wd.s);
        let comb = |v: &[P]| {
            let sum = chi.iter().zip(v).fold(v[n], |a, (&c, &x)| a.wrapping_add(c.wrapping_mul(x)));
            sum.reduce(w)
        };
        let mine = comb(xs);
        ctx.round();
        for peer in roster.others(me) {
            send_bits(ctx, peer, w, &[mine])?;
        }
        let mut ys = vec![P::ZERO; roster.n()];
        ys[me.index()] = mine;
        for peer in roster.others(me) {
            ys[peer.index()] = recv_bits::<T, P>(ctx, peer, w, 1).await?[0];
        }
        let y = ys.iter().fold(P::ZERO, |a, &b| a.wrapping_add(b)).reduce(w);
        let z = comb(mac).wrapping_sub(alpha.wrapping_mul(y)).reduce(w);
        let mut seen = View::new("auth check", op);
        let mut words: Vec<Z64> = Vec::new();
        ys.iter().for_each(|v| v.push_words(&mut words));
        seen.absorb(&words);
        let digest = seen.words();
        let mut payload = Vec::new();
        z.push_words(&mut payload);
        payload.extend_from_slice(&digest);
        let opened = commit_and_open(ctx, roster, op, "auth check", own, payload).await?;
        let mut total = P::ZERO;
        for (j, p) in opened.iter().enumerate() {
            if p[P::WORDS..] != digest[..] {
                return Err(Error::Abort {
                    blame: Some(PartyId(j as u8)),
                    reason: format!("P{j} saw other authentication checks than {me}"),
                });
            }
            total = total.wrapping_add(P::from_words(&p[..P::WORDS]));
        }
        if total.reduce(w) != P::ZERO {
            return Err(Error::Abort {
                blame: None,
                reason: "the authentication check failed: a party's vector OLE inputs disagree"
                    .into(),
            });
        }
        Ok(())
    }

    /// Authenticated random values of an instance: every party's random shares.
    pub(crate) async fn random_values<T: Transport, P: Word>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        wd: Widths,
        n: usize,
    ) -> Result<Wide<P>, Error> {
        let x = P::random(own, n, wd.w());
        let m = self.authenticate(ctx, roster, own, wd, &x).await?;
        Ok(Wide { x, m })
    }

    /// Input masks of an instance for `owner`: its random values (their low `v` bits are the
    /// masks' values), the others' zero shares, authenticated.
    async fn input_masks<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        wd: Widths,
        owner: PartyId,
        n: usize,
    ) -> Result<Wide<W>, Error> {
        let x = if ctx.me() == owner { W::random(own, n, wd.w()) } else { vec![W::ZERO; n] };
        let m = self.authenticate(ctx, roster, own, wd, &x).await?;
        Ok(Wide { x, m })
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
    ) -> Result<[Wide<W>; 3], Error> {
        let mut out: [Wide<W>; 3] = Default::default();
        let mut left = n;
        while left > 0 {
            let m = left.min(TRIPLE_BATCH);
            let batch = self.triple_batch(ctx, roster, own, k, m).await?;
            for (o, b) in out.iter_mut().zip(batch) {
                o.append(b);
            }
            left -= m;
            self.progress.advance(m);
        }
        Ok(out)
    }

    /// One batch of [`Generator::triples`]: authenticated and sacrificed in the narrowest
    /// word that holds `k + 2s` bits.
    async fn triple_batch<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        k: u32,
        n: usize,
    ) -> Result<[Wide<W>; 3], Error> {
        let sac = k + 2 * self.s;
        if sac > W::BITS {
            return Err(Error::ApiMisuse(format!(
                "triples for k = {k}, s = {} are sacrificed in {sac} bits: more than {}",
                self.s,
                W::BITS
            )));
        }
        if sac <= U192::BITS && U192::BITS < W::BITS {
            self.triple_batch_in::<U192, T>(ctx, roster, own, k, n).await
        } else {
            self.triple_batch_in::<W, T>(ctx, roster, own, k, n).await
        }
    }

    /// [`Generator::triple_batch`] in words `Q`.
    async fn triple_batch_in<Q: Word, T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        k: u32,
        n: usize,
    ) -> Result<[Wide<W>; 3], Error> {
        let s = self.s;
        let vt = k + s;
        let sac = Widths { v: vt, s };
        // The products and their combinations count only mod 2^(k+s) (what is authenticated
        // next is a value of k + s bits; its shares' upper bits are free): in u128 where that
        // fits, so at k = s = 64 the τ products of a triple and their coins take fewer words
        // than the sacrifice's 192-bit arithmetic.
        let mut vals = if vt <= u128::BITS {
            self.combined::<u128, Q, T>(ctx, roster, own, k, n).await?
        } else {
            self.combined::<Q, Q, T>(ctx, roster, own, k, n).await?
        };
        vals.push(Q::random(own, 1, sac.w())[0]);
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
        let narrow = |p: Wide<Q>| Wide {
            x: p.x.iter().map(|&x| W::widen(x.reduce(k + s))).collect(),
            m: p.m.iter().map(|&m| W::widen(m.reduce(k + s))).collect(),
        };
        Ok([narrow(a), narrow(bb), narrow(cc)])
    }

    /// The first half of a triple batch: `n` triples' `τ` OT products each, combined twice
    /// with public coins drawn after the products are fixed. Returns this party's shares of
    /// `a, b, c, â, ĉ` (`n` of each, in that order) mod 2^(k+s), computed in words `P`.
    async fn combined<P: Word, Q: Word, T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        k: u32,
        n: usize,
    ) -> Result<Vec<Q>, Error> {
        let vt = k + self.s;
        let me = ctx.me();
        let tau = (2 * k + 4 * self.s) as usize;
        let bits = own.bits(n * tau);
        let b = P::random(own, n, vt);
        let ext = self.cot.extend(ctx, own, &bits).await?;
        self.batches += 1;
        let batch = u128::from(self.batches);
        let tweak = |from: PartyId, to: PartyId, o: usize| {
            batch << 64 | u128::from(from.0) << 56 | u128::from(to.0) << 48 | o as u128
        };
        // c_o = a_o·b: the own products, then the cross products with every peer. Arithmetic
        // mod 2^BITS throughout (reduced where it leaves); selection by a bit branch-free.
        // Hashed in chunks so that the hashes stay in cache and no batch-sized copies exist.
        let mut c: Vec<P> = (0..n * tau).map(|o| b[o / tau].and_mask(bits[o])).collect();
        let delta = self.cot.delta();
        let (mut h0, mut h1): (Vec<P>, Vec<P>) = (Vec::new(), Vec::new());
        ctx.round();
        for peer in roster.others(me) {
            let q = &ext.sent[peer.index()];
            let mut d = Vec::with_capacity(n * tau);
            for (i, rows) in q.chunks(HASH_CHUNK).enumerate() {
                let at = i * HASH_CHUNK;
                self.hash_words(vt, |o| tweak(me, peer, at + o), rows, 0, &mut h0);
                self.hash_words(vt, |o| tweak(me, peer, at + o), rows, delta, &mut h1);
                for (o, ((&m0, &m1), c)) in h0.iter().zip(&h1).zip(&mut c[at..]).enumerate() {
                    d.push(m0.wrapping_sub(m1).wrapping_add(b[(at + o) / tau]).reduce(vt));
                    *c = c.wrapping_sub(m0);
                }
            }
            send_bits(ctx, peer, vt, &d)?;
        }
        for peer in roster.others(me) {
            let d: Vec<P> = recv_bits(ctx, peer, vt, n * tau).await?;
            let t = &ext.received[peer.index()];
            for (i, rows) in t.chunks(HASH_CHUNK).enumerate() {
                let at = i * HASH_CHUNK;
                self.hash_words(vt, |o| tweak(peer, me, at + o), rows, 0, &mut h0);
                for (((c, &m), &d), &bit) in
                    c[at..].iter_mut().zip(&h0).zip(&d[at..]).zip(&bits[at..])
                {
                    *c = c.wrapping_add(m).wrapping_add(d.and_mask(bit));
                }
            }
        }
        drop(ext);
        // Two combinations with public coins of k + s bits, drawn per triple into one buffer
        // (the whole batch's coins would be tens of MB, mapped and faulted in every batch).
        let op = ctx.next_op();
        let g = coin_toss(ctx, roster, own, op).await?;
        let mut coins = Prg::new(&g, op, 1);
        let mut r = vec![P::ZERO; 2 * tau];
        let mut vals = vec![Q::ZERO; 5 * n];
        for t in 0..n {
            let span = t * tau..(t + 1) * tau;
            coins.fill_bytes(bytemuck::cast_slice_mut(&mut r));
            let (r1, r2) = r.split_at(tau);
            let (mut a1, mut c1, mut a2, mut c2) = (P::ZERO, P::ZERO, P::ZERO, P::ZERO);
            for ((&bit, &c), (&x, &y)) in
                bits[span.clone()].iter().zip(&c[span]).zip(r1.iter().zip(r2))
            {
                a1 = a1.wrapping_add(x.and_mask(bit));
                a2 = a2.wrapping_add(y.and_mask(bit));
                c1 = c1.wrapping_add(x.wrapping_mul(c));
                c2 = c2.wrapping_add(y.wrapping_mul(c));
            }
            for (i, v) in [a1, b[t], c1, a2, c2].into_iter().enumerate() {
                vals[i * n + t] = Q::widen(v.reduce(vt));
            }
        }
        Ok(vals)
    }

    /// Checks `(a, b, c)` against `(â, b, ĉ)` with public random `t`: `ρ = t·a − â` opened,
    /// `σ = t·c − ĉ − ρ·b` opened and zero, then the MAC check of both openings with `mask`.
    #[allow(clippy::too_many_arguments)]
    async fn sacrifice<T: Transport, Q: Word>(
        &self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        wd: Widths,
        [a, b, c]: [&Wide<Q>; 3],
        [ah, ch]: [&Wide<Q>; 2],
        mask: (Q, Q),
    ) -> Result<(), Error> {
        let w = wd.w();
        let op = ctx.next_op();
        let seed = coin_toss(ctx, roster, own, op).await?;
        // Coins of the sacrifice's width (every use reduces to it).
        let t = Q::random(&mut Prg::new(&seed, op, 2), a.x.len(), w);
        let lin = |p: &[Q], q: &[Q]| -> Vec<Q> {
            t.iter()
                .zip(p.iter().zip(q))
                .map(|(&t, (&p, &q))| t.wrapping_mul(p).wrapping_sub(q).reduce(w))
                .collect()
        };
        // The key share has s bits: the same in any word.
        let mut log = Log::new(wd.v, wd.s, Q::from_u128(self.alpha.low_u128()));
        let mut public = View::new("sacrifice", op);
        let rho =
            open_logged(ctx, roster, &mut log, &mut public, &lin(&a.x, &ah.x), &lin(&a.m, &ah.m))
                .await?;
        let sig = |cs: &[Q], chs: &[Q], bs: &[Q]| -> Vec<Q> {
            lin(cs, chs)
                .iter()
                .zip(rho.iter().zip(bs))
                .map(|(&v, (&r, &b))| v.wrapping_sub(r.wrapping_mul(b)).reduce(w))
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
        if let Some(i) = sigma.iter().position(|&s| s != Q::ZERO) {
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

    /// At least `n` triples of the binary instance (k = 1): TinyOT triples ([`super::tinyot`])
    /// converted by the S&P 2019 paper's Fig. 2, in runs of [`BIT_TRIPLE_BATCH`]. Each party's
    /// shares of the three bits (and of `σ` random bits more) are authenticated as its additive
    /// shares in `1 + s` bits (their sum is the XOR mod 2); after the coins, `σ` combinations
    /// `r_j ⊕ ⊕ χ_lj·b_l` are opened both as TinyOT bits (MAC-checked under `Δ`) and in the
    /// instance (MAC-checked under `α`), and must agree: a party that authenticated other
    /// bits than its TinyOT shares passes with probability 2^−σ.
    pub(crate) async fn bit_triples<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        n: usize,
    ) -> Result<[Wide<W>; 3], Error> {
        let mut out: [Wide<W>; 3] = Default::default();
        let mut made = 0;
        while made < n {
            let m = (n - made).clamp(*BIT_TRIPLE_BATCH.start(), *BIT_TRIPLE_BATCH.end());
            let batch = self.bit_triple_batch(ctx, roster, own, m).await?;
            for (o, b) in out.iter_mut().zip(batch) {
                o.append(b);
            }
            made += m;
            self.progress.advance(m);
        }
        Ok(out)
    }

    /// One run of [`Generator::bit_triples`].
    async fn bit_triple_batch<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        m: usize,
    ) -> Result<[Wide<W>; 3], Error> {
        let triples = self.tiny_triples(ctx, roster, own, m).await?;
        let mut all = self.convert(ctx, roster, own, &tinyot::ABits::concat(&triples)).await?;
        let (c, b) = (all.split_off(2 * m), all.split_off(m));
        Ok([all, b, c])
    }

    /// `m` TinyOT bit triples ([`tinyot::Run::triples`]), a run of their own.
    pub(crate) async fn tiny_triples<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        m: usize,
    ) -> Result<[tinyot::ABits; 3], Error> {
        self.batches += 1;
        let mut run = tinyot::Run { cot: &mut self.cot, tccr: &self.tccr, batch: self.batches };
        run.triples(ctx, roster, own, m).await
    }

    /// TinyOT bits converted into the binary instance by the S&P 2019 paper's Fig. 2. Each
    /// party's shares of `tiny` (and of `σ` random bits more) are authenticated as its
    /// additive shares in `1 + s` bits (their sum is the XOR mod 2); after the coins, `σ`
    /// combinations `r_j ⊕ ⊕ χ_lj·b_l` are opened both as TinyOT bits (MAC-checked under `Δ`)
    /// and in the instance (MAC-checked under `α`), and must agree: a party that authenticated
    /// other bits than its TinyOT shares passes with probability 2^−σ.
    pub(crate) async fn convert<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        tiny: &tinyot::ABits,
    ) -> Result<Wide<W>, Error> {
        let spare = tinyot::random(&mut self.cot, ctx, own, CONVERSION_CHECKS).await?;
        let wd = Widths { v: 1, s: self.s };
        // In u128 words: the instance has 1 + s ≤ 65 bits.
        let mut vals: Vec<u128> =
            tiny.bits.iter().chain(&spare.bits).map(|&v| u128::from(v)).collect();
        // The check's mask in the instance: a random value, never a bit.
        vals.push(u128::random(own, 1, wd.w())[0]);
        let macs = self.authenticate(ctx, roster, own, wd, &vals).await?;
        let inputs = tiny.len();

        let op = ctx.next_op();
        let seed = coin_toss(ctx, roster, own, op).await?;
        let mut chi = vec![0u64; inputs];
        Prg::new(&seed, op, 0).fill_bytes(bytemuck::cast_slice_mut(&mut chi));
        let combined = spare.xor(&tiny.combinations(&chi));
        let (mut cx, mut cm) = (
            vals[inputs..inputs + CONVERSION_CHECKS].to_vec(),
            macs[inputs..inputs + CONVERSION_CHECKS].to_vec(),
        );
        for (l, &c) in chi.iter().enumerate() {
            let mut bits = c;
            while bits != 0 {
                let j = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                cx[j] = cx[j].wrapping_add(vals[l]);
                cm[j] = cm[j].wrapping_add(macs[l]);
            }
        }
        let as_tiny = tinyot::open(ctx, roster, self.cot.delta(), &combined).await?;
        let mut log = Log::new(1, self.s, self.alpha.low_u128());
        let mut public = View::new("bit conversion", op);
        let reduce =
            |v: Vec<u128>| -> Vec<u128> { v.into_iter().map(|x| x.reduce(wd.w())).collect() };
        let (cx, cm) = (reduce(cx), reduce(cm));
        let as_auth = open_logged(ctx, roster, &mut log, &mut public, &cx, &cm).await?;
        let mask = (vals[inputs + CONVERSION_CHECKS], macs[inputs + CONVERSION_CHECKS]);
        mac_check(ctx, roster, own, public, &mut [(&mut log, Some(mask))]).await?;
        let agree = as_tiny.iter().zip(&as_auth).all(|(&t, a)| a.bit(0) == t);
        let outcome = if agree {
            Ok(())
        } else {
            Err(Error::Abort {
                blame: None,
                reason: "bit conversion: a party authenticated other bits than its TinyOT shares"
                    .into(),
            })
        };
        settle(ctx, roster, outcome).await?;
        let widen = |v: &[u128]| v[..inputs].iter().map(|&x| W::from_u128(x)).collect();
        Ok(Wide { x: widen(&vals), m: widen(&macs) })
    }

    /// `n` random bits of the binary instance: TinyOT's random bits, converted.
    async fn binary_bits<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        n: usize,
    ) -> Result<Wide<W>, Error> {
        let tiny = tinyot::random(&mut self.cot, ctx, own, n).await?;
        self.convert(ctx, roster, own, &tiny).await
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
    ) -> Result<Wide<W>, Error> {
        let mut out = Wide::<W>::default();
        let mut left = n;
        while left > 0 {
            let m = left.min(BIT_BATCH);
            out.append(self.bit_batch(ctx, roster, own, k, m).await?);
            left -= m;
            self.progress.advance(m);
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
    ) -> Result<Wide<W>, Error> {
        let me = ctx.me();
        let s = self.s;
        let wd = Widths { v: k + 2, s };
        let w = wd.w();
        let first = me == PartyId(0);
        let alpha = self.alpha;
        let [x, y, z] = self.triples(ctx, roster, own, k + 2, n).await?;
        let u: Wide<W> = self.random_values(ctx, roster, own, wd, n + 1).await?;
        // a = 2u + 1 (the constant at party 0's value share, α_j·1 at every MAC share).
        let one = W::from_u128(1);
        let first_one = one.and_mask(first);
        let a = Wide {
            x: u.x[..n].iter().map(|&v| v.shl(1).wrapping_add(first_one).reduce(w)).collect(),
            m: u.m[..n].iter().map(|&m| m.shl(1).wrapping_add(alpha).reduce(w)).collect(),
        };
        let mask = (u.x[n], u.m[n]);
        let op = ctx.next_op();
        let mut log = Log::new(wd.v, s, alpha);
        let mut public = View::new("random bits", op);
        let sub = |p: &[W], q: &[W]| -> Vec<W> {
            p.iter().zip(q).map(|(&p, &q)| p.wrapping_sub(q).reduce(w)).collect()
        };
        let mut ex = sub(&a.x, &x.x);
        ex.extend(sub(&a.x, &y.x));
        let mut em = sub(&a.m, &x.m);
        em.extend(sub(&a.m, &y.m));
        let opened = open_logged(ctx, roster, &mut log, &mut public, &ex, &em).await?;
        let (eps, del) = opened.split_at(n);
        // a² = z + ε·y + δ·x + εδ.
        let square = |zs: &[W], ys: &[W], xs: &[W], constant: &dyn Fn(W) -> W| -> Vec<W> {
            (0..n)
                .map(|i| {
                    zs[i]
                        .wrapping_add(eps[i].wrapping_mul(ys[i]))
                        .wrapping_add(del[i].wrapping_mul(xs[i]))
                        .wrapping_add(constant(eps[i].wrapping_mul(del[i])))
                        .reduce(w)
                })
                .collect()
        };
        let sq_x = square(&z.x, &y.x, &x.x, &|c| c.and_mask(first));
        let sq_m = square(&z.m, &y.m, &x.m, &|c| c.wrapping_mul(alpha));
        let e = open_logged(ctx, roster, &mut log, &mut public, &sq_x, &sq_m).await?;
        mac_check(ctx, roster, own, public, &mut [(&mut log, Some(mask))]).await?;
        let mut out = Wide { x: Vec::with_capacity(n), m: Vec::with_capacity(n) };
        for (i, &e) in e.iter().enumerate() {
            if e.reduce(3) != one {
                return Err(Error::Abort {
                    blame: None,
                    reason: format!("random bit {i}: the opened square is not 1 mod 8"),
                });
            }
            let c = sqrt_2k(e, wd.v);
            let ci = inverse_2k(c, w);
            // d = c^−1·a + 1, even share by share; halved, it shares the bit mod 2^(k+s).
            let dx = ci.wrapping_mul(a.x[i]).wrapping_add(first_one).reduce(w);
            let dm = ci.wrapping_mul(a.m[i]).wrapping_add(alpha).reduce(w);
            if dx.bit(0) || dm.bit(0) {
                return Err(Error::Abort {
                    blame: None,
                    reason: "random bits: an odd share".into(),
                });
            }
            out.x.push(dx.shr(1).reduce(k + s));
            out.m.push(dm.shr(1).reduce(k + s));
        }
        Ok(out)
    }

    /// Hashes of correlated-OT rows (each XORed with `flip` first) as words of at least
    /// `bits` bits, into `out`: one TCCR output (128 bits), or two under distinct tweaks where
    /// more are needed.
    fn hash_words<P: Word>(
        &self,
        bits: u32,
        tweak: impl Fn(usize) -> u128,
        rows: &[u128],
        flip: u128,
        out: &mut Vec<P>,
    ) {
        out.clear();
        self.tccr.hash_each(&tweak, rows, flip, |h| out.push(P::from_u128(h)));
        if bits > 128 {
            // Tweaks never reach bit 127 otherwise (the batch counter is far below 2^63).
            let mut hi = out.iter_mut();
            self.tccr.hash_each(
                |o| tweak(o) | 1 << 127,
                rows,
                flip,
                |h| {
                    let lo = hi.next().expect("one high half per row");
                    *lo = lo.wrapping_add(P::from_u128(h).shl(128));
                },
            );
        }
    }
}

/// The canonical (smallest) square root mod 2^bits of `e ≡ 1 (mod 8)`, `bits ≥ 3`.
pub(crate) fn sqrt_2k<W: Word>(e: W, bits: u32) -> W {
    let one = W::from_u128(1);
    let mut x = one;
    for i in 3..bits {
        if x.wrapping_mul(x).reduce(i + 1) != e.reduce(i + 1) {
            x = x.wrapping_add(one.shl(i - 1));
        }
    }
    let x = x.reduce(bits);
    let half = one.shl(bits - 1);
    let neg = W::ZERO.wrapping_sub(x).reduce(bits);
    let roots = [x, neg, x.wrapping_add(half).reduce(bits), neg.wrapping_add(half).reduce(bits)];
    // The smallest as an integer: compare from the top word down.
    roots.into_iter().fold(roots[0], |best, r| if less(r, best) { r } else { best })
}

/// `a < b` as unsigned integers.
fn less<W: Word>(a: W, b: W) -> bool {
    let (mut wa, mut wb) = (Vec::new(), Vec::new());
    a.push_words(&mut wa);
    b.push_words(&mut wb);
    wa.iter().rev().map(|w| w.0).lt(wb.iter().rev().map(|w| w.0))
}

/// `c^−1 mod 2^bits` for odd `c` (Newton: each step doubles the correct low bits).
pub(crate) fn inverse_2k<W: Word>(c: W, bits: u32) -> W {
    let two = W::from_u128(2);
    let mut y = c;
    for _ in 0..8 {
        y = y.wrapping_mul(two.wrapping_sub(c.wrapping_mul(y)));
    }
    y.reduce(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_roots_and_inverses_mod_powers_of_two() {
        fn check<W: Word>(bits: &[u32]) {
            let mut prg = Prg::new(&Seed::from_bytes([1; 32]), 0, 0);
            let one = W::from_u128(1);
            for &b in bits {
                for _ in 0..200 {
                    let a = W::random(&mut prg, 1, b)[0].shl(1).wrapping_add(one).reduce(b);
                    let e = a.wrapping_mul(a).reduce(b);
                    let c = sqrt_2k(e, b);
                    assert_eq!(c.wrapping_mul(c).reduce(b), e, "{b} bits");
                    // a = ±c mod 2^(b−1).
                    let (p, q) = (a.wrapping_sub(c).reduce(b - 1), a.wrapping_add(c).reduce(b - 1));
                    assert!(p == W::ZERO || q == W::ZERO, "{b} bits");
                    assert_eq!(c.wrapping_mul(inverse_2k(c, b)).reduce(b), one);
                }
            }
        }
        check::<u128>(&[5, 34, 66, 128]);
        check::<super::super::word::U256>(&[66, 130, 194, 256]);
    }
}
