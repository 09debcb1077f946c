//! rep3's own material against plaintext, for both widths: daBits (both views of every bit
//! agree), truncation pairs, single use, and the fixed-point product that uses the pairs. The
//! comparisons built on the material are checked for every scheme by the conformance suites
//! (`tests/conformance.rs`).

use ringfence_core::net::PartyId;
use ringfence_core::rep3::{Rep3, Rep3Vec};
use ringfence_core::ring::{IntRing, Z32, Z64};
use ringfence_core::testing::{self, random_words, MemTransport};
use ringfence_core::Error;

async fn input2<R: IntRing>(
    p: &mut Rep3<MemTransport>,
    x: &[R],
    y: &[R],
) -> Result<(Rep3Vec<R>, Rep3Vec<R>), Error> {
    let me = p.me();
    let a = p.input(PartyId(0), (me.0 == 0).then_some(x), x.len()).await?;
    let b = p.input(PartyId(2), (me.0 == 2).then_some(y), y.len()).await?;
    Ok((a, b))
}

/// Every daBit's boolean and ring views open to the same bit, and the bits are not constant.
fn check_dabits<R: IntRing>() {
    let n = 300;
    let outs = testing::run_rep3(51, |mut p| async move {
        let probe = p.dabits::<R>(n).await?;
        let arith = p.reveal(probe.arith_for_test()).await?;
        let bools = p.reveal_bits(probe.bits_for_test()).await?;
        Ok((arith, bools))
    });
    for (arith, bools) in outs {
        assert_eq!((arith.len(), bools.len()), (n, n));
        for (a, b) in arith.iter().zip(&bools) {
            assert_eq!(a.to_u64(), u64::from(*b), "a daBit's two views differ");
        }
        let ones = bools.iter().filter(|b| **b).count();
        assert!((100..200).contains(&ones), "{ones} of {n} daBits are 1");
    }
}

#[test]
fn dabits_views_agree_z64() {
    check_dabits::<Z64>();
}

#[test]
fn dabits_views_agree_z32() {
    check_dabits::<Z32>();
}

#[test]
fn preprocessing_is_single_use() {
    let outs = testing::run_rep3(52, |mut p| async move {
        let mut store = p.dabits::<Z64>(10).await?;
        let first = store.take(10)?;
        let again = store.take(1);
        let mut pairs = p.trunc_pairs::<Z64>(4, 8).await?;
        let _used = pairs.take(4)?;
        Ok((first.len(), again.is_err(), pairs.take(1).is_err()))
    });
    assert!(outs.iter().all(|o| *o == (10, true, true)));
}

fn check_trunc<R: IntRing>(d: u32) {
    let n = 300;
    let outs = testing::run_rep3(60 + d as u64, |mut p| async move {
        let mut pairs = p.trunc_pairs::<R>(n, d).await?;
        let probe = pairs.take(n - 100)?;
        let (r, rs) = probe.into_parts_for_test();
        Ok((p.reveal(r).await?, p.reveal(rs).await?, pairs))
    });
    for (r, rs, _) in &outs {
        for (a, b) in r.iter().zip(rs) {
            assert_eq!(a.shr_arith(d), *b, "pair ({a:?}, {b:?})");
        }
    }
}

#[test]
fn truncation_pairs_are_exact_z64() {
    check_trunc::<Z64>(16);
    check_trunc::<Z64>(1);
}

#[test]
fn truncation_pairs_are_exact_z32() {
    check_trunc::<Z32>(8);
}

#[test]
fn fixed_point_multiplication_is_within_one_ulp_z64() {
    check_fixed_mul::<Z64>(16, 2000.0, 20.0);
}

/// In Z_2^32 a product carries 2d fractional bits in 31 bits of magnitude, so truncation fails
/// with probability ≈ |x·y|·2^(2d) / 2^31 (1/32 at |x·y| ≈ 1000 with d = 8): the 32-bit ring is
/// only for small values. Here |x·y| ≤ 4 with d = 6, a failure rate of 2^-17.
#[test]
fn fixed_point_multiplication_is_within_one_ulp_z32() {
    check_fixed_mul::<Z32>(6, 2.0, 2.0);
}

/// Products of values up to `xmax`·`ymax` with `d` fractional bits, plus 0, ±1 and 0.5.
fn check_fixed_mul<R: IntRing>(d: u32, xmax: f64, ymax: f64) {
    use ringfence_core::ring::fixed::FixedPoint;
    let fp = FixedPoint::new(d);
    let unit = |w: &u64| (*w >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
    let xf: Vec<f64> = random_words(70, 500).iter().map(|w| unit(w) * 2.0 * xmax).collect();
    let mut yf: Vec<f64> = random_words(71, 500).iter().map(|w| unit(w) * 2.0 * ymax).collect();
    yf[..4].copy_from_slice(&[0.0, 1.0, -1.0, 0.5]);
    let x: Vec<R> = fp.encode_slice(&xf).unwrap();
    let y: Vec<R> = fp.encode_slice(&yf).unwrap();
    let outs = testing::run_rep3(72, |mut p| {
        let (x, y) = (x.clone(), y.clone());
        async move {
            let (sx, sy) = input2(&mut p, &x, &y).await?;
            let pairs = p.trunc_pairs::<R>(x.len(), d).await?;
            let before = p.ctx().stats();
            let z = p.mul_fixed(&sx, &sy, pairs).await?;
            let cost = p.ctx().stats() - before;
            Ok((p.reveal(z).await?, cost))
        }
    });
    for (i, (z, cost)) in outs.iter().enumerate() {
        assert_eq!(cost.rounds, 1);
        let per = if i == 1 { 2 } else { 1 };
        assert_eq!(cost.payload_bytes_sent, (per * x.len() * R::BYTES) as u64);
        for j in 0..x.len() {
            let exact = ((x[j].to_i64() as i128 * y[j].to_i64() as i128) >> d) as i64;
            let diff = z[j].to_i64() - R::from_i64(exact).to_i64();
            assert!(diff == 0 || diff == -1, "{} * {} -> off by {diff}", xf[j], yf[j]);
        }
    }
}
