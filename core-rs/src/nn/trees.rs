//! Tree ensembles (ONNX-ML `TreeEnsembleClassifier`), evaluated obliviously.
//!
//! **What is public.** The ensemble's shape — the node layout of every tree, which feature each
//! node tests and with which comparison, the number of classes — is public, like a network's
//! layer sizes. The thresholds, the leaf weights and the base values are secret (shared by the
//! model owner like all weights), and so is the path every sample takes.
//!
//! **Protocol (rep3).** For a batch of `B` samples and an ensemble of `N` internal nodes and
//! `L` leaves over `C` classes:
//! 1. every node's comparison of every sample in **one** batched run: `x[f] − t` (or `t − x[f]`)
//!    locally, its sign by exact MSB extraction (`B·N` values), the bits injected into the ring
//!    (one daBit each, 1 round); a node's "go to the true child" bit `b` is that bit or its
//!    complement (`x < t`: `[x − t < 0]`; `x ≥ t`: the complement; `x ≤ t`: `¬[t − x < 0]`;
//!    `x > t`: `[t − x < 0]`);
//! 2. reach indicators top-down, one multiplication per internal node: a root is reached (1),
//!    a true child's indicator is `reach·b`, a false child's `reach − reach·b`; all nodes of
//!    one depth in one round (depth − 1 rounds in all, the roots are free);
//! 3. scores = `I · W + base` with `I` the `B × L` leaf indicators (integers 0/1) and `W` the
//!    `L × C` fixed-point leaf weights: one matrix product, no truncation (an exact 0/1 times
//!    a fixed-point value is already in the format). Exactly one leaf per tree is reached, so
//!    the scores are the sums of the reached leaves' weights.
//!
//! The fixed-point comparisons are exact on the encoded values: they agree with the float
//! model unless a feature and a threshold are closer than the encoding's resolution (2^-f,
//! e.g. thresholds midway between the integer pixel counts of the 8×8 digits are exact).
//! METEOR does not run tree ensembles yet (its backend refuses them by name).

use super::model::check_input;
use super::NnError;
use crate::net::Transport;
use crate::rep3::{DaBits, Rep3, Rep3Vec};
use crate::ring::IntRing;
use crate::Error;

/// The comparison a node makes; `true` sends the sample to the node's true child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NodeMode {
    /// `x < t` (`BRANCH_LT`).
    Lt,
    /// `x ≤ t` (`BRANCH_LEQ`).
    Leq,
    /// `x > t` (`BRANCH_GT`).
    Gt,
    /// `x ≥ t` (`BRANCH_GTE`).
    Gte,
}

impl NodeMode {
    /// Whether the secure comparison computes the sign of `t − x` (else of `x − t`).
    fn threshold_first(self) -> bool {
        matches!(self, Self::Leq | Self::Gt)
    }

    /// Whether the branch bit is the complement of the sign bit.
    fn negated(self) -> bool {
        matches!(self, Self::Leq | Self::Gte)
    }

    /// The comparison on plain values.
    pub fn holds<T: PartialOrd>(self, x: T, t: T) -> bool {
        match self {
            Self::Lt => x < t,
            Self::Leq => x <= t,
            Self::Gt => x > t,
            Self::Gte => x >= t,
        }
    }
}

/// One internal node of an ensemble.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeNode {
    /// The feature it tests.
    pub feature: usize,
    /// The comparison.
    pub mode: NodeMode,
    /// The parent (an earlier node) and the branch leading here; `None` for a tree's root.
    pub parent: Option<(usize, bool)>,
    /// Depth (0 for a root).
    pub depth: usize,
}

/// The public shape of a tree ensemble: internal nodes (every parent before its children) and
/// leaves of all trees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeShape {
    /// Features per sample.
    pub features: usize,
    /// Classes (scores per sample).
    pub classes: usize,
    /// Internal nodes.
    pub nodes: Vec<TreeNode>,
    /// Each leaf's parent and branch; `None` for a tree that is a single leaf.
    pub leaves: Vec<Option<(usize, bool)>>,
}

/// A tree ensemble with real thresholds and weights.
#[derive(Clone, PartialEq)]
pub struct TreeEnsemble {
    /// The public shape.
    pub shape: TreeShape,
    /// One threshold per internal node.
    pub thresholds: Vec<f64>,
    /// Leaf weights, `leaves × classes` row-major.
    pub leaf_weights: Vec<f64>,
    /// Added to every sample's scores, one per class.
    pub base: Vec<f64>,
}

