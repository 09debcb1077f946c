//! Preprocessing material of `spdz2k` and where it comes from ([`Source`]).
//!
//! Every unit is single-use: taking material moves it out of its store
//! ([`crate::sharing::Store`]). Material is function-independent (random triples, masks and
//! bits), so it can be made ahead of any input.

use super::offline::{Generator, Wide, Widths};
use super::stock::Kind;
use super::word::{Word, U256};
use super::{Auth, Mesh, Spdz2k, Spdz2kRing};
use crate::net::{Ctx, PartyId, Roster, Transport};
use crate::prg::Prg;
use crate::progress::Progress;
use crate::ring::{Z32, Z64};
use crate::sharing::{Linear, Store};
use crate::Error;

/// Multiplication triples `[a]`, `[b]`, `[c]` with `c ≡ a·b (mod 2^k)`, one per product.
#[derive(Debug)]
pub struct Triples<R: Spdz2kRing> {
    pub(crate) a: Auth<R>,
    pub(crate) b: Auth<R>,
    pub(crate) c: Auth<R>,
}

impl<R: Spdz2kRing> Store for Triples<R> {
    fn len(&self) -> usize {
        self.a.len()
    }
    fn take(&mut self, n: usize) -> Result<Self, Error> {
        let have = self.a.len();
        if n > have {
            return Err(Error::PreprocessingExhausted(format!(
                "{n} triples requested, {have} left"
            )));
        }
        let cut = |v: &mut Auth<R>| {
            let rest = v.slice(n..have);
            core::mem::replace(v, rest).slice(0..n)
        };
        Ok(Self { a: cut(&mut self.a), b: cut(&mut self.b), c: cut(&mut self.c) })
    }
}

/// A matrix triple: `[A]` (m×l), `[B]` (l×n), `[C]` with `C ≡ A·B (mod 2^k)`, row-major.
#[derive(Debug)]
pub struct MatTriple<R: Spdz2kRing> {
    pub(crate) dims: (usize, usize, usize),
    pub(crate) a: Auth<R>,
    pub(crate) b: Auth<R>,
    pub(crate) c: Auth<R>,
}

/// Input masks: random `[r]` whose values only their owner knows.
#[derive(Debug)]
pub struct InputMasks<R: Spdz2kRing> {
    pub(crate) r: Auth<R>,
    /// The mask values, at the owner only.
    pub(crate) values: Option<Vec<R>>,
}

/// Random authenticated bits `[b]`, `b ∈ {0, 1}` (the upper bits of the share sums are
/// arbitrary, as the paper's generation leaves them).
#[derive(Debug)]
pub struct RandBits<R: Spdz2kRing> {
    pub(crate) b: Auth<R>,
}

impl<R: Spdz2kRing> Store for RandBits<R> {
    fn len(&self) -> usize {
        self.b.len()
    }
    fn take(&mut self, n: usize) -> Result<Self, Error> {
        let have = self.b.len();
        if n > have {
            return Err(Error::PreprocessingExhausted(format!(
                "{n} random bits requested, {have} left"
            )));
        }
        let rest = self.b.slice(n..have);
        Ok(Self { b: core::mem::replace(&mut self.b, rest).slice(0..n) })
    }
}

/// edaBits: random `[r]` of the ring with its bits `[r_i]` in the binary instance (sharings
/// whose low bit is the bit), bit `i` of every value at `i·n..(i + 1)·n`.
#[derive(Debug)]
pub struct EdaBits<R: Spdz2kRing> {
    pub(crate) r: Auth<R>,
    pub(crate) bits: Auth<R>,
}

/// Where a party's preprocessing comes from.
#[derive(Debug)]
pub enum Source {
    /// The parties' own generation by OT ([`super::offline`]), set up on first use, one
    /// generator per key.
    Parties(Box<Generators>),
    /// A trusted dealer that every party simulates from one seed (tests only: it knows every
    /// secret, so it is no protocol).
    #[cfg(any(test, feature = "test-utils"))]
    Dealer(Dealer),
}

