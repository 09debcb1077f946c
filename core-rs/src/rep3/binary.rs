//! Bitsliced boolean `rep3`: bit planes, AND, and sharing of values known to some parties.
//!
//! `n` values of `k` bits become `k` planes; plane `i` holds bit `i` of every value, 64 values
//! per [`Bits`] word (value `j` in bit `j % 64` of word `j / 64`). One AND of two planes costs
//! one word per 64 values, and a whole circuit layer is a single batched [`Rep3::mul`] over
//! `Bits`, i.e. one round. Padding bits beyond `n` are zero in the inputs and ignored in outputs.

use super::{Rep3, Rep3Vec};
use crate::net::{PartyId, Transport};
use crate::ring::{kernels, Bits, IntRing};
use crate::Error;

/// Words per plane for `n` values.
pub(crate) fn words(n: usize) -> usize {
    n.div_ceil(64)
}

/// In-place transpose of a 64×64 bit matrix: afterwards bit `c` of `m[r]` is the former bit `r`
/// of `m[c]` (six swap stages of halving block size).
pub(crate) fn transpose64(m: &mut [u64; 64]) {
    let mut j = 32;
    let mut mask: u64 = 0x0000_0000_ffff_ffff;
    while j != 0 {
        let mut k = 0;
        while k < 64 {
            let t = ((m[k] >> j) ^ m[k + j]) & mask;
            m[k] ^= t << j;
            m[k + j] ^= t;
            k = (k + j + 1) & !j;
        }
        j >>= 1;
        mask ^= mask << j;
    }
}

/// Writes the bit planes of `vals` into `out`: plane `i` of these values lands at words
/// `i·stride + offset ..`, so several vectors can share one flat plane array. Rings of at most
/// 64 bits: instantiating it for a wider one (Z_2^128) is a build error, not a wrong result.
pub(crate) fn to_planes_into<R: IntRing>(
    vals: &[R],
    out: &mut [Bits],
    stride: usize,
    offset: usize,
) {
    const { assert!(R::BITS <= 64, "bit planes hold rings of at most 64 bits") };
    let k = R::BITS as usize;
    let mut block = [0u64; 64];
    for (b, chunk) in vals.chunks(64).enumerate() {
        block.iter_mut().for_each(|x| *x = 0);
        for (dst, v) in block.iter_mut().zip(chunk) {
            *dst = v.to_u64();
        }
        transpose64(&mut block);
        for (i, row) in block.iter().take(k).enumerate() {
            out[i * stride + offset + b] = Bits(*row);
        }
    }
}

/// Plaintext values → `R::BITS` planes of ⌈n/64⌉ words, flat (plane-major).
pub(crate) fn to_planes<R: IntRing>(vals: &[R]) -> Vec<Bits> {
    let w = words(vals.len());
    let mut out = vec![Bits(0); R::BITS as usize * w];
    to_planes_into(vals, &mut out, w, 0);
    out
}

/// Planes (plaintext, `k ≤ 64` of them) → `n` values (`R` of at most 64 bits, checked at
/// build time).
#[cfg(test)]
pub(crate) fn from_planes<R: IntRing>(planes: &[&[Bits]], n: usize) -> Vec<R> {
    const { assert!(R::BITS <= 64, "bit planes hold rings of at most 64 bits") };
    let mut out = Vec::with_capacity(n);
    let mut block = [0u64; 64];
    for b in 0..words(n) {
        block.iter_mut().for_each(|x| *x = 0);
        for (i, p) in planes.iter().enumerate() {
            block[i] = p[b].0;
        }
        transpose64(&mut block);
        let take = (n - b * 64).min(64);
        out.extend(block[..take].iter().map(|&x| R::from_u64(x)));
    }
    out
}

/// The bit `j % 64` of word `j / 64` for `j < n`, as 0/1.
pub(crate) fn unpack_bits(words: &[Bits], n: usize) -> Vec<u64> {
    (0..n).map(|j| (words[j / 64].0 >> (j % 64)) & 1).collect()
}

