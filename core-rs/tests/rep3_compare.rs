//! Conversions, comparisons and truncation against plaintext, for both widths, with edge values.

use ringfence_core::net::PartyId;
use ringfence_core::rep3::{Rep3, Rep3Vec};
use ringfence_core::ring::{IntRing, Z32, Z64};
use ringfence_core::testing::{self, random_words, MemTransport};
use ringfence_core::Error;

/// Random values (full range, and small ones so comparisons are not decided by sign alone),
/// then 0, 1, −1, min, max.
fn values<R: IntRing>(seed: u64, n: usize) -> Vec<R> {
    let w = random_words(seed, n);
    let mut v: Vec<R> = w[..n / 2].iter().map(|&x| R::from_u64(x)).collect();
    v.extend(w[n / 2..].iter().map(|&x| R::from_i64((x as i64) >> (70 - R::BITS))));
    v.extend([0i64, 1, -1].map(R::from_i64));
    v.push(R::from_u64(1u64 << (R::BITS - 1)));
    v.push(R::from_u64((1u64 << (R::BITS - 1)) - 1));
    v
}

/// Every pair of edge values, plus equal operands, appended to random pairs.
fn pairs<R: IntRing>(seed: u64) -> (Vec<R>, Vec<R>) {
    let x = values::<R>(seed, 120);
    let mut y = values::<R>(seed + 1, 120);
    y[..10].copy_from_slice(&x[..10]); // ties
    let edges = &x[x.len() - 5..];
    let (mut xs, mut ys) = (x.clone(), y);
    for a in edges {
        for b in edges {
            xs.push(*a);
            ys.push(*b);
        }
    }
    (xs, ys)
}

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

fn check_a2b_and_comparisons<R: IntRing>() {
    let (x, y) = pairs::<R>(40);
    let outs = testing::run_rep3(41, |mut p| {
        let (x, y) = (x.clone(), y.clone());
        async move {
            let (sx, sy) = input2(&mut p, &x, &y).await?;
            let bits = p.a2b(&sx).await?;
            let a2b = p.reveal_planes::<R>(bits).await?;
            let ltz = p.ltz(&sx).await?;
            let ltz = p.reveal_bits(ltz).await?;
            let lt = p.lt(&sx, &sy).await?;
            let lt = p.reveal_bits(lt).await?;
            let eq = p.eq(&sx, &sy).await?;
            let eq = p.reveal_bits(eq).await?;
            Ok((a2b, ltz, lt, eq))
        }
    });
    for (a2b, ltz, lt, eq) in outs {
        assert_eq!(a2b, x);
        for i in 0..x.len() {
            assert_eq!(ltz[i], x[i].to_i64() < 0, "ltz {:?}", x[i]);
            assert_eq!(lt[i], x[i] < y[i], "lt {:?} {:?}", x[i], y[i]);
            assert_eq!(eq[i], x[i] == y[i], "eq {:?} {:?}", x[i], y[i]);
        }
    }
}

#[test]
fn a2b_ltz_lt_eq_z64() {
    check_a2b_and_comparisons::<Z64>();
}

#[test]
fn a2b_ltz_lt_eq_z32() {
    check_a2b_and_comparisons::<Z32>();
}

#[test]
fn bounded_lt_is_right_within_its_range() {
    let x: Vec<Z64> =
        random_words(3, 200).into_iter().map(|w| Z64::from_i64((w as i64) >> 2)).collect();
    let mut y: Vec<Z64> =
        random_words(4, 200).into_iter().map(|w| Z64::from_i64((w as i64) >> 2)).collect();
    y[0] = x[0];
    let outs = testing::run_rep3(42, |mut p| {
        let (x, y) = (x.clone(), y.clone());
        async move {
            let (sx, sy) = input2(&mut p, &x, &y).await?;
            let c = p.lt_bounded(&sx, &sy).await?;
            p.reveal_bits(c).await
        }
    });
    let expect: Vec<bool> = x.iter().zip(&y).map(|(a, b)| a < b).collect();
    assert!(outs.iter().all(|o| *o == expect));
}

/// Rounds and bytes of `ltz` on n values match the documented formula:
/// 1 + 1 + ⌈log₂(k−1)⌉ rounds; every party sends 3k − 5 − ⌈log₂(k−1)⌉ AND words per 64 values
/// (181 for k = 64, 86 for k = 32), and P1 also k words to share `x1 + x2`.
#[test]
fn msb_cost_matches_the_formula() {
    for (bits, ands, rounds) in [(64u32, 181u64, 8u64), (32, 86, 7)] {
        let n = 1000usize;
        let w = n.div_ceil(64) as u64;
        let outs = testing::run_rep3(43, |mut p| async move {
            let before = p.ctx().stats();
            if bits == 64 {
                let x = p.random::<Z64>(n);
                p.ltz(&x).await?;
            } else {
                let x = p.random::<Z32>(n);
                p.ltz(&x).await?;
            }
            Ok(p.ctx().stats() - before)
        });
        for (i, c) in outs.iter().enumerate() {
            let share = if i == 1 { bits as u64 * w * 8 } else { 0 };
            assert_eq!(c.rounds, rounds, "k={bits}");
            assert_eq!(c.payload_bytes_sent, ands * w * 8 + share, "k={bits} P{i}");
        }
    }
}