impl Source {
    /// The dealer's MAC key shares for `me`, where a dealer makes the material.
    #[cfg_attr(not(any(test, feature = "test-utils")), allow(unused_variables))]
    pub(crate) fn alphas(&self, me: PartyId) -> Option<(Z32, Z64)> {
        match self {
            Self::Parties(_) => None,
            #[cfg(any(test, feature = "test-utils"))]
            Self::Dealer(d) => Some((d.alpha_share::<Z32>(me), d.alpha_share::<Z64>(me))),
        }
    }

    /// The parties' own generation (the default).
    pub fn parties() -> Self {
        Self::Parties(Box::default())
    }
}

/// The parties' generators: k = s = 32's in `u128` words, k = s = 64's in 256-bit words.
#[derive(Debug, Default)]
pub struct Generators {
    pub(crate) z32: Option<Generator<u128>>,
    pub(crate) z64: Option<Generator<U256>>,
    /// What both generators report their work to.
    pub(crate) progress: Progress,
}

impl<W: Word> Wide<W> {
    /// The shares as ring `R`'s (already reduced to its `k + s` bits).
    fn into_ring<R: Spdz2kRing>(self) -> Auth<R> {
        Auth {
            x: self.x.into_iter().map(|w| R::wide_from_u128(w.low_u128())).collect(),
            m: self.m.into_iter().map(|w| R::wide_from_u128(w.low_u128())).collect(),
        }
    }
}

impl<R: Spdz2kRing> Triples<R> {
    fn from_parts<W: Word>(parts: Vec<Wide<W>>) -> Result<Self, Error> {
        let [a, b, c]: [Wide<W>; 3] = parts
            .try_into()
            .map_err(|p: Vec<_>| Error::ApiMisuse(format!("triples in {} parts", p.len())))?;
        Ok(Self { a: a.into_ring(), b: b.into_ring(), c: c.into_ring() })
    }
}

fn one_part<W>(parts: Vec<Wide<W>>) -> Result<Wide<W>, Error> {
    let n = parts.len();
    let mut parts = parts.into_iter();
    match (parts.next(), parts.next()) {
        (Some(w), None) => Ok(w),
        _ => Err(Error::ApiMisuse(format!("material in {n} parts, one expected"))),
    }
}

/// Material for ring `R`'s online phase, made ahead by [`Spdz2k::make_ahead`]: the draws of
/// the online phase take from it first, so that its rounds are the protocol's own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ahead {
    /// Multiplication triples.
    pub triples: usize,
    /// Bit triples (the binary instance's, under `R`'s key).
    pub bit_triples: usize,
    /// Random bits.
    pub rand_bits: usize,
    /// edaBits (a comparison's, an equality test's or a bit decomposition's mask).
    pub eda_bits: usize,
    /// Random bits of the binary instance (a comparison's output mask).
    pub binary_bits: usize,
    /// Random values (one per MAC check's mask).
    pub random: usize,
    /// Masks for one party's inputs and for the outputs opened to it: `(party, count)`.
    pub masks: Option<(PartyId, usize)>,
}

impl Ahead {
    /// What was drawn after `earlier` (counts of [`Spdz2k::drawn`]); masks are kept only
    /// when both name the same owner.
    pub fn since(&self, earlier: &Self) -> Self {
        let masks = match (self.masks, earlier.masks) {
            (Some((o, n)), Some((e, m))) if o == e => Some((o, n.saturating_sub(m))),
            (m, None) => m,
            _ => None,
        };
        Self {
            triples: self.triples.saturating_sub(earlier.triples),
            bit_triples: self.bit_triples.saturating_sub(earlier.bit_triples),
            rand_bits: self.rand_bits.saturating_sub(earlier.rand_bits),
            eda_bits: self.eda_bits.saturating_sub(earlier.eda_bits),
            binary_bits: self.binary_bits.saturating_sub(earlier.binary_bits),
            random: self.random.saturating_sub(earlier.random),
            masks,
        }
    }
}

