//! The suites of [`Boolean`] schemes: bits and conversions, comparisons, selections and maxima
//! against plaintext on random and edge values, their costs, and misuse.

use super::{edges, input_now, label, random, run, stats_of, Party, Scheme, TestBase};
use crate::net::{PartyId, Stats};
use crate::ring::IntRing;
use crate::sharing::{eq_by_bits, Bitwise, Boolean, Linear, Store};
use crate::Error;

/// What one party sends per value in one boolean operation, in bits, and the rounds it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitCost {
    /// Bits sent per value, by party (P0, P1, …: one entry per party of the roster).
    pub bits: Vec<u64>,
    /// Rounds.
    pub rounds: u64,
}

impl BitCost {
    fn then(&self, o: &Self) -> Self {
        let bits = self.bits.iter().zip(&o.bits).map(|(a, b)| a + b).collect();
        Self { bits, rounds: self.rounds + o.rounds }
    }

    /// `count` runs of the same operation batched together: the bits add, the rounds do not.
    fn batched(&self, count: u64) -> Self {
        Self { bits: self.bits.iter().map(|b| b * count).collect(), rounds: self.rounds }
    }
}

/// A [`Boolean`] scheme's costs for a ring of `k` bits, as functions of `k`: the figures of its
/// documentation, as data. The comparisons built on these primitives cost what their
/// definitions add up to, and [`bit_costs`] checks that too.
#[derive(Debug, Clone, Copy)]
pub struct BitCostModel {
    /// One AND.
    pub and: fn(u32) -> BitCost,
    /// The most significant bit.
    pub msb: fn(u32) -> BitCost,
    /// Equality.
    pub eq: fn(u32) -> BitCost,
    /// Bit injection.
    pub b2a: fn(u32) -> BitCost,
    /// A bit times one ring element.
    pub bit_mul: fn(u32) -> BitCost,
}

/// Plain signed `x < 0`.
fn neg<R: IntRing>(x: R) -> bool {
    x.to_i64() < 0
}

/// `n` random values over the whole ring, `n` small ones (so that comparisons are not decided
/// by the sign alone), then the edges.
fn mixed<R: IntRing>(seed: u64, n: usize) -> Vec<R> {
    let mut v = random::<R>(seed, n);
    let small = random::<R>(seed + 1, n).into_iter().map(|x| R::from_i64(x.to_i64() >> 8));
    v.extend(small);
    v.extend(edges::<R>());
    v
}

/// Operand pairs: random and small values with some ties, then every pair of edges.
fn pairs<R: IntRing>(seed: u64) -> (Vec<R>, Vec<R>) {
    let (mut x, mut y) = (mixed::<R>(seed, 60), mixed::<R>(seed + 2, 60));
    y[..8].copy_from_slice(&x[..8]);
    y[60..64].copy_from_slice(&x[60..64]);
    for a in edges::<R>() {
        for b in edges::<R>() {
            x.push(a);
            y.push(b);
        }
    }
    (x, y)
}

/// A2B, B2A, AND, multi-input AND, XOR and NOT against plaintext: the bits of every value
/// reassemble it, and bits derived from signs combine as plain booleans do.
pub fn bits_and_conversions<R: IntRing, S: Party<R, B> + Boolean<R>, B: TestBase>(
    sc: &Scheme<S, B>,
) {
    let at = label::<R, S>();
    let (x, y) = pairs::<R>(200);
    let (z, _) = pairs::<R>(205);
    let n = x.len();
    let outs = run(sc, &at, 204, |mut s| {
        let (x, y, z) = (x.clone(), y.clone(), z.clone());
        async move {
            let bits = s.bit_prep(n).await?;
            let (vx, vy, vz) = (
                input_now(&mut s, PartyId(0), &x).await?,
                input_now(&mut s, PartyId(1), &y).await?,
                input_now(&mut s, PartyId(2), &z).await?,
            );
            let planes = s.a2b(&vx).await?;
            let mut opened = Vec::new();
            for p in planes {
                opened.push(s.open_bits(p).await?);
            }
            let mut m = s.msb_many(&[&vx, &vy, &vz]).await?.into_iter();
            let (Some(mx), Some(my), Some(mz)) = (m.next(), m.next(), m.next()) else {
                return Err(Error::ApiMisuse("msb_many lost a vector".into()));
            };
            let injected = s.b2a(&mx, bits).await?;
            let and = s.and(&mx, &my).await?;
            let all = s.and_many(&[&mx, &my, &mz]).await?;
            let one = s.and_many(&[&mx]).await?;
            let xnor = mx.xor(&my)?.not();
            Ok((
                opened,
                s.open(injected).await?,
                s.open_bits(and).await?,
                s.open_bits(all).await?,
                s.open_bits(one).await?,
                s.open_bits(xnor).await?,
            ))
        }
    });
    for (i, (planes, injected, and, all, one, xnor)) in outs.into_iter().enumerate() {
        assert_eq!(planes.len(), R::BITS as usize, "{at}: a2b gives one vector per bit");
        for (j, &v) in x.iter().enumerate() {
            let back = planes.iter().rev().fold(0u64, |acc, p| (acc << 1) | u64::from(p[j]));
            assert_eq!(R::from_u64(back), v, "{at}: P{i}: a2b of {v:?}");
            assert_eq!(injected[j], R::from_u64(u64::from(neg(v))), "{at}: P{i}: b2a of msb");
            assert_eq!(and[j], neg(v) && neg(y[j]), "{at}: P{i}: and at {j}");
            assert_eq!(all[j], neg(v) && neg(y[j]) && neg(z[j]), "{at}: P{i}: and_many at {j}");
            assert_eq!(one[j], neg(v), "{at}: P{i}: and_many of one vector");
            assert_eq!(xnor[j], neg(v) == neg(y[j]), "{at}: P{i}: ¬(a ⊕ b) at {j}");
        }
    }
}

