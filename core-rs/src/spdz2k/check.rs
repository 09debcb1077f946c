//! Opening and the batched MAC check (the extract's section 1.4, variant A), run over every
//! value opened since the last check before anything is released.

use super::{Auth, Instance, Spdz2k, Spdz2kRing};
use crate::net::{digest_words, words_digest, PartyId, Transport};
use crate::prg::{Prg, Seed};
use crate::ring::{IntRing, Ring, Z128, Z32, Z64};
use crate::sharing::View;
use crate::Error;

/// Words of a commitment's nonce and of a digest.
const WORDS: usize = 4;

impl<T: Transport> Spdz2k<T> {
    /// Opens `x` to every party without checking it yet: each party sends the low `k` bits of
    /// its value shares to every other (one round) and sums them with their carries. The
    /// opening is logged for the next [`Spdz2k::check`]; nothing opened may be released before
    /// that check passes.
    pub(crate) async fn open_unchecked<R: Spdz2kRing>(
        &mut self,
        x: &Auth<R>,
    ) -> Result<Vec<R>, Error> {
        let (me, roster) = (self.me(), self.roster());
        let n = x.x.len();
        let low: Vec<R> = x.x.iter().map(|&w| R::low(w)).collect();
        let ctx = self.ctx_mut();
        ctx.round();
        for peer in roster.others(me) {
            ctx.send(peer, &low)?;
        }
        let mut hat: Vec<R::Wide> = low.iter().map(|&v| v.widen()).collect();
        for peer in roster.others(me) {
            let theirs = ctx.recv::<R>(peer, n).await?;
            for (h, t) in hat.iter_mut().zip(theirs) {
                *h += t.widen();
            }
        }
        self.public.absorb(&hat);
        self.unchecked = true;
        let inst = R::instance(self);
        inst.high.extend(x.x.iter().map(|&w| R::high(w)));
        inst.mac.extend_from_slice(&x.m);
        let opened = hat.iter().map(|&h| R::low(h)).collect();
        inst.hat.append(&mut hat);
        Ok(opened)
    }

    /// Records public values every party must have received alike (an input's differences):
    /// the next check compares digests of them.
    pub(crate) fn absorb_public<R: Ring>(&mut self, v: &[R]) {
        self.public.absorb(v);
        self.unchecked = true;
    }

    /// The batched MAC check of everything opened since the last one, in both rings, and the
    /// comparison of every public value's digest: `Ok` at a party only if its check passed and
    /// every other party said its own did. Six rounds; nothing when nothing was opened.
    ///
    /// Coins are committed and then opened (after the openings they weigh); each party sends
    /// its masked upper parts `p_j` (`s` bits per ring), then commits to its share `z_j` of
    /// the check value and the digest of the public values, opens both, and every party
    /// checks the commitments, the digests and `Σ z_j = 0`. A party whose check fails sends
    /// every other an abort notice in place of its verdict.
    pub async fn check(&mut self) -> Result<(), Error> {
        if !self.unchecked {
            return Ok(());
        }
        let outcome = self.check_inner().await;
        let (me, roster) = (self.me(), self.roster());
        let ctx = self.ctx_mut();
        match outcome {
            Ok(()) => {
                ctx.round();
                for peer in roster.others(me) {
                    ctx.send(peer, &[Z64(0)])?;
                }
                for peer in roster.others(me) {
                    if ctx.recv::<Z64>(peer, 1).await? != [Z64(0)] {
                        return Err(Error::Abort {
                            blame: Some(peer),
                            reason: format!("{peer} reported a failed MAC check"),
                        });
                    }
                }
                self.unchecked = false;
                Ok(())
            }
            Err(e) => {
                if matches!(e, Error::Abort { .. }) {
                    for peer in roster.others(me) {
                        // Best effort: the peer may be gone, and this party stops either way.
                        let _ = ctx.send_abort_notice(peer);
                    }
                }
                Err(e)
            }
        }
    }

