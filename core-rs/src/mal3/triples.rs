//! Validated multiplication triples by cut-and-bucket (the paper's Protocol 3.1, over Z_2^k).
//!
//! [`validated`] makes `N` triples `([a], [b], [c = a·b])` that are all correct except with
//! probability at most `N^−(B−1)` (Theorem 3.4, whatever `C ≥ 1` and `L`):
//! 1. `N + (B−1)(N + C·L)` triples from random sharings and rep3's semi-honest product (a
//!    cheating party can only add errors of its choice to the products);
//! 2. a coin: a fresh random sharing, opened only now that every triple is fixed, and compared
//!    around the ring before use;
//! 3. array `D_1` (the first `N`) stays in place; each of the `B − 1` others is split into `L`
//!    subarrays of `X = N/L + C`, each subarray shuffled, then the subarrays' order;
//! 4. the first `C` triples of **every** subarray are opened and must satisfy `c = a·b`;
//! 5. bucket `i` is triple `i` of `D_1` with triple `i` of each shuffled array; the first is
//!    checked with each of the others ([`super::check::check_products`]'s check, with the cut
//!    triples opened in the same round); the first triples are the output, the others are
//!    discarded.
//!
//! Shuffles are Fisher–Yates on index arrays with unbiased draws; the triples never move. All
//! openings of one run share one round, and its checks end in verdicts every party exchanges.

use super::check::sacrifice;
use super::compare_opened;
use crate::net::{PartyId, Transport};
use crate::prg::{Prg, Seed};
use crate::rep3::{Rep3, Rep3Vec};
use crate::ring::{Ring, Z64};
use crate::Error;

/// Parameters of one cut-and-bucket run: `n` triples out, buckets of `b`, `c` triples opened in
/// each of the `l` subarrays of every shuffled array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// Triples output.
    pub n: usize,
    /// Bucket size (triples per bucket).
    pub b: usize,
    /// Triples opened per subarray.
    pub c: usize,
    /// Subarrays per shuffled array (`n` must be a multiple).
    pub l: usize,
}

impl Params {
    /// The paper's offline configuration for 2^−40: `N = 2^20`, `B = 3`, `C = 1`, `L = 512`.
    pub const PAPER: Self = Self { n: 1 << 20, b: 3, c: 1, l: 512 };

    /// The most triples one run validates (memory: a run holds about `B·N` triples at once).
    pub const MAX_RUN: usize = 1 << 20;

    /// The paper's baseline run (Protocol A.1) for at least `n` triples: [`Self::for_count`]'s
    /// `N`, `B` and `C`, with each of the `B − 1` checking arrays shuffled whole (`L = 1`).
    /// Theorem 3.4 holds with `L = 1`, so the bound is the same; the difference is memory
    /// access: a permutation of `N + C` triples against `L` of `N/L + C`.
    pub fn baseline_for_count(n: usize) -> Self {
        Self { l: 1, ..Self::for_count(n) }
    }

    /// The run for at least `n` triples (at most [`Self::MAX_RUN`]) at 2^−40 or better: `N` is
    /// `n` rounded up to whole subarrays of 1024, `B` the smallest bucket with
    /// `(B − 1)·log₂ N ≥ 40` (5 at N = 2^10, 4 from 2^14, 3 at 2^20), one triple opened per
    /// subarray. A larger run is cheaper per triple: `B + 2(B − 1)` elements per party.
    pub fn for_count(n: usize) -> Self {
        let l = n.clamp(1, Self::MAX_RUN).div_ceil(1024);
        let n = l * 1024;
        let log = (n as f64).log2();
        let b = (2..).find(|&b| (b - 1) as f64 * log >= 40.0).unwrap_or(41);
        Self { n, b, c: 1, l }
    }

    /// Checks the parameters: `B ≥ 2`, `C ≥ 1`, `L ≥ 1` dividing `N > 0`.
    pub fn check(&self) -> Result<(), Error> {
        let bad = |why: &str| Err(Error::ApiMisuse(format!("cut-and-bucket {self:?}: {why}")));
        if self.b < 2 {
            return bad("buckets need at least 2 triples");
        }
        if self.c < 1 {
            return bad("at least one triple per subarray must be opened");
        }
        if self.n == 0 || self.l == 0 || self.n % self.l != 0 {
            return bad("the subarray count must divide a non-zero triple count");
        }
        Ok(())
    }

    /// `−log₂` of the bound on a bad triple among the output: `(B − 1)·log₂ N`.
    pub fn security_bits(&self) -> f64 {
        (self.b - 1) as f64 * (self.n as f64).log2()
    }

    /// Size of a subarray, `X = N/L + C`.
    pub fn subarray(&self) -> usize {
        self.n / self.l + self.c
    }

