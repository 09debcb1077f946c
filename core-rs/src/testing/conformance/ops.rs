//! Correctness against plaintext: inputs, openings, products, linear operations, chains.

use super::{
    combine, edges, input_now, label, pairs, plain_matmul, plain_mul, random, random_words, run,
    values, Party, Scheme, TestBase,
};
use crate::net::PartyId;
use crate::ring::IntRing;
use crate::sharing::Linear;

/// Matrix shapes (m, k, n): the smallest, non-square ones, and a long inner dimension.
const SHAPES: [(usize, usize, usize); 4] = [(1, 1, 1), (2, 3, 4), (4, 3, 2), (3, 17, 5)];

/// An input from each compute party, of random and edge values, opens to its values at every
/// party, and opened to each party only that party gets them (the others `None`).
pub fn input_and_open<R: IntRing, S: Party<R, B>, B: TestBase>(sc: &Scheme<S, B>) {
    let at = label::<R, S>();
    let parties = &sc.parties();
    for &owner in parties {
        let x = values::<R>(u64::from(owner.0), 16);
        let x = &x;
        let outs = run(sc, &at, 10 + u64::from(owner.0), |mut s| async move {
            let v = input_now(&mut s, owner, x).await?;
            let all = s.open(v.clone()).await?;
            let mut to_each = Vec::new();
            for &to in parties {
                to_each.push(s.open_to(to, v.clone()).await?);
            }
            Ok((all, to_each))
        });
        for (me, (all, to_each)) in parties.iter().zip(&outs) {
            assert_eq!(all, x, "{at}: input from {owner}, opened at {me}");
            for (to, got) in parties.iter().zip(to_each) {
                let want = (to == me).then_some(x);
                assert_eq!(got.as_ref(), want, "{at}: input from {owner} opened to {to}, at {me}");
            }
        }
    }
}

/// `x·y` (P0's x, P1's y) over every pair of edge values, equal operands and random pairs, and
/// `x·x` (one operand twice), both exact in the ring.
pub fn mul_exact<R: IntRing, S: Party<R, B>, B: TestBase>(sc: &Scheme<S, B>) {
    let at = label::<R, S>();
    let parties = &sc.parties();
    let (x, y) = pairs(&edges::<R>(), |i| random(20 + i, 16));
    let (x, y) = (&x, &y);
    let outs = run(sc, &at, 21, |mut s| async move {
        let vx = input_now(&mut s, PartyId(0), x).await?;
        let vy = input_now(&mut s, PartyId(1), y).await?;
        let (tx, ty) = (S::tag(&vx), S::tag(&vy));
        let (pxy, _) = s.mul_prep(&tx, &ty, 0).await?;
        let (pxx, _) = s.mul_prep(&tx, &tx, 0).await?;
        let xy = s.mul(&vx, &vy, pxy).await?;
        let xx = s.mul(&vx, &vx, pxx).await?;
        Ok((s.open(xy).await?, s.open(xx).await?))
    });
    let (want_xy, want_xx) = (plain_mul(x, y), plain_mul(x, x));
    for (me, (xy, xx)) in parties.iter().zip(&outs) {
        assert_eq!(xy, &want_xy, "{at}: x·y at {me}");
        assert_eq!(xx, &want_xx, "{at}: x·x at {me}");
    }
}

