//! Multiplications: N-MULT (N = 2, 3, 4, …) over any ring, fixed-point multiplication and
//! matrix products with the truncation folded into the reveal.
//!
//! **N-MULT** (extract §3.6). `Π_t x_t − ψ_z = Σ_{T ⊆ [N]} (Π_{j∉T} m_j)·ψ_T − ψ_z`, where
//! `ψ_T = Π_{k∈T} ψ_k`. Setup makes the `2^N − 1 − N` products with `|T| ≥ 2` by `rep3`
//! multiplication in ⌈log₂N⌉ rounds (round r makes the subsets of size in (2^(r−1), 2^r] from two
//! halves made earlier); online is one reveal whatever N is. 2-MULT is the case N = 2.
//!
//! **Fixed point** (§3.5, §3.7). The reveal subtracts `ψ'` of a truncation pair
//! `(ψ', ψ = ψ' >> d)` instead of a plain mask; the parties shift the public `m' = xy − ψ'`
//! arithmetically and keep `ψ` as the output mask, so `m + ψ = ⌊xy / 2^d⌋` or one less, except
//! with probability ≈ |xy| / 2^(ℓ−1) (a wrap of `xy − ψ'`; see `rep3::trunc`).
//!
//! **Matrix products** (§3.7). `m'_Z = m_X·m_W + m_X·ψ_W + ψ_X·m_W + ψ_Xψ_W − ψ'_Z` with
//! `⟨ψ_Xψ_W⟩` from setup: one element per output online, whatever the inner dimension, at the
//! price of four or five local products per party instead of rep3's two.

use std::sync::Arc;

use super::{check_mask, comp0_slot, MVec, Meteor, MeteorRing};
use crate::net::{PartyId, Transport};
use crate::rep3::{Rep3, Rep3Vec, TruncPairs};
use crate::ring::{kernels, IntRing, Ring};
use crate::Error;

/// Setup of one N-MULT over vectors: every subset product of the input masks and the output
/// mask. Consumed by [`Meteor::nmult`]. `Debug` is redacted.
pub struct NMultPrep<R> {
    inputs: usize,
    /// Subset-major: `terms[T − 1]` holds `ψ_T = Π_{k∈T} ψ_k` of every value for the subset
    /// bitmask T ≥ 1, so `terms[(1 << j) − 1]` is input mask j. `ψ_∅` is the public constant 1:
    /// its term, the public product `Π m_j`, joins component 0. One vector per subset lets the
    /// online sum run down all values at once ([`MeteorRing::subset_sum`]).
    terms: Vec<Term<R>>,
    out: Rep3Vec<R>,
}

/// One subset product's shares: a range of a vector shared with the other products made in
/// the same batched multiplication, so that splitting the batch copies nothing.
struct Term<R> {
    all: Arc<Rep3Vec<R>>,
    range: core::ops::Range<usize>,
}

impl<R: Ring> Term<R> {
    fn whole(v: Rep3Vec<R>) -> Self {
        Self { range: 0..v.len(), all: Arc::new(v) }
    }

    fn parts(&self) -> [&[R]; 2] {
        [&self.all.a[self.range.clone()], &self.all.b[self.range.clone()]]
    }

    /// Elements `r`, sharing this term's vector (no copy).
    fn view(&self, r: core::ops::Range<usize>) -> Self {
        let start = self.range.start;
        Self { all: self.all.clone(), range: start + r.start..start + r.end }
    }

    /// Elements `r` in a vector of their own: a split-off piece does not keep the whole batch
    /// alive after the batched preparation is gone.
    fn slice(&self, r: core::ops::Range<usize>) -> Self {
        let [a, b] = self.parts();
        let (a, b) = (a[r.clone()].to_vec(), b[r].to_vec());
        Self::whole(Rep3Vec::from_parts(self.all.holder(), a, b))
    }

    fn cols(&self, cols: usize, r: core::ops::Range<usize>) -> Self {
        let [a, b] = self.parts();
        Self::whole(Rep3Vec::cols_of(self.all.holder(), [a, b], cols, r))
    }

    fn is(&self, x: &Rep3Vec<R>) -> bool {
        let [a, b] = self.parts();
        x.holder() == self.all.holder() && x.a == a && x.b == b
    }
}