#[test]
fn dabits_bit_injection_select_relu_max_z64() {
    check_select_relu_max::<Z64>();
}

#[test]
fn dabits_bit_injection_select_relu_max_z32() {
    check_select_relu_max::<Z32>();
}

fn check_select_relu_max<R: IntRing>() {
    let (x, y) = pairs::<R>(50);
    let n = x.len();
    let outs = testing::run_rep3(51, |mut p| {
        let (x, y) = (x.clone(), y.clone());
        async move {
            let (sx, sy) = input2(&mut p, &x, &y).await?;
            let mut store = p.dabits::<R>(5 * n + 7).await?;
            // daBits: both views of each bit agree and are bits.
            let probe = store.take(7)?;
            let arith = p.reveal(probe.arith_for_test()).await?;
            let bools = p.reveal_bits(probe.bits_for_test()).await?;
            let c = p.lt(&sx, &sy).await?;
            let ci = p.bit_to_arith(&c, store.take(n)?).await?;
            let sel = p.select(&c, &sx, &sy, store.take(n)?).await?;
            let relu = p.relu(&sx, store.take(n)?).await?;
            let mx = p.max(&sx, &sy, store.take(n)?).await?;
            Ok((
                arith,
                bools,
                p.reveal(ci).await?,
                p.reveal(sel).await?,
                p.reveal(relu).await?,
                p.reveal(mx).await?,
                store.len(),
            ))
        }
    });
    for (arith, bools, ci, sel, relu, mx, left) in outs {
        assert_eq!(left, n);
        for (a, b) in arith.iter().zip(&bools) {
            assert_eq!(a.to_u64(), *b as u64);
        }
        for i in 0..n {
            let c = x[i] < y[i];
            assert_eq!(ci[i], R::from_u64(c as u64));
            assert_eq!(sel[i], if c { x[i] } else { y[i] });
            assert_eq!(relu[i], if x[i].to_i64() < 0 { R::ZERO } else { x[i] });
            assert_eq!(mx[i], x[i].max(y[i]));
        }
    }
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

#[test]
fn max_windows_and_argmax_z64() {
    check_max_windows_and_argmax::<Z64>();
}

#[test]
fn max_windows_and_argmax_z32() {
    check_max_windows_and_argmax::<Z32>();
}

fn check_max_windows_and_argmax<R: IntRing>() {
    // Windows of sizes 1, 2, 3, 4 and 5 with ties and the extreme values; argmax rows with a tie
    // at the maximum.
    let (lo, hi) = (i64::MIN >> (64 - R::BITS), i64::MAX >> (64 - R::BITS));
    let x: Vec<R> = [5i64, -3, 7, 7, 0, -1, -2, 9, 4, 9, lo, hi, 3, 3, 2].map(R::from_i64).to_vec();
    let windows: Vec<Vec<usize>> =
        vec![vec![0], vec![1, 2], vec![3, 4, 5], vec![6, 7, 8, 9], vec![10, 11, 12, 13, 14]];
    let rows = 3; // argmax over rows of 5
    let outs = testing::run_rep3(53, |mut p| {
        let (x, windows) = (x.clone(), windows.clone());
        async move {
            let me = p.me();
            let sx = p.input(PartyId(1), (me.0 == 1).then_some(&x[..]), x.len()).await?;
            let mut store = p.dabits::<R>(40).await?;
            let m = p.max_windows(&sx, &windows, &mut store).await?;
            let a = p.argmax(&sx, 5, &mut store).await?;
            Ok((p.reveal(m).await?, p.reveal(a).await?))
        }
    });
    let expect_max: Vec<R> =
        windows.iter().map(|w| *w.iter().map(|&i| &x[i]).max().unwrap()).collect();
    let expect_arg: Vec<R> = (0..rows)
        .map(|r| {
            let row = &x[r * 5..r * 5 + 5];
            let best = row.iter().max().unwrap();
            R::from_u64(row.iter().position(|v| v == best).unwrap() as u64)
        })
        .collect();
    for (m, a) in outs {
        assert_eq!(m, expect_max);
        assert_eq!(a, expect_arg);
    }
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
