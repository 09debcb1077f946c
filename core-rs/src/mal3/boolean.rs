//! [`Boolean`] for [`Mal3`]: rep3's boolean circuits with every AND checked, and conversions
//! whose only single-party inputs are values two parties hold.
//!
//! **AND.** rep3's product over [`Bits`], recorded with a validated bit triple and checked at
//! the next opening like an arithmetic product (a triple of 64 bitsliced ANDs is one ball of
//! the cut-and-bucket, [`super::triples`]).
//!
//! **A2B / MSB.** rep3 lets P1 boolean-share `x1 + x2`, which a cheating P1 could share wrong
//! without any product noticing. Here every party only writes the bits of the components it
//! holds (each component is known to two parties, so an honest one defines it), and a layer of
//! full adders (`k − 1` checked ANDs, one round) turns the three addends into two; the carry
//! network of `rep3::adder` does the rest with checked ANDs. An MSB takes
//! `2 + ⌈log₂(k−1)⌉` rounds, as in rep3 (the full adders replace P1's sharing message).
//!
//! **daBits.** A random boolean sharing `(r0, r1, r2)` (each component from a pairwise key);
//! each component is lifted into the ring by its two holders, and `r = r0 ⊕ r1 ⊕ r2` is computed
//! there as `t = r0 + r1 − 2·r0·r1`, `r = t + r2 − 2·t·r2`: two checked products (two rounds), so
//! both sides hold the same bit whatever a cheating party does.
//!
//! **Bit injection and bit products.** `c = b ⊕ r` is opened with each missing component from
//! both holders ([`check::open`], two rounds with the verdict); it is masked by the daBit, so it
//! needs no earlier check. A bit product's `r·x` is a checked product in the round before.

use super::check;
use super::scheme::{Mal3, Mal3Ring};
use crate::net::{PartyId, Transport};
use crate::rep3::adder::{carry_ands, sum_bits, sum_msbs};
use crate::rep3::binary::{to_planes_into, unpack_bits, words, AndLayer, AndPair, Planes};
use crate::rep3::compare::{lift_bits, unmask_bits, unmask_products, SharedBits};
use crate::rep3::{next, DaBits, Rep3Vec};
use crate::ring::{Bits, IntRing, Ring};
use crate::sharing::{Boolean, Gates};
use crate::Error;