impl<R> core::fmt::Debug for NMultPrep<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "NMultPrep({} inputs, <redacted>)", self.inputs)
    }
}

impl<R: Ring> NMultPrep<R> {
    /// Number of inputs N.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// Elements per input.
    pub fn len(&self) -> usize {
        self.out.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    /// The output mask ψ_z.
    pub fn out_mask(&self) -> &Rep3Vec<R> {
        &self.out
    }

    /// Elements `range` (for splitting a batched setup).
    pub(crate) fn slice(&self, range: core::ops::Range<usize>) -> Self {
        Self {
            inputs: self.inputs,
            terms: self.terms.iter().map(|t| t.slice(range.clone())).collect(),
            out: self.out.slice(range),
        }
    }

    /// Columns `range` of every row, for preparations laid out as rows of `cols` values
    /// (see [`Rep3Vec::cols`]).
    pub(crate) fn cols(&self, cols: usize, range: core::ops::Range<usize>) -> Self {
        Self {
            inputs: self.inputs,
            terms: self.terms.iter().map(|t| t.cols(cols, range.clone())).collect(),
            out: self.out.cols(cols, range),
        }
    }

    /// Both components of input mask `j` (`ψ_{j}`, the subset of one).
    pub(crate) fn input(&self, j: usize) -> [&[R]; 2] {
        self.terms[(1 << j) - 1].parts()
    }

    /// Checks that `x` carries input mask `j`.
    fn check_input(&self, j: usize, x: &Rep3Vec<R>) -> Result<(), Error> {
        if self.terms[(1 << j) - 1].is(x) {
            Ok(())
        } else {
            Err(Error::ApiMisuse(format!(
                "N-MULT: input {j}'s mask is not the one this preparation was made for"
            )))
        }
    }

    /// This party's shares of `Π_j x_j − ψ_out` for values `[at, at + len)` of the
    /// preparation, from the public factors `m[j]` (each `len` long).
    pub(crate) fn masked_sum(
        &self,
        me: PartyId,
        m: &[&[R]],
        at: usize,
        out: [&mut [R]; 2],
    ) -> Result<(), Error>
    where
        R: MeteorRing,
    {
        let len = out[0].len();
        if m.len() != self.inputs || m.iter().any(|x| x.len() != len) || at + len > self.len() {
            return Err(Error::ApiMisuse(format!(
                "N-MULT: {} factors for a preparation of {} inputs",
                m.len(),
                self.inputs
            )));
        }
        let r = at..at + len;
        let ta: Vec<&[R]> = self.terms.iter().map(|t| &t.parts()[0][r.clone()]).collect();
        let tb: Vec<&[R]> = self.terms.iter().map(|t| &t.parts()[1][r.clone()]).collect();
        let public = comp0_slot(me).map(|first| if first { 0 } else { 1 });
        R::subset_sum(m, [&ta, &tb], [&self.out.a[r.clone()], &self.out.b[r]], public, out);
        Ok(())
    }
}

/// Setup of a fixed-point elementwise multiplication (2-MULT with a truncation pair).
#[derive(Debug)]
pub struct FixedMultPrep<R> {
    mult: NMultPrep<R>,
    shifted: Rep3Vec<R>,
    frac_bits: u32,
}

impl<R: Ring> FixedMultPrep<R> {
    /// A 2-MULT's material from its parts: the input masks `x` and `y` (this party's shares
    /// of the operands' masks), the shares of their product, the output mask before and after
    /// the shift by `frac_bits` (the same vector when 0). What the setup protocol leaves, or
    /// a test dealer ([`crate::testing::ideal::Dealer`]).
    #[cfg(any(test, feature = "test-utils"))]
    pub(crate) fn from_parts(
        [x, y, xy]: [Rep3Vec<R>; 3],
        out: Rep3Vec<R>,
        shifted: Rep3Vec<R>,
        frac_bits: u32,
    ) -> Self {
        let terms = vec![Term::whole(x), Term::whole(y), Term::whole(xy)];
        Self { mult: NMultPrep { inputs: 2, terms, out }, shifted, frac_bits }
    }

