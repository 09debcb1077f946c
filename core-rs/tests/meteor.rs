//! METEOR against plaintext on random and edge values, the paper's online cost model (bytes and
//! rounds per party), mask freshness and preparation binding.

use ringfence_core::meteor::{MVec, Meteor, MeteorRing, F67};
use ringfence_core::net::{PartyId, Stats};
use ringfence_core::ring::{IntRing, Ring, Z64};
use ringfence_core::testing::{self, random_words, MemTransport};
use ringfence_core::Error;

type P = Meteor<MemTransport>;

/// Random full-range values, small signed ones, and 0, ±1, min, max, ±2^62.
fn values(seed: u64, n: usize) -> Vec<Z64> {
    let w = random_words(seed, n);
    let mut v: Vec<Z64> = w[..n / 2].iter().map(|&x| Z64(x)).collect();
    v.extend(w[n / 2..].iter().map(|&x| Z64::from_i64((x as i64) >> 20)));
    v.extend([0i64, 1, -1, i64::MIN, i64::MAX, 1 << 62, -(1 << 62)].map(Z64::from_i64));
    v
}

/// P0 inputs `x`, P2 inputs `y`, under owner-known masks.
async fn share2<R: Ring>(p: &mut P, x: &[R], y: &[R]) -> Result<(MVec<R>, MVec<R>), Error> {
    let me = p.me();
    let (o0, o2) = (PartyId(0), PartyId(2));
    let mx = p.input_mask::<R>(o0, x.len());
    let my = p.input_mask::<R>(o2, y.len());
    let a = p.share(o0, (me == o0).then_some(x), mx).await?;
    let b = p.share(o2, (me == o2).then_some(y), my).await?;
    Ok((a, b))
}

fn stats(p: &P) -> Stats {
    p.rep3().ctx().stats()
}

#[test]
fn share_reveal_and_linear_ops() {
    let x = values(1, 40);
    let y = values(2, 40);
    let outs = testing::run_rep3(3, |p| {
        let (x, y) = (x.clone(), y.clone());
        async move {
            let mut p = Meteor::new(p);
            let (a, b) = share2(&mut p, &x, &y).await?;
            let lin = a.scale(Z64(3)).sub(&b)?.add_public(&vec![Z64(7); x.len()])?;
            let opened = p.reveal(lin).await?;
            let to1 = p.reveal_to(PartyId(1), a).await?;
            Ok((opened, to1))
        }
    });
    let want: Vec<Z64> = x.iter().zip(&y).map(|(a, b)| *a * Z64(3) - *b + Z64(7)).collect();
    for (i, (opened, to1)) in outs.iter().enumerate() {
        assert_eq!(opened, &want);
        assert_eq!(to1.is_some(), i == 1);
    }
    assert_eq!(outs[1].1.as_deref(), Some(&x[..]));
}

#[test]
fn input_masks_are_random_and_known_only_to_their_owner() {
    let outs = testing::run_rep3(4, |p| async move {
        let mut p = Meteor::new(p);
        let m1 = p.input_mask::<Z64>(PartyId(1), 64);
        let m2 = p.input_mask::<Z64>(PartyId(1), 64);
        // Each party's view: the shares it holds; reveal to check the masks differ.
        let mask1 = p.rep3_mut().reveal(m1.mask().clone()).await?;
        let mask2 = p.rep3_mut().reveal(m2.mask().clone()).await?;
        Ok((mask1, mask2, format!("{m1:?}")))
    });
    let (m1, m2, dbg) = &outs[0];
    assert_ne!(m1, m2, "two inputs must get independent masks");
    assert!(m1.iter().filter(|v| v.0 == 0).count() < 2, "masks look zero");
    assert!(!dbg.contains(&m1[0].0.to_string()), "Debug leaks a mask: {dbg}");
}