    async fn check_inner(&mut self) -> Result<(), Error> {
        let op = self.ctx_mut().next_op();
        let mut own = self.private_prg();
        let mut coin = [0u8; 32];
        own.fill_bytes(&mut coin);
        let coins = self.commit_and_open(op, "coins", &mut own, digest_words(&coin)).await?;
        let parts: Vec<Seed> = coins.iter().map(|w| Seed::from_bytes(words_digest(w))).collect();
        let seed = Seed::combine(&parts);

        let (r32, r64) = (self.check_mask::<Z32>().await?, self.check_mask::<Z64>().await?);
        let c32 = Combination::new(&self.z32, &seed, op, &r32);
        let c64 = Combination::new(&self.z64, &seed, op, &r64);
        let (me, roster) = (self.me(), self.roster());
        let ctx = self.ctx_mut();
        ctx.round();
        let mine = [Z64(u64::from(c32.p.0)), c64.p];
        for peer in roster.others(me) {
            ctx.send(peer, &mine)?;
        }
        let (mut p32, mut p64) = (c32.p, c64.p);
        for peer in roster.others(me) {
            let theirs = ctx.recv::<Z64>(peer, 2).await?;
            let Ok(their32) = u32::try_from(theirs[0].0) else {
                return Err(Error::Abort {
                    blame: Some(peer),
                    reason: format!("{peer} sent a 32-bit check value wider than 32 bits"),
                });
            };
            p32 += Z32(their32);
            p64 += theirs[1];
        }
        let z32 = c32.z(&self.z32, p32, &r32);
        let z64 = c64.z(&self.z64, p64, &r64);

        let public = core::mem::replace(&mut self.public, View::new("public", op)).words();
        let mut payload = vec![z32, Z64(z64.0 as u64), Z64((z64.0 >> 64) as u64)];
        payload.extend_from_slice(&public);
        let opened = self.commit_and_open(op, "mac check", &mut own, payload).await?;
        self.z32.clear();
        self.z64.clear();

        let (mut s32, mut s64) = (Z64(0), Z128(0));
        for (j, w) in opened.iter().enumerate() {
            if w[3..3 + WORDS] != public[..] {
                return Err(Error::Abort {
                    blame: Some(PartyId(j as u8)),
                    reason: format!("P{j} saw other public values than {me}"),
                });
            }
            s32 += w[0];
            s64 += Z128(u128::from(w[1].0) | (u128::from(w[2].0) << 64));
        }
        if s32 != Z64(0) || s64 != Z128(0) {
            return Err(Error::Abort {
                blame: None,
                reason: "the MAC check failed: an opened value or a share was changed".into(),
            });
        }
        Ok(())
    }

    /// Commits to `payload` (one round), then opens it (another): returns every party's
    /// payload in party order (this party's own included), each checked against its
    /// commitment.
    async fn commit_and_open(
        &mut self,
        op: u64,
        what: &str,
        own: &mut Prg,
        payload: Vec<Z64>,
    ) -> Result<Vec<Vec<Z64>>, Error> {
        let (me, roster) = (self.me(), self.roster());
        let mut nonce = [0u8; 32];
        own.fill_bytes(&mut nonce);
        let nonce = digest_words(&nonce);
        let commitment = |who: PartyId, payload: &[Z64], nonce: &[Z64]| {
            let mut v = View::new(what, op);
            v.absorb(&[Z64(u64::from(who.0))]);
            v.absorb(payload);
            v.absorb(nonce);
            v.words()
        };
        let ctx = self.ctx_mut();
        ctx.round();
        let mine = commitment(me, &payload, &nonce);
        for peer in roster.others(me) {
            ctx.send(peer, &mine)?;
        }
        let mut commitments = Vec::with_capacity(roster.n());
        for peer in roster.others(me) {
            commitments.push((peer, ctx.recv::<Z64>(peer, WORDS).await?));
        }
        ctx.round();
        let mut opening = payload.clone();
        opening.extend_from_slice(&nonce);
        for peer in roster.others(me) {
            ctx.send(peer, &opening)?;
        }
        let mut out = vec![Vec::new(); roster.n()];
        out[me.index()] = payload;
        let len = out[me.index()].len();
        for (peer, c) in commitments {
            let got = ctx.recv::<Z64>(peer, len + WORDS).await?;
            let (theirs, their_nonce) = got.split_at(len);
            if commitment(peer, theirs, their_nonce) != c {
                return Err(Error::Abort {
                    blame: Some(peer),
                    reason: format!("{peer} opened {what} other than it committed to"),
                });
            }
            out[peer.index()] = theirs.to_vec();
        }
        Ok(out)
    }
}

/// One ring's part of a check: the public combination `y = Σ χ_i x̂_i` and this party's
/// masked combination of its upper parts `p_j = Σ χ_i·⌊x_ij / 2^k⌋ + r_j (mod 2^s)`.
struct Combination<R: Spdz2kRing> {
    chi: Vec<R>,
    y: R::Wide,
    p: R,
}

impl<R: Spdz2kRing> Combination<R> {
    fn new(inst: &Instance<R>, seed: &Seed, op: u64, mask: &Auth<R>) -> Self {
        let mut chi = vec![R::ZERO; inst.hat.len()];
        R::fill_random(&mut Prg::new(seed, op, R::BITS), &mut chi);
        let y = chi
            .iter()
            .zip(&inst.hat)
            .fold(<R::Wide as Ring>::ZERO, |acc, (&c, &h)| acc + c.widen() * h);
        let p = chi.iter().zip(&inst.high).fold(R::low(mask.x[0]), |acc, (&c, &h)| acc + c * h);
        Self { chi, y, p }
    }

    /// `z_j = Σ χ_i m_ij − α_j·y − 2^k·α_j·p + 2^k·l_j`, whose sum over the parties is zero
    /// exactly when the opened values carry valid MACs (up to the check's error), as one
    /// word pair of the wide ring.
    fn z(&self, inst: &Instance<R>, p: R, mask: &Auth<R>) -> <R as Spdz2kRing>::Wide {
        let a = inst.alpha.widen();
        let macs = self
            .chi
            .iter()
            .zip(&inst.mac)
            .fold(<R::Wide as Ring>::ZERO, |acc, (&c, &m)| acc + c.widen() * m);
        macs - a * self.y - (a * p.widen()).shl(R::BITS) + mask.m[0].shl(R::BITS)
    }
}