    /// Triples generated: `N + (B − 1)(N + C·L)`.
    pub fn generated(&self) -> usize {
        self.n + (self.b - 1) * self.l * self.subarray()
    }

    /// Triples opened: `(B − 1)·L·C`.
    pub fn opened(&self) -> usize {
        (self.b - 1) * self.l * self.c
    }
}

/// Protocol 3.9's parameters (on demand, with smaller buckets): each run of Protocol 3.1 has
/// buckets of `B = 2` here, and every product's check takes the triple at a coin-tossed index
/// of an array of `N` validated triples, whose slot is refilled from the next run. Theorem
/// 3.11 bounds the whole unbounded process by `N^−B` under its conditions
/// ([`super::bounds::on_demand_refusal`]); at the paper's `N = 2^20` that is 2^−40 with 7 bits
/// per AND gate and party instead of 10 (`3B + 1`).
///
/// ```
/// use ringfence_core::mal3::triples::{OnDemand, Params};
/// assert_eq!(OnDemand::PAPER.security_bits(), 40.0);
/// // Two opened triples per subarray are refused: the paper's attack wins with about 2/N².
/// assert!(OnDemand::new(Params { n: 1 << 20, b: 2, c: 2, l: 512 }).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnDemand(Params);

impl OnDemand {
    /// The paper's: `N = 2^20`, `B = 2`, `C = 3`, `L = 512` (2^−40).
    pub const PAPER: Self = Self(Params { n: 1 << 20, b: 2, c: 3, l: 512 });

    /// Runs of `run` (each makes the `N` triples of one array), refused with the reason
    /// outside Theorem 3.10's conditions. A smaller `N` than the paper's is allowed (tests use
    /// one) and says what it gives in [`Self::security_bits`].
    pub fn new(run: Params) -> Result<Self, Error> {
        run.check()?;
        match super::bounds::on_demand_refusal(&run) {
            None => Ok(Self(run)),
            Some(why) => Err(Error::ApiMisuse(format!("on-demand checks with {run:?}: {why}"))),
        }
    }

    /// The parameters of each cut-and-bucket run.
    pub fn run(&self) -> Params {
        self.0
    }

    /// `−log₂` of the bound on cheating undetected over the whole process, `B·log₂ N`.
    pub fn security_bits(&self) -> f64 {
        // `new` admitted the parameters, so the theorem's bound applies.
        super::bounds::on_demand_bits(&self.0).unwrap_or(0.0)
    }
}

/// Protocol 3.9's two arrays of one ring: `d1`, always `N` validated triples, from which each
/// product's check takes the triple at a coin-tossed index, and `d2`, the next runs' triples,
/// which refill the slots taken, in order. A triple is kept as one record of its six
/// components (this party's two of each of `a`, `b`, `c`): a draw at a random index of a 48 MB
/// array then touches one record instead of six arrays.
#[derive(Debug)]
pub(crate) struct Reservoir<R> {
    me: PartyId,
    d1: Vec<[R; 6]>,
    d2: Vec<[R; 6]>,
    /// `d2`'s records before this one are used.
    next: usize,
}

/// The records of `t`, in order.
fn records<R: Ring>(t: &Triples<R>) -> impl Iterator<Item = [R; 6]> + '_ {
    (0..t.len()).map(|i| [t.a.a[i], t.a.b[i], t.b.a[i], t.b.b[i], t.c.a[i], t.c.b[i]])
}

impl<R: Ring> Reservoir<R> {
    /// Two runs of Protocol 3.1 (the paper's initialisation).
    pub(crate) async fn fill<T: Transport>(p: &mut Rep3<T>, prm: &OnDemand) -> Result<Self, Error> {
        let d1 = validated(p, &prm.0).await?;
        let d2 = validated(p, &prm.0).await?;
        Ok(Self { me: p.me(), d1: records(&d1).collect(), d2: records(&d2).collect(), next: 0 })
    }

    /// Runs Protocol 3.1 until `d2` holds at least `m` unused triples.
    pub(crate) async fn replenish<T: Transport>(
        &mut self,
        p: &mut Rep3<T>,
        prm: &OnDemand,
        m: usize,
    ) -> Result<(), Error> {
        while self.d2.len() - self.next < m {
            let more = validated(p, &prm.0).await?;
            self.d2.drain(..self.next);
            self.next = 0;
            self.d2.extend(records(&more));
        }
        Ok(())
    }

