//! External input providers (clients) of an `rss` session: a participant outside the compute
//! parties that secret-shares its input and alone reconstructs its outputs.
//!
//! **Input.** The client draws a fresh 32-byte seed for every share but the designated one
//! (set 0), expands each to that share's values, and sets the designated share to `x` minus
//! their sum. Each party receives the seeds of the shares it holds and, if it holds the
//! designated share, its values (1 round; per value, the `t + 1` holders of the designated share
//! receive one element, plus 32 bytes per held share and input). The paper's Protocol 5, with
//! fresh seeds per input rather than per session.
//!
//! **The client is not trusted to send consistent shares.** Every share travels to `t + 1`
//! parties; before the input is used, the parties exchange digests of every share they received
//! (one round) and fail naming the client on any difference, as rep3 does. The digests are keyed
//! with the share's key, so the parties that lack a share learn nothing from its digest.
//!
//! **Output.** Each party sends the client one element per value: its part of the value (each
//! share counted at its lowest holder) plus masks that sum to zero over the parties
//! (those of [`Rss::mul_pub`]), so the client learns the value and nothing of the sharing, and a
//! client colluding with `t` parties learns only the value too.
//!
//! ```
//! use ringfence_core::{net::{PartyId, Roster}, ring::Z64, testing};
//! let roster = Roster::new(5, 2)?;
//! let (parties, client) = testing::run_rss_with_client(roster, 4,
//!     |mut p| async move {
//!         let x = p.input_from_client::<Z64>(roster.first_client(), 2).await?;
//!         let y = p.mul(&x, &x).await?;
//!         p.open_to_client(roster.first_client(), y).await
//!     },
//!     |mut c| async move {
//!         c.share(&[Z64(3), Z64(5)])?;
//!         c.reconstruct::<Z64>(2).await
//!     });
//! assert_eq!(client, vec![Z64(9), Z64(25)]);
//! assert_eq!(parties.len(), 5);
//! # Ok::<(), ringfence_core::Error>(())
//! ```

use sha2::{Digest as _, Sha256};

use super::{purpose, Access, Rss, RssVec, KEY_WORDS};
use crate::net::{digest_words, words_digest, Ctx, FrameError, PartyId, Roster, Transport};
use crate::prg::{Prg, Seed};
use crate::ring::{kernels, Ring, Z64};
use crate::Error;

/// Domain of the digests the parties compare: they name nothing else.
const INPUT_DIGEST_DOMAIN: &[u8] = b"ringfence/rss-client-input-consistency/v1";

/// The client side of an `rss` session. `Debug` is redacted.
pub struct RssClient<T> {
    ctx: Ctx<T>,
    roster: Roster,
    own: Seed,
}

impl<T> core::fmt::Debug for RssClient<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RssClient").field("ctx", &self.ctx).finish_non_exhaustive()
    }
}

/// Expands a share's seed to its `n` values.
fn expand<R: Ring>(seed: &Seed, n: usize) -> Vec<R> {
    let mut v = vec![R::ZERO; n];
    R::fill_random(&mut Prg::new(seed, 0, purpose::CLIENT << 8), &mut v);
    v
}

impl<T: Transport> RssClient<T> {
    /// A client of a session of `roster` with context `ctx` (a client id) and private
    /// randomness `own`. A roster rss does not support, or a party's id, fails at the first
    /// [`RssClient::share`] or [`RssClient::reconstruct`].
    pub fn new(ctx: Ctx<T>, roster: Roster, own: Seed) -> Self {
        Self { ctx, roster, own }
    }

    fn access(&self) -> Result<Access, Error> {
        if self.roster.is_party(self.ctx.me()) {
            return Err(Error::ApiMisuse(format!(
                "{} is a compute party, not a client",
                self.ctx.me()
            )));
        }
        Access::for_roster(self.roster)
    }

    /// The context (counters).
    pub fn ctx(&self) -> &Ctx<T> {
        &self.ctx
    }

    /// Gives the context back.
    pub fn into_ctx(self) -> Ctx<T> {
        self.ctx
    }

    /// Secret-shares `values` to the parties (1 round). Returns, per party, the first share it
    /// received (for display: random to anyone but the client).
    pub fn share<R: Ring>(&mut self, values: &[R]) -> Result<Vec<Vec<R>>, Error> {
        let access = self.access()?;
        let op = self.ctx.next_op();
        let n = values.len();
        let mut draw = Prg::new(&self.own, op, purpose::CLIENT << 8);
        let seeds: Vec<Seed> = (1..access.shares())
            .map(|_| {
                let mut b = [0u8; 32];
                draw.fill_bytes(&mut b);
                Seed::from_bytes(b)
            })
            .collect();
        let mut shares: Vec<Vec<R>> = vec![values.to_vec()];
        for seed in &seeds {
            let v = expand::<R>(seed, n);
            kernels::sub_assign(&mut shares[0], &v);
            shares.push(v);
        }
        self.ctx.round();
        let mut firsts = Vec::new();
        for p in self.roster.parties() {
            let held = access.held(p);
            let words: Vec<Z64> = held
                .iter()
                .filter(|&&s| s != 0)
                .flat_map(|&s| super::seed_words(&seeds[s - 1]))
                .collect();
            self.ctx.send(p, &words)?;
            if held.first() == Some(&0) {
                self.ctx.send(p, &shares[0])?;
            }
            firsts.push(shares[held[0]].clone());
        }
        Ok(firsts)
    }