impl<T: Transport> Spdz2k<T> {
    /// Makes `ahead` for ring `R` now, for the draws to come (the parties' generation; with
    /// the test dealer, whose draws cost nothing, it does nothing). Every party must ask for the
    /// same. Example, before a run of 100 MSBs at k = 32 whose every comparison finds its
    /// material made:
    ///
    /// ```ignore
    /// p.make_ahead::<Z32>(Ahead { eda_bits: 100, binary_bits: 100, bit_triples: 60 * 100, ..Ahead::default() }).await?;
    /// ```
    pub async fn make_ahead<R: Spdz2kRing>(&mut self, ahead: Ahead) -> Result<(), Error> {
        if !matches!(self.base.source, Source::Parties(_)) {
            return Ok(());
        }
        let wd = Widths { v: R::BITS, s: R::S };
        let (owner, masks) = ahead.masks.unwrap_or((PartyId(0), 0));
        let (g, ctx, roster, mut own) = self.generator::<R>("material ahead").await?;
        for (kind, n) in [
            (Kind::RandBits(R::BITS), ahead.rand_bits),
            (Kind::EdaBits(R::BITS), ahead.eda_bits),
            (Kind::RandBits(1), ahead.binary_bits),
            (Kind::Triples(1), ahead.bit_triples),
            (Kind::Triples(R::BITS), ahead.triples),
            (Kind::Random(wd), ahead.random),
            (Kind::Masks(wd, owner), masks),
        ] {
            g.make_ahead(ctx, roster, &mut own, kind, n).await?;
        }
        Ok(())
    }

    /// Ring `R`'s material drawn so far by this party's operations (from what was made ahead
    /// or made on demand), in the form [`Spdz2k::make_ahead`] takes: what a run drew, made ahead
    /// before the next run of the same operations, makes that run's online phase alone. Input
    /// masks are counted for the owner that drew the most. Zero with the test dealer.
    ///
    /// ```ignore
    /// let before = p.drawn::<Z64>();
    /// run(&mut p).await?;                             // draws as it goes
    /// p.make_ahead::<Z64>(p.drawn::<Z64>().since(&before)).await?;
    /// run(&mut p).await?;                             // online only
    /// ```
    pub fn drawn<R: Spdz2kRing>(&self) -> Ahead {
        let mut a = Ahead::default();
        // Irrefutable without the test dealer.
        #[allow(irrefutable_let_patterns)]
        let Source::Parties(g) = &self.base.source
        else {
            return a;
        };
        let drawn = if R::BITS == 32 {
            g.z32.as_ref().map_or(&[][..], Generator::drawn)
        } else {
            g.z64.as_ref().map_or(&[][..], Generator::drawn)
        };
        let wd = Widths { v: R::BITS, s: R::S };
        for &(kind, n) in drawn {
            match kind {
                Kind::Triples(1) => a.bit_triples += n,
                Kind::Triples(k) if k == R::BITS => a.triples += n,
                Kind::RandBits(k) if k == R::BITS => a.rand_bits += n,
                Kind::RandBits(1) => a.binary_bits += n,
                Kind::EdaBits(k) if k == R::BITS => a.eda_bits += n,
                Kind::Random(w) if w == wd => a.random += n,
                Kind::Masks(w, owner) if w == wd && a.masks.is_none_or(|(_, m)| m < n) => {
                    a.masks = Some((owner, n));
                }
                _ => {}
            }
        }
        a
    }

    /// Draws, of either ring, that found the material made ahead short and made the rest then
    /// (each a generation run inside the online phase). Zero with the test dealer.
    pub fn made_on_demand(&self) -> u64 {
        match &self.base.source {
            Source::Parties(g) => {
                g.z32.as_ref().map_or(0, Generator::made_on_demand)
                    + g.z64.as_ref().map_or(0, Generator::made_on_demand)
            }
            #[cfg(any(test, feature = "test-utils"))]
            Source::Dealer(_) => 0,
        }
    }