    /// The triples for `m` checks, drawn one after another (the paper's order: an index drawn
    /// twice sees the refilled slot): index `j` uniform below `N` from `prg`, the triple at
    /// `j`, then slot `j` refilled from `d2` (which must hold `m`, [`Self::replenish`]).
    pub(crate) fn draw(&mut self, prg: &mut Prg, m: usize) -> Result<Triples<R>, Error> {
        let left = self.d2.len() - self.next;
        if m > left {
            return Err(Error::PreprocessingExhausted(format!(
                "{m} on-demand checks, {left} refills left"
            )));
        }
        let n = self.d1.len();
        let mut out: [Vec<R>; 6] = core::array::from_fn(|_| Vec::with_capacity(m));
        for fresh in &self.d2[self.next..self.next + m] {
            let slot = &mut self.d1[below(prg, n)];
            for (o, &v) in out.iter_mut().zip(slot.iter()) {
                o.push(v);
            }
            *slot = *fresh;
        }
        self.next += m;
        let [aa, ab, ba, bb, ca, cb] = out;
        let me = self.me;
        Ok(Triples {
            a: Rep3Vec::from_parts(me, aa, ab),
            b: Rep3Vec::from_parts(me, ba, bb),
            c: Rep3Vec::from_parts(me, ca, cb),
        })
    }
}

/// `n` validated triples: shares of `a`, `b` and `c = a·b`. Single use.
#[derive(Debug)]
pub struct Triples<R> {
    pub(crate) a: Rep3Vec<R>,
    pub(crate) b: Rep3Vec<R>,
    pub(crate) c: Rep3Vec<R>,
}

impl<R: Ring> Triples<R> {
    /// Number of triples.
    pub fn len(&self) -> usize {
        self.a.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.a.is_empty()
    }

    /// Moves `n` triples out (they are gone from `self`): the last ones, so that only they
    /// are copied, not the pool that stays (checks take a few at a time from a large pool).
    pub fn take(&mut self, n: usize) -> Result<Self, Error> {
        let len = self.len();
        if n > len {
            return Err(Error::PreprocessingExhausted(format!(
                "{n} triples requested, {len} left"
            )));
        }
        let at = len - n;
        Ok(Self { a: self.a.split_off(at), b: self.b.split_off(at), c: self.c.split_off(at) })
    }

    /// The triples of `parts`, one after another.
    pub(crate) fn concat(parts: Vec<Self>) -> Self {
        let cat =
            |f: fn(&Self) -> &Rep3Vec<R>| Rep3Vec::concat(&parts.iter().map(f).collect::<Vec<_>>());
        Self { a: cat(|t| &t.a), b: cat(|t| &t.b), c: cat(|t| &t.c) }
    }

    /// The shares, for tests that open them.
    #[cfg(any(test, feature = "test-utils"))]
    pub fn into_parts_for_test(self) -> [Rep3Vec<R>; 3] {
        [self.a, self.b, self.c]
    }
}

/// A uniform integer below `bound` (> 0), without modulo bias (rejection sampling).
fn below(prg: &mut Prg, bound: usize) -> usize {
    let bound = bound as u64;
    let zone = u64::MAX - u64::MAX % bound;
    loop {
        let x = prg.next_u64();
        if x < zone {
            return (x % bound) as usize;
        }
    }
}

/// A uniform permutation of `0..n` (Fisher–Yates).
fn permutation(prg: &mut Prg, n: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        p.swap(i, below(prg, i + 1));
    }
    p
}

/// A fresh public coin: a random sharing opened now, compared around the ring (three rounds
/// with the verdicts), as a seed.
pub(super) async fn coin<T: Transport>(p: &mut Rep3<T>) -> Result<Seed, Error> {
    let op = p.ctx_mut().next_op();
    let r = p.random::<Z64>(4);
    let open = p.reveal(r).await?;
    compare_opened(p, "coin", op, &open).await?;
    let mut bytes = [0u8; 32];
    for (chunk, w) in bytes.chunks_exact_mut(8).zip(&open) {
        chunk.copy_from_slice(&w.0.to_le_bytes());
    }
    Ok(Seed::from_bytes(bytes))
}

/// Where the triples of one shuffled array sit: the indices of the opened ones, and the
/// member of every bucket.
pub(super) fn layout(prm: &Params, base: usize, prg: &mut Prg) -> (Vec<usize>, Vec<usize>) {
    let x = prm.subarray();
    let inner: Vec<Vec<usize>> = (0..prm.l).map(|_| permutation(prg, x)).collect();
    let outer = permutation(prg, prm.l);
    let opened = (0..prm.l)
        .flat_map(|j| (0..prm.c).map(move |t| (j, t)))
        .map(|(j, t)| base + j * x + inner[j][t]);
    let members = (0..prm.n).map(|i| {
        let (s, q) = (i / (x - prm.c), i % (x - prm.c));
        let jj = outer[s];
        base + jj * x + inner[jj][prm.c + q]
    });
    (opened.collect(), members.collect())
}