/// `ltz`, `lt` (signed, exact on the whole ring), `eq` (the scheme's and the generic
/// [`eq_by_bits`]) and `lt_bounded` (on operands whose difference fits the ring) against
/// plaintext, with ties and every pair of edges.
pub fn comparisons<R: IntRing, S: Party<R, B> + Boolean<R>, B: TestBase>(sc: &Scheme<S, B>) {
    let at = label::<R, S>();
    let (x, y) = pairs::<R>(210);
    let quarter = |v: &[R]| -> Vec<R> { v.iter().map(|a| R::from_i64(a.to_i64() >> 2)).collect() };
    let (bx, by) = (quarter(&x), quarter(&y));
    let outs = run(sc, &at, 211, |mut s| {
        let (x, y, bx, by) = (x.clone(), y.clone(), bx.clone(), by.clone());
        async move {
            let (vx, vy) = (
                input_now(&mut s, PartyId(0), &x).await?,
                input_now(&mut s, PartyId(2), &y).await?,
            );
            let (vbx, vby) = (
                input_now(&mut s, PartyId(1), &bx).await?,
                input_now(&mut s, PartyId(0), &by).await?,
            );
            let ltz = s.ltz(&vx).await?;
            let lt = s.lt(&vx, &vy).await?;
            let eq = s.eq(&vx, &vy).await?;
            let eq_generic = eq_by_bits(&mut s, &vx, &vy).await?;
            let bounded = s.lt_bounded(&vbx, &vby).await?;
            Ok([
                s.open_bits(ltz).await?,
                s.open_bits(lt).await?,
                s.open_bits(eq).await?,
                s.open_bits(eq_generic).await?,
                s.open_bits(bounded).await?,
            ])
        }
    });
    for (i, [ltz, lt, eq, eq_generic, bounded]) in outs.into_iter().enumerate() {
        for j in 0..x.len() {
            let (a, b) = (x[j], y[j]);
            assert_eq!(ltz[j], neg(a), "{at}: P{i}: ltz {a:?}");
            assert_eq!(lt[j], a < b, "{at}: P{i}: lt {a:?} {b:?}");
            assert_eq!(eq[j], a == b, "{at}: P{i}: eq {a:?} {b:?}");
            assert_eq!(eq_generic[j], a == b, "{at}: P{i}: eq_by_bits {a:?} {b:?}");
            assert_eq!(bounded[j], bx[j] < by[j], "{at}: P{i}: lt_bounded {:?} {:?}", bx[j], by[j]);
        }
    }
}