impl<T: Transport> AndLayer for Mal3<T> {
    /// rep3's layer, each product recorded with a bit triple for the next check.
    async fn and_planes(&mut self, pairs: &[AndPair<'_>], w: usize) -> Result<Planes, Error> {
        let z = self.p.and_planes(pairs, w).await?;
        let me = self.me();
        let operands = |left: bool| {
            let (mut a, mut b) = (Vec::with_capacity(pairs.len() * w), Vec::new());
            for &(x, xi, y, yi) in pairs {
                let (pa, pb) = if left { x.plane(xi) } else { y.plane(yi) };
                a.extend_from_slice(pa);
                b.extend_from_slice(pb);
            }
            Rep3Vec::from_parts(me, a, b)
        };
        let zv = Rep3Vec::from_parts(me, z.a.clone(), z.b.clone());
        self.record(operands(true), operands(false), zv);
        Ok(z)
    }
}

/// The bit planes of additive component `j` of each vector (vectors side by side, `w` words per
/// plane in all): its two holders write its bits, the third party zeros. Local.
fn component_planes<R: IntRing>(me: PartyId, xs: &[&Rep3Vec<R>], j: u8, w: usize) -> Planes {
    let mut p = Planes::zeros(me, R::BITS as usize, w);
    let mut off = 0;
    for x in xs {
        // P_i holds components i (as `a`) and i + 1 (as `b`).
        if me.0 == j {
            to_planes_into(&x.a, &mut p.a, w, off);
        }
        if next(me).0 == j {
            to_planes_into(&x.b, &mut p.b, w, off);
        }
        off += words(x.len());
    }
    p
}

/// Component `j` of packed random bits, lifted into the ring as 0/1 by its two holders (zero
/// elsewhere): a sharing of that component's bits. Local.
fn lifted_component<R: Ring>(bits: &Rep3Vec<Bits>, j: u8, n: usize) -> Rep3Vec<R> {
    let me = bits.me;
    let side = |held: bool, v: &[Bits]| if held { lift_bits(v, n) } else { vec![R::ZERO; n] };
    Rep3Vec::from_parts(me, side(me.0 == j, &bits.a), side(next(me).0 == j, &bits.b))
}

/// `2·C` mod 2^k as `k` planes: plane `i + 1` is carry plane `i`, plane 0 is zero.
pub(super) fn doubled(carry: &Planes, k: usize) -> Planes {
    let mut b = Planes::zeros(carry.me, k, carry.w);
    for i in 0..k - 1 {
        b.set_plane(i + 1, carry, i);
    }
    b
}

impl<T: Transport> Mal3<T> {
    /// The layer of full adders over the components' planes (one round): the sum planes
    /// `A = s0 ⊕ s1 ⊕ s2` (`k` of them) and the carry planes
    /// `C_i = ((s0 ⊕ s2) ∧ (s1 ⊕ s2)) ⊕ s2` for `i < m` (`m` checked ANDs per value), so that
    /// `s0 + s1 + s2 = A + 2·C` as integers; and each vector's width in words. `then` lists the
    /// carries the caller will compute next, whose bit triples are validated now too.
    pub(super) async fn full_adders<R: IntRing>(
        &mut self,
        xs: &[&Rep3Vec<R>],
        m: usize,
        then: &[usize],
    ) -> Result<(Planes, Planes, Vec<usize>), Error> {
        let k = R::BITS as usize;
        let me = self.me();
        let ws: Vec<usize> = xs.iter().map(|x| words(x.len())).collect();
        let w: usize = ws.iter().sum();
        // Bit triples for these adders and the carry network after them (`then`), validated in
        // one run: a run per circuit layer would add 9 rounds to each.
        self.reserve::<Bits>(w * (m + carry_ands(then))).await?;
        let [s0, s1, s2] = [0, 1, 2].map(|j| component_planes(me, xs, j, w));
        let (u, v) = (s0.xor_prefix(&s2, k), s1.xor_prefix(&s2, k));
        let pairs: Vec<AndPair<'_>> = (0..m).map(|i| (&u, i, &v, i)).collect();
        let mut carry = AndLayer::and_planes(self, &pairs, w).await?;
        for i in 0..m {
            carry.xor_plane(i, &s2, i);
        }
        Ok((u.xor_prefix(&s1, k), carry, ws))
    }

    /// Planes `(a, b)` with `a + b = x` mod 2^k for each vector, and each vector's width in
    /// words: `a = A` and `b = 2·C` from [`Self::full_adders`] (the top carry leaves the ring;
    /// `then` as there). One round, `k − 1` checked ANDs per value.
    async fn addends<R: IntRing>(
        &mut self,
        xs: &[&Rep3Vec<R>],
        then: &[usize],
    ) -> Result<(Planes, Planes, Vec<usize>), Error> {
        let k = R::BITS as usize;
        let (a, carry, ws) = self.full_adders(xs, k - 1, then).await?;
        Ok((a, doubled(&carry, k), ws))
    }

    /// Opens `b ⊕ r` for the daBits `r`, each component from both of its holders.
    async fn open_masked<R: Ring>(
        &mut self,
        b: &SharedBits,
        r: &DaBits<R>,
    ) -> Result<Vec<Bits>, Error> {
        r.fits(b.n)?;
        check::open(&mut self.p, b.words.add(&r.bits)?).await
    }

    /// `n` daBits with both sides checked (see the module documentation).
    pub(super) async fn dabits<R: Mal3Ring + IntRing>(
        &mut self,
        n: usize,
    ) -> Result<DaBits<R>, Error> {
        let mut bits = self.p.random::<Bits>(words(n));
        if n % 64 != 0 {
            // Padding bits beyond n are not daBits: keep them zero.
            let mask = (1u64 << (n % 64)) - 1;
            for part in [&mut bits.a, &mut bits.b] {
                if let Some(last) = part.last_mut() {
                    last.0 &= mask;
                }
            }
        }
        let [r0, r1, r2] = [0, 1, 2].map(|j| lifted_component::<R>(&bits, j, n));
        let two = R::from_u64(2);
        let p01 = self.checked_mul(&r0, &r1).await?;
        let t = r0.add(&r1)?.sub(&p01.scale(two))?;
        let p = self.checked_mul(&t, &r2).await?;
        let arith = t.add(&r2)?.sub(&p.scale(two))?;
        Ok(DaBits { bits, arith })
    }
}

impl<T: Transport> Gates for Mal3<T> {
    type Bits = SharedBits;

