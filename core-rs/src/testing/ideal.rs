//! Ideal (trusted-dealer) preprocessing, so that a protocol can be tested apart from the
//! protocol that makes its material (feature `test-utils` only: no shipped binary and no SDK
//! build enables it, and nothing outside tests may present it as the protocol).
//!
//! A [`Dealer`] draws the material in the clear from its own seed and hands each party its
//! shares, exactly as the parties' own preprocessing would leave them: the online protocols
//! cannot tell the difference, which is what a test of them needs.
//!
//! ```
//! use ringfence_core::{ring::Z64, testing::{self, ideal::Dealer}};
//! let stores = Dealer::new(7).rep3_trunc_pairs::<Z64>(4, 13);
//! let outs = testing::run_rep3(3, move |mut p| {
//!     let pairs = stores[p.me().index()].clone();
//!     async move {
//!         let x = p.input(ringfence_core::net::PartyId(0),
//!             (p.me().index() == 0).then_some(&[Z64(3 << 13); 4][..]), 4).await?;
//!         let y = p.mul_fixed(&x, &x, pairs).await?; // 3 · 3 in fixed point
//!         p.reveal(y).await
//!     }
//! });
//! // 9 in fixed point, up to the truncation's one unit in the last place.
//! assert!(outs[0].iter().all(|v| (v.0 as i64 - (9 << 13)).abs() <= 1));
//! ```

use crate::net::{PartyId, Roster};
use crate::prg::{Prg, Seed};
use crate::rep3::{DaBits, Rep3Vec, TruncPairs};
use crate::ring::{Bits, IntRing, Ring};

/// A trusted dealer of preprocessing material (tests only).
#[derive(Debug)]
pub struct Dealer {
    seed: Seed,
    draws: u64,
}

impl Dealer {
    /// A dealer whose draws all derive from `seed`.
    pub fn new(seed: u64) -> Self {
        let mut b = [0u8; 32];
        b[..8].copy_from_slice(&seed.to_le_bytes());
        b[8..16].copy_from_slice(b"dealer!!");
        Self { seed: Seed::from_bytes(b), draws: 0 }
    }

    fn random<R: Ring>(&mut self, n: usize) -> Vec<R> {
        self.draws += 1;
        let mut v = vec![R::ZERO; n];
        R::fill_random(&mut Prg::new(&self.seed, self.draws, 0), &mut v);
        v
    }

    /// A fresh rep3 sharing of `values`, one share vector per party: random components
    /// `c0`, `c1`, and `c2 = v − c0 − c1`; party `i` holds `(c_i, c_{i+1})`.
    pub fn rep3_share<R: Ring>(&mut self, values: &[R]) -> [Rep3Vec<R>; 3] {
        let n = values.len();
        let c0 = self.random::<R>(n);
        let c1 = self.random::<R>(n);
        let c2: Vec<R> = values.iter().zip(&c0).zip(&c1).map(|((v, a), b)| *v - *a - *b).collect();
        let comps = [c0, c1, c2];
        let ring = Roster::THREE;
        core::array::from_fn(|i| {
            let me = PartyId(i as u8);
            let next = ring.next(me).index();
            Rep3Vec::from_parts(me, comps[i].clone(), comps[next].clone())
        })
    }

    /// `n` truncation pairs `(⟨r⟩, ⟨r >> d⟩)` with `r` uniform, one store per party.
    pub fn rep3_trunc_pairs<R: IntRing>(&mut self, n: usize, d: u32) -> [TruncPairs<R>; 3] {
        let r = self.random::<R>(n);
        let shifted: Vec<R> = r.iter().map(|v| v.shr_arith(d)).collect();
        let (rs, ss) = (self.rep3_share(&r), self.rep3_share(&shifted));
        let mut parts = rs.into_iter().zip(ss);
        core::array::from_fn(|_| {
            let (r, r_shifted) = parts.next().expect("three parties");
            TruncPairs { frac_bits: d, r, r_shifted }
        })
    }

    /// `n` daBits (uniform bits shared both as packed booleans and as ring elements), one store
    /// per party.
    pub fn rep3_dabits<R: Ring>(&mut self, n: usize) -> [DaBits<R>; 3] {
        let mut words = self.random::<Bits>(n.div_ceil(64));
        if n % 64 != 0 {
            if let Some(last) = words.last_mut() {
                last.0 &= (1u64 << (n % 64)) - 1;
            }
        }
        let arith: Vec<R> = (0..n)
            .map(|j| if words[j / 64].0 >> (j % 64) & 1 == 1 { R::ONE } else { R::ZERO })
            .collect();
        let (bs, rs) = (self.rep3_share(&words), self.rep3_share(&arith));
        let mut parts = bs.into_iter().zip(rs);
        core::array::from_fn(|_| {
            let (bits, arith) = parts.next().expect("three parties");
            DaBits { bits, arith }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::{Z32, Z64};
    use crate::testing::run_rep3;

    /// Each party's stores, opened by the parties' own protocol, hold what the dealer drew.
    #[test]
    fn dealt_material_opens_to_its_relation() {
        let mut dealer = Dealer::new(11);
        let values = [Z64(0), Z64(1), Z64(u64::MAX), Z64(1 << 63), Z64(12345)];
        let shares = dealer.rep3_share(&values);
        let pairs = dealer.rep3_trunc_pairs::<Z32>(70, 8);
        let dabits = dealer.rep3_dabits::<Z64>(70);
        let outs = run_rep3(5, |mut p| {
            let i = p.me().index();
            let (x, (r, s), d) =
                (shares[i].clone(), pairs[i].clone().into_parts_for_test(), dabits[i].clone());
            async move {
                let x = p.reveal(x).await?;
                let (r, s) = (p.reveal(r).await?, p.reveal(s).await?);
                let arith = p.reveal(d.arith_for_test()).await?;
                let bits = p.reveal_bits(d.bits_for_test()).await?;
                Ok((x, r, s, arith, bits))
            }
        });
        let (x, r, s, arith, bits) = &outs[0];
        assert_eq!(x, &values);
        assert!(r.iter().zip(s).all(|(r, s)| r.shr_arith(8) == *s));
        assert!(r.iter().any(|v| v.0 >> 31 == 1) && r.iter().any(|v| v.0 >> 31 == 0));
        assert_eq!(arith.len(), 70);
        assert!(arith.iter().zip(bits).all(|(a, b)| *a == if *b { Z64(1) } else { Z64(0) }));
        assert!(bits.iter().any(|b| *b) && bits.iter().any(|b| !*b), "uniform bits, not constant");
    }

    /// Two draws never repeat material, and one party's shares alone are not the values.
    #[test]
    fn draws_are_fresh_and_shares_hide_the_values() {
        let mut dealer = Dealer::new(3);
        let values = vec![Z64(42); 16];
        let (a, b) = (dealer.rep3_share(&values), dealer.rep3_share(&values));
        for i in 0..3 {
            assert_ne!(a[i], b[i], "P{i}'s shares of two sharings differ");
            assert!(a[i].a.iter().zip(&a[i].b).all(|(x, y)| *x != Z64(42) && *y != Z64(42)));
        }
    }
}
