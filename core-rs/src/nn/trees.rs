//! Tree ensembles (ONNX-ML `TreeEnsembleClassifier`), evaluated obliviously on both backends.
//!
//! **What is public.** The ensemble's shape — the node layout of every tree, which feature each
//! node tests and with which comparison, the number of classes — is public, like a network's
//! layer sizes. The thresholds, the leaf weights and the base values are secret (shared by the
//! model owner like all weights), and so is the path every sample takes.
//!
//! **Protocol.** For a batch of `B` samples and an ensemble of `N` internal nodes on `D` levels
//! (depths 0 to D − 1) and `L` leaves over `C` classes:
//! 1. every node's comparison of every sample in **one** batched run: `x[f] − t` (or `t − x[f]`)
//!    locally, its sign by exact MSB extraction (`B·N` values); a node's "go to the true child"
//!    bit `b` is that sign bit or its complement (`x < t`: `[x − t < 0]`; `x ≥ t`: the
//!    complement; `x ≤ t`: `¬[t − x < 0]`; `x > t`: `[t − x < 0]`). Values are laid out level
//!    by level, so each level's bits are one contiguous range;
//! 2. reach indicators top-down, one multiplication per internal node: a root is reached (1),
//!    a true child's indicator is `reach·b`, a false child's `reach − reach·b`; all nodes of
//!    one level in one round;
//! 3. scores = `I · W + base` with `I` the `B × L` leaf indicators (integers 0/1) and `W` the
//!    `L × C` fixed-point leaf weights: one matrix product, no truncation (an exact 0/1 times
//!    a fixed-point value is already in the format). Exactly one leaf per tree is reached, so
//!    the scores are the sums of the reached leaves' weights.
//!
//! The schemes' evaluators live in their folders (`rep3/nn.rs`, `meteor/nn.rs`); this module
//! has the public shape, the plaintext reference and the local bookkeeping they share.
//!
//! **rep3**: the sign bits are injected into the ring with daBits (1 round),
//! the roots' products are the bits themselves, so the levels take `D − 1` rounds.
//!
//! **METEOR** (a setup, then the online evaluation). Setup (function-dependent,
//! input-independent, every mask fresh and used once) walks the same steps on masks: the MSB
//! setup of the `B·N` differences' masks in one batched call; one multiplexer setup per level
//! (the lift of the level's bit masks into the ring and the product with the level's reach
//! masks, which follow from the output masks drawn for the level above); the mask product of
//! `I·W`. Online, the MSB gives each bit as a boolean METEOR sharing `(m_b, ⟨ψ_b⟩^B)`; the
//! complement flips the public `m_b` (free), and `reach·b` is the multiplexer's single reveal
//! (`Meteor::mux` with a zero second operand) — no separate bit injection: at the roots,
//! `reach` is the public 1 and the multiplexer *is* the injection. `I·W` is one reveal with the
//! truncation's shift set to 0.
//!
//! **METEOR online cost** per party, Z_2^ℓ, ℓ/8-byte words, `(M_b, M_r)` the MSB's bytes and
//! rounds per value (`meteor::msb_online_cost`; 87 B and 6 rounds for ℓ = 64):
//!
//! ```text
//! bytes  = B · (N · (M_b + ℓ/8) + C · ℓ/8)        ℓ = 64:  B · (95·N + 8·C)
//! rounds = M_r + D + 1   (N > 0)                   ℓ = 64:  D + 7
//!        = 1             (N = 0: single-leaf trees; only I·W is revealed)
//! ```
//!
//! The shipped depth-6 tree (43 nodes, 10 classes): 4,165 B and 13 rounds per sample (rep3:
//! 8 + 1 + 5 + 1 = 15 rounds). `meteor::online_cost` computes it; `tests/nn_trees.rs` asserts
//! that runs send exactly that. Setup rounds grow with `D` (one multiplexer setup per level,
//! each a few rounds), unlike a network's batched setup; its bytes are measured by
//! `ringfence bench`.
//!
//! The fixed-point comparisons are exact on the encoded values: they agree with the float
//! model unless a feature and a threshold are closer than the encoding's resolution (2^-f,
//! e.g. thresholds midway between the integer pixel counts of the 8×8 digits are exact).

use core::ops::Range;

