//! What `ringfence bench` runs its operations on: a [`Scheme`] is a scheme started on a session
//! kind of the party processes ([`Base`]) with the calls of the operation benchmark. rep3
//! ([`Session`]), rss among 3, 5 or 7 parties ([`Rss`]), each its own session, and spdz2k among
//! 2 or more ([`Spdz2k`], on a [`Mesh`]); each maps the calls to its own protocols, so
//! `bench::bench_op` is written once.

use crate::bench_gates::{CircuitJob, Engine};
use ringfence_core::mal3::scheme::Mal3Ring;
use ringfence_core::mal3::triples::OnDemand;
use ringfence_core::mal3::Mal3;
use ringfence_core::meteor::{Meteor, MeteorRing};
use ringfence_core::net::PartyId;
use ringfence_core::nn::Output;
use ringfence_core::rep3::Rep3Vec;
use ringfence_core::ring::IntRing;
use ringfence_core::rss::{Rss, RssVec, Widen};
use ringfence_core::sharing::{self, Arith, Boolean};
use ringfence_core::spdz2k::prep::Ahead;
use ringfence_core::spdz2k::{Mesh, Spdz2k, Spdz2kRing};
use ringfence_core::{rep3, rss, Error};
use ringfence_relay::TcpTransport;

use crate::bench::{bench_infer, ModelBench, Op, Sizes};
use crate::msgs::OpReport;
use crate::party::{Base, Session};

/// The rings the bench runs on (Z_2^32 and Z_2^64): every scheme's, and rss's random bits need
/// the next wider ring.
pub(crate) trait BenchRing: IntRing + MeteorRing + Mal3Ring + Widen + Spdz2kRing {}
impl<R: IntRing + MeteorRing + Mal3Ring + Widen + Spdz2kRing> BenchRing for R {}

/// A scheme the operation benchmark runs on, started on its session kind [`Scheme::On`]. The
/// names differ from the schemes' own (`mul`, `matmul`, …) so that they never shadow
/// [`ringfence_core::sharing::Arith`]'s.
#[allow(async_fn_in_trait)]
pub(crate) trait Scheme<R: BenchRing>: Boolean<R> + sharing::Session<Self::On> {
    /// The session kind of the party processes it starts on.
    type On: Base;
    /// Truncation material of fixed-point products.
    type Trunc;

    /// Readies the session for the workload (rep3's way of comparing, mal3's triples).
    fn configure(&mut self, _sizes: &Sizes) -> Result<(), Error> {
        Ok(())
    }

    /// Finishes what an op left pending before it counts as done (mal3: the checks of its
    /// products and ANDs, which otherwise wait for the next opening).
    async fn settle(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// `n` random shared elements (setup: no communication where the scheme can share random
    /// values locally, P0's input where it cannot).
    async fn random(&mut self, n: usize) -> Result<Self::V, Error>;

    /// Elementwise exact product.
    async fn product(&mut self, x: &Self::V, y: &Self::V) -> Result<Self::V, Error>;

    /// Matrix product of `a` (m×k) and `b` (k×n), `dims = (m, k, n)`.
    async fn matrix_product(
        &mut self,
        a: &Self::V,
        b: &Self::V,
        dims: (usize, usize, usize),
    ) -> Result<Self::V, Error>;

    /// Material for `n` truncations by `frac_bits` (setup).
    async fn trunc_material(&mut self, n: usize, frac_bits: u32) -> Result<Self::Trunc, Error>;

    /// Fixed-point product truncated with `pairs`.
    async fn fixed_product(
        &mut self,
        x: &Self::V,
        y: &Self::V,
        pairs: Self::Trunc,
    ) -> Result<Self::V, Error>;

    /// `x·y` opened to every party in one round (`mul-pub`; rss only, the parent refuses it
    /// elsewhere first).
    async fn product_opened(&mut self, _: &Self::V, _: &Self::V) -> Result<Vec<R>, String> {
        Err(rss_only(Op::MulPub))
    }

    /// `n` random shared bits made in one round (`rand-bit`; rss only).
    async fn random_bits(&mut self, _: usize) -> Result<Self::V, String> {
        Err(rss_only(Op::RandBit))
    }

    /// `n` edaBits of the ring's width (`eda-bit`; rss and spdz2k).
    async fn eda_bits(&mut self, _: usize) -> Result<(), String> {
        Err(rss_only(Op::EdaBit))
    }

    /// Material drawn so far by the ops, where it can be made ahead (spdz2k; `--ahead`).
    fn drawn(&self) -> Option<Ahead> {
        None
    }

    /// Makes `material` now, for the ops' draws to come (spdz2k).
    async fn make_ahead(&mut self, _material: Ahead) -> Result<(), Error> {
        Ok(())
    }

    /// Draws that found the material made ahead short (spdz2k).
    fn made_on_demand(&self) -> u64 {
        0
    }

    /// The `infer` op on the model: gives the session back with the report.
    async fn infer(self, mb: &ModelBench, sizes: Sizes) -> Result<(Self, OpReport), String>;

    /// A boolean-circuit op (`and`, `aes`, `circuit`) on the `--gates` scheme (rep3's session
    /// only; the parent refuses it elsewhere first).
    async fn circuit(
        self,
        op: Op,
        _: Sizes,
        _: Option<&CircuitJob>,
    ) -> Result<(Self, OpReport), String> {
        Err(format!("{} runs on the --gates schemes among three parties", op.name()))
    }
}

/// mal3 on rep3's session, every op **end to end**: the validated triples its products and
/// ANDs draw (cut-and-bucket runs, made as the op needs them, bucket size 3), the op, and the
/// check of every product and AND it computed ([`Mal3::verify`]), as a malicious-secure
/// scheme's figures are compared (preprocessing included). `relu` and `fxmul` keep their
/// material (daBits, truncation pairs, themselves checked) as setup, as the other schemes do.
impl<R: BenchRing> Scheme<R> for Mal3<TcpTransport> {
    type On = Session;
    type Trunc = <Self as Arith<R>>::MulPrep;

