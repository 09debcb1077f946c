//! edaBits (Escudero, Ghosh, Keller, Rachuri and Scholl, CRYPTO 2020): a random value `[r]` of
//! the `k`-bit instance with its bits `[r_i]` in the binary instance, made from TinyOT bits
//! instead of `k` random arithmetic bits (Π_RandBit, one triple of the (k+2)-bit instance
//! each). What comparisons, equality tests and bit decompositions mask their inputs with.
//!
//! * **Candidates**: every party's share of an authenticated random value (the arithmetic
//!   side) and, as TinyOT bits, the bits of its share's low `k` bits (one correlated OT per
//!   bit and peer): each party's value as a sharing it alone holds, summed by ripple-carry
//!   adders on TinyOT bits (`k − 1` ANDs, Beaver's with TinyOT triples, per addition).
//! * **Cut and buckets** (the cut-and-bucket of Araki et al. applied to edaBits, as Escudero et
//!   al. do): after every candidate is fixed, coins open `B` of the `nB + B` candidates and
//!   place the rest in `n` buckets of `B`. An opened candidate's value (MAC-checked) and bits
//!   must agree. For the first `f` of a bucket and each other member `o`, `r_f + r_o` is opened
//!   both in the arithmetic instance and from an adder of their bits, and must agree; `o` is
//!   used by nothing else, so the opened sum hides `r_f`. Candidate `c`'s bits make the value
//!   `r_c + δ_c` (`δ_c` fixed with the candidate by the parties that chose its bits), and a
//!   bucket passes only if `δ_o = −δ_f` for every `o`: all its members bad, or none.
//!   [`bucket_size`] picks `B` for the batch from the resulting bound.
//! * **Output**: each bucket's first, its bits converted into the binary instance by the S&P
//!   2019 paper's Fig. 2 ([`Generator::convert`]). Opened values of both domains enter the
//!   batch's view, compared at its MAC check.
//!
//! Costs per edaBit and peer at k = 64, `B = 5` (runs of 2,048): about `9·63` TinyOT ANDs (each `3B'` correlated
//! OTs and `B'` half-AND messages for TinyOT's own bucket `B'`, and two opened bits), `5·64`
//! correlated OTs for the candidates' bits, 64 bits converted (a vector OLE each) and five
//! values authenticated — against 64 triples of the (k+2)-bit instance for random bits.

use super::super::check::{coin_toss, mac_check, open_logged, settle, Log};
use super::super::tinyot::{self, ABits, BUCKET_STAT};
use super::{Generator, Wide, Widths};
use crate::net::{Ctx, PartyId, Roster, Transport};
use crate::prg::Prg;
use crate::sharing::View;
use crate::Error;

use super::super::word::Word;

/// edaBits made in one run at most (the candidates' bit planes stay in memory: about 33
/// bytes per bit and peer). A run makes exactly what is asked, up to this: smaller runs need
/// larger buckets (B = 6 from 200, 7 at 43, 22 for one), but a run of more than is drawn would
/// cost more in all for the small requests that are common (a tree's 43 comparisons).
pub const EDA_BATCH: usize = 2048;

/// TinyOT triples made in one run for the adders (about 100 bytes each among two parties,
/// more while their leaky ANDs are bucketed).
const TINY_RUN: usize = 1 << 17;

/// The smallest bucket size `B ≥ 2` for which `n` buckets of `B` candidates, after `B` more
/// are opened (the cut), hide a bad edaBit with probability at most `2^−stat`. The check
/// passes only if the bad candidates avoid the cut and fill whole buckets; with a cut of at
/// least `B` the adversary's best is one bucket's worth, and it wins with probability
/// `n / C(nB + B, B)` (Araki et al., S&P 2017, Lemma 5.2 and Theorem 5.3; the extract's §4.4).
/// Without the cut, making every candidate bad by the same `2^(k−1)` would pass every bucket.
pub(crate) fn bucket_size(n: usize, stat: f64) -> usize {
    let ln2 = core::f64::consts::LN_2;
    (2..64)
        .find(|&b| (n as f64).ln() - tinyot::ln_choose((n * b + b) as f64, b) <= -stat * ln2)
        .unwrap_or(usize::MAX)
}