use super::model::check_input;
use super::NnError;
use crate::ring::IntRing;
use crate::sharing::{Boolean, Linear, Store};
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
    pub(crate) fn threshold_first(self) -> bool {
        matches!(self, Self::Leq | Self::Gt)
    }

    /// Whether the branch bit is the complement of the sign bit.
    pub(crate) fn negated(self) -> bool {
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
    /// Reach products per sample: one per internal node below the roots (a root's reach is
    /// the public 1, so its product is its bit).
    pub fn reach_products(&self) -> usize {
        self.nodes.iter().filter(|nd| nd.depth > 0).count()
    }

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

/// The internal nodes level by level (`levels[d]`: the nodes of depth d in index order).
/// Comparisons are laid out in this order, node-major (`batch` entries per node), so each
/// level's branch bits are one contiguous range.
pub(crate) fn by_level(s: &TreeShape) -> Vec<Vec<usize>> {
    let depth = s.nodes.iter().map(|nd| nd.depth + 1).max().unwrap_or(0);
    let mut out = vec![Vec::new(); depth];
    for (i, nd) in s.nodes.iter().enumerate() {
        out[nd.depth].push(i);
    }
    out
}

/// The positions of each level's branch bits in the comparison layout.
pub(crate) fn level_ranges(levels: &[Vec<usize>], batch: usize) -> Vec<Range<usize>> {
    let mut at = 0;
    levels
        .iter()
        .map(|l| {
            at += l.len() * batch;
            at - l.len() * batch..at
        })
        .collect()
}

/// The values whose sign decides every node, in the layout of [`by_level`]: `x[f] − t` (or
/// `t − x[f]`, see [`NodeMode::threshold_first`]), so `b` is `[value < 0]` or its complement.
pub(crate) fn differences<R, V: Linear<R>>(
    s: &TreeShape,
    order: &[usize],
    x: &V,
    t: &V,
    batch: usize,
) -> Result<V, Error> {
    let f = s.features;
    let th = x.len();
    let all = V::concat(&[x, t]);
    let (lhs, rhs): (Vec<usize>, Vec<usize>) = order
        .iter()
        .flat_map(|&i| {
            let nd = &s.nodes[i];
            (0..batch).map(move |b| {
                let (xi, ti) = (b * f + nd.feature, th + i);
                if nd.mode.threshold_first() {
                    (ti, xi)
                } else {
                    (xi, ti)
                }
            })
        })
        .unzip();
    all.gather(&lhs).sub(&all.gather(&rhs))
}

/// Reach indicators top-down (step 2 of the protocol), one level at a time: `reach[i]` of
/// node i and `taken[i] = reach[i]·b[i]`, each `batch` long. The scheme multiplies; this only
/// does the local bookkeeping, on shares of elements of `R`.
pub(crate) struct Reach<'a, R, V> {
    s: &'a TreeShape,
    ring: core::marker::PhantomData<R>,
    batch: usize,
    /// A root's reach: the public 1 (in setup, its mask: 0).
    ones: V,
    reach: Vec<Option<V>>,
    taken: Vec<Option<V>>,
}

impl<'a, R, V: Linear<R>> Reach<'a, R, V> {
    pub(crate) fn new(s: &'a TreeShape, batch: usize, ones: V) -> Self {
        let n = s.nodes.len();
        Self {
            s,
            ring: core::marker::PhantomData,
            batch,
            ones,
            reach: vec![None; n],
            taken: vec![None; n],
        }
    }

    /// The indicator of the branch `br` of node `p`: `taken[p]` or `reach[p] − taken[p]`.
    fn child(&self, (p, br): (usize, bool)) -> Result<V, Error> {
        let miss = || Error::ApiMisuse("tree: a parent after its child".into());
        let tk = self.taken.get(p).and_then(Option::as_ref).ok_or_else(miss)?;
        if br {
            Ok(tk.clone())
        } else {
            self.reach[p].as_ref().ok_or_else(miss)?.sub(tk)
        }
    }

    /// The reach of the nodes of one level (their parents' products recorded), concatenated.
    pub(crate) fn reach(&mut self, level: &[usize]) -> Result<V, Error> {
        for &i in level {
            self.reach[i] = Some(match self.s.nodes[i].parent {
                None => self.ones.clone(),
                Some(pb) => self.child(pb)?,
            });
        }
        let parts: Vec<&V> = level.iter().filter_map(|&i| self.reach[i].as_ref()).collect();
        Ok(V::concat(&parts))
    }