    /// The parties' generator for ring `R` (set up by base OTs with every peer on first use),
    /// with the links, the roster and a fresh stream of this party's randomness.
    async fn generator<R: Spdz2kRing>(
        &mut self,
        what: &str,
    ) -> Result<(&mut Generator<R::Word>, &mut Ctx<T>, Roster, Prg), Error> {
        let alpha = R::Word::from_u128(u128::from(R::alpha(self).to_u64()));
        let Mesh { ctx, roster, own, source } = &mut self.base;
        let op = ctx.next_op();
        let mut prg = Prg::new(own, op, 3);
        // Irrefutable without the test dealer.
        #[allow(irrefutable_let_patterns)]
        let Source::Parties(generators) = source
        else {
            return Err(Error::ApiMisuse(format!("spdz2k {what}: not the parties' generation")));
        };
        let progress = generators.progress.clone();
        let slot = R::generator(generators);
        if slot.is_none() {
            *slot = Some(Generator::setup(ctx, *roster, &mut prg, alpha, R::S, progress).await?);
        }
        let g = slot.as_mut().ok_or_else(|| Error::ApiMisuse("no generator".into()))?;
        Ok((g, ctx, *roster, prg))
    }

    /// Reports the parties' generation of material to `p` from now on: what it makes and how
    /// much of it is made, readable while a long setup runs (a dealer reports nothing).
    ///
    /// ```ignore
    /// let progress = Progress::default();
    /// session.report_progress_to(progress.clone());
    /// // elsewhere, while the setup runs:
    /// let r = progress.report();
    /// eprintln!("making {}: {} of {}", r.making, r.done, r.total);
    /// ```
    // Irrefutable without the test dealer.
    #[allow(irrefutable_let_patterns)]
    pub fn report_progress_to(&mut self, p: Progress) {
        if let Source::Parties(g) = &mut self.base.source {
            for gen in g.z32.iter_mut() {
                gen.set_progress(p.clone());
            }
            for gen in g.z64.iter_mut() {
                gen.set_progress(p.clone());
            }
            g.progress = p;
        }
    }

    /// `n` triples, for tests of the material itself.
    #[cfg(any(test, feature = "test-utils"))]
    pub async fn triples_for_test<R: Spdz2kRing>(
        &mut self,
        n: usize,
    ) -> Result<[Auth<R>; 3], Error> {
        let t = self.triples::<R>(n).await?;
        Ok([t.a, t.b, t.c])
    }

    /// `n` random bits, for tests of the material itself.
    #[cfg(any(test, feature = "test-utils"))]
    pub async fn rand_bits_for_test<R: Spdz2kRing>(&mut self, n: usize) -> Result<Auth<R>, Error> {
        Ok(self.rand_bits::<R>(n).await?.b)
    }

    /// `n` edaBits, opened: the values and their bits (bit `i` of all at `i·n..`), for tests
    /// of the material itself.
    #[cfg(any(test, feature = "test-utils"))]
    pub async fn eda_bits_for_test<R: Spdz2kRing>(
        &mut self,
        n: usize,
    ) -> Result<(Vec<R>, Vec<bool>), Error> {
        let EdaBits { r, bits } = self.eda_bits::<R>(n).await?;
        let r = crate::sharing::Arith::<R>::open(self, r).await?;
        let bits = crate::sharing::Gates::open_bits(self, self.bits_of(&bits)).await?;
        Ok((r, bits))
    }

    /// With `Some((candidate, bit))`, makes this party deviate in its next edaBits run as a
    /// corrupt party could: it authenticates bit `bit` of its part of candidate `candidate`
    /// flipped (its value unchanged). Every party calls it (the honest ones with `None`): it
    /// sets up the generator. For tests of the bucket check.
    #[cfg(any(test, feature = "test-utils"))]
    pub async fn deviate_in_edabits_for_test<R: Spdz2kRing>(
        &mut self,
        deviation: Option<(usize, u32)>,
    ) -> Result<(), Error> {
        let (g, ..) = self.generator::<R>("a deviation").await?;
        g.eda_deviation = deviation;
        Ok(())
    }

