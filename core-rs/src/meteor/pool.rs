//! Max pooling as a tournament of `max(a, b) = ReLU(a − b) + b` (extract §3.12): ⌈log₂ w⌉
//! levels of ReLUs for windows of w values, (w − 1) ReLUs per output — the paper's cost formula
//! (its code runs the w − 1 comparisons one after another instead).
//!
//! The schedule depends only on the window geometry, so setup follows the same tournament on
//! the masks: each level's ReLU inputs are masked by `ψ_a − ψ_b`, its outputs by a fresh mask
//! plus `ψ_b`.

use super::{MVec, Meteor, ReluPrep};
use crate::net::Transport;
use crate::rep3::Rep3Vec;
use crate::ring::IntRing;
use crate::Error;

/// One tournament level: compare `lhs[t]` with `rhs[t]`; the next vector is
/// `concat(winners, current).gather(next)`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Level {
    lhs: Vec<usize>,
    rhs: Vec<usize>,
    next: Vec<usize>,
}

/// The tournament for a set of windows (index lists into the input vector).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolSchedule {
    levels: Vec<Level>,
    /// After the last level: where each window's maximum is.
    result: Vec<usize>,
}

impl PoolSchedule {
    /// Plans the tournament; every window needs at least one index.
    pub fn new(windows: &[Vec<usize>]) -> Result<Self, Error> {
        if windows.iter().any(Vec::is_empty) {
            return Err(Error::ApiMisuse("max pooling over an empty window".into()));
        }
        // The lists of the current level, flat (one allocation per level, not per window):
        // list w is `flat[start_w .. start_w + lens[w]]`.
        let mut flat: Vec<usize> = windows.concat();
        let mut lens: Vec<usize> = windows.iter().map(Vec::len).collect();
        let mut levels = Vec::new();
        while lens.iter().any(|&l| l > 1) {
            let (mut lhs, mut rhs) = (Vec::new(), Vec::new());
            // Entries of the next lists, in order: Ok(winner t) or Err(carried index).
            let mut tagged: Vec<Result<usize, usize>> = Vec::with_capacity(flat.len());
            let mut at = 0;
            for l in &mut lens {
                for pair in flat[at..at + *l].chunks(2) {
                    if let [a, b] = pair {
                        tagged.push(Ok(lhs.len()));
                        lhs.push(*a);
                        rhs.push(*b);
                    } else {
                        tagged.push(Err(pair[0]));
                    }
                }
                at += *l;
                *l = l.div_ceil(2);
            }
            let winners = lhs.len();
            let next = tagged
                .into_iter()
                .map(|t| match t {
                    Ok(w) => w,
                    Err(c) => winners + c,
                })
                .collect::<Vec<_>>();
            // Entry k of the next lists (in list order) is element k of the next vector.
            flat = (0..next.len()).collect();
            levels.push(Level { lhs, rhs, next });
        }
        // Every list now holds one entry: where its window's maximum is.
        Ok(Self { levels, result: flat })
    }

    /// Number of comparisons (ReLUs) per run, level by level.
    pub fn comparisons(&self) -> Vec<usize> {
        self.levels.iter().map(|l| l.lhs.len()).collect()
    }

    /// Number of windows (outputs).
    pub fn outputs(&self) -> usize {
        self.result.len()
    }
}

/// Setup of one max pooling: the schedule and one ReLU preparation per level.
#[derive(Debug)]
pub struct PoolPrep<R> {
    schedule: PoolSchedule,
    levels: Vec<ReluPrep<R>>,
}

impl<R: IntRing> PoolPrep<R> {
    /// Assembles a preparation from per-level ReLU preparations made for the inputs of
    /// [`PoolSchedule::relu_inputs`] (e.g. as part of one batched ReLU setup).
    pub fn new(schedule: PoolSchedule, levels: Vec<ReluPrep<R>>) -> Result<Self, Error> {
        let want = schedule.comparisons();
        let got: Vec<usize> = levels.iter().map(ReluPrep::len).collect();
        if want != got {
            return Err(Error::ApiMisuse(format!(
                "max pooling: ReLU preparations of {got:?} values for levels of {want:?}"
            )));
        }
        Ok(Self { schedule, levels })
    }
}