    /// The output's mask (known in setup, for the next operation's setup).
    pub fn out_mask(&self) -> &Rep3Vec<R> {
        &self.shifted
    }
}

/// Setup of a fixed-point matrix product `Z = X·W` (m×k by k×n). `Debug` is redacted.
pub struct MatMulPrep<R> {
    dims: (usize, usize, usize),
    psi_x: Rep3Vec<R>,
    psi_w: Rep3Vec<R>,
    psi_xw: Rep3Vec<R>,
    r: Rep3Vec<R>,
    shifted: Rep3Vec<R>,
    frac_bits: u32,
}

impl<R> core::fmt::Debug for MatMulPrep<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "MatMulPrep({:?}, <redacted>)", self.dims)
    }
}

impl<R: Ring> MatMulPrep<R> {
    /// The output's mask `ψ_Z = ψ'_Z >> d` (known in setup, for the next layer's setup).
    pub fn out_mask(&self) -> &Rep3Vec<R> {
        &self.shifted
    }

    /// The product's shape `(m, k, n)`.
    pub fn dims(&self) -> (usize, usize, usize) {
        self.dims
    }
}

/// One matrix product to prepare: `(ψ_X, ψ_W, (m, k, n), truncation pairs for m·n outputs)`.
pub type MatMulJob<'a, R> = (&'a Rep3Vec<R>, &'a Rep3Vec<R>, (usize, usize, usize), TruncPairs<R>);

/// The lowest ⌈p/2⌉ set bits of `t` (p = popcount): one half of a subset, the rest the other.
fn low_half(t: usize) -> usize {
    let take = (t.count_ones() as usize).div_ceil(2);
    let mut out = 0;
    let mut rest = t;
    for _ in 0..take {
        let bit = rest & rest.wrapping_neg();
        out |= bit;
        rest ^= bit;
    }
    out
}

impl<T: Transport> Meteor<T> {
    /// Setup of several N-MULTs at once (each `(input masks, output mask)`): all subset
    /// products in ⌈log₂ max N⌉ rounds, one batched `rep3` multiplication per round.
    pub async fn nmult_setup_many<R: Ring>(
        &mut self,
        jobs: Vec<(Vec<&Rep3Vec<R>>, Rep3Vec<R>)>,
    ) -> Result<Vec<NMultPrep<R>>, Error> {
        let owned = jobs
            .into_iter()
            .map(|(inputs, out)| (inputs.into_iter().cloned().collect(), out))
            .collect();
        self.nmult_setup_owned(owned).await
    }

    /// [`Meteor::nmult_setup_many`] taking the input masks by value: the preparations keep
    /// them (as their one-element subsets) without a copy.
    pub(crate) async fn nmult_setup_owned<R: Ring>(
        &mut self,
        jobs: Vec<(Vec<Rep3Vec<R>>, Rep3Vec<R>)>,
    ) -> Result<Vec<NMultPrep<R>>, Error> {
        let mut building = Vec::with_capacity(jobs.len());
        let mut max_n = 0;
        for (inputs, out) in jobs {
            let n = inputs.len();
            if !(2..=8).contains(&n) {
                return Err(Error::ApiMisuse(format!("N-MULT of {n} inputs (2 to 8 supported)")));
            }
            if let Some(bad) = inputs.iter().find(|x| x.len() != out.len()) {
                return Err(Error::ApiMisuse(format!(
                    "N-MULT setup: an input has {} elements, the output {}",
                    bad.len(),
                    out.len()
                )));
            }
            // Index T: ψ_T once made (None for ∅, the public 1, and subsets still to make).
            let mut subsets: Vec<Option<Term<R>>> = (0..1 << n).map(|_| None).collect();
            for (j, x) in inputs.into_iter().enumerate() {
                subsets[1 << j] = Some(Term::whole(x));
            }
            max_n = max_n.max(n);
            building.push((subsets, out));
        }
        let mut lo = 1;
        while lo < max_n {
            let hi = 2 * lo;
            // (job, subset) pairs made this round, from two halves made before.
            let mut made = Vec::new();
            let mut pairs = Vec::new();
            for (j, (subsets, _)) in building.iter().enumerate() {
                for t in 1..subsets.len() {
                    let p = t.count_ones() as usize;
                    if p > lo && p <= hi {
                        let l = low_half(t);
                        let (Some(x), Some(y)) = (&subsets[l], &subsets[t ^ l]) else {
                            return Err(Error::ApiMisuse("N-MULT setup: a half is missing".into()));
                        };
                        pairs.push((x.parts(), y.parts()));
                        made.push((j, t));
                    }
                }
            }
            if !made.is_empty() {
                let lens: Vec<usize> = pairs.iter().map(|(x, _)| x[0].len()).collect();
                let z = Term::whole(self.p.mul_concat(&pairs).await?);
                let mut at = 0;
                for ((j, t), len) in made.into_iter().zip(lens) {
                    building[j].0[t] = Some(z.view(at..at + len));
                    at += len;
                }
            }
            lo = hi;
        }
        building
            .into_iter()
            .map(|(subsets, out)| {
                let inputs = subsets.len().trailing_zeros() as usize;
                let terms = subsets
                    .into_iter()
                    .skip(1)
                    .map(|t| {
                        t.ok_or_else(|| {
                            Error::ApiMisuse("N-MULT setup: a subset is missing".into())
                        })
                    })
                    .collect::<Result<_, _>>()?;
                Ok(NMultPrep { inputs, terms, out })
            })
            .collect()
    }