    /// `n` multiplication triples of ring `R`.
    pub(crate) async fn triples<R: Spdz2kRing>(&mut self, n: usize) -> Result<Triples<R>, Error> {
        match &mut self.base.source {
            Source::Parties(_) => {
                let (g, ctx, roster, mut own) = self.generator::<R>("triples").await?;
                let t = g.take(ctx, roster, &mut own, Kind::Triples(R::BITS), n).await?;
                Triples::from_parts(t)
            }
            #[cfg(any(test, feature = "test-utils"))]
            Source::Dealer(d) => Ok(d.triples(self.base.ctx.me(), n)),
        }
    }

    /// `n` bit triples under ring `R`'s key, as sharings whose low bit is the bit (above it,
    /// anything): TinyOT's, converted into the instance k = 1 under that key
    /// ([`Generator::bit_triples`]).
    pub(crate) async fn bit_triple_shares<R: Spdz2kRing>(
        &mut self,
        n: usize,
    ) -> Result<Triples<R>, Error> {
        match &mut self.base.source {
            Source::Parties(_) => {
                let (g, ctx, roster, mut own) = self.generator::<R>("bit triples").await?;
                Triples::from_parts(g.take(ctx, roster, &mut own, Kind::Triples(1), n).await?)
            }
            #[cfg(any(test, feature = "test-utils"))]
            Source::Dealer(d) => Ok(d.bit_triples(self.base.ctx.me(), n)),
        }
    }

    /// A matrix triple of ring `R` for an (m×l)·(l×n) product.
    pub(crate) async fn mat_triple<R: Spdz2kRing>(
        &mut self,
        dims: (usize, usize, usize),
    ) -> Result<MatTriple<R>, Error> {
        let (m, l, n) = dims;
        match &mut self.base.source {
            Source::Parties(_) => {
                // Random [A] and [B], and each of the m·l·n products A_it·B_tj by Beaver with
                // its own triple, summed over t: the openings are input-independent, so the
                // whole matrix triple is preprocessing and the online product opens only
                // X − A and Y − B. Product (i, j, t) sits at ((i·n + j)·l + t).
                let (a, b) = (self.random::<R>(m * l).await?, self.random::<R>(l * n).await?);
                let (mut ia, mut ib) =
                    (Vec::with_capacity(m * n * l), Vec::with_capacity(m * n * l));
                for i in 0..m {
                    for j in 0..n {
                        for t in 0..l {
                            ia.push(i * l + t);
                            ib.push(t * n + j);
                        }
                    }
                }
                let t = self.triples::<R>(m * n * l).await?;
                let p = self.beaver(&a.gather(&ia), &b.gather(&ib), t).await?;
                // An empty inner dimension makes C the m×n zeros.
                let c = if l == 0 { self.constant(&vec![R::ZERO; m * n]) } else { p.sum_runs(l) };
                Ok(MatTriple { dims, a, b, c })
            }
            #[cfg(any(test, feature = "test-utils"))]
            Source::Dealer(d) => Ok(d.mat_triple(self.base.ctx.me(), dims)),
        }
    }

    /// `n` input masks of ring `R` for `owner`.
    pub(crate) async fn input_masks<R: Spdz2kRing>(
        &mut self,
        owner: PartyId,
        n: usize,
    ) -> Result<InputMasks<R>, Error> {
        match &mut self.base.source {
            Source::Parties(_) => {
                let (g, ctx, roster, mut own) = self.generator::<R>("input masks").await?;
                let kind = Kind::Masks(Widths { v: R::BITS, s: R::S }, owner);
                let r = one_part(g.take(ctx, roster, &mut own, kind, n).await?)?;
                // The owner's share is the mask (the others' are zero).
                let values = (ctx.me() == owner)
                    .then(|| r.x.iter().map(|w| R::from_low_u128(w.low_u128())).collect());
                Ok(InputMasks { r: r.into_ring(), values })
            }
            #[cfg(any(test, feature = "test-utils"))]
            Source::Dealer(d) => Ok(d.input_masks(self.base.ctx.me(), owner, n)),
        }
    }