/// Exact matrix products of shapes 1×1×1, 2×3×4, 4×3×2 and 3×17×5 (P0's a, P2's b, edge values
/// among random ones).
pub fn matmul_exact<R: IntRing, S: Party<R, B>, B: TestBase>(sc: &Scheme<S, B>) {
    let at = label::<R, S>();
    let parties = &sc.parties();
    for (i, dims @ (m, k, n)) in SHAPES.into_iter().enumerate() {
        let seed = 30 + 2 * i as u64;
        // The last values of each list are the edges: a keeps them at its end, b at its start.
        let a: Vec<R> = values(seed, m * k).split_off(5);
        let mut b: Vec<R> = values(seed + 1, k * n);
        b.reverse();
        b.truncate(k * n);
        let (a, b) = (&a, &b);
        let outs = run(sc, &at, seed, |mut s| async move {
            let va = input_now(&mut s, PartyId(0), a).await?;
            let vb = input_now(&mut s, PartyId(2), b).await?;
            let (prep, _) = s.matmul_prep(&S::tag(&va), &S::tag(&vb), dims, 0).await?;
            let c = s.matmul(&va, &vb, dims, prep).await?;
            s.open(c).await
        });
        let want = plain_matmul(a, b, dims);
        for (me, got) in parties.iter().zip(&outs) {
            assert_eq!(got, &want, "{at}: {m}x{k} by {k}x{n} at {me}");
        }
    }
}

/// Fixed-point products `x·y`, `x·x` (one operand twice) and a matrix product, with `d = k/4`
/// fractional bits, of values below 2^((k−16)/2) in magnitude (edges of that range included):
/// every result is the floor of the exact product over 2^d or one less, the
/// bound of the truncation (`rep3::trunc`, `meteor::mult`). The bound on the values keeps the
/// chance of a wrap, |x·y| / 2^k per output, below 2^-16 · k_inner.
pub fn fixed_point<R: IntRing, S: Party<R, B>, B: TestBase>(sc: &Scheme<S, B>) {
    let at = label::<R, S>();
    let parties = &sc.parties();
    let d = R::BITS / 4;
    let bits = (R::BITS - 16) / 2;
    let small = |seed, n| -> Vec<R> {
        let shift = 64 - bits - 1;
        random_words(seed, n).into_iter().map(|w| R::from_i64((w as i64) >> shift)).collect()
    };
    let top = 1i64 << bits;
    let range_edges = [0, 1, -1, top - 1, -top].map(R::from_i64);
    let (x, y) = pairs(&range_edges, |i| small(40 + i, 16));
    let (x, y) = (&x, &y);
    let dims @ (m, k, n) = SHAPES[3];
    let (a, b) = (&small(42, m * k), &small(43, k * n));
    let outs = run(sc, &at, 44, |mut s| async move {
        let vx = input_now(&mut s, PartyId(1), x).await?;
        let vy = input_now(&mut s, PartyId(2), y).await?;
        let va = input_now(&mut s, PartyId(0), a).await?;
        let vb = input_now(&mut s, PartyId(1), b).await?;
        let (pm, _) = s.mul_prep(&S::tag(&vx), &S::tag(&vy), d).await?;
        let (psq, _) = s.mul_prep(&S::tag(&vx), &S::tag(&vx), d).await?;
        let (pmm, _) = s.matmul_prep(&S::tag(&va), &S::tag(&vb), dims, d).await?;
        let xy = s.mul(&vx, &vy, pm).await?;
        let xx = s.mul(&vx, &vx, psq).await?;
        let ab = s.matmul(&va, &vb, dims, pmm).await?;
        Ok([s.open(xy).await?, s.open(xx).await?, s.open(ab).await?])
    });
    let wide = |v: &R| i128::from(v.to_i64());
    let floor_mul = |x: &[R], y: &[R]| -> Vec<i128> {
        x.iter().zip(y).map(|(p, q)| (wide(p) * wide(q)) >> d).collect()
    };
    let mut floor_ab = vec![0i128; m * n];
    for (o, f) in floor_ab.iter_mut().enumerate() {
        let (i, j) = (o / n, o % n);
        *f = (0..k).map(|t| wide(&a[i * k + t]) * wide(&b[t * n + j])).sum::<i128>() >> d;
    }
    let floors = [floor_mul(x, y), floor_mul(x, x), floor_ab];
    for (me, results) in parties.iter().zip(&outs) {
        for ((what, got), floor) in ["x·y", "x·x", "a·b"].iter().zip(results).zip(&floors) {
            assert_eq!(got.len(), floor.len(), "{at}: {what} at {me}");
            for (e, (g, f)) in got.iter().zip(floor).enumerate() {
                let below = f - wide(g);
                assert!(
                    below == 0 || below == 1,
                    "{at}: fixed-point {what}[{e}] at {me} is {}, the floor {f}",
                    wide(g)
                );
            }
        }
    }
}

