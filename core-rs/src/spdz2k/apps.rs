//! The paper's two-party applications (its section V): a decision tree whose feature choices
//! stay private, made actively secure by checking the owner's one-hot selectors, and a linear
//! SVM with Toft's argmax. Written on the sharing traits, so any scheme with comparisons runs
//! them; the checks matter where parties may deviate (spdz2k), and cost little elsewhere.
//!
//! **Tree** ([`PrivateTree`]): complete, `h` internal levels in heap order (node `j`'s children
//! `2j` and `2j + 1`, the root 1; `m = 2^h − 1` nodes), each testing `[x_{v_j} < t_j]` (1 goes
//! right), `2^h` leaves (heap indices `m + 1 … 2m + 1`). Public: `h` and the number of
//! features. The owner inputs the thresholds, the leaves and one-hot selectors `c_{j,i}`
//! (`= [i = v_j]`); the parties open `Σ_i c_{j,i} − 1` and `c_{j,i}·(1 − c_{j,i})`, which must
//! be 0 (over Z_2^k the second forces `c ∈ {0, 1}`: `c` and `1 − c` have different parities, so
//! one is a unit), before anything uses them: an owner that selects a combination of features
//! instead is caught. Then `Σ_i c_{j,i}·x_i` per node, one comparison per node, the path
//! product of every leaf (the extract's corrected indexing: leaf `L`'s factor at ancestor
//! `⌊L/2^l⌋` is `f` where bit `l − 1` of `L` is 1, `1 − f` otherwise, multiplied as a tree), and
//! `Σ_L z_L·P_L` opened to the client only.
//!
//! **SVM**: scores `b_j + Σ_i F_{j,i}·x_i` (`q·n` products), the tournament argmax of
//! [`Boolean::argmax_bounded`] (ties go to the lower index; the paper's to the later one), the
//! class index opened to the client only.

use crate::net::PartyId;
use crate::ring::IntRing;
use crate::sharing::{Arith, Boolean, Len, Linear};
use crate::Error;

/// A complete decision tree in the paper's layout (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivateTree<R> {
    /// Internal levels `h`.
    pub depth: usize,
    /// Features per sample.
    pub features: usize,
    /// The feature node `j` tests (heap order from the root, `2^h − 1` of them).
    pub feature: Vec<usize>,
    /// Node `j`'s threshold: the node goes right when `x_{v_j} < t_j`.
    pub threshold: Vec<R>,
    /// The leaves' values, left to right (`2^h`).
    pub leaf: Vec<R>,
}

impl<R: IntRing> PrivateTree<R> {
    /// Internal nodes.
    pub fn nodes(&self) -> usize {
        (1 << self.depth) - 1
    }

    /// The tree's answer for `x`, in the clear (signed comparisons).
    pub fn eval_plain(&self, x: &[R]) -> R {
        let mut j = 1;
        for _ in 0..self.depth {
            let right = x[self.feature[j - 1]].to_i64() < self.threshold[j - 1].to_i64();
            j = 2 * j + usize::from(right);
        }
        self.leaf[j - (1 << self.depth)]
    }

    fn check(&self) -> Result<(), Error> {
        let m = self.nodes();
        if self.feature.len() != m
            || self.threshold.len() != m
            || self.leaf.len() != m + 1
            || self.feature.iter().any(|&v| v >= self.features)
        {
            return Err(Error::ApiMisuse(format!(
                "a tree of depth {} over {} features needs {m} nodes with features below that \
                 and {} leaves",
                self.depth,
                self.features,
                m + 1
            )));
        }
        Ok(())
    }
}

/// Inputs `n` values from `owner` (it passes them, the others `None`).
async fn input<R: IntRing, S: Arith<R>>(
    s: &mut S,
    owner: PartyId,
    values: Option<&[R]>,
    n: usize,
) -> Result<S::V, Error> {
    let (prep, _) = s.input_prep(owner, n);
    s.input(owner, values, prep).await
}

/// `x·y` elementwise, exact.
async fn mul<R: IntRing, S: Arith<R, Tag = Len>>(
    s: &mut S,
    x: &S::V,
    y: &S::V,
) -> Result<S::V, Error> {
    let (prep, _) = s.mul_prep(&Len(x.len()), &Len(y.len()), 0).await?;
    s.mul(x, y, prep).await
}

/// The sums of consecutive runs of `len` elements (local).
fn run_sums<R: IntRing, V: Linear<R>>(v: &V, len: usize) -> Result<V, Error> {
    let rows = v.len() / len;
    let mut acc = v.gather(&(0..rows).map(|r| r * len).collect::<Vec<_>>());
    for i in 1..len {
        acc = acc.add(&v.gather(&(0..rows).map(|r| r * len + i).collect::<Vec<_>>()))?;
    }
    Ok(acc)
}