    /// Records the products `reach·b` of one level's nodes (concatenated as [`Reach::reach`]).
    pub(crate) fn taken(&mut self, level: &[usize], prod: &V) -> Result<(), Error> {
        if prod.len() != level.len() * self.batch {
            return Err(Error::ApiMisuse("tree: products do not fit the level".into()));
        }
        for (k, &i) in level.iter().enumerate() {
            self.taken[i] = Some(prod.slice(k * self.batch..(k + 1) * self.batch));
        }
        Ok(())
    }

    /// The leaf indicators `I`, `batch × leaves` (sample-major, the left operand of `I·W`).
    pub(crate) fn indicators(&self) -> Result<V, Error> {
        let parts = self
            .s
            .leaves
            .iter()
            .map(|leaf| match *leaf {
                None => Ok(self.ones.clone()),
                Some(pb) => self.child(pb),
            })
            .collect::<Result<Vec<V>, Error>>()?;
        let (batch, l) = (self.batch, parts.len());
        Ok(V::concat(&parts.iter().collect::<Vec<_>>()).gather(
            &(0..batch).flat_map(|b| (0..l).map(move |j| j * batch + b)).collect::<Vec<_>>(),
        ))
    }
}

/// Checks the shape and that shares of the given lengths fit it.
pub(crate) fn check_fit(s: &TreeShape, lens: [usize; 4], batch: usize) -> Result<(), Error> {
    s.check().map_err(|e| Error::ApiMisuse(e.to_string()))?;
    let (n, l, c, f) = (s.nodes.len(), s.leaves.len(), s.classes, s.features);
    if lens != [batch * f, n, l * c, c] {
        return Err(Error::ApiMisuse("tree ensemble: shares do not fit its shape".into()));
    }
    Ok(())
}

/// The products' material of one evaluation, made in setup with the run's other material:
/// the reach products' (exact, [`TreeShape::reach_products`] per sample, taken level by
/// level) and the leaf product's (`batch × leaves` by `leaves × classes`, exact).
pub(crate) struct TreePrep<P, M> {
    pub(crate) reach: P,
    pub(crate) leaves: M,
}

/// A tree ensemble's secure evaluation (steps 1–3 above) for a scheme with [`Boolean`]: `x` is
/// `batch × features`, `t`, `w` and `base` the shared thresholds, leaf weights and base
/// values; `bits` is material for `batch · nodes` bit injections, `prep` for the products.
/// Returns `batch × classes` shared scores.
pub(crate) async fn evaluate<R: IntRing, S: Boolean<R>>(
    p: &mut S,
    s: &TreeShape,
    (t, w, base): (&S::V, &S::V, &S::V),
    x: &S::V,
    batch: usize,
    bits: S::BitPrep,
    prep: TreePrep<S::MulPrep, S::MatMulPrep>,
) -> Result<S::V, Error>
where
    S::MulPrep: Store,
{
    check_fit(s, [x.len(), t.len(), w.len(), base.len()], batch)?;
    let (l, c) = (s.leaves.len(), s.classes);
    let levels = by_level(s);
    let order = levels.concat();
    let branch = if order.is_empty() {
        p.constant(&[])
    } else {
        let neg = p.ltz(&differences(s, &order, x, t, batch)?).await?;
        let c01 = p.b2a(&neg, bits).await?;
        // b = c, or 1 − c for a negated mode: a gather from c followed by 1 − c.
        let n = c01.len();
        let flipped = p.constant(&vec![R::ONE; n]).sub(&c01)?;
        let idx: Vec<usize> = order
            .iter()
            .enumerate()
            .flat_map(|(k, &i)| {
                let off = if s.nodes[i].mode.negated() { n } else { 0 };
                (0..batch).map(move |b| off + k * batch + b)
            })
            .collect();
        S::V::concat(&[&c01, &flipped]).gather(&idx)
    };
    let TreePrep { reach: mut reach_prep, leaves } = prep;
    let mut reach = Reach::new(s, batch, p.constant(&vec![R::ONE; batch]));
    for (d, (level, range)) in levels.iter().zip(level_ranges(&levels, batch)).enumerate() {
        let r = reach.reach(level)?;
        let b = branch.slice(range);
        // The roots' reach is the public 1: their products are the bits themselves.
        let prod = if d == 0 {
            b
        } else {
            let prep = reach_prep.take(r.len())?;
            p.mul(&r, &b, prep).await?
        };
        reach.taken(level, &prod)?;
    }
    let ind = reach.indicators()?;
    let scores = p.matmul(&ind, w, (batch, l, c), leaves).await?;
    scores.add(&base.gather(&super::plan::tile(batch * c, c)))
}