fn check_nmult<R: MeteorRing>(xs: Vec<Vec<R>>) {
    let n = xs[0].len();
    let outs = testing::run_rep3(5, |p| {
        let xs = xs.clone();
        async move {
            let mut p = Meteor::new(p);
            let me = p.me();
            let mut shared = Vec::new();
            for (j, x) in xs.iter().enumerate() {
                let owner = PartyId((j % 3) as u8);
                let m = p.input_mask::<R>(owner, n);
                shared.push(p.share(owner, (me == owner).then_some(&x[..]), m).await?);
            }
            let out = p.mask::<R>(n);
            let masks: Vec<_> = shared.iter().map(|s| s.mask()).collect();
            let prep = p.nmult_setup_many(vec![(masks, out)]).await?.pop().unwrap();
            let before = stats(&p);
            let z = p.nmult(&shared.iter().collect::<Vec<_>>(), prep).await?;
            let cost = stats(&p) - before;
            Ok((p.reveal(z).await?, cost))
        }
    });
    let want: Vec<R> = (0..n).map(|e| xs.iter().fold(R::ONE, |acc, x| acc * x[e])).collect();
    for (got, cost) in &outs {
        assert_eq!(got, &want);
        assert_eq!(cost.rounds, 1, "N-MULT is one round whatever N is");
        assert_eq!(cost.payload_bytes_sent, (n * R::BYTES) as u64, "one element per value");
    }
}

#[test]
fn two_three_and_four_input_multiplication_over_z64_and_f67() {
    for k in 2..=4 {
        check_nmult::<Z64>((0..k).map(|j| values(10 + j, 30)).collect());
        // 150 values: two full blocks of the F_67 kernel and a partial one; the first ten
        // are 66 = −1, the largest lazy sums.
        let f67 = |j| -> Vec<F67> {
            let w = random_words(20 + j, 150);
            w.iter().enumerate().map(|(e, &x)| F67::new(if e < 10 { 66 } else { x })).collect()
        };
        check_nmult::<F67>((0..k).map(f67).collect());
    }
}

#[test]
fn msb_relu_and_mux_match_plaintext_on_edge_values_with_paper_costs() {
    for seed in [7u64, 8, 9] {
        let x = values(seed, 120);
        let y = values(seed + 100, 120);
        let n = x.len();
        let outs = testing::run_rep3(seed, |p| {
            let (x, y) = (x.clone(), y.clone());
            async move {
                let mut p = Meteor::new(p);
                let (sx, sy) = share2(&mut p, &x, &y).await?;
                let msb_prep = p.msb_setup(sx.mask()).await?;
                let out = p.mask::<Z64>(n);
                let relu_prep = p.relu_setup(sx.mask(), out).await?;
                let t0 = stats(&p);
                let bits = p.msb(&sx, msb_prep).await?;
                let t1 = stats(&p);
                let relu = p.relu(&sx, relu_prep).await?;
                let t2 = stats(&p);
                // General MUX: msb(x) ? x : y.
                let diff = sx.sub(&sy)?;
                let out = p.mask::<Z64>(n);
                let mux_prep = p.mux_setup(diff.mask(), bits.mask(), out).await?;
                let t3 = stats(&p);
                let sel = p.mux(&sx, &sy, &bits, mux_prep).await?;
                let t4 = stats(&p);
                let costs = [t1 - t0, t2 - t1, t4 - t3];
                Ok((p.reveal_bits(bits).await?, p.reveal(relu).await?, p.reveal(sel).await?, costs))
            }
        });
        for (bits, relu, sel, costs) in &outs {
            for e in 0..n {
                let v = x[e].to_i64();
                assert_eq!(bits[e], v < 0, "msb of {v}");
                assert_eq!(relu[e].to_i64(), v.max(0), "relu of {v}");
                assert_eq!(sel[e], if v < 0 { x[e] } else { y[e] });
            }
            let per = |s: &Stats| s.payload_bytes_sent as f64 / n as f64;
            assert_eq!((costs[0].rounds, per(&costs[0])), (6, 87.0), "MSB: 87 B, 6 rounds");
            assert_eq!((costs[1].rounds, per(&costs[1])), (7, 95.0), "ReLU: 95 B, 7 rounds");
            assert_eq!((costs[2].rounds, per(&costs[2])), (1, 8.0), "MUX: 8 B, 1 round");
        }
    }
}

