//! [`Boolean`]: shared bits, the conversions between bits and ring elements, and the
//! comparisons written once on top of them.

use core::ops::Range;

use super::{Arith, Linear};
use crate::net::PartyId;
use crate::ring::IntRing;
use crate::Error;

/// Local, communication-free operations on a vector of boolean shares (one shared bit per
/// element, however a scheme packs them).
pub trait Bitwise: Clone + Sized {
    /// Number of shared bits.
    fn len(&self) -> usize;
    /// True when no bit is shared.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// `a ⊕ b` elementwise.
    fn xor(&self, o: &Self) -> Result<Self, Error>;
    /// `¬a` elementwise.
    fn not(&self) -> Self;
    /// Bits `range`.
    fn slice(&self, range: Range<usize>) -> Self;
    /// The bits of `parts` one after another.
    fn concat(parts: &[&Self]) -> Self;
}

/// Single-use material made in bulk in setup and taken in pieces online: a taken piece is
/// gone from the store, and asking for more than it holds is
/// [`Error::PreprocessingExhausted`], never a reuse.
pub trait Store: Sized {
    /// Units held.
    fn len(&self) -> usize;
    /// True when the store is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Moves the first `n` units out.
    fn take(&mut self, n: usize) -> Result<Self, Error>;
}

/// Boolean circuits on shared bits: inputs, ANDs, openings. ANDs come as whole layers
/// ([`Gates::and_layer`]): a circuit's evaluator makes one call per layer, and a scheme with
/// multi-input ANDs in one round (bin3) evaluates the layer as it is, where the others split
/// each gate into a tree of two-input ANDs batched across the layer.
///
/// ```
/// use ringfence_core::{net::PartyId, sharing::Gates, testing};
/// // Written once, for any scheme: the AND of three bits P0 owns, opened to all.
/// async fn all_three<S: Gates>(s: &mut S, mine: Option<&[bool]>) -> Result<Vec<bool>, ringfence_core::Error> {
///     let x = s.input_bits(PartyId(0), mine, 3).await?;
///     use ringfence_core::sharing::Bitwise;
///     let (a, b, c) = (x.slice(0..1), x.slice(1..2), x.slice(2..3));
///     let y = s.and_many(&[&a, &b, &c]).await?;
///     s.open_bits(y).await
/// }
/// let outs = testing::run_rep3(5, |mut p| async move {
///     let me = p.me();
///     all_three(&mut p, (me == PartyId(0)).then_some(&[true, true, false][..])).await
/// });
/// assert_eq!(outs[1], vec![false]);
/// ```
#[allow(async_fn_in_trait)] // futures are not `Send` by design: a session is driven by one task
pub trait Gates {
    /// A vector of shared bits.
    type Bits: Bitwise;

    /// Shares `n` bits owned by compute party `owner`, who passes `Some(bits)`; the others
    /// pass `None`.
    async fn input_bits(
        &mut self,
        owner: PartyId,
        bits: Option<&[bool]>,
        n: usize,
    ) -> Result<Self::Bits, Error>;

    /// The sharing of public bits (no communication).
    fn constant_bits(&self, bits: &[bool]) -> Self::Bits;

    /// `x ∧ y` elementwise.
    async fn and(&mut self, x: &Self::Bits, y: &Self::Bits) -> Result<Self::Bits, Error>;

    /// Opens shared bits to every compute party.
    async fn open_bits(&mut self, b: Self::Bits) -> Result<Vec<bool>, Error>;

    /// A layer of ANDs: for each gate, the AND of its operands elementwise (a gate's operands
    /// have one length; one operand is a copy). Here by trees of [`Gates::and`], one batched
    /// call per level for the whole layer: ⌈log₂ ℓ⌉ rounds for the widest gate's `ℓ`.
    /// Schemes with a multi-input AND override it.
    async fn and_layer(&mut self, gates: &[&[&Self::Bits]]) -> Result<Vec<Self::Bits>, Error> {
        let mut level: Vec<Vec<Self::Bits>> = Vec::with_capacity(gates.len());
        for g in gates {
            let Some(first) = g.first() else {
                return Err(Error::ApiMisuse("and: a gate without operands".into()));
            };
            if g.iter().any(|x| x.len() != first.len()) {
                return Err(Error::ApiMisuse("and: operands of different lengths".into()));
            }
            level.push(g.iter().map(|&x| x.clone()).collect());
        }
        while level.iter().any(|g| g.len() > 1) {
            // Every gate's operands paired up; all pairs of the layer in one AND.
            let (mut left, mut right) = (Vec::new(), Vec::new());
            for g in &level {
                for pair in g.chunks_exact(2) {
                    left.push(&pair[0]);
                    right.push(&pair[1]);
                }
            }
            let prod = self.and(&Self::Bits::concat(&left), &Self::Bits::concat(&right)).await?;
            let mut at = 0;
            for g in &mut level {
                let n = g[0].len();
                let pairs = g.len() / 2;
                let odd = (g.len() % 2 == 1).then(|| g.pop()).flatten();
                *g = (0..pairs).map(|i| prod.slice(at + i * n..at + (i + 1) * n)).collect();
                at += pairs * n;
                g.extend(odd);
            }
        }
        Ok(level.into_iter().filter_map(|mut g| g.pop()).collect())
    }

