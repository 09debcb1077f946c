//! Bitsliced boolean `rep3`: bit planes, AND, and sharing of values known to some parties.
//!
//! `n` values of `k` bits become `k` planes; plane `i` holds bit `i` of every value, 64 values
//! per [`Bits`] word (value `j` in bit `j % 64` of word `j / 64`). One AND of two planes costs
//! one word per 64 values, and a whole circuit layer is a single batched [`Rep3::mul`] over
//! `Bits`, i.e. one round. Padding bits beyond `n` are zero in the inputs and ignored in outputs.

use super::{Rep3, Rep3Vec};
use crate::net::{PartyId, Transport};
use crate::ring::{Bits, IntRing};
use crate::Error;

/// `k` boolean-shared bit planes of `n` values (`words` = ⌈n/64⌉ words each).
#[derive(Clone, Debug)]
pub struct BitPlanes {
    pub(crate) n: usize,
    pub(crate) planes: Vec<Rep3Vec<Bits>>,
}

impl BitPlanes {
    /// Number of values.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True when there are no values.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Number of planes (bits per value).
    pub fn bits(&self) -> usize {
        self.planes.len()
    }

    /// Plane `i` (bit `i` of every value).
    pub fn plane(&self, i: usize) -> &Rep3Vec<Bits> {
        &self.planes[i]
    }
}

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

/// Plaintext values → `k = R::BITS` planes of ⌈n/64⌉ words (plane-major).
pub(crate) fn to_planes<R: IntRing>(vals: &[R]) -> Vec<Vec<Bits>> {
    let k = R::BITS as usize;
    let w = words(vals.len());
    let mut planes = vec![vec![Bits(0); w]; k];
    let mut block = [0u64; 64];
    for (b, chunk) in vals.chunks(64).enumerate() {
        block.iter_mut().for_each(|x| *x = 0);
        for (dst, v) in block.iter_mut().zip(chunk) {
            *dst = v.to_u64();
        }
        transpose64(&mut block);
        for (i, plane) in planes.iter_mut().enumerate() {
            plane[b] = Bits(block[i]);
        }
    }
    planes
}

/// Planes (plaintext, `k ≤ 64` of them) → `n` values.
pub(crate) fn from_planes<R: IntRing>(planes: &[&[Bits]], n: usize) -> Vec<R> {
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

impl<T: Transport> Rep3<T> {
    /// Elementwise AND of boolean shares (1 round, one word per 64 bits).
    pub async fn and(
        &mut self,
        x: &Rep3Vec<Bits>,
        y: &Rep3Vec<Bits>,
    ) -> Result<Rep3Vec<Bits>, Error> {
        self.mul(x, y).await
    }

    /// Boolean sharing of planes whose values are known to the two holders of component 0
    /// (P0 passes them as its `a`, P2 as its `b`): `(v, 0, 0)`, no communication.
    pub(crate) fn planes_of_component0(
        &self,
        known: Option<Vec<Vec<Bits>>>,
        k: usize,
        w: usize,
    ) -> Vec<Rep3Vec<Bits>> {
        let me = self.me();
        let zero = vec![Bits(0); w];
        match known {
            Some(planes) => planes
                .into_iter()
                .map(|p| match me.0 {
                    0 => Rep3Vec::from_parts(me, p, zero.clone()),
                    _ => Rep3Vec::from_parts(me, zero.clone(), p),
                })
                .collect(),
            None => (0..k).map(|_| Rep3Vec::from_parts(me, zero.clone(), zero.clone())).collect(),
        }
    }

    /// Boolean sharing of planes known to `owner` only, in one message from the owner
    /// (k·w words), without opening a round.
    pub(crate) async fn planes_from_one(
        &mut self,
        owner: PartyId,
        known: Option<Vec<Vec<Bits>>>,
        k: usize,
        w: usize,
    ) -> Result<Vec<Rep3Vec<Bits>>, Error> {
        let flat: Option<Vec<Bits>> = known.map(|p| p.concat());
        let shared = self.share_from_one(owner, flat.as_deref(), k * w).await?;
        Ok(shared.split(&vec![w; k]))
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
        let planes = to_planes(&vals);
        for (j, v) in vals.iter().enumerate() {
            for (i, p) in planes.iter().enumerate() {
                assert_eq!((p[j / 64].0 >> (j % 64)) & 1, (v.0 >> i) & 1);
            }
        }
        let refs: Vec<&[Bits]> = planes.iter().map(|p| &p[..]).collect();
        assert_eq!(from_planes::<Z64>(&refs, vals.len()), vals);
        let small: Vec<Z32> = (0..70u32).map(|i| Z32(i.wrapping_mul(2654435761))).collect();
        let sp = to_planes(&small);
        assert_eq!(sp.len(), 32);
        let refs: Vec<&[Bits]> = sp.iter().map(|p| &p[..]).collect();
        assert_eq!(from_planes::<Z32>(&refs, small.len()), small);
    }
}
