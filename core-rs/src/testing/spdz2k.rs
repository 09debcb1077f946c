//! Runs `spdz2k` sessions on the in-memory network, with the test dealer's material.

use core::future::Future;

use super::conformance::TestBase;
use super::{rss_own_seed, MemTransport, Net};
use crate::net::{Ctx, Roster, Stats};
use crate::prg::Seed;
use crate::sharing::Session;
use crate::spdz2k::prep::Dealer;
use crate::spdz2k::{Mesh, Source, Spdz2k};
use crate::Error;

/// The dealer's seed of a test session from `seed` (the same at every party).
fn dealer_seed(seed: u64) -> Seed {
    let mut b = [0xd1u8; 32];
    b[..8].copy_from_slice(&seed.to_le_bytes());
    Seed::from_bytes(b)
}

/// A session of `roster` (`t = n − 1`) whose material comes from the test dealer.
impl TestBase for Mesh<MemTransport> {
    async fn setup(ctx: Ctx<MemTransport>, roster: Roster, seed: u64) -> Result<Self, Error> {
        let own = rss_own_seed(seed, ctx.me());
        let dealer = Dealer::new(dealer_seed(seed), roster.n());
        Self::new(ctx, roster, own, Source::Dealer(dealer))
    }

    fn stats(&self) -> Stats {
        self.ctx().stats()
    }
}

/// Runs `f` as each party of a fresh `spdz2k` session of `n` parties (dealer material);
/// returns each party's result.
///
/// ```
/// use ringfence_core::{net::PartyId, ring::Z64, sharing::{Arith, Len}, testing, Error};
/// async fn square<S: Arith<Z64>>(p: &mut S, x: Option<&[Z64]>) -> Result<Vec<Z64>, Error> {
///     let (prep, t) = p.input_prep(PartyId(0), 1);
///     let (m, _) = p.mul_prep(&t, &t, 0).await?;
///     let x = p.input(PartyId(0), x, prep).await?;
///     let y = p.mul(&x, &x, m).await?;
///     p.open(y).await
/// }
/// let outs = testing::run_spdz2k(2, 3, |mut p| async move {
///     let mine = (p.me() == PartyId(0)).then_some(&[Z64(6)][..]);
///     square(&mut p, mine).await
/// });
/// assert!(outs.iter().all(|o| o.as_deref() == Ok(&[Z64(36)][..])));
/// ```
pub fn run_spdz2k<O, F, Fut>(n: usize, seed: u64, f: F) -> Vec<Result<O, Error>>
where
    F: Fn(Spdz2k<MemTransport>) -> Fut,
    Fut: Future<Output = Result<O, Error>>,
{
    let Ok(roster) = Roster::new(n, n.saturating_sub(1)) else {
        return vec![Err(Error::ApiMisuse(format!("spdz2k among {n} parties")))];
    };
    let net = Net::new(n);
    super::run_base(&net, roster, n, seed, |_, base: Mesh<MemTransport>| f(Spdz2k::start(base)))
}

/// Runs `f` as each party of a fresh `spdz2k` session of `n` parties on `net` whose material
/// the parties make themselves (OT, authentication, sacrifice: no dealer); returns each
/// party's result.
pub fn run_spdz2k_generating<O, F, Fut>(
    net: &Net,
    n: usize,
    seed: u64,
    f: F,
) -> Vec<Result<O, Error>>
where
    F: Fn(Spdz2k<MemTransport>) -> Fut,
    Fut: Future<Output = Result<O, Error>>,
{
    let Ok(roster) = Roster::new(n, n.saturating_sub(1)) else {
        return vec![Err(Error::ApiMisuse(format!("spdz2k among {n} parties")))];
    };
    let f = &f;
    let futs: Vec<super::PartyFuture<'_, Result<O, Error>>> = roster
        .parties()
        .map(|me| {
            let ctx = Ctx::new(me, n, crate::net::SessionId([1; 16]), net.transport(me));
            Box::pin(async move {
                let own = rss_own_seed(seed, me);
                f(Spdz2k::start(Mesh::new(ctx, roster, own, Source::parties())?)).await
            }) as super::PartyFuture<'_, _>
        })
        .collect();
    net.run(futs)
}