    /// `n` random bits of ring `R`.
    pub(crate) async fn rand_bits<R: Spdz2kRing>(
        &mut self,
        n: usize,
    ) -> Result<RandBits<R>, Error> {
        match &mut self.base.source {
            Source::Parties(_) => {
                let (g, ctx, roster, mut own) = self.generator::<R>("random bits").await?;
                let b = g.take(ctx, roster, &mut own, Kind::RandBits(R::BITS), n).await?;
                Ok(RandBits { b: one_part(b)?.into_ring() })
            }
            #[cfg(any(test, feature = "test-utils"))]
            Source::Dealer(d) => Ok(d.rand_bits(self.base.ctx.me(), n)),
        }
    }

    /// `n` edaBits of ring `R`: from what was made ahead, the rest made now by the parties.
    pub async fn eda_bits<R: Spdz2kRing>(&mut self, n: usize) -> Result<EdaBits<R>, Error> {
        match &mut self.base.source {
            Source::Parties(_) => {
                let (g, ctx, roster, mut own) = self.generator::<R>("edaBits").await?;
                let mut parts =
                    g.take(ctx, roster, &mut own, Kind::EdaBits(R::BITS), n).await?.into_iter();
                let r = parts.next().ok_or_else(|| Error::ApiMisuse("edaBits".into()))?;
                let mut bits = Wide::default();
                parts.for_each(|p| bits.append(p));
                Ok(EdaBits { r: r.into_ring(), bits: bits.into_ring() })
            }
            #[cfg(any(test, feature = "test-utils"))]
            Source::Dealer(d) => Ok(d.eda_bits(self.base.ctx.me(), n)),
        }
    }

    /// `n` random bits of the binary instance under ring `R`'s key.
    pub(crate) async fn binary_bits<R: Spdz2kRing>(&mut self, n: usize) -> Result<Auth<R>, Error> {
        match &mut self.base.source {
            Source::Parties(_) => {
                let (g, ctx, roster, mut own) = self.generator::<R>("binary bits").await?;
                let b = g.take(ctx, roster, &mut own, Kind::RandBits(1), n).await?;
                Ok(one_part(b)?.into_ring())
            }
            #[cfg(any(test, feature = "test-utils"))]
            Source::Dealer(d) => Ok(d.binary_bits(self.base.ctx.me(), n)),
        }
    }

    /// One random sharing of ring `R` (the MAC check's mask).
    pub(crate) async fn check_mask<R: Spdz2kRing>(&mut self) -> Result<Auth<R>, Error> {
        self.random::<R>(1).await
    }

    /// `n` random sharings of ring `R`, their values known to nobody.
    async fn random<R: Spdz2kRing>(&mut self, n: usize) -> Result<Auth<R>, Error> {
        match &mut self.base.source {
            Source::Parties(_) => {
                let (g, ctx, roster, mut own) = self.generator::<R>("random values").await?;
                let kind = Kind::Random(Widths { v: R::BITS, s: R::S });
                Ok(one_part(g.take(ctx, roster, &mut own, kind, n).await?)?.into_ring())
            }
            #[cfg(any(test, feature = "test-utils"))]
            Source::Dealer(d) => {
                let r = d.random::<R>(n);
                Ok(d.share(self.base.ctx.me(), &r))
            }
        }
    }
}

#[cfg(any(test, feature = "test-utils"))]
pub use dealer::Dealer;