    /// The AND of all `xs` elementwise (every one of the same length): a layer of one gate.
    async fn and_many(&mut self, xs: &[&Self::Bits]) -> Result<Self::Bits, Error> {
        let mut out = self.and_layer(&[xs]).await?;
        out.pop().ok_or_else(|| Error::ApiMisuse("and_many: no operands".into()))
    }
}

/// Shared bits and comparisons, for a scheme with [`Arith`] over `R`.
///
/// A scheme provides the primitives: AND, the most significant bit of ring elements, bit
/// decomposition (A2B), bit injection (B2A) and the product of a bit with ring elements, and
/// opening bits. The comparisons, ReLU, selection, maxima and argmax are written here once on
/// those primitives, as provided methods; a scheme with a faster protocol for one of them
/// overrides it (rep3 does for equality). Bit injection and bit products take
/// [`BitPrep`](Self::BitPrep) material, one unit per bit, made in setup by
/// [`Boolean::bit_prep`]; what the other primitives need (verified triples, in a malicious
/// scheme) the scheme draws from its own stores.
///
/// Costs below are rep3's over Z_2^64 (k bits): an MSB is 8 rounds, a bit product 1.
///
/// ```
/// use ringfence_core::{net::PartyId, ring::Z64, sharing::{Arith, Boolean}, testing};
/// // Written once, for any scheme: ReLU of P0's values, opened to all.
/// async fn relu_of<S: Boolean<Z64>>(s: &mut S, x: Option<&[Z64]>, n: usize)
///     -> Result<Vec<Z64>, ringfence_core::Error> {
///     let bits = s.bit_prep(n).await?;
///     let (prep, _) = s.input_prep(PartyId(0), n);
///     let x = s.input(PartyId(0), x, prep).await?;
///     let y = s.relu(&x, bits).await?;
///     s.open(y).await
/// }
/// let outs = testing::run_rep3(5, |mut p| async move {
///     let x = [Z64(7), Z64(0), Z64(u64::MAX)];
///     let mine = (p.me() == PartyId(0)).then_some(&x[..]);
///     relu_of(&mut p, mine, 3).await
/// });
/// assert_eq!(outs[1], vec![Z64(7), Z64(0), Z64(0)]);
/// ```
#[allow(async_fn_in_trait)] // futures are not `Send` by design: a session is driven by one task
pub trait Boolean<R: IntRing>: Arith<R> + Gates {
    /// The material of bit injections and bit products: one unit per bit.
    type BitPrep: Store;

    /// Makes material for `n` bit injections or bit products (setup phase).
    async fn bit_prep(&mut self, n: usize) -> Result<Self::BitPrep, Error>;

    /// The most significant bit of every element of each vector, in one batched run.
    async fn msb_many(&mut self, xs: &[&Self::V]) -> Result<Vec<Self::Bits>, Error>;

    /// The bits of every element of `x` (arithmetic to boolean): `R::BITS` vectors, bit `i` of
    /// every element in vector `i`.
    async fn a2b(&mut self, x: &Self::V) -> Result<Vec<Self::Bits>, Error>;

    /// The ring sharing of shared bits (boolean to arithmetic), one unit of `prep` per bit.
    async fn b2a(&mut self, b: &Self::Bits, prep: Self::BitPrep) -> Result<Self::V, Error>;

    /// `b·x_j` for each vector `x_j` (every one of `b`'s length), one unit of `prep` per bit.
    async fn bit_mul_many(
        &mut self,
        b: &Self::Bits,
        xs: &[&Self::V],
        prep: Self::BitPrep,
    ) -> Result<Vec<Self::V>, Error>;

    /// `[x < 0]`: the most significant bit of each element (8 rounds).
    async fn ltz(&mut self, x: &Self::V) -> Result<Self::Bits, Error> {
        one(self.msb_many(&[x]).await?, "ltz")
    }