    /// Setup of one 2-MULT `x·y` with a fresh output mask (1 round).
    pub async fn mult_setup<R: Ring>(
        &mut self,
        x_mask: &Rep3Vec<R>,
        y_mask: &Rep3Vec<R>,
    ) -> Result<NMultPrep<R>, Error> {
        let out = self.mask(x_mask.len());
        let mut v = self.nmult_setup_many(vec![(vec![x_mask, y_mask], out)]).await?;
        v.pop().ok_or_else(|| Error::ApiMisuse("mult_setup: nothing prepared".into()))
    }

    /// Setup of a fixed-point 2-MULT, consuming truncation pairs for `d` fractional bits.
    pub async fn mult_fixed_setup<R: IntRing>(
        &mut self,
        x_mask: &Rep3Vec<R>,
        y_mask: &Rep3Vec<R>,
        pairs: TruncPairs<R>,
    ) -> Result<FixedMultPrep<R>, Error> {
        if pairs.len() != x_mask.len() {
            return Err(Error::ApiMisuse(format!(
                "mult_fixed_setup: {} values, {} truncation pairs",
                x_mask.len(),
                pairs.len()
            )));
        }
        let TruncPairs { frac_bits, r, r_shifted } = pairs;
        let mut v = self.nmult_setup_many(vec![(vec![x_mask, y_mask], r)]).await?;
        let mult = v.pop().ok_or_else(|| Error::ApiMisuse("nothing prepared".into()))?;
        Ok(FixedMultPrep { mult, shifted: r_shifted, frac_bits })
    }

    /// `⟨Π x_t − ψ_out⟩` from the public `m`s and the setup products (local).
    fn nmult_masked<R: MeteorRing>(
        &self,
        xs: &[&MVec<R>],
        prep: &NMultPrep<R>,
    ) -> Result<Rep3Vec<R>, Error> {
        let n_in = prep.inputs;
        if xs.len() != n_in {
            return Err(Error::ApiMisuse(format!(
                "N-MULT: {} inputs, prepared for {n_in}",
                xs.len()
            )));
        }
        for (j, x) in xs.iter().enumerate() {
            prep.check_input(j, &x.psi)?;
        }
        let (mut a, mut b) = (vec![R::ZERO; prep.len()], vec![R::ZERO; prep.len()]);
        let m: Vec<&[R]> = xs.iter().map(|x| &x.m[..]).collect();
        prep.masked_sum(self.me(), &m, 0, [&mut a, &mut b])?;
        Ok(Rep3Vec::from_parts(self.me(), a, b))
    }

    /// N-MULT online: `⟦Π x_t⟧` (1 round, one element per value per party).
    pub async fn nmult<R: MeteorRing>(
        &mut self,
        xs: &[&MVec<R>],
        prep: NMultPrep<R>,
    ) -> Result<MVec<R>, Error> {
        let v = self.nmult_masked(xs, &prep)?;
        let m = self.p.reveal(v).await?;
        MVec::new(m, prep.out)
    }

    /// 2-MULT online: `⟦x·y⟧` (1 round, one element per value per party).
    pub async fn mult<R: MeteorRing>(
        &mut self,
        x: &MVec<R>,
        y: &MVec<R>,
        prep: NMultPrep<R>,
    ) -> Result<MVec<R>, Error> {
        self.nmult(&[x, y], prep).await
    }