    /// Receives one element per value from every party and reconstructs `n` values.
    pub async fn reconstruct<R: Ring>(&mut self, n: usize) -> Result<Vec<R>, Error> {
        self.access()?;
        self.ctx.round();
        let mut out = vec![R::ZERO; n];
        for p in self.roster.parties() {
            let part = self.ctx.recv::<R>(p, n).await?;
            kernels::add_assign(&mut out, &part);
        }
        Ok(out)
    }
}

impl<T: Transport> Rss<T> {
    /// Receives `n` values secret-shared by the external `client` and checks that every share
    /// reached its holders identical (2 rounds).
    pub async fn input_from_client<R: Ring>(
        &mut self,
        client: PartyId,
        n: usize,
    ) -> Result<RssVec<R>, Error> {
        if self.roster().is_party(client) {
            return Err(Error::ApiMisuse(format!("{client} is a compute party, not a client")));
        }
        let me = self.me();
        let held = self.access.held(me).to_vec();
        self.ctx.round();
        let seeded = held.iter().filter(|&&s| s != 0).count();
        let words = self.ctx.recv::<Z64>(client, KEY_WORDS * seeded).await?;
        let mut v = self.zeros(n);
        let mut pieces: Vec<(usize, [u8; 32])> = Vec::with_capacity(held.len());
        let mut seeds = words.chunks_exact(KEY_WORDS);
        for (pos, &s) in held.iter().enumerate() {
            if s == 0 {
                v.shares[pos] = self.ctx.recv::<R>(client, n).await?;
                let mut scratch = Vec::new();
                pieces
                    .push((s, Sha256::digest(R::wire_bytes(&v.shares[pos], &mut scratch)).into()));
            } else {
                let w = seeds.next().unwrap_or_default();
                v.shares[pos] = expand(&super::words_seed(w), n);
                pieces.push((s, words_digest(w)));
            }
        }
        self.check_client_input(client, n, &pieces).await?;
        Ok(v)
    }

    /// Every party sends every other its digest of each share it received (1 round); all reach
    /// the same verdict. A share two parties received differently is
    /// [`Error::PeerMisbehaved`] naming the client and the two parties, and poisons the context.
    async fn check_client_input(
        &mut self,
        client: PartyId,
        n: usize,
        pieces: &[(usize, [u8; 32])],
    ) -> Result<(), Error> {
        let me = self.me();
        let op = self.ctx.next_op();
        let session = self.ctx.session();
        // Keyed with the share's key, which only its holders know: a party that lacks a share
        // gets its digest too (so that every party reaches the same verdict) but cannot test
        // guesses of a low-entropy input against it.
        let keys = &self.keys;
        let digest = |s: usize, content: &[u8; 32]| -> [u8; 32] {
            let key = keys[s].as_ref().map_or(&[0u8; 32], |k| &k.0);
            Sha256::new()
                .chain_update(INPUT_DIGEST_DOMAIN)
                .chain_update(key)
                .chain_update(session.0)
                .chain_update(op.to_le_bytes())
                .chain_update([client.0])
                .chain_update((s as u64).to_le_bytes())
                .chain_update((n as u64).to_le_bytes())
                .chain_update(content)
                .finalize()
                .into()
        };
        let own: Vec<[u8; 32]> = pieces.iter().map(|(s, c)| digest(*s, c)).collect();
        let words: Vec<Z64> = own.iter().flat_map(digest_words).collect();
        let others: Vec<PartyId> = self.roster().others(me).collect();
        self.ctx.round();
        for &j in &others {
            self.ctx.send(j, &words)?;
        }
        let mut table: Vec<(usize, PartyId, [u8; 32])> =
            pieces.iter().zip(own).map(|((s, _), d)| (*s, me, d)).collect();
        for &j in &others {
            let theirs = self.access.held(j).to_vec();
            let got = self.ctx.recv::<Z64>(j, KEY_WORDS * theirs.len()).await?;
            for (s, w) in theirs.into_iter().zip(got.chunks_exact(KEY_WORDS)) {
                table.push((s, j, words_digest(w)));
            }
        }
        table.sort_by_key(|&(s, j, _)| (s, j));
        for (a, b) in table.iter().zip(&table[1..]) {
            if a.0 == b.0 && a.2 != b.2 {
                let reason = format!(
                    "the client sent {} and {} different copies of share {} of its input",
                    a.1, b.1, a.0
                );
                return Err(self.ctx.poison(Error::PeerMisbehaved {
                    peer: client,
                    reason: FrameError::Inconsistent(reason),
                }));
            }
        }
        Ok(())
    }

    /// Sends the external `client` this party's masked part of `x`; the client alone
    /// reconstructs it (1 round, one element per value).
    pub async fn open_to_client<R: Ring>(
        &mut self,
        client: PartyId,
        x: RssVec<R>,
    ) -> Result<(), Error> {
        if self.roster().is_party(client) {
            return Err(Error::ApiMisuse(format!("{client} is a compute party, not a client")));
        }
        let mut part = self.additive_part(&x);
        let op = self.ctx.next_op();
        self.add_zero_sum_mask(op, &mut part);
        self.ctx.round();
        self.ctx.send(client, &part)
    }
}