/// Every [`Linear`] operation, with a public constant from [`Arith::constant`](crate::sharing::Arith::constant), on random and
/// edge values: the opened result is the same combination of the plain values.
pub fn linear<R: IntRing, S: Party<R, B>, B: TestBase>(sc: &Scheme<S, B>) {
    let at = label::<R, S>();
    let parties = &sc.parties();
    let (x, y, c) = (values::<R>(50, 11), values::<R>(51, 11), values::<R>(52, 11));
    let (x, y, c) = (&x, &y, &c);
    let outs = run(sc, &at, 53, |mut s| async move {
        let vx = input_now(&mut s, PartyId(1), x).await?;
        let vy = input_now(&mut s, PartyId(2), y).await?;
        let vc = s.constant(c);
        s.open(combine(&vx, &vy, &vc)?).await
    });
    let want = combine(x, y, c).unwrap_or_else(|e| panic!("{at}: plain combination: {e}"));
    for (me, got) in parties.iter().zip(&outs) {
        assert_eq!(got, &want, "{at}: linear combination at {me}");
    }
}

/// A whole computation set up before any input exists, each preparation made from tags that
/// earlier preparations (or linear operations on tags) produced, then run online:
/// `f = (combine(x·y, x, c) · x) ⊗ w` (`⊗` a matrix product), exact.
pub fn chaining<R: IntRing, S: Party<R, B>, B: TestBase>(sc: &Scheme<S, B>) {
    let at = label::<R, S>();
    let parties = &sc.parties();
    let dims @ (m, k, n) = SHAPES[1];
    let len = m * k;
    let (x, y, c) = (values::<R>(60, len - 5), values::<R>(61, len - 5), values::<R>(62, len - 5));
    let w: Vec<R> = random(63, k * n);
    let (x, y, c, w) = (&x, &y, &c, &w);
    let outs = run(sc, &at, 64, |mut s| async move {
        let (px, tx) = s.input_prep(PartyId(0), len);
        let (py, ty) = s.input_prep(PartyId(1), len);
        let (pw, tw) = s.input_prep(PartyId(2), k * n);
        let vc = s.constant(c);
        let (pa, ta) = s.mul_prep(&tx, &ty, 0).await?;
        let tb = combine(&ta, &tx, &S::tag(&vc))?;
        let (pe, te) = s.mul_prep(&tb, &tx, 0).await?;
        let (pf, tf) = s.matmul_prep(&te, &tw, dims, 0).await?;
        let tag_lens = [ta.len(), tb.len(), te.len(), tf.len()];
        // Online.
        let me = s.me();
        let vx = s.input(PartyId(0), (me == PartyId(0)).then_some(&x[..]), px).await?;
        let vy = s.input(PartyId(1), (me == PartyId(1)).then_some(&y[..]), py).await?;
        let vw = s.input(PartyId(2), (me == PartyId(2)).then_some(&w[..]), pw).await?;
        let a = s.mul(&vx, &vy, pa).await?;
        let b = combine(&a, &vx, &vc)?;
        let e = s.mul(&b, &vx, pe).await?;
        let f = s.matmul(&e, &vw, dims, pf).await?;
        Ok((tag_lens, s.open(f).await?))
    });
    let b = combine(&plain_mul(x, y), x, c).unwrap_or_else(|e| panic!("{at}: plain: {e}"));
    let want = plain_matmul(&plain_mul(&b, x), w, dims);
    for (me, (tag_lens, got)) in parties.iter().zip(&outs) {
        assert_eq!(tag_lens, &[len, len, len, m * n], "{at}: tags' lengths at {me}");
        assert_eq!(got, &want, "{at}: chained computation at {me}");
    }
}