    /// `--gates mal3-on-demand` or `mal3-baseline` choose the triples of the arithmetic ops too.
    fn configure(&mut self, sizes: &Sizes) -> Result<(), Error> {
        match sizes.engine {
            Engine::Mal3OnDemand => self.check_on_demand(OnDemand::PAPER),
            Engine::Mal3Baseline => self.use_baseline_runs(),
            _ => Ok(()),
        }
    }

    async fn settle(&mut self) -> Result<(), Error> {
        self.verify().await
    }

    async fn random(&mut self, n: usize) -> Result<Rep3Vec<R>, Error> {
        Ok(sharing::Session::base_mut(self).random::<R>(n))
    }

    async fn product(&mut self, x: &Rep3Vec<R>, y: &Rep3Vec<R>) -> Result<Rep3Vec<R>, Error> {
        product_with_prep(self, x, y).await
    }

    async fn matrix_product(
        &mut self,
        a: &Rep3Vec<R>,
        b: &Rep3Vec<R>,
        dims: (usize, usize, usize),
    ) -> Result<Rep3Vec<R>, Error> {
        matrix_product_with_prep(self, a, b, dims).await
    }

    /// Truncation pairs and the products' triples (mal3's product material).
    async fn trunc_material(&mut self, n: usize, frac_bits: u32) -> Result<Self::Trunc, Error> {
        trunc_material_of(self, n, frac_bits).await
    }

    async fn fixed_product(
        &mut self,
        x: &Rep3Vec<R>,
        y: &Rep3Vec<R>,
        prep: Self::Trunc,
    ) -> Result<Rep3Vec<R>, Error> {
        Arith::<R>::mul(self, x, y, prep).await
    }

    async fn infer(self, mb: &ModelBench, sizes: Sizes) -> Result<(Self, OpReport), String> {
        let (s, r) = Scheme::<R>::infer(sharing::Session::finish(self), mb, sizes).await?;
        Ok((sharing::Session::start(s), r))
    }

    async fn circuit(
        self,
        op: Op,
        sizes: Sizes,
        circuit: Option<&CircuitJob>,
    ) -> Result<(Self, OpReport), String> {
        let s = sharing::Session::finish(self);
        let (s, r) = Scheme::<R>::circuit(s, op, sizes, circuit).await?;
        Ok((sharing::Session::start(s), r))
    }
}

/// The refusal of an rss-only op on another scheme.
fn rss_only(op: Op) -> String {
    format!("{} runs on rss only (--backend rss)", op.name())
}

impl<R: BenchRing> Scheme<R> for Session {
    type On = Self;
    type Trunc = rep3::TruncPairs<R>;

    fn configure(&mut self, sizes: &Sizes) -> Result<(), Error> {
        if sizes.backend == ringfence_core::service::Backend::Rep3 {
            self.set_comparisons(sizes.comparisons);
        }
        Ok(())
    }

    async fn random(&mut self, n: usize) -> Result<Rep3Vec<R>, Error> {
        Ok(Self::random::<R>(self, n))
    }

