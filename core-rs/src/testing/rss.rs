//! Runs `rss` sessions on the in-memory network.

use core::future::Future;

use super::{Net, PartyFuture};
use crate::net::{Ctx, PartyId, Roster, SessionId};
use crate::prg::Seed;
use crate::rss::client::RssClient;
use crate::rss::Rss;
use crate::Error;

use super::MemTransport;

/// Party `me`'s private randomness in a test session from `seed`.
pub fn rss_own_seed(seed: u64, me: PartyId) -> Seed {
    let mut b = [0u8; 32];
    b[..8].copy_from_slice(&seed.to_le_bytes());
    b[8] = me.0;
    b[9] = 0x55;
    Seed::from_bytes(b)
}

/// Party `me`'s `rss` session of `roster` on `net` (with `participants` ids), keyed from `seed`.
pub async fn rss_party(
    net: &Net,
    roster: Roster,
    participants: usize,
    seed: u64,
    me: PartyId,
) -> Result<Rss<MemTransport>, Error> {
    let ctx = Ctx::new(me, participants, SessionId([1; 16]), net.transport(me));
    Rss::setup(ctx, roster, rss_own_seed(seed, me)).await
}

/// Runs `f` as each party of a fresh `rss` session of `roster`, panicking if one fails.
pub fn run_rss<O, F, Fut>(roster: Roster, seed: u64, f: F) -> Vec<O>
where
    F: Fn(Rss<MemTransport>) -> Fut,
    Fut: Future<Output = Result<O, Error>>,
{
    let net = Net::new(roster.n());
    super::run_base(&net, roster, roster.n(), seed, |_, p: Rss<MemTransport>| f(p))
        .into_iter()
        .enumerate()
        .map(|(i, r)| r.unwrap_or_else(|e| panic!("P{i} failed: {e}")))
        .collect()
}

/// Runs `party` as each party and `client` as the first client of a fresh `rss` session of
/// `roster`; returns the parties' results and the client's, panicking if one fails.
pub fn run_rss_with_client<O, C, F, Fut, G, GFut>(
    roster: Roster,
    seed: u64,
    party: F,
    client: G,
) -> (Vec<O>, C)
where
    F: Fn(Rss<MemTransport>) -> Fut,
    Fut: Future<Output = Result<O, Error>>,
    G: FnOnce(RssClient<MemTransport>) -> GFut,
    GFut: Future<Output = Result<C, Error>>,
{
    let participants = roster.participants(1);
    let net = Net::new(participants);
    let (party, net_ref) = (&party, &net);
    // Each future returns its own result: a party's or the client's.
    type Either<O, C> = (Option<O>, Option<C>);
    let mut futs: Vec<PartyFuture<'_, Result<Either<O, C>, Error>>> = roster
        .parties()
        .map(|me| {
            Box::pin(async move {
                let p = rss_party(net_ref, roster, participants, seed, me).await?;
                Ok((Some(party(p).await?), None))
            }) as PartyFuture<'_, _>
        })
        .collect();
    let me = roster.first_client();
    let ctx = Ctx::new(me, participants, SessionId([1; 16]), net.transport(me));
    let c = RssClient::new(ctx, roster, rss_own_seed(seed, me));
    futs.push(Box::pin(async move { Ok((None, Some(client(c).await?))) }));
    let mut outs = Vec::new();
    let mut got = None;
    for (i, r) in net.run(futs).into_iter().enumerate() {
        match r.unwrap_or_else(|e| panic!("participant {i} failed: {e}")) {
            (Some(o), _) => outs.push(o),
            (_, Some(c)) => got = Some(c),
            _ => unreachable!("each future returns its own result"),
        }
    }
    (outs, got.expect("the client ran"))
}

/// `rss`'s session for the conformance suites, keyed as [`run_rss`] keys it.
impl super::conformance::TestBase for Rss<MemTransport> {
    async fn setup(ctx: Ctx<MemTransport>, roster: Roster, seed: u64) -> Result<Self, Error> {
        let me = ctx.me();
        Self::setup(ctx, roster, rss_own_seed(seed, me)).await
    }

    fn stats(&self) -> crate::net::Stats {
        self.ctx().stats()
    }
}