    /// Fixed-point `⟦x·y / 2^d⟧` with the truncation folded into the reveal (1 round, one
    /// element per value per party).
    pub async fn mult_fixed<R: IntRing + MeteorRing>(
        &mut self,
        x: &MVec<R>,
        y: &MVec<R>,
        prep: FixedMultPrep<R>,
    ) -> Result<MVec<R>, Error> {
        let v = self.nmult_masked(&[x, y], &prep.mult)?;
        let m = self.p.reveal(v).await?;
        MVec::new(m.into_iter().map(|v| v.shr_arith(prep.frac_bits)).collect(), prep.shifted)
    }

    /// Setup of several fixed-point matrix products at once (`(ψ_X, ψ_W, (m, k, n), pairs)`
    /// each): all mask products in one round.
    pub async fn matmul_fixed_setup_many<R: IntRing>(
        &mut self,
        jobs: Vec<MatMulJob<'_, R>>,
    ) -> Result<Vec<MatMulPrep<R>>, Error> {
        let mut local = Vec::new();
        let mut lens = Vec::with_capacity(jobs.len());
        for (px, pw, (m, k, n), pairs) in &jobs {
            if pairs.len() != m * n {
                return Err(Error::ApiMisuse(format!(
                    "matmul setup: {m}x{n} outputs, {} truncation pairs",
                    pairs.len()
                )));
            }
            local.extend(Rep3::<T>::local_matmul(px, pw, *m, *k, *n)?);
            lens.push(m * n);
        }
        let products = self.p.reshare(local).await?;
        Ok(jobs
            .into_iter()
            .zip(products.split(&lens))
            .map(|((px, pw, dims, pairs), psi_xw)| {
                let TruncPairs { frac_bits, r, r_shifted } = pairs;
                MatMulPrep {
                    dims,
                    psi_x: px.clone(),
                    psi_w: pw.clone(),
                    psi_xw,
                    r,
                    shifted: r_shifted,
                    frac_bits,
                }
            })
            .collect())
    }

    /// Fixed-point matrix product `⟦X·W / 2^d⟧` (X m×k, W k×n, row-major): 1 round, one
    /// element per output per party.
    pub async fn matmul_fixed<R: IntRing>(
        &mut self,
        x: &MVec<R>,
        w: &MVec<R>,
        prep: MatMulPrep<R>,
    ) -> Result<MVec<R>, Error> {
        check_mask("matmul (left operand)", &x.psi, &prep.psi_x)?;
        check_mask("matmul (right operand)", &w.psi, &prep.psi_w)?;
        let (m, k, n) = prep.dims;
        // The public product m_X·m_W joins component 0 as m_X·(ψ_W + m_W): one product less
        // for P0 and P2.
        let with_public =
            |psi: &[R]| -> Vec<R> { psi.iter().zip(&w.m).map(|(p, m)| *p + *m).collect() };
        let (mut a, mut b) = match comp0_slot(self.me()) {
            Some(true) => (
                kernels::matmul(&x.m, &with_public(&prep.psi_w.a), m, k, n),
                kernels::matmul(&x.m, &prep.psi_w.b, m, k, n),
            ),
            Some(false) => (
                kernels::matmul(&x.m, &prep.psi_w.a, m, k, n),
                kernels::matmul(&x.m, &with_public(&prep.psi_w.b), m, k, n),
            ),
            None => (
                kernels::matmul(&x.m, &prep.psi_w.a, m, k, n),
                kernels::matmul(&x.m, &prep.psi_w.b, m, k, n),
            ),
        };
        kernels::matmul_acc(&prep.psi_x.a, &w.m, &mut a, m, k, n);
        kernels::matmul_acc(&prep.psi_x.b, &w.m, &mut b, m, k, n);
        kernels::add_assign(&mut a, &prep.psi_xw.a);
        kernels::add_assign(&mut b, &prep.psi_xw.b);
        kernels::sub_assign(&mut a, &prep.r.a);
        kernels::sub_assign(&mut b, &prep.r.b);
        let opened = self.p.reveal(Rep3Vec::from_parts(self.me(), a, b)).await?;
        let d = prep.frac_bits;
        MVec::new(opened.into_iter().map(|v| v.shr_arith(d)).collect(), prep.shifted)
    }
}