    /// `[x < y]` as signed integers, exact on the whole ring: the MSBs of `x`, `y` and `x − y`
    /// in one batched run and one AND round for the overflow case,
    /// `lt = m_d ⊕ ((m_x ⊕ m_y) ∧ (m_x ⊕ m_d))` (9 rounds).
    async fn lt(&mut self, x: &Self::V, y: &Self::V) -> Result<Self::Bits, Error> {
        let d = x.sub(y)?;
        let mut m = self.msb_many(&[x, y, &d]).await?.into_iter();
        let (Some(mx), Some(my), Some(md)) = (m.next(), m.next(), m.next()) else {
            return Err(Error::ApiMisuse("lt: msb_many returned too few results".into()));
        };
        let overflow = self.and(&mx.xor(&my)?, &mx.xor(&md)?).await?;
        md.xor(&overflow)
    }

    /// `[x < y]` for operands whose difference fits the ring (|x − y| < 2^(k−1), e.g.
    /// fixed-point data with headroom): one MSB of `x − y` (8 rounds).
    async fn lt_bounded(&mut self, x: &Self::V, y: &Self::V) -> Result<Self::Bits, Error> {
        self.ltz(&x.sub(y)?).await
    }

    /// `[x = y]`; by default [`eq_by_bits`].
    async fn eq(&mut self, x: &Self::V, y: &Self::V) -> Result<Self::Bits, Error> {
        eq_by_bits(self, x, y).await
    }

    /// `b ? x : y` elementwise (one bit product: 1 round).
    async fn select(
        &mut self,
        b: &Self::Bits,
        x: &Self::V,
        y: &Self::V,
        prep: Self::BitPrep,
    ) -> Result<Self::V, Error> {
        let prod = one(self.bit_mul_many(b, &[&x.sub(y)?], prep).await?, "select")?;
        y.add(&prod)
    }

    /// `max(x, 0)` elementwise: the MSB, then `x − msb·x` (9 rounds).
    async fn relu(&mut self, x: &Self::V, prep: Self::BitPrep) -> Result<Self::V, Error> {
        let neg = self.ltz(x).await?;
        let drop = one(self.bit_mul_many(&neg, &[x], prep).await?, "relu")?;
        x.sub(&drop)
    }

    /// `max(x, y)` elementwise, exact on the whole ring (10 rounds).
    async fn max(
        &mut self,
        x: &Self::V,
        y: &Self::V,
        prep: Self::BitPrep,
    ) -> Result<Self::V, Error> {
        let c = self.lt(x, y).await?;
        self.select(&c, y, x, prep).await
    }

    /// The maximum of each window (`windows[w]` lists indices into `x`), by a tournament over
    /// all windows at once: ⌈log₂ size⌉ levels of one comparison and one selection each.
    /// Takes one unit of material per comparison from `store` (Σ (|window| − 1) in all).
    async fn max_windows(
        &mut self,
        x: &Self::V,
        windows: &[Vec<usize>],
        store: &mut Self::BitPrep,
    ) -> Result<Self::V, Error> {
        Ok(tournament(self, x, windows, None, store, Compare::Exact).await?.0)
    }

    /// [`Boolean::max_windows`] for values whose differences fit the ring (|x − y| < 2^(k−1):
    /// fixed-point data with headroom, as an inference's activations are): each comparison is
    /// one MSB ([`Boolean::lt_bounded`]) instead of three.
    async fn max_windows_bounded(
        &mut self,
        x: &Self::V,
        windows: &[Vec<usize>],
        store: &mut Self::BitPrep,
    ) -> Result<Self::V, Error> {
        Ok(tournament(self, x, windows, None, store, Compare::Bounded).await?.0)
    }

    /// The index of the maximum of each row of `x` (rows of `len`), as shared ring elements;
    /// ties go to the lowest index. Takes `rows·(len − 1)` units of material from `store`.
    async fn argmax(
        &mut self,
        x: &Self::V,
        len: usize,
        store: &mut Self::BitPrep,
    ) -> Result<Self::V, Error> {
        argmax_by(self, x, len, store, Compare::Exact).await
    }

    /// [`Boolean::argmax`] for values whose differences fit the ring, as
    /// [`Boolean::max_windows_bounded`]: one MSB per comparison.
    async fn argmax_bounded(
        &mut self,
        x: &Self::V,
        len: usize,
        store: &mut Self::BitPrep,
    ) -> Result<Self::V, Error> {
        argmax_by(self, x, len, store, Compare::Bounded).await
    }
}

/// `[x = y]` for any [`Boolean`] scheme: every bit of `x − y` is zero, by an A2B and an AND
/// tree over the negated bits ([`Gates::and_many`]). The default of [`Boolean::eq`], public
/// so that it can be checked on schemes that override it.
pub async fn eq_by_bits<R: IntRing, S: Boolean<R> + ?Sized>(
    s: &mut S,
    x: &S::V,
    y: &S::V,
) -> Result<S::Bits, Error> {
    let zero: Vec<S::Bits> = s.a2b(&x.sub(y)?).await?.iter().map(Bitwise::not).collect();
    s.and_many(&zero.iter().collect::<Vec<_>>()).await
}