impl core::fmt::Debug for TreeEnsemble {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "TreeEnsemble({} nodes, {} leaves, {} classes)",
            self.shape.nodes.len(),
            self.shape.leaves.len(),
            self.shape.classes
        )
    }
}

impl TreeShape {
    /// Checks the structure (indices in range, parents first, depths consistent).
    pub(crate) fn check(&self) -> Result<(), NnError> {
        for (i, n) in self.nodes.iter().enumerate() {
            let depth_ok = match n.parent {
                None => n.depth == 0,
                Some((p, _)) => p < i && self.nodes[p].depth + 1 == n.depth,
            };
            if n.feature >= self.features || !depth_ok {
                return Err(NnError::Shape(format!("tree node {i}: {n:?}")));
            }
        }
        if self.leaves.iter().flatten().any(|&(p, _)| p >= self.nodes.len()) || self.classes == 0 {
            return Err(NnError::Shape("tree leaves refer to missing nodes".into()));
        }
        Ok(())
    }

    /// The leaf each sample reaches in each tree, from a per-node branch decision.
    fn reached(&self, mut goes_true: impl FnMut(usize) -> bool) -> Vec<bool> {
        let mut reach = vec![false; self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            reach[i] = match n.parent {
                None => true,
                Some((p, br)) => reach[p] && goes_true(p) == br,
            };
        }
        self.leaves
            .iter()
            .map(|l| match *l {
                None => true,
                Some((p, br)) => reach[p] && goes_true(p) == br,
            })
            .collect()
    }
}

impl TreeEnsemble {
    /// Float evaluation of `batch` samples.
    pub(crate) fn eval_f64(&self, x: &[f64], batch: usize) -> Result<Vec<f64>, NnError> {
        let s = &self.shape;
        check_input(x.len(), batch, s.features)?;
        s.check()?;
        if self.thresholds.len() != s.nodes.len()
            || self.leaf_weights.len() != s.leaves.len() * s.classes
            || self.base.len() != s.classes
        {
            return Err(NnError::Shape("tree weights do not fit the tree shape".into()));
        }
        let mut out = Vec::with_capacity(batch * s.classes);
        for row in x.chunks_exact(s.features) {
            let hit =
                s.reached(|i| s.nodes[i].mode.holds(row[s.nodes[i].feature], self.thresholds[i]));
            let mut scores = self.base.clone();
            for (l, _) in hit.iter().enumerate().filter(|(_, h)| **h) {
                for (c, v) in scores.iter_mut().enumerate() {
                    *v += self.leaf_weights[l * s.classes + c];
                }
            }
            out.extend(scores);
        }
        Ok(out)
    }
}

/// Plaintext fixed-point evaluation (exact comparisons of the encoded values, exact sums):
/// what the secure run computes.
pub(crate) fn eval_plain<R: IntRing>(
    s: &TreeShape,
    (t, w, base): (&[R], &[R], &[R]),
    x: &[R],
    batch: usize,
) -> Vec<R> {
    let mut out = Vec::with_capacity(batch * s.classes);
    for row in x.chunks_exact(s.features) {
        let hit = s.reached(|i| {
            let n = &s.nodes[i];
            n.mode.holds(row[n.feature].to_i64(), t[i].to_i64())
        });
        let mut scores = base.to_vec();
        for (l, _) in hit.iter().enumerate().filter(|(_, h)| **h) {
            for (c, v) in scores.iter_mut().enumerate() {
                *v += w[l * s.classes + c];
            }
        }
        out.extend(scores);
    }
    out
}