    async fn product(&mut self, x: &Rep3Vec<R>, y: &Rep3Vec<R>) -> Result<Rep3Vec<R>, Error> {
        Self::mul(self, x, y).await
    }

    async fn matrix_product(
        &mut self,
        a: &Rep3Vec<R>,
        b: &Rep3Vec<R>,
        (m, k, n): (usize, usize, usize),
    ) -> Result<Rep3Vec<R>, Error> {
        Self::matmul(self, a, b, m, k, n).await
    }

    async fn trunc_material(&mut self, n: usize, frac_bits: u32) -> Result<Self::Trunc, Error> {
        Self::trunc_pairs::<R>(self, n, frac_bits).await
    }

    async fn fixed_product(
        &mut self,
        x: &Rep3Vec<R>,
        y: &Rep3Vec<R>,
        pairs: Self::Trunc,
    ) -> Result<Rep3Vec<R>, Error> {
        Self::mul_fixed(self, x, y, pairs).await
    }

    /// On the rep3 session: rep3 itself, or METEOR or mal3 started on it.
    async fn infer(self, mb: &ModelBench, sizes: Sizes) -> Result<(Self, OpReport), String> {
        use ringfence_core::service::Backend;
        match sizes.backend {
            Backend::Rep3 => bench_infer::<R, Self, Self>(self, mb, sizes, Output::Argmax).await,
            Backend::Meteor => {
                bench_infer::<R, Self, Meteor<TcpTransport>>(self, mb, sizes, Output::Logits).await
            }
            Backend::Mal3 => {
                bench_infer::<R, Self, Mal3<TcpTransport>>(self, mb, sizes, Output::Argmax).await
            }
            b => Err(format!("the bench runs no inference on {} over rep3's session", b.name())),
        }
    }

    async fn circuit(
        self,
        op: Op,
        sizes: Sizes,
        circuit: Option<&CircuitJob>,
    ) -> Result<(Self, OpReport), String> {
        crate::bench_gates::bench_circuit_op(self, op, sizes, circuit).await
    }
}

impl<R: BenchRing> Scheme<R> for Rss<TcpTransport> {
    type On = Self;
    type Trunc = rss::TruncPairs<R>;

    fn configure(&mut self, sizes: &Sizes) -> Result<(), Error> {
        self.set_bit_source(sizes.bit_source);
        Ok(())
    }

    async fn random(&mut self, n: usize) -> Result<RssVec<R>, Error> {
        Ok(Self::random::<R>(self, n))
    }

    async fn product(&mut self, x: &RssVec<R>, y: &RssVec<R>) -> Result<RssVec<R>, Error> {
        Self::mul(self, x, y).await
    }

    async fn matrix_product(
        &mut self,
        a: &RssVec<R>,
        b: &RssVec<R>,
        dims: (usize, usize, usize),
    ) -> Result<RssVec<R>, Error> {
        Self::matmul(self, a, b, dims).await
    }

    async fn trunc_material(&mut self, n: usize, frac_bits: u32) -> Result<Self::Trunc, Error> {
        Self::trunc_pairs::<R>(self, n, frac_bits).await
    }

    async fn fixed_product(
        &mut self,
        x: &RssVec<R>,
        y: &RssVec<R>,
        pairs: Self::Trunc,
    ) -> Result<RssVec<R>, Error> {
        Self::mul_fixed(self, x, y, pairs).await
    }

    async fn product_opened(&mut self, x: &RssVec<R>, y: &RssVec<R>) -> Result<Vec<R>, String> {
        Self::mul_pub(self, x, y).await.map_err(|e| e.to_string())
    }

    async fn random_bits(&mut self, n: usize) -> Result<RssVec<R>, String> {
        Self::rand_bits::<R>(self, n).await.map_err(|e| e.to_string())
    }

    async fn eda_bits(&mut self, n: usize) -> Result<(), String> {
        Self::edabits::<R>(self, n).await.map(drop).map_err(|e| e.to_string())
    }

    /// rss runs its own inference (the argmax to the input owner) on its own session.
    async fn infer(self, mb: &ModelBench, sizes: Sizes) -> Result<(Self, OpReport), String> {
        bench_infer::<R, Self, Self>(self, mb, sizes, Output::Argmax).await
    }
}

/// spdz2k among `n ≥ 2` parties, each making its material with the others (OT-based, no
/// dealer) as the operations draw it: every op but `fxmul` and `relu` (whose material is their
/// setup, as in the other schemes) is timed **end to end**, its preprocessing included, which
/// is how the reference implementation's figures for this protocol are measured.
impl<R: BenchRing> Scheme<R> for Spdz2k<TcpTransport> {
    type On = Mesh<TcpTransport>;
    type Trunc = <Self as Arith<R>>::MulPrep;