/// Boolean shares of several bit planes of `w` words each, stored flat: plane `i` is words
/// `i·w .. (i+1)·w` of both components. Circuit layers read planes in place from here, so a
/// layer costs no gathering copies.
#[derive(Clone)]
pub(crate) struct Planes {
    pub(crate) me: PartyId,
    pub(crate) w: usize,
    pub(crate) a: Vec<Bits>,
    pub(crate) b: Vec<Bits>,
}

impl Planes {
    pub(crate) fn zeros(me: PartyId, k: usize, w: usize) -> Self {
        Self { me, w, a: vec![Bits(0); k * w], b: vec![Bits(0); k * w] }
    }

    pub(crate) fn from_rep3(v: Rep3Vec<Bits>, w: usize) -> Self {
        Self { me: v.me, w, a: v.a, b: v.b }
    }

    fn range(&self, i: usize) -> core::ops::Range<usize> {
        i * self.w..(i + 1) * self.w
    }

    /// Plane `i` as its two components.
    pub(crate) fn plane(&self, i: usize) -> (&[Bits], &[Bits]) {
        (&self.a[self.range(i)], &self.b[self.range(i)])
    }

    /// Plane `i` as a share vector (copied).
    pub(crate) fn to_vec(&self, i: usize) -> Rep3Vec<Bits> {
        let (a, b) = self.plane(i);
        Rep3Vec::from_parts(self.me, a.to_vec(), b.to_vec())
    }

    /// Plane `i` ← plane `j` of `src`.
    pub(crate) fn set_plane(&mut self, i: usize, src: &Self, j: usize) {
        let (r, s) = (self.range(i), src.range(j));
        self.a[r.clone()].copy_from_slice(&src.a[s.clone()]);
        self.b[r].copy_from_slice(&src.b[s]);
    }

    /// Plane `i` ⊕= plane `j` of `src`.
    pub(crate) fn xor_plane(&mut self, i: usize, src: &Self, j: usize) {
        let (r, s) = (self.range(i), src.range(j));
        kernels::add_assign(&mut self.a[r.clone()], &src.a[s.clone()]);
        kernels::add_assign(&mut self.b[r], &src.b[s]);
    }

    /// Flips every bit (adds the public all-ones to component 0).
    pub(crate) fn not_all(&mut self) {
        match self.me.0 {
            0 => self.a.iter_mut().for_each(|x| x.0 = !x.0),
            2 => self.b.iter_mut().for_each(|x| x.0 = !x.0),
            _ => {}
        }
    }

    /// Plane `i` of `self ⊕ o`, as a share vector.
    pub(crate) fn xor_one(&self, o: &Self, i: usize) -> Rep3Vec<Bits> {
        let (r, xor) = (self.range(i), |x: &[Bits], y: &[Bits]| -> Vec<Bits> {
            x.iter().zip(y).map(|(p, q)| *p + *q).collect()
        });
        Rep3Vec::from_parts(
            self.me,
            xor(&self.a[r.clone()], &o.a[r.clone()]),
            xor(&self.b[r.clone()], &o.b[r]),
        )
    }

    /// `self ⊕ o` on the first `k` planes.
    pub(crate) fn xor_prefix(&self, o: &Self, k: usize) -> Self {
        let n = k * self.w;
        let xor =
            |x: &[Bits], y: &[Bits]| x[..n].iter().zip(&y[..n]).map(|(p, q)| *p + *q).collect();
        Self { me: self.me, w: self.w, a: xor(&self.a, &o.a), b: xor(&self.b, &o.b) }
    }
}

/// One AND of a layer: plane `.1` of `.0` with plane `.3` of `.2`.
pub(crate) type AndPair<'a> = (&'a Planes, usize, &'a Planes, usize);

