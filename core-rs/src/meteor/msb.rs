//! MSB extraction (private compare in F_67), multiplexing and ReLU (extract §3.8, §3.9, §3.11).
//!
//! **MSB.** `msb(x) = msb(m_x) ⊕ msb(ψ_x) ⊕ c` with `c = [2ψ_x mod 2^ℓ ≥ 2^ℓ − 2m_x]`. With
//! `s = 2ψ_x` (secret, its bits lifted to F_67 in setup) and the public `b̃ = NOT(2m_x)`
//! (the §9.1 fix: `s` is even and `b̃` odd, so they are never equal), `c = [s > b̃]`. For every
//! bit i, `e_i = (1 − 2λ)(s_i − b̃_i) + 1 + Σ_{k>i} (s_k ⊕ b̃_k)` is zero exactly at the first
//! differing bit when it goes the way the random bit λ selects; `d = ζ·Π e_i` (ζ ≠ 0 random)
//! is zero or uniform non-zero, and `c = [d ≠ 0] ⊕ λ`.
//!
//! Online, each party computes `⟨e_i⟩` locally from setup shares (`⟨s_i⟩`, `⟨λ⟩`, `⟨λ·s_i⟩`)
//! and the public `b̃` and reveals `e_i − ψ_{e_i}` under fresh setup masks (1 round, ℓ field
//! elements); a 4-ary tree of N-MULTs multiplies the ℓ values (ℓ/4 + ℓ/16 + … elements, one
//! round per level), a 2-MULT by `⟦ζ⟧` and the opening of `d` follow: for ℓ = 64,
//! 64 + 16 + 4 + 1 + 1 + 1 = 87 bytes in 6 rounds. The output is `⟦msb(x)⟧^B` with public part
//! `msb(m_x) ⊕ [d ≠ 0]` and the setup-made mask `msb(ψ_x) ⊕ λ` (uniform since λ is).
//!
//! **MUX.** `v·u` for a bit `⟦v⟧^B = (m_v, ⟨ψ_v⟩^B)`: with `ψ_v^A` the ring lift of the mask
//! (setup), `u·v = m_u·m_v + m_u(1 − 2m_v)·ψ_v^A + m_v·ψ_u + (1 − 2m_v)·ψ_u·ψ_v^A` — one reveal.
//! **ReLU** is `MUX(x, 0, ¬msb(x))`: 95 bytes, 7 rounds for ℓ = 64.
//!
//! **Setup per value** (made here, all from `rep3` operations, no data): A2B of ψ_x (the bits
//! of s), ℓ daBit-based lifts into F_67 (ℓ − 1 bits of s and λ), ℓ − 1 products λ·s_i (s_0 = 0
//! needs none), the 2^4 − 5 = 11 subset products of each tree group, a non-zero ζ (a product
//! with a random element is opened and zero draws are redrawn), ⟦ζ⟧, and for the MUX one lift
//! of the bit mask into the ring and one product — measured by `ringfence bench` (about 0.5 kB
//! per ReLU).

use super::{check_mask, comp0_slot, MVec, Meteor, NMultPrep, F67};
use crate::net::Transport;
use crate::rep3::{Rep3Vec, SharedBits};
use crate::ring::backend::{self, Kernel};
use crate::ring::{Bits, IntRing, Ring};
use crate::Error;

/// Group size of the product tree (the paper's N = 4).
const FANIN: usize = 4;

/// A boolean METEOR sharing `⟦v⟧^B`: public bits `m` and a boolean `rep3` mask.
#[derive(Clone)]
pub struct MBits {
    pub(crate) m: Vec<bool>,
    pub(crate) psi: SharedBits,
}

impl core::fmt::Debug for MBits {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "MBits({} bits, <redacted>)", self.m.len())
    }
}

impl MBits {
    /// Number of bits.
    pub fn len(&self) -> usize {
        self.m.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.m.is_empty()
    }

    /// `¬v` (local: flips the public part).
    pub fn not(&self) -> Self {
        Self { m: self.m.iter().map(|b| !b).collect(), psi: self.psi.clone() }
    }

    /// The mask (for the setup of a multiplexer on these bits).
    pub fn mask(&self) -> &SharedBits {
        &self.psi
    }
}