/// `select`, `relu`, `max`, the maxima of windows (sizes 1 to 5, with ties and the extremes)
/// and `argmax` (ties to the lowest index) against plaintext; each takes exactly its material.
pub fn selections<R: IntRing, S: Party<R, B> + Boolean<R>, B: TestBase>(sc: &Scheme<S, B>) {
    let at = label::<R, S>();
    let (x, y) = pairs::<R>(220);
    let n = x.len();
    let [_, _, _, lo, hi] = edges::<R>();
    let w: Vec<R> = [5i64, -3, 7, 7, 0, -1, -2, 9, 4, 9].map(R::from_i64).to_vec();
    let w: Vec<R> = w.into_iter().chain([lo, hi, R::from_i64(3), R::from_i64(3), hi]).collect();
    let windows: Vec<Vec<usize>> =
        vec![vec![0], vec![1, 2], vec![3, 4, 5], vec![6, 7, 8, 9], vec![10, 11, 12, 13, 14]];
    // Σ (|window| − 1) for the windows, rows·(len − 1) for argmax over 3 rows of 5; the
    // bounded forms on the first ten values (the first four windows, two rows of 5): 6 and 8.
    let (for_windows, for_argmax) = (10 + 6, 12 + 8);
    let outs = run(sc, &at, 221, |mut s| {
        let (x, y, w, windows) = (x.clone(), y.clone(), w.clone(), windows.clone());
        async move {
            let mut store = s.bit_prep(3 * n + for_windows + for_argmax + 1).await?;
            let (vx, vy, vw) = (
                input_now(&mut s, PartyId(1), &x).await?,
                input_now(&mut s, PartyId(2), &y).await?,
                input_now(&mut s, PartyId(0), &w).await?,
            );
            let c = s.lt(&vx, &vy).await?;
            let sel = s.select(&c, &vx, &vy, store.take(n)?).await?;
            let relu = s.relu(&vx, store.take(n)?).await?;
            let max = s.max(&vx, &vy, store.take(n)?).await?;
            let win = s.max_windows(&vw, &windows, &mut store).await?;
            let arg = s.argmax(&vw, 5, &mut store).await?;
            let small = vw.slice(0..10);
            let win_b = s.max_windows_bounded(&small, &windows[..4], &mut store).await?;
            let arg_b = s.argmax_bounded(&small, 5, &mut store).await?;
            let left = store.len();
            Ok((
                [s.open(sel).await?, s.open(relu).await?, s.open(max).await?],
                [s.open(win).await?, s.open(win_b).await?],
                [s.open(arg).await?, s.open(arg_b).await?],
                left,
            ))
        }
    });
    let plain_win: Vec<R> = windows.iter().filter_map(|v| v.iter().map(|&i| w[i]).max()).collect();
    let plain_arg: Vec<R> = w
        .chunks(5)
        .map(|row| {
            let best = row.iter().copied().max().unwrap_or(R::ZERO);
            R::from_u64(row.iter().position(|&v| v == best).unwrap_or(0) as u64)
        })
        .collect();
    for (i, ([sel, relu, max], [win, win_b], [arg, arg_b], left)) in outs.into_iter().enumerate() {
        assert_eq!(left, 1, "{at}: P{i}: the operations took other than their material");
        for j in 0..n {
            let (a, b) = (x[j], y[j]);
            assert_eq!(sel[j], if a < b { a } else { b }, "{at}: P{i}: select {a:?} {b:?}");
            assert_eq!(relu[j], if neg(a) { R::ZERO } else { a }, "{at}: P{i}: relu {a:?}");
            assert_eq!(max[j], a.max(b), "{at}: P{i}: max {a:?} {b:?}");
        }
        assert_eq!(win, plain_win, "{at}: P{i}: maxima of windows");
        assert_eq!(arg, plain_arg, "{at}: P{i}: argmax");
        assert_eq!(win_b, plain_win[..4], "{at}: P{i}: bounded maxima of windows");
        assert_eq!(arg_b, plain_arg[..2], "{at}: P{i}: bounded argmax");
    }
}

