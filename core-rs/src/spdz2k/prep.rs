//! Preprocessing material of `spdz2k` and where it comes from ([`Source`]).
//!
//! Every unit is single-use: taking material moves it out of its store
//! ([`crate::sharing::Store`]). Material is function-independent (random triples, masks and
//! bits), so it can be made ahead of any input.
//!
//! Until the parties' own generation lands, the only arm that makes material is the test
//! dealer's, so a build without it leaves the material functions' arguments unread.
#![cfg_attr(not(any(test, feature = "test-utils")), allow(unused_variables, unused_imports))]

use super::{Auth, Spdz2k, Spdz2kRing};
use crate::net::{PartyId, Transport};
use crate::ring::{IntRing, Ring, Z32, Z64};
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

/// Where a party's preprocessing comes from.
#[derive(Debug)]
pub enum Source {
    /// None: every operation that needs material is refused. The parties' own generation (OT
    /// extension, vOLE, sacrifice) is the next step of this scheme.
    Unavailable,
    /// A trusted dealer that every party simulates from one seed (tests only: it knows every
    /// secret, so it is no protocol).
    #[cfg(any(test, feature = "test-utils"))]
    Dealer(Dealer),
}

impl Source {
    /// The dealer's MAC key shares for `me`, where a dealer makes the material.
    pub(crate) fn alphas(&self, me: PartyId) -> Option<(Z32, Z64)> {
        match self {
            Self::Unavailable => None,
            #[cfg(any(test, feature = "test-utils"))]
            Self::Dealer(d) => Some((d.alpha_share::<Z32>(me), d.alpha_share::<Z64>(me))),
        }
    }

    fn unavailable(what: &str) -> Error {
        Error::PreprocessingExhausted(format!(
            "spdz2k {what}: this party has no preprocessing (the OT-based generation is not built \
             yet; only the test dealer exists)"
        ))
    }
}

impl<T: Transport> Spdz2k<T> {
    /// `n` multiplication triples of ring `R`.
    pub(crate) async fn triples<R: Spdz2kRing>(&mut self, n: usize) -> Result<Triples<R>, Error> {
        let me = self.me();
        match &mut self.base.source {
            Source::Unavailable => Err(Source::unavailable("triples")),
            #[cfg(any(test, feature = "test-utils"))]
            Source::Dealer(d) => {
                let (a, b) = (d.random::<R>(n), d.random::<R>(n));
                let c: Vec<R::Wide> = a.iter().zip(&b).map(|(&a, &b)| a * b).collect();
                let c = d.junk_above_k::<R>(&c);
                Ok(Triples { a: d.share(me, &a), b: d.share(me, &b), c: d.share(me, &c) })
            }
        }
    }

    /// A matrix triple of ring `R` for an (m×l)·(l×n) product.
    pub(crate) async fn mat_triple<R: Spdz2kRing>(
        &mut self,
        dims: (usize, usize, usize),
    ) -> Result<MatTriple<R>, Error> {
        let me = self.me();
        let (m, l, n) = dims;
        match &mut self.base.source {
            Source::Unavailable => Err(Source::unavailable("matrix triples")),
            #[cfg(any(test, feature = "test-utils"))]
            Source::Dealer(d) => {
                let (a, b) = (d.random::<R>(m * l), d.random::<R>(l * n));
                let mut c = vec![<R::Wide as Ring>::ZERO; m * n];
                for i in 0..m {
                    for j in 0..n {
                        c[i * n + j] = (0..l).fold(<R::Wide as Ring>::ZERO, |acc, t| {
                            acc + a[i * l + t] * b[t * n + j]
                        });
                    }
                }
                let c = d.junk_above_k::<R>(&c);
                Ok(MatTriple { dims, a: d.share(me, &a), b: d.share(me, &b), c: d.share(me, &c) })
            }
        }
    }

    /// `n` input masks of ring `R` for `owner`.
    pub(crate) async fn input_masks<R: Spdz2kRing>(
        &mut self,
        owner: PartyId,
        n: usize,
    ) -> Result<InputMasks<R>, Error> {
        let me = self.me();
        match &mut self.base.source {
            Source::Unavailable => Err(Source::unavailable("input masks")),
            #[cfg(any(test, feature = "test-utils"))]
            Source::Dealer(d) => {
                let r = d.random::<R>(n);
                let values = (me == owner).then(|| r.iter().map(|&w| R::low(w)).collect());
                Ok(InputMasks { r: d.share(me, &r), values })
            }
        }
    }

    /// `n` random bits of ring `R`.
    pub(crate) async fn rand_bits<R: Spdz2kRing>(
        &mut self,
        n: usize,
    ) -> Result<RandBits<R>, Error> {
        let me = self.me();
        match &mut self.base.source {
            Source::Unavailable => Err(Source::unavailable("random bits")),
            #[cfg(any(test, feature = "test-utils"))]
            Source::Dealer(d) => {
                let bits: Vec<R::Wide> = d
                    .random::<R>(n)
                    .into_iter()
                    .map(|w| <R::Wide as IntRing>::from_u64(w.to_u64() & 1))
                    .collect();
                let bits = d.junk_above_k::<R>(&bits);
                Ok(RandBits { b: d.share(me, &bits) })
            }
        }
    }

    /// One random sharing of ring `R` (the MAC check's mask).
    pub(crate) async fn check_mask<R: Spdz2kRing>(&mut self) -> Result<Auth<R>, Error> {
        let me = self.me();
        match &mut self.base.source {
            Source::Unavailable => Err(Source::unavailable("check masks")),
            #[cfg(any(test, feature = "test-utils"))]
            Source::Dealer(d) => {
                let r = d.random::<R>(1);
                Ok(d.share(me, &r))
            }
        }
    }
}

#[cfg(any(test, feature = "test-utils"))]
pub use dealer::Dealer;

#[cfg(any(test, feature = "test-utils"))]
mod dealer {
    use super::super::{Auth, Spdz2kRing};
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