    /// rep3's input: a cheating owner only chooses its own bits.
    async fn input_bits(
        &mut self,
        owner: PartyId,
        bits: Option<&[bool]>,
        n: usize,
    ) -> Result<SharedBits, Error> {
        self.p.input_bits(owner, bits, n).await
    }

    fn constant_bits(&self, bits: &[bool]) -> SharedBits {
        self.p.constant_bits(bits)
    }

    /// One round; checked at the next opening.
    async fn and(&mut self, x: &SharedBits, y: &SharedBits) -> Result<SharedBits, Error> {
        if x.n != y.n {
            return Err(Error::ApiMisuse(format!("and: {} and {} bits", x.n, y.n)));
        }
        Ok(SharedBits { n: x.n, words: self.checked_mul(&x.words, &y.words).await? })
    }

    /// After every pending product is checked, from both holders of each component.
    async fn open_bits(&mut self, b: SharedBits) -> Result<Vec<bool>, Error> {
        self.check_pending().await?;
        let n = b.n;
        let w = check::open(&mut self.p, b.words).await?;
        Ok(unpack_bits(&w, n).into_iter().map(|x| x == 1).collect())
    }
}

impl<T: Transport, R: Mal3Ring + IntRing> Boolean<R> for Mal3<T> {
    type BitPrep = DaBits<R>;

    /// daBits, checked before they are returned (see `Session for Mal3`).
    async fn bit_prep(&mut self, n: usize) -> Result<DaBits<R>, Error> {
        let bits = self.dabits(n).await?;
        self.check_pending().await?;
        Ok(bits)
    }

    async fn msb_many(&mut self, xs: &[&Rep3Vec<R>]) -> Result<Vec<SharedBits>, Error> {
        let k = R::BITS as usize;
        let (a, b, ws) = self.addends(xs, &[k - 2]).await?;
        let ns: Vec<usize> = xs.iter().map(|x| x.len()).collect();
        sum_msbs(self, &a, &b, R::BITS as usize, &ws, &ns).await
    }

    async fn a2b(&mut self, x: &Rep3Vec<R>) -> Result<Vec<SharedBits>, Error> {
        let all: Vec<usize> = (0..R::BITS as usize - 1).collect();
        let (a, b, _) = self.addends(&[x], &all).await?;
        sum_bits(self, &a, &b, R::BITS as usize, x.len()).await
    }

    /// Two rounds (the masked opening and its verdict).
    async fn b2a(&mut self, b: &SharedBits, prep: DaBits<R>) -> Result<Rep3Vec<R>, Error> {
        let open = self.open_masked(b, &prep).await?;
        Ok(unmask_bits(&open, b.n, prep.arith))
    }

    /// Three rounds: the checked product `r·x`, then the masked opening and its verdict.
    async fn bit_mul_many(
        &mut self,
        b: &SharedBits,
        xs: &[&Rep3Vec<R>],
        prep: DaBits<R>,
    ) -> Result<Vec<Rep3Vec<R>>, Error> {
        if xs.iter().any(|x| x.len() != b.n) || prep.len() != b.n {
            return Err(Error::ApiMisuse(format!(
                "bit_mul: {} bits, {} daBits, vectors of {:?} values",
                b.n,
                prep.len(),
                xs.iter().map(|x| x.len()).collect::<Vec<_>>()
            )));
        }
        let r = Rep3Vec::concat(&vec![&prep.arith; xs.len()]);
        let x = Rep3Vec::concat(xs);
        let rx = self.checked_mul(&r, &x).await?;
        let open = self.open_masked(b, &prep).await?;
        Ok(unmask_products(&open, xs, &rx))
    }
}