impl PoolSchedule {
    /// The setup-side walk: given the input mask and one fresh output mask per level (of
    /// [`PoolSchedule::comparisons`] lengths), returns each level's ReLU input mask and the
    /// pooled output's mask.
    pub fn relu_inputs<R: IntRing>(
        &self,
        psi_in: &Rep3Vec<R>,
        relu_outs: &[Rep3Vec<R>],
    ) -> Result<(Vec<Rep3Vec<R>>, Rep3Vec<R>), Error> {
        if relu_outs.len() != self.levels.len() {
            return Err(Error::ApiMisuse("max pooling: one output mask per level".into()));
        }
        let mut cur = psi_in.clone();
        let mut inputs = Vec::with_capacity(self.levels.len());
        for (lv, out) in self.levels.iter().zip(relu_outs) {
            let b = cur.gather(&lv.rhs);
            inputs.push(cur.gather(&lv.lhs).sub(&b)?);
            cur = Rep3Vec::concat(&[&out.add(&b)?, &cur]).gather(&lv.next);
        }
        Ok((inputs, cur.gather(&self.result)))
    }
}

impl<T: Transport> Meteor<T> {
    /// Setup of max pooling over `windows` of values masked by `psi_in` (one batched ReLU
    /// setup for all levels).
    pub async fn maxpool_setup<R: IntRing>(
        &mut self,
        psi_in: &Rep3Vec<R>,
        windows: &[Vec<usize>],
    ) -> Result<PoolPrep<R>, Error> {
        let schedule = PoolSchedule::new(windows)?;
        let outs: Vec<Rep3Vec<R>> =
            schedule.comparisons().into_iter().map(|n| self.mask(n)).collect();
        let (inputs, _) = schedule.relu_inputs(psi_in, &outs)?;
        let lens: Vec<usize> = inputs.iter().map(Rep3Vec::len).collect();
        let prep = self
            .relu_setup(
                &Rep3Vec::concat(&inputs.iter().collect::<Vec<_>>()),
                Rep3Vec::concat(&outs.iter().collect::<Vec<_>>()),
            )
            .await?;
        PoolPrep::new(schedule, prep.split(&lens)?)
    }

    /// The maximum of every window (7 rounds per tournament level, 95 bytes per comparison
    /// per party for ℓ = 64).
    pub async fn maxpool<R: IntRing>(
        &mut self,
        x: &MVec<R>,
        prep: PoolPrep<R>,
    ) -> Result<MVec<R>, Error> {
        let PoolPrep { schedule, levels } = prep;
        let mut cur = x.clone();
        for (lv, relu) in schedule.levels.iter().zip(levels) {
            let b = cur.gather(&lv.rhs);
            let diff = cur.gather(&lv.lhs).sub(&b)?;
            let winners = self.relu(&diff, relu).await?.add(&b)?;
            cur = MVec::concat(&[&winners, &cur]).gather(&lv.next);
        }
        Ok(cur.gather(&schedule.result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the tournament on plain values (`max` for each comparison, then
    /// `concat(winners, current).gather(next)`, as the protocol does on shares) and checks that
    /// every window's maximum comes out, with w − 1 comparisons per window.
    #[test]
    fn schedule_finds_each_windows_maximum() {
        let values: Vec<u64> = (0..40u64).map(|i| (i * 7919 + 13) % 101).collect();
        let windows: Vec<Vec<usize>> = (1..=9)
            .chain([4, 4, 1, 16, 2])
            .enumerate()
            .map(|(w, len)| (0..len).map(|k| (w * 5 + k * 3) % values.len()).collect())
            .collect();
        let s = PoolSchedule::new(&windows).unwrap();
        let want: usize = windows.iter().map(|w| w.len() - 1).sum();
        assert_eq!(s.comparisons().iter().sum::<usize>(), want);
        assert_eq!(s.outputs(), windows.len());
        let mut cur = values.clone();
        for l in &s.levels {
            let mut both: Vec<u64> =
                l.lhs.iter().zip(&l.rhs).map(|(&a, &b)| cur[a].max(cur[b])).collect();
            both.extend_from_slice(&cur);
            cur = l.next.iter().map(|&i| both[i]).collect();
        }
        for (w, &at) in windows.iter().zip(&s.result) {
            let max = w.iter().map(|&i| values[i]).max().unwrap();
            assert_eq!(cur[at], max, "window {w:?}");
        }
        assert!(PoolSchedule::new(&[vec![0], vec![]]).is_err());
    }
}
