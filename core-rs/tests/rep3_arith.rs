//! `rep3` arithmetic against plaintext, for both ring widths, with exact cost assertions.

use ringfence_core::net::PartyId;
use ringfence_core::rep3::{Rep3, Rep3Vec};
use ringfence_core::ring::{IntRing, Z32, Z64};
use ringfence_core::testing::{self, random_words, MemTransport};
use ringfence_core::Error;

/// Random values followed by the edge cases 0, 1, −1, min, max.
fn values<R: IntRing>(seed: u64, n: usize) -> Vec<R> {
    let mut v: Vec<R> = random_words(seed, n).into_iter().map(R::from_u64).collect();
    let bits = R::BITS;
    v.extend([0i64, 1, -1].map(R::from_i64));
    v.push(R::from_u64(1u64 << (bits - 1))); // most negative
    v.push(R::from_u64((1u64 << (bits - 1)) - 1)); // most positive
    v
}

/// P0 inputs `x`, P1 inputs `y` (everyone knows the lengths).
async fn share_xy<R: IntRing>(
    p: &mut Rep3<MemTransport>,
    x: &[R],
    y: &[R],
) -> Result<(Rep3Vec<R>, Rep3Vec<R>), Error> {
    let me = p.me();
    let sx = p.input(PartyId(0), (me == PartyId(0)).then_some(x), x.len()).await?;
    let sy = p.input(PartyId(1), (me == PartyId(1)).then_some(y), y.len()).await?;
    Ok((sx, sy))
}

fn check_mul<R: IntRing>() {
    let x = values::<R>(1, 200);
    let mut y = values::<R>(2, 200);
    y.reverse();
    let outs = testing::run_rep3(11, |mut p| {
        let (x, y) = (x.clone(), y.clone());
        async move {
            let (sx, sy) = share_xy(&mut p, &x, &y).await?;
            let before = p.ctx().stats();
            let z = p.mul(&sx, &sy).await?;
            let cost = p.ctx().stats() - before;
            Ok((p.reveal(z).await?, cost))
        }
    });
    let expect: Vec<R> = x.iter().zip(&y).map(|(a, b)| *a * *b).collect();
    for (got, cost) in outs {
        assert_eq!(got, expect);
        assert_eq!(cost.rounds, 1);
        assert_eq!(cost.payload_bytes_sent, (x.len() * R::BYTES) as u64);
        assert_eq!(cost.frames_sent, 1);
    }
}

#[test]
fn mul_matches_plaintext_z64() {
    check_mul::<Z64>();
}

#[test]
fn mul_matches_plaintext_z32() {
    check_mul::<Z32>();
}

#[test]
fn linear_ops_and_public_constants() {
    let x = values::<Z64>(3, 50);
    let y = values::<Z64>(4, 50);
    let c = values::<Z64>(5, 50);
    let outs = testing::run_rep3(12, |mut p| {
        let (x, y, c) = (x.clone(), y.clone(), c.clone());
        async move {
            let (sx, sy) = share_xy(&mut p, &x, &y).await?;
            let before = p.ctx().stats();
            let e = sx.add(&sy)?.sub(&sy.scale(Z64(3)))?.add_public(&c)?.mul_public(&c)?;
            let e = e.neg().add_public_scalar(Z64(7));
            assert_eq!(p.ctx().stats(), before, "linear operations are local");
            p.reveal(e).await
        }
    });
    let expect: Vec<Z64> =
        (0..x.len()).map(|i| -((x[i] + y[i] - y[i] * Z64(3) + c[i]) * c[i]) + Z64(7)).collect();
    assert!(outs.iter().all(|o| *o == expect));
}

#[test]
fn dot_and_matmul_cost_one_element_per_output() {
    let (m, k, n) = (3, 17, 5);
    let a = values::<Z64>(6, m * k - 5);
    let b = values::<Z64>(7, k * n - 5);
    let outs = testing::run_rep3(14, |mut p| {
        let (a, b) = (a.clone(), b.clone());
        async move {
            let (sa, sb) = share_xy(&mut p, &a, &b).await?;
            let before = p.ctx().stats();
            let c = p.matmul(&sa, &sb, m, k, n).await?;
            let mcost = p.ctx().stats() - before;
            let rows = sa.slice(0..2 * k);
            let before = p.ctx().stats();
            let d = p.dot(&rows, &sb.slice(0..2 * k), k).await?;
            let dcost = p.ctx().stats() - before;
            Ok((p.reveal(c).await?, p.reveal(d).await?, mcost, dcost))
        }
    });
    let expect = ringfence_core::ring::kernels::matmul(&a, &b, m, k, n);
    let dexp: Vec<Z64> = (0..2)
        .map(|r| ringfence_core::ring::kernels::dot(&a[r * k..(r + 1) * k], &b[r * k..(r + 1) * k]))
        .collect();
    for (c, d, mc, dc) in outs {
        assert_eq!(c, expect);
        assert_eq!(d, dexp);
        assert_eq!((mc.rounds, mc.payload_bytes_sent), (1, (m * n * 8) as u64));
        assert_eq!((dc.rounds, dc.payload_bytes_sent), (1, 16));
    }
}

#[test]
fn length_mismatch_is_an_api_error_not_a_panic() {
    let outs = testing::run_rep3(15, |mut p| async move {
        let x = p.random::<Z64>(3);
        let y = p.random::<Z64>(4);
        Ok(matches!(p.mul(&x, &y).await, Err(Error::ApiMisuse(_))))
    });
    assert!(outs.iter().all(|ok| *ok));
}

#[test]
fn batches_larger_than_a_frame_are_split_and_reassembled() {
    let x = values::<Z64>(8, 100);
    let outs = testing::run_rep3(16, |mut p| {
        let x = x.clone();
        async move {
            p.ctx_mut().set_max_payload(64); // 8 elements per frame
            let me = p.me();
            let s = p.input(PartyId(0), (me == PartyId(0)).then_some(&x[..]), x.len()).await?;
            let before = p.ctx().stats();
            let z = p.mul(&s, &s).await?;
            let cost = p.ctx().stats() - before;
            Ok((p.reveal(z).await?, cost))
        }
    });
    let expect: Vec<Z64> = x.iter().map(|v| *v * *v).collect();
    for (got, cost) in outs {
        assert_eq!(got, expect);
        assert_eq!(cost.frames_sent, x.len().div_ceil(8) as u64);
        assert_eq!(cost.payload_bytes_sent, x.len() as u64 * 8);
        assert_eq!(cost.rounds, 1);
    }
}