/// The counters of every primitive and of the comparisons built on them equal the scheme's
/// [`BitCostModel`], at every party (128 values, so that packed bits fill whole words).
pub fn bit_costs<R: IntRing, S: Party<R, B> + Boolean<R>, B: TestBase>(sc: &Scheme<S, B>) {
    let at = label::<R, S>();
    let Some(model) = sc.boolean else {
        panic!("{at}: the scheme's description has no boolean cost model");
    };
    let k = R::BITS;
    let parties = sc.roster.n();
    let primitives = [
        ("and", model.and),
        ("msb", model.msb),
        ("eq", model.eq),
        ("b2a", model.b2a),
        ("bit_mul", model.bit_mul),
    ];
    for (what, cost) in primitives {
        let entries = cost(k).bits.len();
        assert_eq!(
            entries, parties,
            "{at}: the boolean cost model's `{what}` gives bits for {entries} parties, but the \
             scheme's roster has {parties} (one entry per party)"
        );
    }
    let n = 128;
    let (x, y) = (random::<R>(230, n), random::<R>(231, n));
    let stats = stats_of::<B, S>;
    let outs = run(sc, &at, 232, |mut s| {
        let (x, y) = (x.clone(), y.clone());
        async move {
            let mut store = s.bit_prep(4 * n).await?;
            let vx = input_now(&mut s, PartyId(0), &x).await?;
            let vy = input_now(&mut s, PartyId(1), &y).await?;
            let bx = s.ltz(&vx).await?;
            let by = s.ltz(&vy).await?;
            let mut measured: Vec<(&str, Stats)> = Vec::new();
            let mut before = stats(&s);
            let mut note = |what, s: &S| {
                let now = stats(s);
                measured.push((what, now - before));
                before = now;
            };
            s.and(&bx, &by).await?;
            note("and", &s);
            s.msb_many(&[&vx]).await?;
            note("msb", &s);
            s.eq(&vx, &vy).await?;
            note("eq", &s);
            s.b2a(&bx, store.take(n)?).await?;
            note("b2a", &s);
            s.bit_mul_many(&bx, &[&vx], store.take(n)?).await?;
            note("bit_mul", &s);
            s.lt(&vx, &vy).await?;
            note("lt", &s);
            s.relu(&vx, store.take(n)?).await?;
            note("relu", &s);
            s.max(&vx, &vy, store.take(n)?).await?;
            note("max", &s);
            Ok(measured)
        }
    });
    let msb = (model.msb)(k);
    let lt = msb.batched(3).then(&(model.and)(k));
    let expect = |what: &str| -> BitCost {
        match what {
            "and" => (model.and)(k),
            "msb" => msb.clone(),
            "eq" => (model.eq)(k),
            "b2a" => (model.b2a)(k),
            "bit_mul" => (model.bit_mul)(k),
            "lt" => lt.clone(),
            "relu" => msb.then(&(model.bit_mul)(k)),
            _ => lt.then(&(model.bit_mul)(k)),
        }
    };
    for (i, measured) in outs.into_iter().enumerate() {
        for (what, got) in measured {
            let c = expect(what);
            let bytes = c.bits[i] * n as u64 / 8;
            assert_eq!(
                (got.payload_bytes_sent, got.rounds),
                (bytes, c.rounds),
                "{at}: P{i}: {what} on {n} values (payload bytes, rounds)"
            );
        }
    }
}

/// Material and operands that do not fit are refused with an error, not used: too little
/// material, material for another length, bits and values of other lengths, windows out of
/// range and rows that do not divide. The session then still computes a correct ReLU.
pub fn bit_misuse<R: IntRing, S: Party<R, B> + Boolean<R>, B: TestBase>(sc: &Scheme<S, B>) {
    let at = label::<R, S>();
    let x = random::<R>(240, 6);
    let outs = run(sc, &at, 241, |mut s| {
        let x = x.clone();
        async move {
            let mut store = s.bit_prep(20).await?;
            let vx = input_now(&mut s, PartyId(0), &x).await?;
            let v5 = vx.slice(0..5);
            let bx = s.ltz(&vx).await?;
            let b5 = bx.slice(0..5);
            let too_much = store.take(21).err();
            let short_prep = s.bit_mul_many(&bx, &[&vx], store.take(5)?).await.err();
            let other_len = s.bit_mul_many(&b5, &[&vx], store.take(5)?).await.err();
            let and_len = s.and(&bx, &b5).await.err();
            let lt_len = s.lt(&vx, &v5).await.err();
            let window = s.max_windows(&vx, &[vec![0, 6]], &mut store).await.err();
            let rows = s.argmax(&vx, 4, &mut store).await.err();
            let relu = s.relu(&vx, store.take(6)?).await?;
            let refused = [too_much, short_prep, other_len, and_len, lt_len, window, rows];
            Ok((refused, store.len(), s.open(relu).await?))
        }
    });
    let what = [
        "21 units from a store of 20",
        "material for 5 bits used on 6",
        "6 values times 5 bits",
        "an AND of 6 and 5 bits",
        "a comparison of 6 and 5 values",
        "a window past the end",
        "argmax over rows of 4 in 6 values",
    ];
    let plain: Vec<R> = x.iter().map(|&a| if neg(a) { R::ZERO } else { a }).collect();
    for (i, (refused, left, relu)) in outs.into_iter().enumerate() {
        for (e, w) in refused.iter().zip(what) {
            match e {
                Some(Error::ApiMisuse(_) | Error::PreprocessingExhausted(_)) => {}
                other => panic!("{at}: P{i}: {w}: expected a refusal, got {other:?}"),
            }
        }
        assert_eq!(left, 4, "{at}: P{i}: refused operations must not consume more material");
        assert_eq!(relu, plain, "{at}: P{i}: ReLU after the refusals");
    }
}
