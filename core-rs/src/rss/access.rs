//! The access structure of threshold replicated sharing and the public maps its protocols use.
//!
//! For `n = 2t + 1` parties, a secret is the sum of one share per `t`-subset `T` of the parties
//! (the maximal unqualified sets), and party `p` holds every share whose set does not contain
//! it: `C(n−1, t)` of the `C(n, t)` shares. Every party computes the same tables from `(n, t)`
//! alone, so they agree without talking:
//!
//! * the sets, numbered by their bit masks in ascending order (set 0, `{P0 … P(t−1)}`, is the
//!   designated share that public constants are added to);
//! * `ρ`, which party multiplies which pair of shares in a product: each of the `C(n, t)²` pairs
//!   `(T1, T2)` goes to exactly one party outside `T1 ∪ T2`. The pairs fall into orbits under
//!   rotating the party ids (`p ↦ p + 1 mod n`); for a prime `n` every orbit has exactly `n`
//!   pairs, so giving an orbit's first pair to a party `q` and its `i`-th rotation to `q + i`
//!   loads every party with exactly `C(n, t)² / n` products;
//! * `χ(p) = {p+1, …, p+t}`, the one share of `p`'s product that `p` sends (the others are
//!   pseudo-random);
//! * the opening map: party `p` sends `p + j` (`j = 1 … t`) the sum of its shares `T` with
//!   `p + j ∈ T` and `{p+1, …, p+j−1} ⊆ T`, so each party receives every share it lacks exactly
//!   once, as `t` sums.
//!
//! ```
//! use ringfence_core::rss::Access;
//! let a = Access::new(5, 2)?;
//! assert_eq!((a.shares(), a.held_per_party()), (10, 6));
//! # Ok::<(), ringfence_core::Error>(())
//! ```

use crate::net::{PartyId, Roster};
use crate::Error;

/// A set of parties, as a bit mask over their ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Set(pub u32);

impl Set {
    /// Whether `p` is in the set.
    pub fn contains(self, p: PartyId) -> bool {
        self.0 >> p.0 & 1 == 1
    }

    /// The set with every id moved `by` places around a ring of `n`.
    fn rotate(self, by: usize, n: usize) -> Self {
        let full = (1u32 << n) - 1;
        let by = by % n;
        Self(((self.0 << by) | (self.0 >> (n - by))) & full)
    }

    /// The members, lowest id first.
    pub fn members(self, n: usize) -> impl Iterator<Item = PartyId> {
        (0..n as u8).filter(move |&i| self.0 >> i & 1 == 1).map(PartyId)
    }
}

/// The `(n, t)` pairs replicated sharing supports: honest majority with `n = 2t + 1`, for the
/// party counts whose tables are checked exhaustively (and whose share counts stay small).
pub const SUPPORTED: [(usize, usize); 3] = [(3, 1), (5, 2), (7, 3)];

/// One product of local shares, `a_T1 · Σ b_T2`, as positions in the party's held shares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Product {
    pub(crate) left: usize,
    pub(crate) right: Vec<usize>,
}

/// The tables of one `(n, t)`: sets, who holds what, and the maps of the protocols.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    roster: Roster,
    sets: Vec<Set>,
    /// `held[p]`: the indices (into `sets`) of the shares party `p` holds, ascending.
    held: Vec<Vec<usize>>,
    /// `position[p][s]`: where share `s` sits among party `p`'s, if `p` holds it.
    position: Vec<Vec<Option<usize>>>,
    /// `products[p]`: the share products party `p` computes in a multiplication.
    products: Vec<Vec<Product>>,
    /// `chi[p]`: the index of `{p+1, …, p+t}`.
    chi: Vec<usize>,
}

