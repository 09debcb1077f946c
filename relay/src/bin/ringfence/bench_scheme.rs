//! What `ringfence bench` runs its operations on: a [`Scheme`] is a session kind of the party
//! processes ([`Base`]) with the calls of the operation benchmark. rep3 ([`Session`]) and rss
//! among 3, 5 or 7 parties ([`Rss`]) are the two; each maps the calls to its own protocols, so
//! `bench::bench_op` is written once.

use ringfence_core::circuit::Circuit;
use ringfence_core::mal3::scheme::Mal3Ring;
use ringfence_core::mal3::Mal3;
use ringfence_core::meteor::{Meteor, MeteorRing};
use ringfence_core::nn::Output;
use ringfence_core::rep3::Rep3Vec;
use ringfence_core::ring::IntRing;
use ringfence_core::rss::{Rss, RssVec, Widen};
use ringfence_core::sharing::Boolean;
use ringfence_core::{rep3, rss, Error};
use ringfence_relay::TcpTransport;

use crate::bench::{bench_infer, ModelBench, Op, Sizes};
use crate::msgs::OpReport;
use crate::party::{Base, Session};

/// The rings the bench runs on (Z_2^32 and Z_2^64): every scheme's, and rss's random bits need
/// the next wider ring.
pub(crate) trait BenchRing: IntRing + MeteorRing + Mal3Ring + Widen {}
impl<R: IntRing + MeteorRing + Mal3Ring + Widen> BenchRing for R {}

/// A session kind the operation benchmark runs on. The names differ from the schemes' own
/// (`mul`, `matmul`, …) so that they never shadow [`ringfence_core::sharing::Arith`]'s.
#[allow(async_fn_in_trait)]
pub(crate) trait Scheme<R: BenchRing>: Base + Boolean<R> {
    /// Truncation material of fixed-point products.
    type Trunc;

    /// Readies the session for the workload (rep3's way of comparing).
    fn configure(&mut self, _sizes: &Sizes) {}

    /// `n` random shared elements (no communication).
    fn random(&mut self, n: usize) -> Self::V;

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

    /// `x·y` opened to every party in one round (`mul-pub`).
    async fn product_opened(&mut self, x: &Self::V, y: &Self::V) -> Result<Vec<R>, String>;

    /// `n` random shared bits made in one round (`rand-bit`).
    async fn random_bits(&mut self, n: usize) -> Result<Self::V, String>;

    /// `n` edaBits of the ring's width (`eda-bit`).
    async fn eda_bits(&mut self, n: usize) -> Result<(), String>;

    /// The `infer` op on the model: gives the session back with the report.
    async fn infer(self, mb: &ModelBench, sizes: Sizes) -> Result<(Self, OpReport), String>;

    /// A boolean-circuit op (`and`, `aes`, `circuit`) on the `--gates` scheme.
    async fn circuit(
        self,
        op: Op,
        sizes: Sizes,
        circuit: Option<&Circuit>,
    ) -> Result<(Self, OpReport), String>;
}

/// The refusal of an rss-only op on another scheme (the parent refuses first).
fn rss_only(op: Op, on: &str) -> String {
    format!("{} runs on rss only (--backend rss), not on {on}", op.name())
}

impl<R: BenchRing> Scheme<R> for Session {
    type Trunc = rep3::TruncPairs<R>;

    fn configure(&mut self, sizes: &Sizes) {
        if sizes.backend == ringfence_core::service::Backend::Rep3 {
            self.set_comparisons(sizes.comparisons);
        }
    }

    fn random(&mut self, n: usize) -> Rep3Vec<R> {
        Self::random::<R>(self, n)
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

    async fn product_opened(&mut self, _: &Rep3Vec<R>, _: &Rep3Vec<R>) -> Result<Vec<R>, String> {
        Err(rss_only(Op::MulPub, "rep3"))
    }

    async fn random_bits(&mut self, _: usize) -> Result<Rep3Vec<R>, String> {
        Err(rss_only(Op::RandBit, "rep3"))
    }

    async fn eda_bits(&mut self, _: usize) -> Result<(), String> {
        Err(rss_only(Op::EdaBit, "rep3"))
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
        circuit: Option<&Circuit>,
    ) -> Result<(Self, OpReport), String> {
        crate::bench_gates::bench_circuit_op(self, op, sizes, circuit).await
    }
}

impl<R: BenchRing> Scheme<R> for Rss<TcpTransport> {
    type Trunc = rss::TruncPairs<R>;

    fn configure(&mut self, sizes: &Sizes) {
        self.set_bit_source(sizes.bit_source);
    }

    fn random(&mut self, n: usize) -> RssVec<R> {
        Self::random::<R>(self, n)
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

    async fn circuit(
        self,
        op: Op,
        _: Sizes,
        _: Option<&Circuit>,
    ) -> Result<(Self, OpReport), String> {
        Err(format!("{} runs on the --gates schemes among three parties, not on rss", op.name()))
    }
}