/// The private tree evaluation (module documentation): `owner` passes `Some(tree)`, `client`
/// passes `Some(x)`; `depth` and `features` are public. The client gets `Some(leaf value)`,
/// the others `None`. An owner whose selectors are not one-hot makes every party fail with
/// [`Error::Abort`] before any comparison.
pub async fn tree<R: IntRing, S: Boolean<R> + Arith<R, Tag = Len>>(
    s: &mut S,
    (owner, client): (PartyId, PartyId),
    (depth, features): (usize, usize),
    model: Option<&PrivateTree<R>>,
    x: Option<&[R]>,
) -> Result<Option<R>, Error> {
    let (m, n) = ((1usize << depth) - 1, features);
    let leaves = m + 1;
    if depth == 0 || features == 0 {
        return Err(Error::ApiMisuse("a private tree needs a level and a feature".into()));
    }
    // The owner's input: thresholds, leaves, then the selectors node by node.
    let mine = match model {
        Some(t) => {
            t.check()?;
            if (t.depth, t.features) != (depth, features) {
                return Err(Error::ApiMisuse("the tree's shape is not the public one".into()));
            }
            let mut v = t.threshold.clone();
            v.extend_from_slice(&t.leaf);
            for &f in &t.feature {
                v.extend((0..n).map(|i| R::from_u64(u64::from(i == f))));
            }
            Some(v)
        }
        None => None,
    };
    let all = input(s, owner, mine.as_deref(), m + leaves + m * n).await?;
    let (t, z, c) = (all.slice(0..m), all.slice(m..m + leaves), all.slice(m + leaves..all.len()));
    let xs = input(s, client, x, n).await?;

    // The one-hot checks, opened before anything uses the selectors.
    let ones = s.constant(&vec![R::ONE; m * n]);
    let bit_check = mul(s, &c, &ones.sub(&c)?).await?;
    let sums = run_sums(&c, n)?.sub(&s.constant(&vec![R::ONE; m]))?;
    let opened = s.open(S::V::concat(&[&sums, &bit_check])).await?;
    if opened.iter().any(|&v| v != R::ZERO) {
        return Err(Error::Abort {
            blame: Some(owner),
            reason: "the tree's feature selectors are not one-hot".into(),
        });
    }

    // The selected feature of every node, and its comparison.
    let x_rep = xs.gather(&(0..m * n).map(|i| i % n).collect::<Vec<_>>());
    let selected = run_sums(&mul(s, &c, &x_rep).await?, n)?;
    let right = s.lt_bounded(&selected, &t).await?;
    let bits = s.bit_prep(m).await?;
    let f = s.b2a(&right, bits).await?;
    let not_f = s.constant(&vec![R::ONE; m]).sub(&f)?;

    // Every leaf's path factors, level by level, then their products as a tree.
    let both = S::V::concat(&[&f, &not_f]);
    let mut factors: Vec<S::V> = (1..=depth)
        .map(|l| {
            let idx: Vec<usize> = (0..leaves)
                .map(|jj| {
                    let leaf = leaves + jj;
                    let node = (leaf >> l) - 1;
                    if leaf >> (l - 1) & 1 == 1 {
                        node
                    } else {
                        m + node
                    }
                })
                .collect();
            both.gather(&idx)
        })
        .collect();
    while factors.len() > 1 {
        let half = factors.len() / 2;
        let left = S::V::concat(&factors[..half].iter().collect::<Vec<_>>());
        let right = S::V::concat(&factors[half..2 * half].iter().collect::<Vec<_>>());
        let prod = mul(s, &left, &right).await?;
        let mut next: Vec<S::V> =
            (0..half).map(|i| prod.slice(i * leaves..(i + 1) * leaves)).collect();
        if factors.len() % 2 == 1 {
            next.extend(factors.pop());
        }
        factors = next;
    }
    let path = factors.pop().ok_or_else(|| Error::ApiMisuse("a tree without levels".into()))?;
    let value = run_sums(&mul(s, &z, &path).await?, leaves)?;
    Ok(s.open_to(client, value).await?.map(|v| v[0]))
}

/// The SVM's class for the client's `x` (module documentation): `owner` passes
/// `Some((F, b))` (`F` row-major `q × n`), `client` passes `Some(x)`. The client gets
/// `Some(class index)`, the others `None`.
pub async fn svm<R: IntRing, S: Boolean<R> + Arith<R, Tag = Len>>(
    s: &mut S,
    (owner, client): (PartyId, PartyId),
    (classes, features): (usize, usize),
    model: Option<(&[R], &[R])>,
    x: Option<&[R]>,
) -> Result<Option<R>, Error> {
    let (q, n) = (classes, features);
    let mine = match model {
        Some((f, b)) if f.len() == q * n && b.len() == q => {
            Some(f.iter().chain(b).copied().collect::<Vec<R>>())
        }
        Some(_) => {
            return Err(Error::ApiMisuse(format!("an SVM of {q} classes over {n} features")))
        }
        None => None,
    };
    let all = input(s, owner, mine.as_deref(), q * n + q).await?;
    let (f, b) = (all.slice(0..q * n), all.slice(q * n..q * n + q));
    let xs = input(s, client, x, n).await?;
    let x_rep = xs.gather(&(0..q * n).map(|i| i % n).collect::<Vec<_>>());
    let scores = run_sums(&mul(s, &f, &x_rep).await?, n)?.add(&b)?;
    let mut store = s.bit_prep(q.saturating_sub(1)).await?;
    let class = s.argmax_bounded(&scores, q, &mut store).await?;
    Ok(s.open_to(client, class).await?.map(|v| v[0]))
}
