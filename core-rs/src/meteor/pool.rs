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
        let mut lists: Vec<Vec<usize>> = windows.to_vec();
        let mut levels = Vec::new();
        while lists.iter().any(|l| l.len() > 1) {
            let (mut lhs, mut rhs) = (Vec::new(), Vec::new());
            // Entries of the next lists: Ok(winner t) or Err(carried index).
            let mut tagged: Vec<Vec<Result<usize, usize>>> = Vec::with_capacity(lists.len());
            for l in &lists {
                let mut nl = Vec::with_capacity(l.len().div_ceil(2));
                for pair in l.chunks(2) {
                    if let [a, b] = pair {
                        nl.push(Ok(lhs.len()));
                        lhs.push(*a);
                        rhs.push(*b);
                    } else {
                        nl.push(Err(pair[0]));
                    }
                }
                tagged.push(nl);
            }
            let winners = lhs.len();
            let mut next = Vec::new();
            lists = tagged
                .into_iter()
                .map(|nl| {
                    nl.into_iter()
                        .map(|t| {
                            next.push(match t {
                                Ok(w) => w,
                                Err(c) => winners + c,
                            });
                            next.len() - 1
                        })
                        .collect()
                })
                .collect();
            levels.push(Level { lhs, rhs, next });
        }
        Ok(Self { levels, result: lists.into_iter().map(|l| l[0]).collect() })
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