/// The secure evaluation on `rep3` (see the module docs): `x` is `batch × features`, `t`, `w`
/// and `base` the shared thresholds, leaf weights and base values; consumes `batch · nodes`
/// daBits. Returns `batch × classes` shared scores.
pub(crate) async fn eval_rep3<T: Transport, R: IntRing>(
    p: &mut Rep3<T>,
    s: &TreeShape,
    (t, w, base): (&Rep3Vec<R>, &Rep3Vec<R>, &Rep3Vec<R>),
    x: &Rep3Vec<R>,
    batch: usize,
    dabits: DaBits<R>,
) -> Result<Rep3Vec<R>, Error> {
    let (n, l, c, f) = (s.nodes.len(), s.leaves.len(), s.classes, s.features);
    s.check().map_err(|e| Error::ApiMisuse(e.to_string()))?;
    if x.len() != batch * f || t.len() != n || w.len() != l * c || base.len() != c {
        return Err(Error::ApiMisuse("tree ensemble: shares do not fit its shape".into()));
    }
    let me = p.me();
    let ones = Rep3Vec::public(me, &vec![R::ONE; batch]);
    // Node-major layouts: entry `i·batch + b` is node i of sample b.
    let bits = if n == 0 {
        Rep3Vec::public(me, &[])
    } else {
        let xs = x.gather(
            &s.nodes
                .iter()
                .flat_map(|nd| (0..batch).map(move |b| b * f + nd.feature))
                .collect::<Vec<_>>(),
        );
        let ts = t.gather(&(0..n).flat_map(|i| core::iter::repeat_n(i, batch)).collect::<Vec<_>>());
        let sign: Vec<R> = s
            .nodes
            .iter()
            .flat_map(|nd| {
                let v = if nd.mode.threshold_first() { R::ZERO - R::ONE } else { R::ONE };
                core::iter::repeat_n(v, batch)
            })
            .collect();
        let d = xs.sub(&ts)?.mul_public(&sign)?;
        let neg = p.ltz(&d).await?;
        let c01 = p.bit_to_arith(&neg, dabits).await?;
        // b = c or 1 − c.
        let (mul, add): (Vec<R>, Vec<R>) = s
            .nodes
            .iter()
            .flat_map(|nd| {
                let v =
                    if nd.mode.negated() { (R::ZERO - R::ONE, R::ONE) } else { (R::ONE, R::ZERO) };
                core::iter::repeat_n(v, batch)
            })
            .unzip();
        c01.mul_public(&mul)?.add_public(&add)?
    };
    let branch = |i: usize| bits.slice(i * batch..(i + 1) * batch);
    // reach[i] and taken[i] = reach[i]·b[i], per node, each `batch` long.
    let mut reach: Vec<Option<Rep3Vec<R>>> = vec![None; n];
    let mut taken: Vec<Option<Rep3Vec<R>>> = vec![None; n];
    let child = |taken: &[Option<Rep3Vec<R>>], reach: &[Option<Rep3Vec<R>>], p: usize, br: bool| {
        let miss = || Error::ApiMisuse("tree: a parent after its child".into());
        let tk = taken[p].as_ref().ok_or_else(miss)?;
        if br {
            Ok(tk.clone())
        } else {
            reach[p].as_ref().ok_or_else(miss)?.sub(tk)
        }
    };
    let depth = s.nodes.iter().map(|nd| nd.depth + 1).max().unwrap_or(0);
    for d in 0..depth {
        let level: Vec<usize> = (0..n).filter(|&i| s.nodes[i].depth == d).collect();
        for &i in &level {
            reach[i] = Some(match s.nodes[i].parent {
                None => ones.clone(),
                Some((q, br)) => child(&taken, &reach, q, br)?,
            });
        }
        if d == 0 {
            for &i in &level {
                taken[i] = Some(branch(i));
            }
            continue;
        }
        let rs: Vec<&Rep3Vec<R>> = level.iter().filter_map(|&i| reach[i].as_ref()).collect();
        let bs: Vec<Rep3Vec<R>> = level.iter().map(|&i| branch(i)).collect();
        let prod =
            p.mul(&Rep3Vec::concat(&rs), &Rep3Vec::concat(&bs.iter().collect::<Vec<_>>())).await?;
        for (&i, part) in level.iter().zip(prod.split(&vec![batch; level.len()])) {
            taken[i] = Some(part);
        }
    }
    let mut leaf_parts = Vec::with_capacity(l);
    for leaf in &s.leaves {
        leaf_parts.push(match *leaf {
            None => ones.clone(),
            Some((q, br)) => child(&taken, &reach, q, br)?,
        });
    }
    // Leaf-major to sample-major: I is batch × L.
    let ind = Rep3Vec::concat(&leaf_parts.iter().collect::<Vec<_>>())
        .gather(&(0..batch).flat_map(|b| (0..l).map(move |j| j * batch + b)).collect::<Vec<_>>());
    let scores = p.matmul(&ind, w, batch, l, c).await?;
    scores.add(&base.gather(&(0..batch * c).map(|i| i % c).collect::<Vec<_>>()))
}