/// Setup of an MSB extraction of `n` values. `Debug` is redacted.
///
/// Per-bit material is laid out bit-major, as ℓ rows of `n` values (row i, value e at
/// `i·n + e`), and each tree level's products as rows of `n` (group g, value e at `g·n + e`): a
/// level's factor j of group g is then row `fan·g + j` of the level below, a contiguous slice,
/// and the online loops run down the `n` values of a row.
pub struct MsbPrep<R> {
    psi_x: Rep3Vec<R>,
    /// Bits 1..ℓ of `s = 2ψ_x` in F_67, `(ℓ − 1) × n` (row i − 1 is `s_i`; `s_0 = 0` is not
    /// stored).
    s: Rep3Vec<F67>,
    lam: Rep3Vec<F67>,
    /// `λ·s_i` for i = 1..ℓ, `(ℓ − 1) × n` like `s`.
    lam_s: Rep3Vec<F67>,
    /// One N-MULT per tree level; level t has `groups_t × n` products. The first level's
    /// inputs are the masks of the revealed `e_i` ([`MsbPrep::psi_e_row`]).
    tree: Vec<NMultPrep<F67>>,
    zeta: MVec<F67>,
    times_zeta: NMultPrep<F67>,
    out: SharedBits,
}

/// Setup of a multiplexer over `n` values. `Debug` is redacted.
pub struct MuxPrep<R> {
    psi_u: Rep3Vec<R>,
    bit: SharedBits,
    psi_va: Rep3Vec<R>,
    psi_u_va: Rep3Vec<R>,
    out: Rep3Vec<R>,
}

/// Setup of a ReLU over `n` values: an MSB extraction and a multiplexer.
pub struct ReluPrep<R> {
    msb: MsbPrep<R>,
    mux: MuxPrep<R>,
}

macro_rules! redacted_debug {
    ($($t:ident),*) => {$(
        impl<R> core::fmt::Debug for $t<R> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, concat!(stringify!($t), "(<redacted>)"))
            }
        }
    )*};
}
redacted_debug!(MsbPrep, MuxPrep, ReluPrep);

/// Sizes of the product tree's levels for ℓ factors: `[ℓ, ℓ/4, …, 1]` with the fan-in of each
/// level (`min(4, size)`); ℓ is a power of two.
fn tree_levels(bits: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut size = bits;
    while size > 1 {
        let fan = FANIN.min(size);
        out.push((size, fan));
        size /= fan;
    }
    out
}

/// Online cost per party of one MSB extraction in Z_2^ℓ: `(bytes, rounds)` — ℓ e-values, the
/// tree's products, the product with ζ and the opening of d (one byte per F_67 element).
pub fn msb_online_cost(bits: usize) -> (usize, usize) {
    let levels = tree_levels(bits);
    let tree: usize = levels.iter().map(|(size, fan)| size / fan).sum();
    (bits + tree + 2, 1 + levels.len() + 2)
}

/// Per-value running sums of the e-value loop (see [`e_row`]).
struct ESums {
    sa: Vec<u16>,
    sb: Vec<u16>,
    ones: Vec<u16>,
    /// Scratch: bit i of each value's `b̃`.
    bits: Vec<u16>,
}