/// The only element of a primitive's one-vector result.
fn one<T>(mut v: Vec<T>, what: &str) -> Result<T, Error> {
    match (v.pop(), v.is_empty()) {
        (Some(x), true) => Ok(x),
        _ => Err(Error::ApiMisuse(format!("{what}: expected one result vector"))),
    }
}

/// The index of the maximum of each row of `x` (rows of `len`), comparing as `compare` says.
async fn argmax_by<R: IntRing, S: Boolean<R> + ?Sized>(
    s: &mut S,
    x: &S::V,
    len: usize,
    store: &mut S::BitPrep,
    compare: Compare,
) -> Result<S::V, Error> {
    if len == 0 || x.len() % len != 0 {
        return Err(Error::ApiMisuse(format!(
            "argmax: {} elements are not rows of {len}",
            x.len()
        )));
    }
    let windows: Vec<Vec<usize>> =
        (0..x.len() / len).map(|r| (r * len..(r + 1) * len).collect()).collect();
    let idx: Vec<R> = (0..x.len()).map(|i| R::from_u64((i % len) as u64)).collect();
    let idx = s.constant(&idx);
    let (_, i) = tournament(s, x, &windows, Some(&idx), store, compare).await?;
    i.ok_or_else(|| Error::ApiMisuse("argmax: the tournament lost the indices".into()))
}

/// How a tournament compares.
#[derive(Clone, Copy)]
enum Compare {
    /// [`Boolean::lt`]: any values.
    Exact,
    /// [`Boolean::lt_bounded`]: values whose differences fit the ring.
    Bounded,
}

/// Pairwise knock-out per window; the lower-indexed element wins ties. A `payload` (argmax's
/// indices) follows its element through the same selections.
async fn tournament<R: IntRing, S: Boolean<R> + ?Sized>(
    s: &mut S,
    x: &S::V,
    windows: &[Vec<usize>],
    payload: Option<&S::V>,
    store: &mut S::BitPrep,
    compare: Compare,
) -> Result<(S::V, Option<S::V>), Error> {
    if windows.iter().any(|w| w.is_empty() || w.iter().any(|&i| i >= x.len())) {
        return Err(Error::ApiMisuse("max: empty window or index out of range".into()));
    }
    // Current contenders: one flat vector, window after window.
    let flat: Vec<usize> = windows.iter().flatten().copied().collect();
    let mut vals = x.gather(&flat);
    let mut pay = payload.map(|p| p.gather(&flat));
    let mut sizes: Vec<usize> = windows.iter().map(Vec::len).collect();
    while sizes.iter().any(|&s| s > 1) {
        // Pair (2i, 2i+1) within each window; an odd last element passes through.
        let (mut left, mut right) = (Vec::new(), Vec::new());
        // Next contenders: Ok(i) = winner of pair i, Err(j) = element j passes through.
        let mut order: Vec<Result<usize, usize>> = Vec::new();
        let mut at = 0;
        for size in sizes.iter_mut() {
            for p in 0..*size / 2 {
                order.push(Ok(left.len()));
                left.push(at + 2 * p);
                right.push(at + 2 * p + 1);
            }
            if *size % 2 == 1 {
                order.push(Err(at + *size - 1));
            }
            at += *size;
            *size = size.div_ceil(2);
        }
        let pairs = left.len();
        let idx: Vec<usize> = order.iter().map(|o| o.unwrap_or_else(|j| pairs + j)).collect();
        let (l, r) = (vals.gather(&left), vals.gather(&right));
        let c = match compare {
            Compare::Exact => s.lt(&l, &r).await?,
            Compare::Bounded => s.lt_bounded(&l, &r).await?,
        };
        let bits = store.take(pairs)?;
        let dv = r.sub(&l)?;
        // The winner is l + c·(r − l), for the value and its payload in one bit product.
        match pay.take() {
            Some(p) => {
                let (pl, pr) = (p.gather(&left), p.gather(&right));
                let dp = pr.sub(&pl)?;
                let mut out = s.bit_mul_many(&c, &[&dv, &dp], bits).await?.into_iter();
                let (Some(ov), Some(op)) = (out.next(), out.next()) else {
                    return Err(Error::ApiMisuse("max: bit_mul_many lost a vector".into()));
                };
                vals = S::V::concat(&[&l.add(&ov)?, &vals]).gather(&idx);
                pay = Some(S::V::concat(&[&pl.add(&op)?, &p]).gather(&idx));
            }
            None => {
                let ov = one(s.bit_mul_many(&c, &[&dv], bits).await?, "max")?;
                vals = S::V::concat(&[&l.add(&ov)?, &vals]).gather(&idx);
            }
        }
    }
    Ok((vals, pay))
}
