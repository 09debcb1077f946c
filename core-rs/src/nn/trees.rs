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
//! **rep3** (`eval_rep3`): the sign bits are injected into the ring with daBits (1 round),
//! the roots' products are the bits themselves, so the levels take `D − 1` rounds.
//!
//! **METEOR** (`meteor_setup`, then `eval_meteor`). Setup (function-dependent,
//! input-independent, every mask fresh and used once) walks the same steps on masks: the MSB
//! setup of the `B·N` differences' masks in one batched call; one multiplexer setup per level
//! (the lift of the level's bit masks into the ring and the product with the level's reach
//! masks, which follow from the output masks drawn for the level above); the mask product of
//! `I·W`. Online, the MSB gives each bit as a boolean METEOR sharing `(m_b, ⟨ψ_b⟩^B)`; the
//! complement flips the public `m_b` (free), and `reach·b` is the multiplexer's single reveal
//! ([`Meteor::mux`] with a zero second operand) — no separate bit injection: at the roots,
//! `reach` is the public 1 and the multiplexer *is* the injection. `I·W` is one reveal with the
//! truncation's shift set to 0.
//!
//! **METEOR online cost** per party, Z_2^ℓ, ℓ/8-byte words, `(M_b, M_r)` the MSB's bytes and
//! rounds per value ([`msb_online_cost`]; 87 B and 6 rounds for ℓ = 64):
//!
//! ```text
//! bytes  = B · (N · (M_b + ℓ/8) + C · ℓ/8)        ℓ = 64:  B · (95·N + 8·C)
//! rounds = M_r + D + 1   (N > 0)                   ℓ = 64:  D + 7
//!        = 1             (N = 0: single-leaf trees; only I·W is revealed)
//! ```
//!
//! The shipped depth-6 tree (43 nodes, 10 classes): 4,165 B and 13 rounds per sample (rep3:
//! 8 + 1 + 5 + 1 = 15 rounds). `meteor_online_cost` computes it; `tests/nn_trees.rs` asserts
//! that runs send exactly that. Setup rounds grow with `D` (one multiplexer setup per level,
//! each a few rounds), unlike a network's batched setup; its bytes are measured by
//! `ringfence bench`.
//!
//! The fixed-point comparisons are exact on the encoded values: they agree with the float
//! model unless a feature and a threshold are closer than the encoding's resolution (2^-f,
//! e.g. thresholds midway between the integer pixel counts of the 8×8 digits are exact).

use core::ops::Range;

use super::model::check_input;
use super::plan::tile;
use super::NnError;
use crate::meteor::{msb_online_cost, MBits, MVec, MatMulPrep, Meteor, MsbPrep, MuxPrep};
use crate::net::Transport;
use crate::rep3::{DaBits, Rep3, Rep3Vec, TruncPairs};
use crate::ring::{IntRing, Ring};
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

/// Vectors of shares the comparison layout and the reach walk work on — `rep3` shares,
/// METEOR shares, and METEOR's masks in setup — so that setup derives every mask with exactly
/// the operations the online phase applies to the shares it masks. All operations are local.
pub(crate) trait Shares: Sized + Clone {
    fn len(&self) -> usize;
    fn sub(&self, o: &Self) -> Result<Self, Error>;
    fn concat(parts: &[&Self]) -> Self;
    fn slice(&self, r: Range<usize>) -> Self;
    fn gather(&self, idx: &[usize]) -> Self;
}

/// Both share vectors have these operations as inherent methods of the same signatures; the
/// trait only forwards to them.
macro_rules! forward_shares {
    ($($ty:ident),*) => {$(
        impl<R: Ring> Shares for $ty<R> {
            fn len(&self) -> usize {
                Self::len(self)
            }
            fn sub(&self, o: &Self) -> Result<Self, Error> {
                Self::sub(self, o)
            }
            fn concat(parts: &[&Self]) -> Self {
                Self::concat(parts)
            }
            fn slice(&self, r: Range<usize>) -> Self {
                Self::slice(self, r)
            }
            fn gather(&self, idx: &[usize]) -> Self {
                Self::gather(self, idx)
            }
        }
    )*};
}
forward_shares!(Rep3Vec, MVec);

/// The internal nodes level by level (`levels[d]`: the nodes of depth d in index order).
/// Comparisons are laid out in this order, node-major (`batch` entries per node), so each
/// level's branch bits are one contiguous range.
fn by_level(s: &TreeShape) -> Vec<Vec<usize>> {
    let depth = s.nodes.iter().map(|nd| nd.depth + 1).max().unwrap_or(0);
    let mut out = vec![Vec::new(); depth];
    for (i, nd) in s.nodes.iter().enumerate() {
        out[nd.depth].push(i);
    }
    out
}