/// The inputs of [`e_row`] for row i: `bt` holds each value's `b̃`, the other slices row i of
/// the setup material (`lam` per value), both components each.
struct ERowArgs<'a> {
    slot: Option<bool>,
    bt: &'a [u64],
    i: usize,
    s: [&'a [F67]; 2],
    lam: [&'a [F67]; 2],
    lam_s: [&'a [F67]; 2],
    psi_e: [&'a [F67]; 2],
}

/// Row i of the e-values, both components, for all values at once; `acc` holds the sums over
/// the bits above i and is updated here for the rows below. Integer arithmetic in 16-bit
/// lanes with one reduction per e-value: subtracted terms are kept non-negative by adding q,
/// and every sum stays below 5,000 for ℓ ≤ 64.
fn e_row(args: ERowArgs<'_>, acc: &mut ESums, out: [&mut [F67]; 2]) {
    backend::dispatch(ERow { args, acc, out });
}

/// The arguments of [`e_row`], for the backends.
struct ERow<'a, 'b> {
    args: ERowArgs<'a>,
    acc: &'b mut ESums,
    out: [&'b mut [F67]; 2],
}

impl Kernel for ERow<'_, '_> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        e_row_portable(self.args, self.acc, self.out);
    }
}

/// The body of [`e_row`] (also compiled with AVX2 by the x86-64 backend).
#[inline(always)]
fn e_row_portable(args: ERowArgs<'_>, acc: &mut ESums, out: [&mut [F67]; 2]) {
    let ERowArgs { slot, bt, i, s, lam, lam_s, psi_e } = args;
    let n = bt.len();
    let q = u16::from(F67::Q);
    let v = |x: F67| u16::from(x.value());
    let (pa, pb) = (u16::from(slot == Some(true)), u16::from(slot == Some(false)));
    let [oa, ob] = out;
    let (oa, ob) = (&mut oa[..n], &mut ob[..n]);
    let (s_a, s_b, la, lb) = (&s[0][..n], &s[1][..n], &lam[0][..n], &lam[1][..n]);
    let (ls_a, ls_b, pe_a, pe_b) = (&lam_s[0][..n], &lam_s[1][..n], &psi_e[0][..n], &psi_e[1][..n]);
    // The bits first, in a pass of their own: the main loop then runs in 16-bit lanes only.
    for (b, t) in acc.bits.iter_mut().zip(bt) {
        *b = ((t >> i) & 1) as u16;
    }
    let (sa, sb, ones, bits) =
        (&mut acc.sa[..n], &mut acc.sb[..n], &mut acc.ones[..n], &acc.bits[..n]);
    for e in 0..n {
        let bi = bits[e];
        let (xa, xb) = (v(s_a[e]), v(s_b[e]));
        // u_i = s_i − b_i − 2λs_i + 2b_iλ; the public −b_i + 1 + #{k > i: b_k} below.
        let va = xa + 2 * (q - v(ls_a[e])) + sa[e] + q - v(pe_a[e]) + bi * 2 * v(la[e]);
        let vb = xb + 2 * (q - v(ls_b[e])) + sb[e] + q - v(pe_b[e]) + bi * 2 * v(lb[e]);
        let public = 1 + ones[e] + bi * (q - 1);
        oa[e] = F67::from_small(va + pa * public);
        ob[e] = F67::from_small(vb + pb * public);
        // w_i = b_i + (1 − 2b_i)s_i joins the sums for the lower bits.
        sa[e] += if bi == 1 { q - xa } else { xa };
        sb[e] += if bi == 1 { q - xb } else { xb };
        ones[e] += bi;
    }
}

impl<R: IntRing> MsbPrep<R> {
    /// Number of values.
    pub fn len(&self) -> usize {
        self.psi_x.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.psi_x.is_empty()
    }

    /// The output bit mask `msb(ψ_x) ⊕ λ` (for the setup of a multiplexer on the result).
    pub fn out_mask(&self) -> &SharedBits {
        &self.out
    }

    /// Row i of the e-values' masks, both components: input `i mod fan` of the first tree
    /// level, row `⌊i / fan⌋` (its group).
    fn psi_e_row(&self, i: usize) -> Result<[&[F67]; 2], Error> {
        let n = self.len();
        let first =
            self.tree.first().ok_or_else(|| Error::ApiMisuse("MSB: no product tree".into()))?;
        let fan = first.inputs();
        let [a, b] = first.input(i % fan);
        let r = (i / fan) * n..(i / fan + 1) * n;
        Ok([&a[r.clone()], &b[r]])
    }

    fn slice(&self, r: core::ops::Range<usize>) -> Self {
        let n = self.len();
        Self {
            psi_x: self.psi_x.slice(r.clone()),
            s: self.s.cols(n, r.clone()),
            lam: self.lam.slice(r.clone()),
            lam_s: self.lam_s.cols(n, r.clone()),
            tree: self.tree.iter().map(|t| t.cols(n, r.clone())).collect(),
            zeta: self.zeta.slice(r.clone()),
            times_zeta: self.times_zeta.slice(r.clone()),
            out: self.out.slice(r),
        }
    }
}

impl<R: IntRing> MuxPrep<R> {
    fn slice(&self, r: core::ops::Range<usize>) -> Self {
        Self {
            psi_u: self.psi_u.slice(r.clone()),
            bit: self.bit.slice(r.clone()),
            psi_va: self.psi_va.slice(r.clone()),
            psi_u_va: self.psi_u_va.slice(r.clone()),
            out: self.out.slice(r),
        }
    }
}

impl<R: IntRing> ReluPrep<R> {
    /// Number of values.
    pub fn len(&self) -> usize {
        self.msb.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.msb.is_empty()
    }

    /// The output mask (known in setup, for the next layer's setup).
    pub fn out_mask(&self) -> &Rep3Vec<R> {
        &self.mux.out
    }

    /// Splits into consecutive preparations of the given lengths (summing to `len()`).
    pub fn split(self, lens: &[usize]) -> Result<Vec<Self>, Error> {
        if lens.iter().sum::<usize>() != self.len() {
            return Err(Error::ApiMisuse(format!(
                "ReluPrep::split: lengths sum to {}, the preparation holds {}",
                lens.iter().sum::<usize>(),
                self.len()
            )));
        }
        let mut at = 0;
        Ok(lens
            .iter()
            .map(|&l| {
                let r = at..at + l;
                at += l;
                Self { msb: self.msb.slice(r.clone()), mux: self.mux.slice(r) }
            })
            .collect())
    }
}

impl<T: Transport> Meteor<T> {
    /// Setup of the MSB extraction of values masked by `psi_x` (no data; about 20 rounds).
    pub async fn msb_setup<R: IntRing>(&mut self, psi_x: &Rep3Vec<R>) -> Result<MsbPrep<R>, Error> {
        let l = R::BITS as usize;
        if !l.is_power_of_two() || l + 1 >= F67::Q as usize {
            return Err(Error::ApiMisuse(format!("MSB in F_67 needs ℓ < 66, a power of two: {l}")));
        }
        let n = psi_x.len();
        let planes = self.p.a2b(psi_x).await?;
        let lam_bits = SharedBits::from_words(n, &self.p.random::<Bits>(n.div_ceil(64)));
        // Lift the ℓ − 1 bits of s = 2ψ_x that can be non-zero, and λ, into F_67 in one batch.
        let mut parts: Vec<SharedBits> =
            (0..l - 1).map(|t| SharedBits::from_words(n, &planes[t].words)).collect();
        parts.push(lam_bits.clone());
        let packed = SharedBits::concat(&parts.iter().collect::<Vec<_>>());
        let dab = self.p.dabits::<F67>(packed.len()).await?;
        // Bit-major: row t of the lifted bits is s_(t+1) = bit t of ψ_x, then λ. s_0 = 0 (and
        // so λ·s_0) is not stored: the online loop reads it as a zero row.
        let mut s = self.p.bit_to_arith(&packed, dab).await?;
        let lam = s.split_off((l - 1) * n);
        let rows: Vec<_> = (0..l - 1)
            .map(|t| {
                let r = t * n..(t + 1) * n;
                ([&lam.a[..], &lam.b[..]], [&s.a[r.clone()], &s.b[r]])
            })
            .collect();
        let lam_s = self.p.mul_concat(&rows).await?;

        // Masks of every tree level's inputs and outputs, then all subset products. The e-values'
        // masks are drawn as the first level's inputs (input j of group g masks e_(fan·g + j),
        // see [`MsbPrep::psi_e_row`]); a later level's inputs are rows of the level below's
        // output mask.
        let levels = tree_levels(l);
        let mut level_inputs: Vec<Vec<Rep3Vec<F67>>> = Vec::with_capacity(levels.len());
        let mut level_outs: Vec<Rep3Vec<F67>> = Vec::with_capacity(levels.len());
        for &(size, fan) in &levels {
            let groups = size / fan;
            let inputs = match level_outs.last() {
                None => (0..fan).map(|_| self.mask::<F67>(n * groups)).collect(),
                Some(below) => {
                    (0..fan).map(|j| below.rows(n, (0..groups).map(move |g| fan * g + j))).collect()
                }
            };
            level_inputs.push(inputs);
            level_outs.push(self.mask::<F67>(n * groups));
        }
        let top = level_outs
            .last()
            .cloned()
            .ok_or_else(|| Error::ApiMisuse(format!("MSB of {l}-bit values: no product tree")))?;
        let zeta = self.nonzero_random_f67(n).await?;
        let psi_zeta = self.mask::<F67>(n);
        let psi_d = self.mask::<F67>(n);
        let mut jobs: Vec<(Vec<Rep3Vec<F67>>, Rep3Vec<F67>)> =
            level_inputs.into_iter().zip(level_outs).collect();
        jobs.push((vec![top, psi_zeta.clone()], psi_d));
        let mut preps = self.nmult_setup_owned(jobs).await?;
        let times_zeta = preps.pop().ok_or_else(|| Error::ApiMisuse("no ζ product".into()))?;
        let zeta = self.remask(zeta, psi_zeta).await?;
        let out = SharedBits::from_words(n, &planes[l - 1].words).xor(&lam_bits)?;
        Ok(MsbPrep { psi_x: psi_x.clone(), s, lam, lam_s, tree: preps, zeta, times_zeta, out })
    }

    /// `n` shared uniformly random non-zero elements of F_67: draw ζ and r, open ζ·r (which
    /// reveals nothing about ζ when both are non-zero) and redraw where it is zero.
    async fn nonzero_random_f67(&mut self, n: usize) -> Result<Rep3Vec<F67>, Error> {
        let mut zeta = self.p.random::<F67>(n);
        let mut pending: Vec<usize> = (0..n).collect();
        for _ in 0..64 {
            if pending.is_empty() {
                return Ok(zeta);
            }
            let r = self.p.random::<F67>(pending.len());
            let t = self.p.mul(&zeta.gather(&pending), &r).await?;
            let opened = self.p.reveal(t).await?;
            pending = pending
                .into_iter()
                .zip(opened)
                .filter(|(_, v)| *v == F67::ZERO)
                .map(|(i, _)| i)
                .collect();
            let fresh = self.p.random::<F67>(pending.len());
            for (k, &i) in pending.iter().enumerate() {
                zeta.a[i] = fresh.a[k];
                zeta.b[i] = fresh.b[k];
            }
        }
        Err(Error::ApiMisuse("could not draw non-zero field elements (PRG fault?)".into()))
    }

    /// `⟦msb(x)⟧^B` for values `x` (6 rounds; 87 bytes per value per party for ℓ = 64).
    pub async fn msb<R: IntRing>(&mut self, x: &MVec<R>, prep: MsbPrep<R>) -> Result<MBits, Error> {
        check_mask("msb", &x.psi, &prep.psi_x)?;
        let l = R::BITS as usize;
        let n = x.len();
        let me = self.me();
        let top = if l == 64 { u64::MAX } else { (1u64 << l) - 1 };
        let bt: Vec<u64> = x.m.iter().map(|m| !(m.to_u64() << 1) & top).collect();
        let (mut ea, mut eb) = (vec![F67::ZERO; n * l], vec![F67::ZERO; n * l]);
        // Running sums over the more significant bits, per value: Σ w_k's shares and #{b_k = 1}.
        let mut acc = ESums { sa: vec![0; n], sb: vec![0; n], ones: vec![0; n], bits: vec![0; n] };
        let (la, lb) = (&prep.lam.a[..], &prep.lam.b[..]);
        let zeros = vec![F67::ZERO; n];
        for i in (0..l).rev() {
            let row = i * n..(i + 1) * n;
            // Rows of s and λ·s start at bit 1; bit 0 of s = 2ψ_x is 0.
            let (s, lam_s) = match i.checked_sub(1) {
                Some(t) => {
                    let r = t * n..i * n;
                    (
                        [&prep.s.a[r.clone()], &prep.s.b[r.clone()]],
                        [&prep.lam_s.a[r.clone()], &prep.lam_s.b[r]],
                    )
                }
                None => ([&zeros[..], &zeros[..]], [&zeros[..], &zeros[..]]),
            };
            let args = ERowArgs {
                slot: comp0_slot(me),
                bt: &bt,
                i,
                s,
                lam: [la, lb],
                lam_s,
                psi_e: prep.psi_e_row(i)?,
            };
            e_row(args, &mut acc, [&mut ea[row.clone()], &mut eb[row]]);
        }
        let mut cur = self.p.reveal(Rep3Vec::from_parts(me, ea, eb)).await?;
        let mut last_out = Rep3Vec::from_parts(me, Vec::new(), Vec::new());
        for (level, (size, fan)) in prep.tree.into_iter().zip(tree_levels(l)) {
            let groups = size / fan;
            let (mut a, mut b) = (vec![F67::ZERO; groups * n], vec![F67::ZERO; groups * n]);
            for (g, (ga, gb)) in a.chunks_mut(n.max(1)).zip(b.chunks_mut(n.max(1))).enumerate() {
                let m: Vec<&[F67]> =
                    (0..fan).map(|j| &cur[(fan * g + j) * n..(fan * g + j + 1) * n]).collect();
                level.masked_sum(me, &m, g * n, [ga, gb])?;
            }
            cur = self.p.reveal(Rep3Vec::from_parts(me, a, b)).await?;
            last_out = level.out_mask().clone();
        }
        let cur = MVec::new(cur, last_out)?;
        let d = self.nmult(&[&cur, &prep.zeta], prep.times_zeta).await?;
        let d = self.reveal(d).await?;
        let m = x.m.iter().zip(&d).map(|(mx, d)| mx.msb() ^ (*d != F67::ZERO)).collect();
        Ok(MBits { m, psi: prep.out })
    }

    /// Opens boolean METEOR shares to all parties (1 round).
    pub async fn reveal_bits(&mut self, v: MBits) -> Result<Vec<bool>, Error> {
        let psi = self.p.reveal_bits(v.psi).await?;
        Ok(v.m.iter().zip(psi).map(|(a, b)| a ^ b).collect())
    }

    /// Setup of a multiplexer choosing between values of difference mask `psi_u` (= ψ_x − ψ_y)
    /// by bits masked with `bit`, into the output mask `out` (2 + 1 rounds).
    pub async fn mux_setup<R: IntRing>(
        &mut self,
        psi_u: &Rep3Vec<R>,
        bit: &SharedBits,
        out: Rep3Vec<R>,
    ) -> Result<MuxPrep<R>, Error> {
        if bit.len() != psi_u.len() || out.len() != psi_u.len() {
            return Err(Error::ApiMisuse(format!(
                "mux_setup: {} values, {} bits, {} output masks",
                psi_u.len(),
                bit.len(),
                out.len()
            )));
        }
        let dab = self.p.dabits::<R>(bit.len()).await?;
        let psi_va = self.p.bit_to_arith(bit, dab).await?;
        let psi_u_va = self.p.mul(psi_u, &psi_va).await?;
        Ok(MuxPrep { psi_u: psi_u.clone(), bit: bit.clone(), psi_va, psi_u_va, out })
    }

    /// `v ? x : y` elementwise (1 round, one element per value per party).
    pub async fn mux<R: IntRing>(
        &mut self,
        x: &MVec<R>,
        y: &MVec<R>,
        v: &MBits,
        prep: MuxPrep<R>,
    ) -> Result<MVec<R>, Error> {
        let u = x.sub(y)?;
        check_mask("mux", &u.psi, &prep.psi_u)?;
        if v.psi.words != prep.bit.words || v.len() != u.len() {
            return Err(Error::ApiMisuse(
                "mux: the selector bits are not the ones this preparation was made for".into(),
            ));
        }
        let (one, two) = (R::ONE, R::ONE + R::ONE);
        let mut a = Vec::with_capacity(u.len());
        let mut b = Vec::with_capacity(u.len());
        let slot = comp0_slot(self.me());
        for e in 0..u.len() {
            let (mu, mv) = (u.m[e], if v.m[e] { one } else { R::ZERO });
            let c_va = mu * (one - two * mv);
            let c_uva = one - two * mv;
            let mut va = c_va * prep.psi_va.a[e] + mv * u.psi.a[e] + c_uva * prep.psi_u_va.a[e]
                - prep.out.a[e];
            let mut vb = c_va * prep.psi_va.b[e] + mv * u.psi.b[e] + c_uva * prep.psi_u_va.b[e]
                - prep.out.b[e];
            match slot {
                Some(true) => va += mu * mv,
                Some(false) => vb += mu * mv,
                None => {}
            }
            a.push(va);
            b.push(vb);
        }
        let m = self.p.reveal(Rep3Vec::from_parts(self.me(), a, b)).await?;
        MVec::new(m, prep.out)?.add(y)
    }

    /// Setup of ReLU on values masked by `psi_x`, with output mask `out` (fresh from
    /// [`Meteor::mask`]); batch many ReLUs into one call and [`ReluPrep::split`] the result.
    pub async fn relu_setup<R: IntRing>(
        &mut self,
        psi_x: &Rep3Vec<R>,
        out: Rep3Vec<R>,
    ) -> Result<ReluPrep<R>, Error> {
        let msb = self.msb_setup(psi_x).await?;
        let mux = self.mux_setup(psi_x, &msb.out, out).await?;
        Ok(ReluPrep { msb, mux })
    }

    /// `max(x, 0)` elementwise (7 rounds; 95 bytes per value per party for ℓ = 64).
    pub async fn relu<R: IntRing>(
        &mut self,
        x: &MVec<R>,
        prep: ReluPrep<R>,
    ) -> Result<MVec<R>, Error> {
        let v = self.msb(x, prep.msb).await?.not();
        let zero = MVec::public(self.me(), &vec![R::ZERO; x.len()]);
        self.mux(x, &zero, &v, prep.mux).await
    }
}