/// Evaluates one layer of ANDs on planes, in one round: rep3's product as it is, or a scheme
/// that also records each product for a later check (mal3). The circuits on planes (the
/// carry network of `super::adder`) are written once against it.
#[allow(async_fn_in_trait)] // futures are not `Send` by design: a session is driven by one task
pub(crate) trait AndLayer {
    /// Result plane `j` is pair `j`'s product.
    async fn and_planes(&mut self, pairs: &[AndPair<'_>], w: usize) -> Result<Planes, Error>;
}

impl<T: Transport> AndLayer for Rep3<T> {
    async fn and_planes(&mut self, pairs: &[AndPair<'_>], w: usize) -> Result<Planes, Error> {
        Self::and_planes(self, pairs, w).await
    }
}

impl<T: Transport> Rep3<T> {
    /// One circuit layer: the AND of every pair of planes, in one round. Result plane `j` is
    /// pair `j`'s product; the local products are written straight into the outgoing message.
    pub(crate) async fn and_planes(
        &mut self,
        pairs: &[AndPair<'_>],
        w: usize,
    ) -> Result<Planes, Error> {
        let mut z = vec![Bits(0); pairs.len() * w];
        for (out, (x, xi, y, yi)) in z.chunks_exact_mut(w.max(1)).zip(pairs) {
            let ((xa, xb), (ya, yb)) = (x.plane(*xi), y.plane(*yi));
            for ((o, (xa, xb)), (ya, yb)) in
                out.iter_mut().zip(xa.iter().zip(xb)).zip(ya.iter().zip(yb))
            {
                *o = *xa * (*ya + *yb) + *xb * *ya;
            }
        }
        let r = self.reshare(z).await?;
        Ok(Planes::from_rep3(r, w))
    }

    /// Boolean sharing of flat planes whose values are known to the two holders of component
    /// 0 (P0 passes them as its `a`, P2 as its `b`): `(v, 0, 0)`, no communication.
    pub(crate) fn planes_of_component0(
        &self,
        known: Option<Vec<Bits>>,
        k: usize,
        w: usize,
    ) -> Planes {
        let me = self.me();
        let mut p = Planes::zeros(me, 0, w);
        let zero = || vec![Bits(0); k * w];
        match (me.0, known) {
            (0, Some(v)) => (p.a, p.b) = (v, zero()),
            (2, Some(v)) => (p.a, p.b) = (zero(), v),
            _ => (p.a, p.b) = (zero(), zero()),
        }
        p
    }

    /// Boolean sharing of flat planes known to `owner` only, in one message from the owner
    /// (k·w words), without opening a round.
    pub(crate) async fn planes_from_one(
        &mut self,
        owner: PartyId,
        known: Option<Vec<Bits>>,
        k: usize,
        w: usize,
    ) -> Result<Planes, Error> {
        let shared = self.share_from_one(owner, known.as_deref(), k * w).await?;
        Ok(Planes::from_rep3(shared, w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::{Z32, Z64};

    #[test]
    fn transpose_matches_naive() {
        let vals: Vec<Z64> =
            (0..150u64).map(|i| Z64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 60))).collect();
        let w = words(vals.len());
        let flat = to_planes(&vals);
        let planes: Vec<&[Bits]> = flat.chunks(w).collect();
        for (j, v) in vals.iter().enumerate() {
            for (i, p) in planes.iter().enumerate() {
                assert_eq!((p[j / 64].0 >> (j % 64)) & 1, (v.0 >> i) & 1);
            }
        }
        let refs = planes;
        assert_eq!(from_planes::<Z64>(&refs, vals.len()), vals);
        let small: Vec<Z32> = (0..70u32).map(|i| Z32(i.wrapping_mul(2654435761))).collect();
        let sp = to_planes(&small);
        assert_eq!(sp.len(), 32 * 2);
        let refs: Vec<&[Bits]> = sp.chunks(2).collect();
        assert_eq!(from_planes::<Z32>(&refs, small.len()), small);
    }
}