#[cfg(any(test, feature = "test-utils"))]
mod dealer {
    use super::super::{Auth, Spdz2kRing};
    use super::{EdaBits, InputMasks, MatTriple, RandBits, Triples};
    use crate::net::PartyId;
    use crate::prg::{Prg, Seed};
    use crate::ring::{IntRing, Ring};

    /// A trusted dealer every party simulates from one seed: each draw is numbered, every
    /// party makes the same draws in the same order and keeps its own shares. Tests only.
    pub struct Dealer {
        seed: Seed,
        parties: usize,
        draws: u64,
    }

    impl core::fmt::Debug for Dealer {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            write!(f, "Dealer({} parties, {} draws)", self.parties, self.draws)
        }
    }

    impl Dealer {
        /// The dealer of a session of `parties` parties.
        pub fn new(seed: Seed, parties: usize) -> Self {
            Self { seed, parties, draws: 0 }
        }

        fn prg(&mut self) -> Prg {
            self.draws += 1;
            Prg::new(&self.seed, self.draws, 7)
        }

        /// Party `me`'s share of ring `R`'s MAC key.
        pub(crate) fn alpha_share<R: Spdz2kRing>(&self, me: PartyId) -> R {
            let mut prg = Prg::new(&self.seed, 0, R::BITS);
            let mut keys = vec![R::ZERO; self.parties];
            R::fill_random(&mut prg, &mut keys);
            keys[me.index()]
        }

        /// The key the shares make: `Σ α_j`, summed in the wide ring as the parties' MAC
        /// operations sum it.
        fn alpha<R: Spdz2kRing>(&self) -> R::Wide {
            (0..self.parties)
                .map(|j| self.alpha_share::<R>(PartyId(j as u8)).widen())
                .fold(<R::Wide as Ring>::ZERO, |a, b| a + b)
        }

        /// `n` uniformly random wide values.
        pub(crate) fn random<R: Spdz2kRing>(&mut self, n: usize) -> Vec<R::Wide> {
            let mut out = vec![<R::Wide as Ring>::ZERO; n];
            <R::Wide as Ring>::fill_random(&mut self.prg(), &mut out);
            out
        }

        /// `v` with random upper `s` bits: material is correct only mod 2^k.
        pub(crate) fn junk_above_k<R: Spdz2kRing>(&mut self, v: &[R::Wide]) -> Vec<R::Wide> {
            let junk = self.random::<R>(v.len());
            v.iter().zip(junk).map(|(&v, j)| v + j.shl(R::BITS)).collect()
        }

        /// `n` multiplication triples (`c = a·b` mod 2^k, arbitrary above).
        pub(crate) fn triples<R: Spdz2kRing>(&mut self, me: PartyId, n: usize) -> Triples<R> {
            let (a, b) = (self.random::<R>(n), self.random::<R>(n));
            let c: Vec<R::Wide> = a.iter().zip(&b).map(|(&a, &b)| a * b).collect();
            let c = self.junk_above_k::<R>(&c);
            Triples { a: self.share(me, &a), b: self.share(me, &b), c: self.share(me, &c) }
        }

        /// A matrix triple for an (m×l)·(l×n) product.
        pub(crate) fn mat_triple<R: Spdz2kRing>(
            &mut self,
            me: PartyId,
            dims: (usize, usize, usize),
        ) -> MatTriple<R> {
            let (m, l, n) = dims;
            let (a, b) = (self.random::<R>(m * l), self.random::<R>(l * n));
            let mut c = vec![<R::Wide as Ring>::ZERO; m * n];
            for i in 0..m {
                for j in 0..n {
                    c[i * n + j] = (0..l)
                        .fold(<R::Wide as Ring>::ZERO, |acc, t| acc + a[i * l + t] * b[t * n + j]);
                }
            }
            let c = self.junk_above_k::<R>(&c);
            MatTriple { dims, a: self.share(me, &a), b: self.share(me, &b), c: self.share(me, &c) }
        }

        /// `n` input masks for `owner`.
        pub(crate) fn input_masks<R: Spdz2kRing>(
            &mut self,
            me: PartyId,
            owner: PartyId,
            n: usize,
        ) -> InputMasks<R> {
            let r = self.random::<R>(n);
            let values = (me == owner).then(|| r.iter().map(|&w| R::low(w)).collect());
            InputMasks { r: self.share(me, &r), values }
        }

        /// `n` random bits.
        pub(crate) fn rand_bits<R: Spdz2kRing>(&mut self, me: PartyId, n: usize) -> RandBits<R> {
            let bits: Vec<R::Wide> = self
                .random::<R>(n)
                .into_iter()
                .map(|w| <R::Wide as IntRing>::from_u64(w.to_u64() & 1))
                .collect();
            let bits = self.junk_above_k::<R>(&bits);
            RandBits { b: self.share(me, &bits) }
        }

        /// `n` bit triples as arithmetic sharings of bits (`c = a·b`).
        pub(crate) fn bit_triples<R: Spdz2kRing>(&mut self, me: PartyId, n: usize) -> Triples<R> {
            let a = self.random_bits::<R>(n);
            let b = self.random_bits::<R>(n);
            let c: Vec<R::Wide> = a.iter().zip(&b).map(|(&a, &b)| a * b).collect();
            let [a, b, c] = [a, b, c].map(|v| self.binary(me, &v));
            Triples { a, b, c }
        }

        /// `n` uniformly random bits.
        fn random_bits<R: Spdz2kRing>(&mut self, n: usize) -> Vec<R::Wide> {
            let bit = |w: R::Wide| <R::Wide as IntRing>::from_u64(w.to_u64() & 1);
            self.random::<R>(n).into_iter().map(bit).collect()
        }

        /// Party `me`'s binary sharings of the bits `v`: they mean their low bit only, so
        /// the values are arbitrary above it.
        fn binary<R: Spdz2kRing>(&mut self, me: PartyId, v: &[R::Wide]) -> Auth<R> {
            let junk = self.random::<R>(v.len());
            let v: Vec<R::Wide> = v.iter().zip(junk).map(|(&v, j)| v + j.shl(1)).collect();
            self.share(me, &v)
        }

        /// `n` random bits of the binary instance.
        pub(crate) fn binary_bits<R: Spdz2kRing>(&mut self, me: PartyId, n: usize) -> Auth<R> {
            let b = self.random_bits::<R>(n);
            self.binary(me, &b)
        }

        /// `n` edaBits: random values and their `k` bits, bit `i` of all at `i·n..`.
        pub(crate) fn eda_bits<R: Spdz2kRing>(&mut self, me: PartyId, n: usize) -> EdaBits<R> {
            let r = self.random::<R>(n);
            let bits: Vec<R::Wide> = (0..R::BITS)
                .flat_map(|i| {
                    r.iter()
                        .map(move |w| <R::Wide as IntRing>::from_u64(w.shr_logical(i).to_u64() & 1))
                })
                .collect();
            EdaBits { r: self.share(me, &r), bits: self.binary(me, &bits) }
        }

        /// Party `me`'s authenticated shares of the wide values `v`.
        pub(crate) fn share<R: Spdz2kRing>(&mut self, me: PartyId, v: &[R::Wide]) -> Auth<R> {
            let alpha = self.alpha::<R>();
            let mut prg = self.prg();
            let (n, me) = (self.parties, me.index());
            let mut split = |total: R::Wide| {
                let mut parts = vec![<R::Wide as Ring>::ZERO; n];
                <R::Wide as Ring>::fill_random(&mut prg, &mut parts[..n - 1]);
                let rest = parts[..n - 1].iter().fold(total, |acc, &p| acc - p);
                parts[n - 1] = rest;
                parts[me]
            };
            let mut out = Auth { x: Vec::with_capacity(v.len()), m: Vec::with_capacity(v.len()) };
            for &v in v {
                out.x.push(split(v));
                out.m.push(split(alpha * v));
            }
            out
        }
    }
}