    /// P0's random values, input with the others' masks: random authenticated shares cannot
    /// be made without communication in this scheme.
    async fn random(&mut self, n: usize) -> Result<Self::V, Error> {
        const OWNER: PartyId = PartyId(0);
        let mine = (self.me() == OWNER).then(|| {
            let mut prg = ringfence_core::prg::Prg::new(&own_seed()?, 0, 0);
            Ok::<_, Error>((0..n).map(|_| R::from_u64(prg.next_u64())).collect::<Vec<R>>())
        });
        let mine = mine.transpose()?;
        let (prep, _) = Arith::<R>::input_prep(self, OWNER, n);
        Arith::<R>::input(self, OWNER, mine.as_deref(), prep).await
    }

    async fn product(&mut self, x: &Self::V, y: &Self::V) -> Result<Self::V, Error> {
        product_with_prep(self, x, y).await
    }

    async fn matrix_product(
        &mut self,
        a: &Self::V,
        b: &Self::V,
        dims: (usize, usize, usize),
    ) -> Result<Self::V, Error> {
        matrix_product_with_prep(self, a, b, dims).await
    }

    async fn trunc_material(&mut self, n: usize, frac_bits: u32) -> Result<Self::Trunc, Error> {
        trunc_material_of(self, n, frac_bits).await
    }

    async fn fixed_product(
        &mut self,
        x: &Self::V,
        y: &Self::V,
        prep: Self::Trunc,
    ) -> Result<Self::V, Error> {
        Arith::<R>::mul(self, x, y, prep).await
    }

    /// Made by the parties (OT, TinyOT), end to end.
    async fn eda_bits(&mut self, n: usize) -> Result<(), String> {
        Self::eda_bits::<R>(self, n).await.map(drop).map_err(|e| e.to_string())
    }

    fn drawn(&self) -> Option<Ahead> {
        Some(Self::drawn::<R>(self))
    }

    async fn make_ahead(&mut self, material: Ahead) -> Result<(), Error> {
        Self::make_ahead::<R>(self, material).await
    }

    fn made_on_demand(&self) -> u64 {
        Self::made_on_demand(self)
    }

    /// Inference on a fresh start of the scheme on the same session (the material generators
    /// live in the session, so the base OTs are not repeated): the class to the input owner.
    async fn infer(self, mb: &ModelBench, sizes: Sizes) -> Result<(Self, OpReport), String> {
        let mesh = sharing::Session::finish(self);
        let (mesh, r) =
            bench_infer::<R, Mesh<TcpTransport>, Self>(mesh, mb, sizes, Output::Argmax).await?;
        Ok((sharing::Session::start(mesh), r))
    }
}

/// An exact product whose material the scheme makes now (timed with the op).
async fn product_with_prep<R: IntRing, S: Arith<R>>(
    s: &mut S,
    x: &S::V,
    y: &S::V,
) -> Result<S::V, Error> {
    let (prep, _) = s.mul_prep(&S::tag(x), &S::tag(y), 0).await?;
    s.mul(x, y, prep).await
}

/// A matrix product whose material the scheme makes now (timed with the op).
async fn matrix_product_with_prep<R: IntRing, S: Arith<R>>(
    s: &mut S,
    a: &S::V,
    b: &S::V,
    dims: (usize, usize, usize),
) -> Result<S::V, Error> {
    let (prep, _) = s.matmul_prep(&S::tag(a), &S::tag(b), dims, 0).await?;
    s.matmul(a, b, dims, prep).await
}

/// The material of `n` fixed-point products truncated by `frac_bits`: the scheme's product
/// material for values of that length.
async fn trunc_material_of<R: IntRing, S: Arith<R>>(
    s: &mut S,
    n: usize,
    frac_bits: u32,
) -> Result<S::MulPrep, Error> {
    let tag = S::tag(&s.constant(&vec![R::ZERO; n]));
    Ok(s.mul_prep(&tag, &tag, frac_bits).await?.0)
}

/// A seed from the OS for a party's private values.
fn own_seed() -> Result<ringfence_core::prg::Seed, Error> {
    crate::random_bytes::<32>().map(ringfence_core::prg::Seed::from_bytes).map_err(Error::ApiMisuse)
}