/// The positions of each level's branch bits in the comparison layout.
fn level_ranges(levels: &[Vec<usize>], batch: usize) -> Vec<Range<usize>> {
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
fn differences<V: Shares>(
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
/// node i and `taken[i] = reach[i]·b[i]`, each `batch` long. The backend multiplies; the walk
/// only does the local bookkeeping.
struct Walk<'a, V> {
    s: &'a TreeShape,
    batch: usize,
    /// A root's reach: the public 1 (in setup, its mask: 0).
    ones: V,
    reach: Vec<Option<V>>,
    taken: Vec<Option<V>>,
}

impl<'a, V: Shares> Walk<'a, V> {
    fn new(s: &'a TreeShape, batch: usize, ones: V) -> Self {
        let n = s.nodes.len();
        Self { s, batch, ones, reach: vec![None; n], taken: vec![None; n] }
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
    fn reach(&mut self, level: &[usize]) -> Result<V, Error> {
        for &i in level {
            self.reach[i] = Some(match self.s.nodes[i].parent {
                None => self.ones.clone(),
                Some(pb) => self.child(pb)?,
            });
        }
        let parts: Vec<&V> = level.iter().filter_map(|&i| self.reach[i].as_ref()).collect();
        Ok(V::concat(&parts))
    }

    /// Records the products `reach·b` of one level's nodes (concatenated as [`Walk::reach`]).
    fn taken(&mut self, level: &[usize], prod: &V) -> Result<(), Error> {
        if prod.len() != level.len() * self.batch {
            return Err(Error::ApiMisuse("tree: products do not fit the level".into()));
        }
        for (k, &i) in level.iter().enumerate() {
            self.taken[i] = Some(prod.slice(k * self.batch..(k + 1) * self.batch));
        }
        Ok(())
    }

    /// The leaf indicators `I`, `batch × leaves` (sample-major, the left operand of `I·W`).
    fn indicators(&self) -> Result<V, Error> {
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
fn check_fit(s: &TreeShape, lens: [usize; 4], batch: usize) -> Result<(), Error> {
    s.check().map_err(|e| Error::ApiMisuse(e.to_string()))?;
    let (n, l, c, f) = (s.nodes.len(), s.leaves.len(), s.classes, s.features);
    if lens != [batch * f, n, l * c, c] {
        return Err(Error::ApiMisuse("tree ensemble: shares do not fit its shape".into()));
    }
    Ok(())
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
    check_fit(s, [x.len(), t.len(), w.len(), base.len()], batch)?;
    let (l, c) = (s.leaves.len(), s.classes);
    let me = p.me();
    let levels = by_level(s);
    let order = levels.concat();
    let bits = if order.is_empty() {
        Rep3Vec::public(me, &[])
    } else {
        let neg = p.ltz(&differences(s, &order, x, t, batch)?).await?;
        let c01 = p.bit_to_arith(&neg, dabits).await?;
        // b = c or 1 − c.
        let (mul, add): (Vec<R>, Vec<R>) = order
            .iter()
            .flat_map(|&i| {
                let v = if s.nodes[i].mode.negated() {
                    (R::ZERO - R::ONE, R::ONE)
                } else {
                    (R::ONE, R::ZERO)
                };
                core::iter::repeat_n(v, batch)
            })
            .unzip();
        c01.mul_public(&mul)?.add_public(&add)?
    };
    let mut walk = Walk::new(s, batch, Rep3Vec::public(me, &vec![R::ONE; batch]));
    for (d, (level, range)) in levels.iter().zip(level_ranges(&levels, batch)).enumerate() {
        let reach = walk.reach(level)?;
        let b = bits.slice(range);
        // The roots' reach is the public 1: their products are the bits themselves.
        let prod = if d == 0 { b } else { p.mul(&reach, &b).await? };
        walk.taken(level, &prod)?;
    }
    let scores = p.matmul(&walk.indicators()?, w, batch, l, c).await?;
    scores.add(&base.gather(&tile(batch * c, c)))
}

/// Setup of one tree-ensemble evaluation on METEOR for one batch (see the module docs):
/// single use, consumed by [`eval_meteor`]. `Debug` is redacted.
pub(crate) struct TreePrep<R> {
    batch: usize,
    /// The sign extraction of every comparison (`None` for an ensemble of single leaves).
    msb: Option<MsbPrep<R>>,
    /// One multiplexer per level: `reach·b`.
    levels: Vec<MuxPrep<R>>,
    /// `I·W` (integer indicators: no truncation).
    scores: MatMulPrep<R>,
    /// The output's mask (the product's plus the base's).
    out: Rep3Vec<R>,
}

impl<R> core::fmt::Debug for TreePrep<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "TreePrep(batch {}, {} levels, <redacted>)", self.batch, self.levels.len())
    }
}

impl<R: IntRing> TreePrep<R> {
    /// The scores' mask (for the setup of a later step).
    pub(crate) fn out_mask(&self) -> &Rep3Vec<R> {
        &self.out
    }
}

/// METEOR's online cost of an ensemble per sample and party, `(bytes, rounds)` in Z_2^ℓ: one
/// MSB extraction and one multiplexer reveal per node, one reveal per score; the MSB's
/// rounds, one per level, one for `I·W` (an ensemble of single leaves needs only the last).
pub(crate) fn meteor_online_cost(s: &TreeShape, bits: usize) -> (u64, u64) {
    let word = (bits / 8) as u64;
    let (msb_bytes, msb_rounds) = msb_online_cost(bits);
    let n = s.nodes.len() as u64;
    let depth = by_level(s).len() as u64;
    let compare_rounds = if n == 0 { 0 } else { msb_rounds as u64 + depth };
    (n * (msb_bytes as u64 + word) + word * s.classes as u64, compare_rounds + 1)
}

/// Setup of [`eval_meteor`] from the masks of the input (`batch × features`) and of the shared
/// thresholds, leaf weights and base values: no data. The MSB setup of all comparisons in one
/// batched run, one multiplexer setup per level (its reach mask follows from the output masks
/// of the level above, all drawn here), and the mask product of `I·W`.
pub(crate) async fn meteor_setup<T: Transport, R: IntRing>(
    p: &mut Meteor<T>,
    s: &TreeShape,
    (t, w, base): (&Rep3Vec<R>, &Rep3Vec<R>, &Rep3Vec<R>),
    x: &Rep3Vec<R>,
    batch: usize,
) -> Result<TreePrep<R>, Error> {
    check_fit(s, [x.len(), t.len(), w.len(), base.len()], batch)?;
    let (l, c) = (s.leaves.len(), s.classes);
    let me = p.me();
    let levels = by_level(s);
    let order = levels.concat();
    let msb = if order.is_empty() {
        None
    } else {
        Some(p.msb_setup(&differences(s, &order, x, t, batch)?).await?)
    };
    let mut walk = Walk::new(s, batch, Rep3Vec::public(me, &vec![R::ZERO; batch]));
    let mut muxes = Vec::with_capacity(levels.len());
    for (level, range) in levels.iter().zip(level_ranges(&levels, batch)) {
        let bit = msb
            .as_ref()
            .map(|m| m.out_mask().slice(range))
            .ok_or_else(|| Error::ApiMisuse("tree setup: a level without comparisons".into()))?;
        let reach = walk.reach(level)?;
        let out = p.mask::<R>(reach.len());
        walk.taken(level, &out)?;
        muxes.push(p.mux_setup(&reach, &bit, out).await?);
    }
    // The indicators are integers 0/1 and W is in fixed point: the product is already in the
    // format, so its "truncation pair" shifts by 0 (one fresh mask for the reveal).
    let r = p.mask::<R>(batch * c);
    let pairs = TruncPairs { frac_bits: 0, r: r.clone(), r_shifted: r };
    let ind = walk.indicators()?;
    let scores = p
        .matmul_fixed_setup_many(vec![(&ind, w, (batch, l, c), pairs)])
        .await?
        .pop()
        .ok_or_else(|| Error::ApiMisuse("tree setup: no leaf-weight product".into()))?;
    let out = scores.out_mask().add(&base.gather(&tile(batch * c, c)))?;
    Ok(TreePrep { batch, msb, levels: muxes, scores, out })
}

/// The secure evaluation on METEOR (see the module docs), consuming `prep` made by
/// [`meteor_setup`] for these shares' masks: `x` is `batch × features`, `t`, `w` and `base`
/// the shared thresholds, leaf weights and base values. Returns `batch × classes` scores.
pub(crate) async fn eval_meteor<T: Transport, R: IntRing>(
    p: &mut Meteor<T>,
    s: &TreeShape,
    (t, w, base): (&MVec<R>, &MVec<R>, &MVec<R>),
    x: &MVec<R>,
    prep: TreePrep<R>,
) -> Result<MVec<R>, Error> {
    let TreePrep { batch, msb, levels: muxes, scores, .. } = prep;
    check_fit(s, [x.len(), t.len(), w.len(), base.len()], batch)?;
    let c = s.classes;
    let me = p.me();
    let levels = by_level(s);
    let order = levels.concat();
    let other = || Error::ApiMisuse("tree: preparation made for another ensemble".into());
    if muxes.len() != levels.len() {
        return Err(other());
    }
    let bits = match (msb, order.is_empty()) {
        (Some(msb), false) => {
            let sign = p.msb(&differences(s, &order, x, t, batch)?, msb).await?;
            // b = c or ¬c: flip the public part (local).
            let flip =
                order.iter().flat_map(|&i| core::iter::repeat_n(s.nodes[i].mode.negated(), batch));
            Some(MBits { m: sign.m.iter().zip(flip).map(|(m, f)| m ^ f).collect(), psi: sign.psi })
        }
        (None, true) => None,
        _ => return Err(other()),
    };
    let mut walk = Walk::new(s, batch, MVec::public(me, &vec![R::ONE; batch]));
    for ((level, range), mux) in levels.iter().zip(level_ranges(&levels, batch)).zip(muxes) {
        let reach = walk.reach(level)?;
        let bits = bits.as_ref().ok_or_else(other)?;
        let b = MBits { m: bits.m[range.clone()].to_vec(), psi: bits.psi.slice(range) };
        let zero = MVec::public(me, &vec![R::ZERO; reach.len()]);
        let prod = p.mux(&reach, &zero, &b, mux).await?;
        walk.taken(level, &prod)?;
    }
    let scores = p.matmul_fixed(&walk.indicators()?, w, scores).await?;
    scores.add(&base.gather(&tile(batch * c, c)))
}