impl Access {
    /// The tables for `n` parties of which at most `t` may collude; only [`SUPPORTED`] pairs.
    pub fn new(n: usize, t: usize) -> Result<Self, Error> {
        if !SUPPORTED.contains(&(n, t)) {
            return Err(Error::ApiMisuse(format!(
                "replicated sharing among {n} parties with threshold {t}: supported are \
                 (n, t) = (3, 1), (5, 2) and (7, 3)"
            )));
        }
        let roster = Roster::new(n, t)?;
        let sets: Vec<Set> =
            (0u32..1 << n).filter(|m| m.count_ones() as usize == t).map(Set).collect();
        let mut held = vec![Vec::new(); n];
        let mut position = vec![vec![None; sets.len()]; n];
        for p in roster.parties() {
            for (s, set) in sets.iter().enumerate() {
                if !set.contains(p) {
                    position[p.index()][s] = Some(held[p.index()].len());
                    held[p.index()].push(s);
                }
            }
        }
        let index_of = |set: Set| sets.iter().position(|&x| x == set);
        let chi = roster
            .parties()
            .map(|p| {
                let set = Set((1..=t).fold(0, |m, j| m | 1 << ((p.index() + j) % n)));
                index_of(set).ok_or_else(|| Error::ApiMisuse("χ: not a t-subset".into()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        // ρ by orbits of the rotation: each orbit's first pair to the lowest party outside
        // both sets, its rotations to the rotated party.
        let c = sets.len();
        let mut owner: Vec<Option<usize>> = vec![None; c * c];
        for s1 in 0..c {
            for s2 in 0..c {
                if owner[s1 * c + s2].is_some() {
                    continue;
                }
                let both = Set(sets[s1].0 | sets[s2].0);
                let q = roster.parties().find(|&p| !both.contains(p)).map(PartyId::index);
                let Some(q) = q else {
                    return Err(Error::ApiMisuse("ρ: two sets cover every party".into()));
                };
                for by in 0..n {
                    let (r1, r2) = (sets[s1].rotate(by, n), sets[s2].rotate(by, n));
                    let (Some(i1), Some(i2)) = (index_of(r1), index_of(r2)) else {
                        return Err(Error::ApiMisuse("ρ: rotation left the t-subsets".into()));
                    };
                    owner[i1 * c + i2].get_or_insert((q + by) % n);
                }
            }
        }
        let mut products: Vec<Vec<Product>> = vec![Vec::new(); n];
        for (pair, who) in owner.iter().enumerate() {
            let Some(p) = *who else {
                return Err(Error::ApiMisuse("ρ: a pair of shares has no party".into()));
            };
            let (s1, s2) = (pair / c, pair % c);
            let (Some(l), Some(r)) = (position[p][s1], position[p][s2]) else {
                return Err(Error::ApiMisuse("ρ: a party lacks a share it multiplies".into()));
            };
            match products[p].iter_mut().find(|x| x.left == l) {
                Some(x) => x.right.push(r),
                None => products[p].push(Product { left: l, right: vec![r] }),
            }
        }
        Ok(Self { roster, sets, held, position, products, chi })
    }

    /// The tables for a roster.
    pub fn for_roster(r: Roster) -> Result<Self, Error> {
        Self::new(r.n(), r.t())
    }

    /// The parties.
    pub fn roster(&self) -> Roster {
        self.roster
    }

    /// The number of shares of a secret, `C(n, t)`.
    pub fn shares(&self) -> usize {
        self.sets.len()
    }

    /// The number of shares each party holds, `C(n−1, t)`.
    pub fn held_per_party(&self) -> usize {
        self.held[0].len()
    }

    /// Share `s`'s set.
    pub fn set(&self, s: usize) -> Set {
        self.sets[s]
    }

    /// The shares `p` holds (indices into the sets), ascending: the order of a party's
    /// components of an [`super::RssVec`].
    pub fn held(&self, p: PartyId) -> &[usize] {
        &self.held[p.index()]
    }

    /// Where share `s` sits among `p`'s shares, if `p` holds it.
    pub(crate) fn position(&self, p: PartyId, s: usize) -> Option<usize> {
        self.position[p.index()][s]
    }

    /// The holders of share `s` (the parties outside its set), lowest id first.
    pub(crate) fn holders(&self, s: usize) -> impl Iterator<Item = PartyId> + '_ {
        let set = self.sets[s];
        self.roster.parties().filter(move |&p| !set.contains(p))
    }

    /// The products `p` computes in a multiplication.
    pub(crate) fn products(&self, p: PartyId) -> &[Product] {
        &self.products[p.index()]
    }

    /// `χ(p)`: the share of `p`'s product that `p` sends.
    pub(crate) fn chi(&self, p: PartyId) -> usize {
        self.chi[p.index()]
    }

    /// The positions among `from`'s shares whose sum `from` sends `to` when opening (empty
    /// unless `to` is one of the `t` parties after `from`).
    pub(crate) fn open_sums(&self, from: PartyId, to: PartyId) -> Vec<usize> {
        let n = self.roster.n();
        let j = (to.index() + n - from.index()) % n;
        if j == 0 || j > self.roster.t() {
            return Vec::new();
        }
        let needed = Set((1..=j).fold(0, |m, i| m | 1 << ((from.index() + i) % n)));
        self.held(from)
            .iter()
            .enumerate()
            .filter(|&(_, &s)| self.sets[s].0 & needed.0 == needed.0)
            .map(|(pos, _)| pos)
            .collect()
    }

    /// The `t` parties that send `to` a sum when opening.
    pub(crate) fn open_senders(&self, to: PartyId) -> impl Iterator<Item = PartyId> + '_ {
        let n = self.roster.n();
        (1..=self.roster.t()).map(move |j| PartyId(((to.index() + n - j) % n) as u8))
    }

    /// The `t` parties `from` sends a sum to when opening.
    pub(crate) fn open_receivers(&self, from: PartyId) -> impl Iterator<Item = PartyId> + '_ {
        let n = self.roster.n();
        (1..=self.roster.t()).map(move |j| PartyId(((from.index() + j) % n) as u8))
    }

    /// `p`'s rank among the holders of share `s` (0 for the lowest id … `t` for the highest).
    pub(crate) fn rank(&self, p: PartyId, s: usize) -> Option<usize> {
        self.holders(s).position(|h| h == p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binom(n: usize, k: usize) -> usize {
        (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
    }

    #[test]
    fn only_the_supported_thresholds_are_accepted() {
        for (n, t) in [(3, 0), (4, 1), (5, 1), (7, 2), (9, 4), (3, 2)] {
            let e = Access::new(n, t).unwrap_err().to_string();
            assert!(e.contains("(5, 2)"), "{n}, {t}: {e}");
        }
    }

    #[test]
    fn each_party_holds_the_shares_whose_set_leaves_it_out() {
        for (n, t) in SUPPORTED {
            let a = Access::new(n, t).unwrap();
            assert_eq!(a.shares(), binom(n, t));
            assert_eq!(a.held_per_party(), binom(n - 1, t));
            for s in 0..a.shares() {
                assert_eq!(a.holders(s).count(), t + 1, "every share has t + 1 holders");
                for p in a.roster().parties() {
                    assert_eq!(a.position(p, s).is_some(), !a.set(s).contains(p));
                }
            }
            // Any t parties together miss exactly one share: their own set.
            for s in 0..a.shares() {
                let missing: Vec<usize> = (0..a.shares())
                    .filter(|&u| a.set(s).members(n).all(|p| a.position(p, u).is_none()))
                    .collect();
                assert_eq!(missing, vec![s]);
            }
        }
    }

    /// Every pair of shares is multiplied exactly once, by a party that holds both, and every
    /// party multiplies the same number of pairs (`C(n, t)² / n`: 3, 20, 175).
    #[test]
    fn rho_covers_every_pair_once_with_equal_load() {
        for (n, t) in SUPPORTED {
            let a = Access::new(n, t).unwrap();
            let c = a.shares();
            let mut seen = vec![0; c * c];
            for p in a.roster().parties() {
                let held = a.held(p);
                let mut load = 0;
                for prod in a.products(p) {
                    for &r in &prod.right {
                        seen[held[prod.left] * c + held[r]] += 1;
                        load += 1;
                    }
                }
                assert_eq!(load, c * c / n, "({n}, {t}): load of {p}");
            }
            assert!(seen.iter().all(|&k| k == 1), "({n}, {t}): {seen:?}");
        }
    }

    #[test]
    fn chi_is_a_share_its_party_holds_and_distinct_per_party() {
        for (n, t) in SUPPORTED {
            let a = Access::new(n, t).unwrap();
            let chis: std::collections::BTreeSet<usize> =
                a.roster().parties().map(|p| a.chi(p)).collect();
            assert_eq!(chis.len(), n);
            for p in a.roster().parties() {
                assert!(a.position(p, a.chi(p)).is_some());
            }
        }
    }

    /// Each party receives every share it lacks exactly once, from the `t` parties before it,
    /// and each party sends exactly `t` sums.
    #[test]
    fn the_opening_map_partitions_every_party_s_missing_shares() {
        for (n, t) in SUPPORTED {
            let a = Access::new(n, t).unwrap();
            for to in a.roster().parties() {
                let mut got = vec![0; a.shares()];
                for from in a.roster().others(to) {
                    let sums = a.open_sums(from, to);
                    assert_eq!(!sums.is_empty(), a.open_senders(to).any(|s| s == from));
                    for pos in sums {
                        got[a.held(from)[pos]] += 1;
                    }
                }
                for (s, k) in got.iter().enumerate() {
                    assert_eq!(*k, usize::from(a.set(s).contains(to)), "({n}, {t}) {to} {s}");
                }
                assert_eq!(a.open_receivers(to).count(), t);
            }
        }
    }
}