#[test]
fn maxpool_tournament_matches_plaintext_with_ties() {
    // max(a, b) = ReLU(a − b) + b needs |a − b| < 2^63: values within ±2^61, with edges.
    let mut x: Vec<Z64> = values(50, 60).iter().map(|v| v.shr_arith(2)).collect();
    x[1] = x[0]; // a tie inside the first window
    let windows: Vec<Vec<usize>> =
        vec![vec![0, 1, 2, 3], vec![4, 5, 6], vec![7], (8..17).collect(), vec![60, 61, 62, 63]];
    let outs = testing::run_rep3(51, |p| {
        let (x, windows) = (x.clone(), windows.clone());
        async move {
            let mut p = Meteor::new(p);
            let owner = PartyId(1);
            let m = p.input_mask::<Z64>(owner, x.len());
            let sx = p.share(owner, (p.me() == owner).then_some(&x[..]), m).await?;
            let prep = p.maxpool_setup(sx.mask(), &windows).await?;
            let before = stats(&p);
            let z = p.maxpool(&sx, prep).await?;
            let cost = stats(&p) - before;
            Ok((p.reveal(z).await?, cost))
        }
    });
    let want: Vec<Z64> = windows.iter().map(|w| *w.iter().map(|&i| &x[i]).max().unwrap()).collect();
    let comparisons: usize = windows.iter().map(|w| w.len() - 1).sum();
    for (got, cost) in &outs {
        assert_eq!(got, &want);
        assert_eq!(cost.payload_bytes_sent, 95 * comparisons as u64, "95 B per comparison");
        assert_eq!(cost.rounds, 7 * 4, "⌈log₂ 9⌉ = 4 tournament levels of 7 rounds");
    }
}

#[test]
fn preparation_is_bound_to_its_input_masks() {
    let outs = testing::run_rep3(60, |p| async move {
        let mut p = Meteor::new(p);
        let (a, b) = share2(&mut p, &[Z64(1), Z64(2)], &[Z64(3), Z64(4)]).await?;
        let prep = p.mult_setup(a.mask(), a.mask()).await?;
        let wrong = p.mult(&a, &b, prep).await;
        let out = p.mask(2);
        let relu = p.relu_setup(a.mask(), out).await?;
        let wrong_relu = p.relu(&b, relu).await;
        Ok((wrong.map(|_| ()), wrong_relu.map(|_| ())))
    });
    for (m, r) in outs {
        assert!(matches!(m, Err(Error::ApiMisuse(ref s)) if s.contains("mask")), "{m:?}");
        assert!(matches!(r, Err(Error::ApiMisuse(_))), "{r:?}");
    }
}

#[test]
fn a_field_element_out_of_range_from_a_peer_is_an_error() {
    let net = testing::Net::new(3);
    // During the MSB's first online round, P0 sends P1 F_67 elements (one byte each); make one 67.
    net.set_hook(|env| {
        let len = env.bytes.len();
        if env.from == PartyId(0) && env.to == PartyId(1) && len == 28 + 64 {
            env.bytes[len - 1] = 67;
        }
        testing::Action::Deliver
    });
    let res = testing::run_rep3_on(&net, 3, 61, |p| async move {
        let mut p = Meteor::new(p);
        let m = p.input_mask::<Z64>(PartyId(0), 1);
        let prep = p.msb_setup(m.mask()).await?;
        let x = p.share(PartyId(0), (p.me() == PartyId(0)).then_some(&[Z64(5)][..]), m).await?;
        p.msb(&x, prep).await.map(|_| ())
    });
    match &res[1] {
        Err(Error::PeerMisbehaved { peer, reason }) => {
            assert_eq!(*peer, PartyId(0));
            assert!(reason.to_string().contains("not a valid encoding"), "{reason}");
        }
        other => panic!("P1 should reject the frame, got {other:?}"),
    }
}