/// Makes `prm.n` validated triples (see the module documentation). Every party gets the same
/// verdict: the triples, or [`Error::Abort`] when a check failed anywhere.
pub async fn validated<R: Ring, T: Transport>(
    p: &mut Rep3<T>,
    prm: &Params,
) -> Result<Triples<R>, Error> {
    prm.check()?;
    let total = prm.generated();
    let a = p.random::<R>(total);
    let b = p.random::<R>(total);
    let c = p.mul(&a, &b).await?;

    let seed = coin(p).await?;
    let mut prg = Prg::new(&seed, 0, 0);
    let (mut opened, mut members) = (Vec::new(), Vec::with_capacity((prm.b - 1) * prm.n));
    for k in 1..prm.b {
        let (o, m) = layout(prm, prm.n + (k - 1) * prm.l * prm.subarray(), &mut prg);
        opened.extend(o);
        members.extend(m);
    }

    // Every bucket's first triple (D_1's) checked with each of its other members (at their
    // shuffled places: nothing is gathered), opening the cut triples in the same round; the
    // cut's verdict joins the bucket checks'.
    let first = 0..prm.n;
    let (x, y, z) = (a.slice(first.clone()), b.slice(first.clone()), c.slice(first));
    let cut = Rep3Vec::concat(&[&a.gather(&opened), &b.gather(&opened), &c.gather(&opened)]);
    let m = opened.len();
    let judge = |v: &[R]| {
        let (ca, cb, cc) = (&v[..m], &v[m..2 * m], &v[2 * m..3 * m]);
        match (0..m).filter(|&i| ca[i] * cb[i] != cc[i]).count() {
            0 => Ok(()),
            bad => Err(Error::Abort {
                blame: None,
                reason: format!("{bad} of {m} opened triples are not products"),
            }),
        }
    };
    sacrifice(p, [&x, &y, &z], [&a, &b, &c], Some(&members), Some(cut), judge).await?;
    Ok(Triples { a: x, b: y, c: z })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_follow_the_paper() {
        let p = Params::PAPER;
        assert!(p.check().is_ok());
        assert_eq!(p.subarray(), 2049);
        assert_eq!(p.generated(), 3_146_752);
        assert_eq!(p.opened(), 1024);
        assert!((p.security_bits() - 40.0).abs() < 1e-9);
        for bad in [
            Params { b: 1, ..p },
            Params { c: 0, ..p },
            Params { l: 0, ..p },
            Params { l: 3, ..p },
            Params { n: 0, ..p },
        ] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn runs_sized_to_the_demand_keep_2_to_the_minus_40() {
        for (want, n, b) in [
            (0, 1024, 5),
            (1, 1024, 5),
            (1024, 1024, 5),
            (1025, 2048, 5),
            (16_384, 16_384, 4),
            (65_536, 65_536, 4),
            (1 << 20, 1 << 20, 3),
            (5 << 20, 1 << 20, 3),
        ] {
            let p = Params::for_count(want);
            assert_eq!((p.n, p.b, p.c), (n, b, 1), "{want}");
            assert!(p.check().is_ok() && p.security_bits() >= 40.0, "{p:?}");
            assert_eq!(p.subarray(), 1025);
        }
    }

    #[test]
    fn shuffles_are_permutations_without_bias() {
        let mut prg = Prg::new(&Seed::from_bytes([5; 32]), 0, 0);
        let mut first = [0usize; 5];
        for _ in 0..5000 {
            let p = permutation(&mut prg, 5);
            let mut s = p.clone();
            s.sort_unstable();
            assert_eq!(s, vec![0, 1, 2, 3, 4]);
            first[p[0]] += 1;
        }
        // Each of 5 values leads about 1000 times (binomial, sd ≈ 28).
        assert!(first.iter().all(|&c| (850..1150).contains(&c)), "{first:?}");
    }

    #[test]
    fn layout_opens_c_per_subarray_and_uses_every_other_triple_once() {
        let prm = Params { n: 12, b: 2, c: 2, l: 3 };
        let mut prg = Prg::new(&Seed::from_bytes([9; 32]), 0, 0);
        let base = prm.n;
        let (opened, members) = layout(&prm, base, &mut prg);
        let x = prm.subarray();
        for j in 0..prm.l {
            let in_j = opened.iter().filter(|&&i| (i - base) / x == j).count();
            assert_eq!(in_j, prm.c, "subarray {j}");
        }
        let mut all: Vec<usize> = opened.iter().chain(&members).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (base..base + prm.l * x).collect::<Vec<_>>());
    }
}
