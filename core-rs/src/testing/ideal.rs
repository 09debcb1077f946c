//! Ideal (trusted-dealer) preprocessing, so that a protocol can be tested apart from the
//! protocol that makes its material (feature `test-utils` only: no shipped binary and no SDK
//! build enables it, and nothing outside tests may present it as the protocol).
//!
//! A [`Dealer`] draws the material in the clear from its own seed and hands each party its
//! shares, exactly as the parties' own preprocessing would leave them: the online protocols
//! cannot tell the difference, which is what a test of them needs. For every scheme:
//! rep3's sharings, truncation pairs and daBits (mal3 uses them too); METEOR's input masks and
//! mask products (the dealer opens the operands' masks itself); mal3's multiplication triples,
//! as the pool's validated ones.
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

use crate::mal3::triples::Triples;
use crate::meteor::{FixedMultPrep, InputMask};
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

    /// METEOR: the masks of `n` values of compute party `owner`, as [`crate::meteor::Meteor::input_mask`]
    /// leaves them: a uniform rep3 sharing, known in the clear to the owner alone.
    pub fn meteor_input_masks<R: Ring>(&mut self, owner: PartyId, n: usize) -> [InputMask<R>; 3] {
        let psi = self.random::<R>(n);
        let shares = self.rep3_share(&psi);
        let mut parts = shares.into_iter();
        core::array::from_fn(|i| {
            let mine = parts.next().expect("three parties");
            let clear = (PartyId(i as u8) == owner).then(|| psi.clone());
            InputMask::from_parts(owner, mine, clear)
        })
    }

    /// METEOR: the material of the product of values masked by `x` and `y` (each party's shares
    /// of the masks: the operands' tags), truncated by `d` bits (0: exact). The dealer opens
    /// the masks itself, shares their product and draws the output mask; online, the parties
    /// cannot tell it from the setup protocol's ([`crate::meteor::Meteor::mult_fixed_setup`]).
    pub fn meteor_mul_prep<R: IntRing>(
        &mut self,
        x: &[Rep3Vec<R>; 3],
        y: &[Rep3Vec<R>; 3],
        d: u32,
    ) -> [FixedMultPrep<R>; 3] {
        let (x_clear, y_clear) = (open(x), open(y));
        let xy: Vec<R> = x_clear.iter().zip(&y_clear).map(|(a, b)| *a * *b).collect();
        let r = self.random::<R>(xy.len());
        let shifted: Vec<R> = r.iter().map(|v| v.shr_arith(d)).collect();
        let (xys, rs) = (self.rep3_share(&xy), self.rep3_share(&r));
        // With no truncation the output mask is the one the reveal subtracts.
        let ss = if d == 0 { rs.clone() } else { self.rep3_share(&shifted) };
        let mut parts = xys.into_iter().zip(rs).zip(ss);
        core::array::from_fn(|i| {
            let ((xy, r), s) = parts.next().expect("three parties");
            FixedMultPrep::from_parts([x[i].clone(), y[i].clone(), xy], r, s, d)
        })
    }

    /// mal3: `n` multiplication triples `(a, b, a·b)` with `a`, `b` uniform, as the pool's
    /// validated ones ([`crate::mal3::Mal3::stock_dealt_triples`] puts them there).
    pub fn mal3_triples<R: Ring>(&mut self, n: usize) -> [Triples<R>; 3] {
        let (a, b) = (self.random::<R>(n), self.random::<R>(n));
        let c: Vec<R> = a.iter().zip(&b).map(|(x, y)| *x * *y).collect();
        let (sa, sb, sc) = (self.rep3_share(&a), self.rep3_share(&b), self.rep3_share(&c));
        let mut parts = sa.into_iter().zip(sb).zip(sc);
        core::array::from_fn(|_| {
            let ((a, b), c) = parts.next().expect("three parties");
            Triples { a, b, c }
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

/// The value a rep3 sharing (one share vector per party) stands for.
fn open<R: Ring>(shares: &[Rep3Vec<R>; 3]) -> Vec<R> {
    let n = shares[0].a.len();
    (0..n).map(|j| shares.iter().fold(R::ZERO, |acc, s| acc + s.a[j])).collect()
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

    /// METEOR's online multiplication on dealt input masks and mask products: exact and
    /// fixed-point products as the protocol-made material gives them, one round each.
    #[test]
    fn meteor_runs_online_on_dealt_material() {
        use crate::meteor::Meteor;
        use crate::sharing::Arith;
        use core::cell::RefCell;

        let mut dealer = Dealer::new(21);
        let n = 5;
        let mx = dealer.meteor_input_masks::<Z64>(PartyId(0), n);
        let my = dealer.meteor_input_masks::<Z64>(PartyId(1), n);
        let tags = |m: &[InputMask<Z64>; 3]| core::array::from_fn(|i| m[i].mask().clone());
        let (tx, ty) = (tags(&mx), tags(&my));
        let exact = dealer.meteor_mul_prep(&tx, &ty, 0);
        let fixed = dealer.meteor_mul_prep(&tx, &ty, 13);
        let dealt: Vec<_> = mx.into_iter().zip(my).zip(exact).zip(fixed).map(Some).collect();
        let dealt = RefCell::new(dealt);
        let xs = [Z64(0), Z64(1), Z64(u64::MAX), Z64(3 << 13), Z64((-5i64 << 13) as u64)];
        let ys = [Z64(7), Z64(u64::MAX), Z64(1 << 63), Z64(2 << 13), Z64(3 << 13)];
        let outs = run_rep3(9, |p| {
            let taken = dealt.borrow_mut()[p.me().index()].take();
            async move {
                let (((mx, my), e), f) = taken.expect("each party's material once");
                let mut m = Meteor::new(p);
                let me = m.me();
                let x = m.input(PartyId(0), (me == PartyId(0)).then_some(&xs[..]), mx).await?;
                let y = m.input(PartyId(1), (me == PartyId(1)).then_some(&ys[..]), my).await?;
                let before = m.rep3().ctx().stats().rounds;
                let z = Arith::mul(&mut m, &x, &y, e).await?;
                let w = Arith::mul(&mut m, &x, &y, f).await?;
                let rounds = m.rep3().ctx().stats().rounds - before;
                Ok((Arith::open(&mut m, z).await?, Arith::open(&mut m, w).await?, rounds))
            }
        });
        for (z, w, rounds) in &outs {
            assert_eq!(*rounds, 2, "one round per product online");
            for i in 0..n {
                assert_eq!(z[i], Z64(xs[i].0.wrapping_mul(ys[i].0)), "exact {i}");
            }
            // The truncation is exact up to one unit where |x·y| is far below 2^63.
            for i in [0, 1, 3, 4] {
                let want = (xs[i].0 as i64).wrapping_mul(ys[i].0 as i64) >> 13;
                let got = w[i].0 as i64;
                assert!(got == want || got == want - 1, "fixed {i}: {got} vs {want}");
            }
        }
    }

    /// mal3's product check on dealt triples, without cut-and-bucket: honest triples give the
    /// products, and one triple whose `c` is off by one makes every party abort at the opening.
    #[test]
    fn mal3_checks_products_against_dealt_triples() {
        use crate::mal3::Mal3;
        use crate::sharing::{Arith, Len, Session};
        use crate::Error;
        use core::cell::RefCell;

        let n = 8;
        let xs: Vec<Z64> =
            (0..n as u64).map(|i| Z64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))).collect();
        let ys: Vec<Z64> = (0..n as u64).map(|i| Z64(u64::MAX - 3 * i)).collect();
        for honest in [true, false] {
            let mut dealer = Dealer::new(31);
            let mut t = dealer.mal3_triples::<Z64>(n);
            if !honest {
                let mut e = vec![Z64(0); n];
                e[3] = Z64(1);
                let es = dealer.rep3_share(&e);
                for (t, e) in t.iter_mut().zip(&es) {
                    t.c = t.c.add(e).expect("same length");
                }
            }
            let dealt = RefCell::new(t.map(Some));
            let three = Roster::THREE;
            let net = crate::testing::Net::new(three.n());
            let outs = crate::testing::run_rep3_on(&net, three.participants(0), 10, |p| {
                let t = dealt.borrow_mut()[p.me().index()].take().expect("once");
                let (xs, ys) = (xs.clone(), ys.clone());
                async move {
                    let mut m = Mal3::start(p);
                    m.stock_dealt_triples(t);
                    let me = Arith::<Z64>::me(&m);
                    let (px, _) = Arith::<Z64>::input_prep(&mut m, PartyId(0), n);
                    let (py, _) = Arith::<Z64>::input_prep(&mut m, PartyId(1), n);
                    let x = m.input(PartyId(0), (me == PartyId(0)).then_some(&xs[..]), px).await?;
                    let y = m.input(PartyId(1), (me == PartyId(1)).then_some(&ys[..]), py).await?;
                    let (prep, _) = m.mul_prep(&Len(n), &Len(n), 0).await?;
                    let z = m.mul(&x, &y, prep).await?;
                    let z = m.open(z).await?;
                    Ok((z, m.finish().ctx().stats().bytes_sent))
                }
            });
            for out in outs {
                if honest {
                    let (z, bytes) = out.expect("honest triples pass the check");
                    let want: Vec<Z64> = xs.iter().zip(&ys).map(|(x, y)| *x * *y).collect();
                    assert_eq!(z, want);
                    // A cut-and-bucket run would have sent thousands of elements.
                    assert!(bytes < 4_000, "no triple was validated: {bytes} bytes");
                } else {
                    assert!(matches!(out, Err(Error::Abort { .. })), "{out:?}");
                }
            }
        }
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