impl<W: Word> Generator<W> {
    /// `n` edaBits of the instance of `k` value bits, in runs of at most [`EDA_BATCH`]: `k + 1`
    /// components, the values (`k + s` bits) and then bit `i` of every value (the binary
    /// instance's `1 + s`) for `i < k`.
    pub(crate) async fn eda_bits<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        k: u32,
        n: usize,
    ) -> Result<Vec<Wide<W>>, Error> {
        let mut out: Vec<Wide<W>> = (0..=k).map(|_| Wide::default()).collect();
        let mut made = 0;
        while made < n {
            // Equal runs: a small last one would need large buckets.
            let runs_left = (n - made).div_ceil(EDA_BATCH);
            let m = (n - made).div_ceil(runs_left);
            // The values' arithmetic in u128 where k + s bits fit.
            let batch = if k + self.s <= u128::BITS {
                self.eda_batch::<T, u128>(ctx, roster, own, k, m).await?
            } else {
                self.eda_batch::<T, W>(ctx, roster, own, k, m).await?
            };
            out.iter_mut().zip(batch).for_each(|(o, b)| o.append(b));
            made += m;
            self.progress.advance(m);
        }
        Ok(out)
    }

    /// One run of [`Generator::eda_bits`].
    async fn eda_batch<T: Transport, P: Word>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        k: u32,
        n: usize,
    ) -> Result<Vec<Wide<W>>, Error> {
        let (me, ku) = (ctx.me(), k as usize);
        let b = bucket_size(n, BUCKET_STAT);
        // n buckets of b, and b more opened (the cut).
        let m = n * b + b;
        let wd = Widths { v: k, s: self.s };
        let w = wd.w();
        // Candidates: the low k bits of a party's share are its part of the value (one more
        // value is the MAC check's mask).
        let arith: Wide<P> = self.random_values(ctx, roster, own, wd, m + 1).await?;
        let mut mine: Vec<bool> =
            (0..k).flat_map(|i| arith.x[..m].iter().map(move |x| x.bit(i))).collect();
        if let Some((c, i)) = self.eda_deviation.take() {
            mine[i as usize * m + c % m] ^= true;
        }
        let all = tinyot::authenticate(&mut self.cot, ctx, own, mine).await?;
        let plane = |owner: usize, i: usize| {
            all.slice(i * m..(i + 1) * m).owned_by(me, PartyId(owner as u8))
        };
        let op = ctx.next_op();
        let mut seen = View::new("edabits", op);
        let mut sum: Vec<ABits> = (0..ku).map(|i| plane(0, i)).collect();
        for owner in 1..roster.n() {
            let theirs: Vec<ABits> = (0..ku).map(|i| plane(owner, i)).collect();
            sum = self.add(ctx, roster, own, &sum, &theirs, &mut seen).await?;
        }
        drop(all);

        // The cut and the buckets, by coins tossed now that every candidate is fixed: the
        // first b of the permutation are opened, bucket q is the b after them from q·b.
        let seed = coin_toss(ctx, roster, own, op).await?;
        let perm = tinyot::permutation(&seed, op, m);
        let (cut, buckets) = perm.split_at(b);
        let (mut first, mut other) = (Vec::new(), Vec::new());
        for bucket in buckets.chunks_exact(b) {
            for &o in &bucket[1..] {
                first.push(bucket[0]);
                other.push(o);
            }
        }
        // Opened: the cut's values, then each pair's sum r_f + r_o; in both domains.
        let checks = cut.len() + first.len();
        let mut log = Log::new(k, self.s, P::from_u128(self.alpha.low_u128()));
        let opened = |v: &[P]| -> Vec<P> {
            let pairs = first.iter().zip(&other).map(|(&f, &o)| v[f].wrapping_add(v[o]).reduce(w));
            cut.iter().map(|&c| v[c]).chain(pairs).collect()
        };
        let (ox, om) = (opened(&arith.x), opened(&arith.m));
        let as_arith = open_logged(ctx, roster, &mut log, &mut seen, &ox, &om).await?;
        let xs: Vec<ABits> = sum.iter().map(|p| p.gather(&first)).collect();
        let ys: Vec<ABits> = sum.iter().map(|p| p.gather(&other)).collect();
        let pair_sums = self.add(ctx, roster, own, &xs, &ys, &mut seen).await?;
        drop((xs, ys));
        let planes: Vec<ABits> = sum
            .iter()
            .zip(&pair_sums)
            .map(|(p, q)| ABits::concat(&[p.gather(cut), q.clone()]))
            .collect();
        drop(pair_sums);
        let delta = self.cot.delta();
        let as_bits = tinyot::open(ctx, roster, delta, &ABits::concat(&planes)).await?;
        seen.absorb(&tinyot::pack(as_bits.iter().copied()));
        let mask = (arith.x[m], arith.m[m]);
        mac_check(ctx, roster, own, seen, &mut [(&mut log, Some(mask))]).await?;
        let bad = (0..checks)
            .find(|&t| (0..k).any(|i| as_arith[t].bit(i) != as_bits[i as usize * checks + t]));
        let outcome = match bad {
            None => Ok(()),
            Some(t) => Err(Error::Abort {
                blame: None,
                reason: if t < b {
                    "edaBits: an opened candidate's bits are not its value's".into()
                } else {
                    format!(
                        "edaBits: bucket {} holds candidates whose bits are not their values'",
                        (t - b) / (b - 1)
                    )
                },
            }),
        };
        settle(ctx, roster, outcome).await?;

        let firsts: Vec<usize> = buckets.chunks_exact(b).map(|q| q[0]).collect();
        let r = Wide {
            x: firsts.iter().map(|&f| W::widen(arith.x[f])).collect(),
            m: firsts.iter().map(|&f| W::widen(arith.m[f])).collect(),
        };
        let planes: Vec<ABits> = sum.iter().map(|p| p.gather(&firsts)).collect();
        drop(sum);
        let mut bits = self.convert(ctx, roster, own, &ABits::concat(&planes)).await?;
        let mut out = Vec::with_capacity(ku + 1);
        out.push(r);
        for i in (0..ku).rev() {
            out.push(bits.split_off(i * n));
        }
        out[1..].reverse();
        Ok(out)
    }

    /// `x + y mod 2^k` on bit planes (plane `i` holds bit `i` of every value) by a ripple-carry
    /// adder: the carry into bit `i + 1` is `c ⊕ (x_i ⊕ c)·(y_i ⊕ c)`, one AND per bit but the
    /// last (`k − 1` rounds of TinyOT ANDs; the triples of up to [`TINY_RUN`] come from one
    /// TinyOT run).
    async fn add<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        roster: Roster,
        own: &mut Prg,
        x: &[ABits],
        y: &[ABits],
        seen: &mut View,
    ) -> Result<Vec<ABits>, Error> {
        let delta = self.cot.delta();
        let (k, len) = (x.len(), x.first().map_or(0, ABits::len));
        // The triples of several steps come from one TinyOT run (its rounds are a dozen;
        // memory bounds how many at once).
        let per_run = (TINY_RUN / len.max(1)).max(1);
        let (mut stock, mut used): (Option<[ABits; 3]>, usize) = (None, 0);
        let mut out = Vec::with_capacity(k);
        let mut carry: Option<ABits> = None;
        for (i, (x, y)) in x.iter().zip(y).enumerate() {
            let p = x.xor(y);
            out.push(match &carry {
                Some(c) => p.xor(c),
                None => p,
            });
            if i + 1 < k {
                if stock.as_ref().is_none_or(|t| t[0].len() == used) {
                    let steps = per_run.min(k - 1 - i);
                    stock = Some(self.tiny_triples(ctx, roster, own, steps * len).await?);
                    used = 0;
                }
                let Some(t) = stock.as_ref() else { unreachable!("made above") };
                let triples = t.each_ref().map(|v| v.slice(used..used + len));
                used += len;
                carry = Some(match carry.take() {
                    None => tinyot::and(ctx, roster, delta, (x, y), triples, seen).await?,
                    Some(c) => {
                        let (xc, yc) = (x.xor(&c), y.xor(&c));
                        tinyot::and(ctx, roster, delta, (&xc, &yc), triples, seen).await?.xor(&c)
                    }
                });
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_follow_the_bound() {
        // n / C(nB + B, B) at n = 2048: 2^−36.6 with B = 4, 2^−48.7 with B = 5.
        assert_eq!(bucket_size(2048, 40.0), 5);
        assert_eq!(bucket_size(1 << 14, 40.0), 4);
        assert_eq!(bucket_size(256, 40.0), 6);
        assert_eq!(bucket_size(200, 40.0), 6);
        assert_eq!(bucket_size(43, 40.0), 7);
        assert_eq!(bucket_size(1, 40.0), 22);
        let sizes: Vec<usize> =
            [1, 16, 256, 512, 1024, 2048].iter().map(|&n| bucket_size(n, 40.0)).collect();
        assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
        assert!(sizes[0] < usize::MAX, "{sizes:?}");
    }
}
