//! spdz2k: results against plaintext among two parties (the conformance suites run it among
//! three and four), exact costs, and the MAC check's verdict on seeded tampering, replays and
//! drops by a corrupt party: every honest party aborts or holds the right answer, never a
//! wrong one, and never hangs.

use std::future::Future;

use ringfence_core::net::{frame, PartyId, Roster, Stats};
use ringfence_core::prg::{Prg, Seed};
use ringfence_core::ring::{IntRing, Z32, Z64};
use ringfence_core::sharing::{Arith, Len, Linear, Session};
use ringfence_core::spdz2k::apps::{self, PrivateTree};
use ringfence_core::spdz2k::{Auth, Mesh, Spdz2k, Spdz2kRing};
use ringfence_core::testing::faults::{self, Fault, Hit};
use ringfence_core::testing::{self, Action, Envelope, MemTransport, Net};
use ringfence_core::Error;

type Party = Spdz2k<MemTransport>;

use crate::common;
use common::{digits8, json_numbers, LOGREG, LOGREG_REF, TREE, TREE_REF};

fn values<R: IntRing>(seed: u64, n: usize) -> Vec<R> {
    let edges = [0i64, 1, -1, i64::MIN, i64::MAX].map(R::from_i64);
    let mut v: Vec<R> = edges.to_vec();
    v.extend(
        testing::random_words(seed, n.saturating_sub(edges.len())).into_iter().map(R::from_u64),
    );
    v.truncate(n);
    v
}

/// A product, a matrix product and a fixed-point product of P0's `x` and the last party's
/// `y`, opened to all, then `x·y` opened to P0 only.
async fn program<R: Spdz2kRing>(
    mut p: Party,
    x: Vec<R>,
    y: Vec<R>,
) -> Result<(Vec<R>, Vec<R>, Vec<R>, Option<Vec<R>>), Error> {
    let n = x.len();
    let last = PartyId(p.roster().n() as u8 - 1);
    let me = p.me();
    let (px, tx) = Arith::<R>::input_prep(&mut p, PartyId(0), n);
    let (py, ty) = Arith::<R>::input_prep(&mut p, last, n);
    let (pm, _) = Arith::<R>::mul_prep(&mut p, &tx, &ty, 0).await?;
    let (pm2, _) = Arith::<R>::mul_prep(&mut p, &tx, &ty, 0).await?;
    let dims = (2, n / 2, 1);
    let (pmm, _) = Arith::<R>::matmul_prep(&mut p, &tx, &Len(n / 2), dims, 0).await?;
    let (pf, _) = Arith::<R>::mul_prep(&mut p, &tx, &ty, 8).await?;
    let vx = p.input(PartyId(0), (me == PartyId(0)).then_some(&x[..]), px).await?;
    let vy = p.input(last, (me == last).then_some(&y[..]), py).await?;
    let z = p.mul(&vx, &vy, pm).await?;
    let z2 = p.mul(&vx, &vy, pm2).await?;
    let mm = p.matmul(&vx, &vy.slice(0..n / 2), dims, pmm).await?;
    let f = p.mul(&vx, &vy, pf).await?;
    let opened = p.open(Auth::concat(&[&z, &mm])).await?;
    let (zs, mms) = opened.split_at(n);
    let fixed = p.open(f).await?;
    let mine = p.open_to(PartyId(0), z2).await?;
    Ok((zs.to_vec(), mms.to_vec(), fixed, mine))
}

fn plain<R: IntRing>(x: &[R], y: &[R]) -> (Vec<R>, Vec<R>) {
    let z: Vec<R> = x.iter().zip(y).map(|(&a, &b)| a * b).collect();
    let h = x.len() / 2;
    let mm = (0..2).map(|i| (0..h).fold(R::ZERO, |acc, t| acc + x[i * h + t] * y[t])).collect();
    (z, mm)
}

fn two_parties_compute_like_plaintext<R: Spdz2kRing>() {
    let (x, y) = (values::<R>(1, 16), values::<R>(2, 16));
    // Small operands for the fixed-point product (its truncation needs |x·y| ≪ 2^k).
    let small = |v: &[R]| -> Vec<R> {
        v.iter().map(|w| R::from_i64(w.to_i64() >> (70 - R::BITS as i64 / 2).min(63))).collect()
    };
    let (xs, ys) = (small(&x), small(&y));
    for n in [2, 3] {
        let outs = testing::run_spdz2k(n, 5, |p| program::<R>(p, x.clone(), y.clone()));
        let (z, mm) = plain(&x, &y);
        for (i, o) in outs.iter().enumerate() {
            let (zs, mms, _, mine) = o.as_ref().unwrap_or_else(|e| panic!("P{i} of {n}: {e}"));
            assert_eq!((zs, mms), (&z, &mm), "P{i} of {n}");
            assert_eq!(mine.as_ref(), (i == 0).then_some(&z), "P{i} of {n}: open_to P0");
        }
        let outs = testing::run_spdz2k(n, 6, |p| program::<R>(p, xs.clone(), ys.clone()));
        for (i, o) in outs.iter().enumerate() {
            let (_, _, fixed, _) = o.as_ref().unwrap_or_else(|e| panic!("P{i} of {n}: {e}"));
            for (j, (&f, (a, b))) in fixed.iter().zip(xs.iter().zip(&ys)).enumerate() {
                let floor = (i128::from(a.to_i64()) * i128::from(b.to_i64())) >> 8;
                let below = floor - i128::from(f.to_i64());
                assert!(below == 0 || below == 1, "P{i} of {n}: fixed[{j}] = {f:?}, floor {floor}");
            }
        }
    }
}

#[test]
fn two_and_three_parties_compute_like_plaintext_z64() {
    two_and_three::<Z64>();
}

#[test]
fn two_and_three_parties_compute_like_plaintext_z32() {
    two_and_three::<Z32>();
}

fn two_and_three<R: Spdz2kRing>() {
    two_parties_compute_like_plaintext::<R>();
}

/// Exact costs among two parties: an input is `k` bits per value from its owner in one round;
/// a product `2k` bits per value in one round, checked later; an opening `k` bits per value
/// and the MAC check, a fixed 224 bytes in six rounds (coins committed, 32 B, and opened,
/// 64 B; the masked upper parts, 8 B per instance with openings; the check values, 16 B per
/// such instance, and the digest committed, 32 B, and opened, 80 B here; the verdict, 8 B).
#[test]
fn costs_among_two_parties_are_the_documented_ones() {
    const CHECK: u64 = 32 + 64 + 8 + 32 + 80 + 8;
    let n = 100usize;
    let outs = testing::run_spdz2k(2, 9, move |mut p| async move {
        let me = p.me();
        let x = vec![Z64(3); n];
        let mut marks = vec![p.ctx().stats()];
        let (px, t) = Arith::<Z64>::input_prep(&mut p, PartyId(0), n);
        let (pm, _) = Arith::<Z64>::mul_prep(&mut p, &t, &t, 0).await?;
        marks.push(p.ctx().stats());
        let vx = p.input(PartyId(0), (me == PartyId(0)).then_some(&x[..]), px).await?;
        marks.push(p.ctx().stats());
        let z = p.mul(&vx, &vx, pm).await?;
        marks.push(p.ctx().stats());
        let o = p.open(z).await?;
        marks.push(p.ctx().stats());
        assert_eq!(o, vec![Z64(9); n]);
        Ok(marks)
    });
    for (i, o) in outs.into_iter().enumerate() {
        let m = o.unwrap_or_else(|e| panic!("P{i}: {e}"));
        let d = |a: usize| -> Stats { m[a + 1] - m[a] };
        assert_eq!((d(0).payload_bytes_sent, d(0).rounds), (0, 0), "P{i}: setup sends nothing");
        let input = if i == 0 { 8 * n as u64 } else { 0 };
        assert_eq!((d(1).payload_bytes_sent, d(1).rounds), (input, 1), "P{i}: input");
        assert_eq!((d(2).payload_bytes_sent, d(2).rounds), (16 * n as u64, 1), "P{i}: product");
        assert_eq!((d(3).payload_bytes_sent, d(3).rounds), (8 * n as u64 + CHECK, 7), "P{i}: open");
    }
}

/// The parties' own matrix triples (random `[A]`, `[B]` and their product by elementwise
/// triples, all in preprocessing) make matrix products like plaintext, among two and three
/// parties at both widths, and every opening passes the MAC check.
#[test]
fn the_parties_matrix_triples_make_matrix_products() {
    fn run<R: Spdz2kRing>() {
        let (x, y) = (values::<R>(1, 16), values::<R>(2, 16));
        let (z, mm) = plain(&x, &y);
        for n in [2, 3] {
            let net = Net::new(n);
            let outs = testing::run_spdz2k_generating(&net, n, 4, |p| {
                program::<R>(p, x.clone(), y.clone())
            });
            for (i, o) in outs.iter().enumerate() {
                let (zs, mms, _, _) = o.as_ref().unwrap_or_else(|e| panic!("P{i} of {n}: {e}"));
                assert_eq!((zs, mms), (&z, &mm), "P{i} of {n}, k = {}", R::BITS);
            }
        }
    }
    run::<Z32>();
    run::<Z64>();
}

/// Material made by the parties themselves (OT, authentication, sacrifice), two and three
/// parties, k = s = 32 and 64: triples multiply mod 2^k, random bits are bits (both values
/// occur), input masks carry the input; every opening passes the MAC check, so the MACs are
/// valid.
#[test]
fn the_parties_own_material_is_correct_and_authenticated() {
    own_material::<Z32>(&[2, 3]);
    own_material::<Z64>(&[2, 3]);
}

fn own_material<R: Spdz2kRing>(sizes: &[usize]) {
    for &n in sizes {
        let net = Net::new(n);
        let outs = testing::run_spdz2k_generating(&net, n, 21, |mut p| async move {
            let me = p.me();
            let (pm, t) = Arith::<R>::mul_prep(&mut p, &Len(40), &Len(40), 0).await?;
            let (px, _) = Arith::<R>::input_prep(&mut p, PartyId(0), 40);
            let x: Vec<R> =
                (0..40u64).map(|i| R::from_u64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))).collect();
            let vx = p.input(PartyId(0), (me == PartyId(0)).then_some(&x[..]), px).await?;
            let sq = p.mul(&vx, &vx, pm).await?;
            let opened = p.open(Auth::concat(&[&vx, &sq])).await?;
            let triples = p.triples_for_test::<R>(t.0).await?;
            let bits = p.rand_bits_for_test::<R>(64).await?;
            let opened_bits = p.open(bits).await?;
            let [a, b, c] = triples;
            let abc = p.open(Auth::concat(&[&a, &b, &c])).await?;
            Ok((x, opened, abc, opened_bits))
        });
        let what = format!("{n} parties, k = {}", R::BITS);
        for (i, o) in outs.iter().enumerate() {
            let (x, opened, abc, bits) = o.as_ref().unwrap_or_else(|e| panic!("P{i}, {what}: {e}"));
            assert_eq!(&opened[..40], &x[..], "P{i}, {what}: the input");
            let sq: Vec<R> = x.iter().map(|&v| v * v).collect();
            assert_eq!(&opened[40..], &sq[..], "P{i}, {what}: the squares");
            let (a, rest) = abc.split_at(40);
            let (b, c) = rest.split_at(40);
            for j in 0..40 {
                assert_eq!(a[j] * b[j], c[j], "P{i}, {what}: triple {j}");
            }
            assert!(a.windows(2).any(|w| w[0] != w[1]), "random factors");
            assert!(bits.iter().all(|&b| b == R::ZERO || b == R::ONE), "P{i}, {what}: {bits:?}");
            let ones = bits.iter().filter(|&&b| b == R::ONE).count();
            assert!((8..=56).contains(&ones), "P{i}, {what}: {ones} ones in 64 random bits");
        }
    }
}

/// Bit triples from TinyOT, converted: `z = x·y` for every one, random factors, among two and
/// three parties under both keys, draws of fewer than a batch served from the stock.
#[test]
fn the_parties_bit_triples_multiply() {
    fn run<R: Spdz2kRing>(n: usize) {
        let net = Net::new(n);
        let outs = testing::run_spdz2k_generating(&net, n, 23, |mut p| async move {
            let first = p.bit_triples_for_test::<R>(300).await?;
            let second = p.bit_triples_for_test::<R>(5000).await?;
            Ok((first, second))
        });
        let what = format!("{n} parties, k = {}", R::BITS);
        let o0 = outs[0].as_ref().unwrap_or_else(|e| panic!("P0, {what}: {e}"));
        for (i, o) in outs.iter().enumerate() {
            let o = o.as_ref().unwrap_or_else(|e| panic!("P{i}, {what}: {e}"));
            assert_eq!(o, o0, "P{i}, {what}: the parties opened different bits");
        }
        for [x, y, z] in [&o0.0, &o0.1] {
            for j in 0..x.len() {
                assert_eq!(z[j], x[j] & y[j], "{what}: triple {j}");
            }
            for v in [x, y, z] {
                let ones = v.iter().filter(|&&b| b).count();
                let expect = if core::ptr::eq(v, z) { x.len() / 4 } else { x.len() / 2 };
                assert!(ones.abs_diff(expect) < x.len() / 10 + 10, "{what}: {ones} ones");
            }
        }
    }
    run::<Z32>(2);
    run::<Z64>(2);
    run::<Z32>(3);
}

/// A party that sends other half-AND bits or blocks than its shares make (as a flip on the
/// wire does) is caught by the leaky AND check before any triple is used.
#[test]
fn wrong_half_and_messages_fail_the_leaky_and_check() {
    // 4,096 outputs from 16,384 leaky ANDs: the message holds 256 words of bits, then blocks.
    let m = 16_384;
    let len = (m / 64 + 2 * m) * 8;
    for at in [0usize, m / 8 + 8] {
        let net = Net::new(2);
        net.set_hook(move |e: &mut Envelope| {
            if e.from == PartyId(1) && e.bytes.len() - frame::HEADER_LEN == len {
                // Eight bytes: every one of 64 bits flipped (or a block's half), so the
                // receiver's x is 1 under some of them.
                for b in &mut e.bytes[frame::HEADER_LEN + at..frame::HEADER_LEN + at + 8] {
                    *b ^= 0xff;
                }
            }
            Action::Deliver
        });
        let outs = testing::run_spdz2k_generating(&net, 2, 41, |mut p| async move {
            p.bit_triples_for_test::<Z32>(10).await
        });
        match &outs[0] {
            Err(Error::Abort { reason, .. }) => assert!(reason.contains("leaky AND"), "{reason}"),
            o => panic!("P0 went on after a wrong half-AND message at byte {at}: {o:?}"),
        }
    }
}

/// Runs `program` among `n` parties with `fault` on the `target`-th frame P1 sends (counted
/// over all its links in the order they are sent; `u64::MAX`: none). Returns the outcomes, the
/// number of frames P1 sent, and what the fault met.
fn faulty_run<O, Fut: Future<Output = Result<O, Error>>>(
    n: usize,
    program: &impl Fn(Party) -> Fut,
    target: u64,
    fault: Fault,
    generating: bool,
) -> (Vec<Result<O, Error>>, u64, Hit) {
    let net = Net::new(n);
    let injection = faults::inject(&net, PartyId(1), target, fault);
    let roster = Roster::new(n, n - 1).unwrap();
    let outs = if generating {
        testing::run_spdz2k_generating(&net, n, 11, program)
    } else {
        testing::run_base(&net, roster, n, 11, |_, base: Mesh<MemTransport>| {
            program(Spdz2k::start(base))
        })
    };
    (outs, injection.sent(), injection.hit())
}

/// `trials` seeded faults by P1 among 2 and 3 parties: each honest party aborts or holds
/// exactly the honest run's outputs; at least one honest party stops; and every one does
/// unless the fault hit a verdict, the last message of a check (a cheater can always make one
/// honest party stop and leave another with its correct output: there is no broadcast), or,
/// in the generation, a flipped bit met a zero private choice bit and changed nothing.
fn faults<R: Spdz2kRing>(trials: u64, seed: u64, generating: bool) {
    let (x, y) = (values::<R>(3, 8), values::<R>(4, 8));
    let small = |v: &[R]| -> Vec<R> { v.iter().map(|w| R::from_i64(w.to_i64() % 1000)).collect() };
    let (x, y) = (small(&x), small(&y));
    faults_in(trials, seed, generating, &|p| program::<R>(p, x.clone(), y.clone()));
}

/// [`faults`] of any program.
fn faults_in<O, Fut>(trials: u64, seed: u64, generating: bool, program: &impl Fn(Party) -> Fut)
where
    O: PartialEq + core::fmt::Debug,
    Fut: Future<Output = Result<O, Error>>,
{
    let mut prg = Prg::new(&Seed::from_bytes([0x7e; 32]), seed, 0);
    let (mut harmless, mut trials_run) = (0, 0);
    for n in [2, 3] {
        let (honest, frames, _) = faulty_run(n, program, u64::MAX, Fault::Drop, generating);
        let honest: Vec<O> =
            honest.into_iter().map(|o| o.expect("the honest run completes")).collect();
        for t in 0..trials / 2 {
            let target = prg.next_u64() % frames;
            let fault = Fault::draw(&mut prg);
            let (outs, _, hit) = faulty_run(n, program, target, fault, generating);
            trials_run += 1;
            if !hit.met {
                // An empty frame (nothing to change): the run must be the honest one.
                assert!(outs.iter().zip(&honest).all(|(o, h)| o.as_ref().is_ok_and(|o| o == h)));
                continue;
            }
            let mut stopped = 0;
            for (i, (o, h)) in outs.iter().zip(&honest).enumerate().filter(|(i, _)| *i != 1) {
                match o {
                    Ok(o) => assert_eq!(
                        o, h,
                        "trial {t} ({n} parties, frame {target}, {fault:?}): P{i}'s output"
                    ),
                    Err(_) => stopped += 1,
                }
            }
            let honest_parties = n - 1;
            // In the generation, many bits meet a private choice bit and change nothing where it
            // is 0 (an extension's column where the sender's bit of Δ is 0, KOS's inherent
            // case; an OT product's correlation where the receiver's bit is 0, the selective
            // failure the triples' combination absorbs; a vector OLE element where the key
            // holder's bit of α is 0): such a flip leaves every output as it was.
            let untouched = outs.iter().zip(&honest).all(|(o, h)| o.as_ref().is_ok_and(|o| o == h));
            if generating && hit.flipped && untouched {
                harmless += 1;
            } else if hit.verdict {
                assert!(
                    stopped >= 1,
                    "trial {t} ({n} parties, frame {target}, {fault:?}): nobody stopped"
                );
            } else {
                assert_eq!(
                    stopped, honest_parties,
                    "trial {t} ({n} parties, frame {target} of {} bytes, {fault:?}): an honest party went on: {outs:?}", hit.len
                );
            }
        }
    }
    // Harmless flips only meet zero choice bits in those frames, a fraction of the trials.
    assert!(harmless * 4 < trials_run, "{harmless} of {trials_run} faults changed nothing");
}

#[test]
fn faults_by_a_corrupt_party_end_in_aborts_z64() {
    faults::<Z64>(5000, 1, false);
}

#[test]
fn faults_by_a_corrupt_party_end_in_aborts_z32() {
    faults::<Z32>(5000, 2, false);
}

/// The same with the parties' own material: the faults also meet the base OTs, the OT
/// extension and its check, the vector OLE, the authentication check and the sacrifices.
#[test]
fn faults_in_the_parties_generation_end_in_aborts() {
    faults::<Z32>(if common::UNDER_WASM { 24 } else { 160 }, 3, true);
}

/// The same in the generation of bit triples: base OTs, the extensions, the half-ANDs, the
/// leaky AND check, the bucketing's openings and the conversion with its checks.
#[test]
fn faults_in_the_bit_triples_generation_end_in_aborts() {
    let program = |mut p: Party| async move { p.bit_triples_for_test::<Z32>(20).await };
    faults_in(if common::UNDER_WASM { 24 } else { 160 }, 4, true, &program);
}

/// Comparisons among two parties, the paper's setting: the MSB, ReLU, exact `<`, equality and
/// argmax against plaintext on edge and random values, with the dealer's material at both
/// widths and with the parties' own at k = 32.
async fn comparisons<R: Spdz2kRing>(
    mut p: Party,
    x: Vec<R>,
    y: Vec<R>,
) -> Result<Vec<Vec<R>>, Error> {
    use ringfence_core::sharing::{Bitwise, Boolean, Gates};
    let n = x.len();
    let me = p.me();
    let (px, _) = Arith::<R>::input_prep(&mut p, PartyId(0), n);
    let (py, _) = Arith::<R>::input_prep(&mut p, PartyId(1), n);
    let vx = p.input(PartyId(0), (me == PartyId(0)).then_some(&x[..]), px).await?;
    let vy = p.input(PartyId(1), (me == PartyId(1)).then_some(&y[..]), py).await?;
    let ltz = Boolean::<R>::ltz(&mut p, &vx).await?;
    let lt = Boolean::<R>::lt(&mut p, &vx, &vy).await?;
    let eq = Boolean::<R>::eq(&mut p, &vx, &vx.slice(0..n).add(&vy.sub(&vy)?)?).await?;
    let bits = Boolean::<R>::bit_prep(&mut p, n).await?;
    let relu = p.relu(&vx, bits).await?;
    let mut store = Boolean::<R>::bit_prep(&mut p, n - n / 4).await?;
    let arg = p.argmax(&vx, 4, &mut store).await?;
    let all = ringfence_core::spdz2k::boolean::AuthBits::concat(&[&ltz, &lt, &eq]);
    let opened_bits = p.open_bits(all).await?;
    let as_ring = |b: &[bool]| b.iter().map(|&b| R::from_u64(u64::from(b))).collect::<Vec<R>>();
    Ok(vec![
        as_ring(&opened_bits[..n]),
        as_ring(&opened_bits[n..2 * n]),
        as_ring(&opened_bits[2 * n..]),
        p.open(relu).await?,
        p.open(arg).await?,
    ])
}

fn check_comparisons<R: Spdz2kRing>(
    outs: Vec<Result<Vec<Vec<R>>, Error>>,
    x: &[R],
    y: &[R],
    what: &str,
) {
    let b = |v: bool| R::from_u64(u64::from(v));
    let want_ltz: Vec<R> = x.iter().map(|v| b(v.msb())).collect();
    let want_lt: Vec<R> = x.iter().zip(y).map(|(a, c)| b(signed(*a) < signed(*c))).collect();
    let want_relu: Vec<R> = x.iter().map(|&v| if v.msb() { R::ZERO } else { v }).collect();
    let want_arg: Vec<R> = x
        .chunks(4)
        .map(|row| {
            let best =
                (0..row.len())
                    .fold(0, |bi, i| if signed(row[i]) > signed(row[bi]) { i } else { bi });
            R::from_u64(best as u64)
        })
        .collect();
    for (i, o) in outs.into_iter().enumerate() {
        let o = o.unwrap_or_else(|e| panic!("{what}: P{i}: {e}"));
        assert_eq!(o[0], want_ltz, "{what}: P{i} ltz");
        assert_eq!(o[1], want_lt, "{what}: P{i} lt");
        assert!(o[2].iter().all(|&v| v == R::ONE), "{what}: P{i} eq");
        assert_eq!(o[3], want_relu, "{what}: P{i} relu");
        assert_eq!(o[4], want_arg, "{what}: P{i} argmax");
    }
}

fn signed<R: IntRing>(v: R) -> i128 {
    if R::BITS == 64 {
        i128::from(v.to_i64())
    } else {
        i128::from(v.to_i64() as i32)
    }
}

fn comparison_values<R: IntRing>(seed: u64) -> (Vec<R>, Vec<R>) {
    let mut x = values::<R>(seed, 16);
    // Ties in the argmax rows, and equal operands.
    x[8] = R::from_i64(5);
    x[9] = R::from_i64(5);
    let mut y = values::<R>(seed + 1, 16);
    y[0] = x[0];
    y[5] = x[5];
    (x, y)
}

#[test]
fn comparisons_among_two_parties_with_the_dealers_material() {
    let (x, y) = comparison_values::<Z64>(30);
    let outs = testing::run_spdz2k(2, 31, |p| comparisons::<Z64>(p, x.clone(), y.clone()));
    check_comparisons(outs, &x, &y, "Z64, dealer");
    let (x, y) = comparison_values::<Z32>(32);
    let outs = testing::run_spdz2k(2, 33, |p| comparisons::<Z32>(p, x.clone(), y.clone()));
    check_comparisons(outs, &x, &y, "Z32, dealer");
}

#[test]
fn comparisons_among_two_parties_with_their_own_material() {
    let (x, y) = comparison_values::<Z32>(34);
    let net = Net::new(2);
    let outs = testing::run_spdz2k_generating(&net, 2, 35, |p| {
        comparisons::<Z32>(p, x.clone(), y.clone())
    });
    check_comparisons(outs, &x, &y, "Z32, own material");
    if common::UNDER_WASM {
        return; // k = 64 runs the same code natively
    }
    let (x, y) = comparison_values::<Z64>(36);
    let net = Net::new(2);
    let outs = testing::run_spdz2k_generating(&net, 2, 37, |p| {
        comparisons::<Z64>(p, x.clone(), y.clone())
    });
    check_comparisons(outs, &x, &y, "Z64, own material");
}

/// A random tree of `depth` levels over `features` features, small signed values.
fn random_tree<R: IntRing>(depth: usize, features: usize, seed: u64) -> PrivateTree<R> {
    let m = (1usize << depth) - 1;
    let w = testing::random_words(seed, 3 * m + 2);
    PrivateTree {
        depth,
        features,
        feature: (0..m).map(|j| (w[j] % features as u64) as usize).collect(),
        threshold: (0..m).map(|j| R::from_i64((w[m + j] % 200) as i64 - 100)).collect(),
        leaf: (0..=m).map(|j| R::from_i64(w[2 * m + j % (m + 1)] as i64 % 1000)).collect(),
    }
}

fn small_features<R: IntRing>(n: usize, seed: u64) -> Vec<R> {
    testing::random_words(seed, n)
        .into_iter()
        .map(|w| R::from_i64((w % 200) as i64 - 100))
        .collect()
}

/// The paper's private decision trees, two parties (P0 owns the tree, P1 the features): the
/// client's answer equals the plaintext tree's on random trees and inputs, with the dealer's
/// material at both widths and with the parties' own at k = 32; P0 and nobody else learns
/// nothing (it gets `None`).
#[test]
fn private_trees_answer_like_the_plaintext_tree() {
    fn run<R: Spdz2kRing>(own: bool, depth: usize, features: usize, seed: u64) {
        let tree = random_tree::<R>(depth, features, seed);
        let x = small_features::<R>(features, seed + 1);
        let want = tree.eval_plain(&x);
        let program = |mut p: Party| {
            let (tree, x) = (tree.clone(), x.clone());
            async move {
                let me = p.me();
                let model = (me == PartyId(0)).then_some(&tree);
                let xs = (me == PartyId(1)).then_some(&x[..]);
                apps::tree(&mut p, (PartyId(0), PartyId(1)), (depth, features), model, xs).await
            }
        };
        let outs = if own {
            testing::run_spdz2k_generating(&Net::new(2), 2, seed, program)
        } else {
            testing::run_spdz2k(2, seed, program)
        };
        let what = format!("depth {depth}, {features} features, {} bits, own {own}", R::BITS);
        assert_eq!(outs[0].as_ref().unwrap_or_else(|e| panic!("{what}: P0: {e}")), &None, "{what}");
        assert_eq!(
            outs[1].as_ref().unwrap_or_else(|e| panic!("{what}: P1: {e}")),
            &Some(want),
            "{what}"
        );
    }
    for (depth, features, seed) in [(1, 3, 40), (2, 5, 41), (3, 8, 42), (5, 4, 43)] {
        run::<Z64>(false, depth, features, seed);
        run::<Z32>(false, depth, features, seed + 100);
    }
    run::<Z32>(true, 2, 5, 44);
}

/// An owner that changes any selector it inputs (here: one byte of its input message in the
/// selectors' part) makes every party abort, blaming it, before any comparison.
#[test]
fn a_tree_owner_whose_selectors_are_not_one_hot_is_caught() {
    let (depth, features) = (2, 4);
    let (m, leaves) = (3usize, 4usize);
    let tree = random_tree::<Z64>(depth, features, 50);
    let x = small_features::<Z64>(features, 51);
    for target in [0usize, 5, 11] {
        let net = Net::new(2);
        net.set_hook(move |e: &mut Envelope| {
            // P0's input message: thresholds, leaves, then m·features selectors, 8 bytes each.
            if e.from == PartyId(0) && e.index == 0 {
                e.bytes[frame::HEADER_LEN + 8 * (m + leaves + target) + 2] ^= 0x10;
            }
            Action::Deliver
        });
        let roster = Roster::new(2, 1).unwrap();
        let outs = testing::run_base(&net, roster, 2, 52, |me, base: Mesh<MemTransport>| {
            let (tree, x) = (tree.clone(), x.clone());
            async move {
                let mut p = Spdz2k::start(base);
                let model = (me == PartyId(0)).then_some(&tree);
                let xs = (me == PartyId(1)).then_some(&x[..]);
                apps::tree(&mut p, (PartyId(0), PartyId(1)), (depth, features), model, xs).await
            }
        });
        for (i, o) in outs.iter().enumerate() {
            assert!(
                matches!(o, Err(Error::Abort { .. })),
                "selector {target}: P{i} did not abort: {o:?}"
            );
        }
        assert!(
            matches!(&outs[1], Err(Error::Abort { blame: Some(PartyId(0)), .. })),
            "{:?}",
            outs[1]
        );
    }
}

/// The paper's SVM: the client's class equals the plaintext argmax of `F·x + b`.
#[test]
fn svms_answer_like_the_plaintext_argmax() {
    fn run<R: Spdz2kRing>(own: bool, q: usize, n: usize, seed: u64) {
        let f = small_features::<R>(q * n, seed);
        let b = small_features::<R>(q, seed + 1);
        let x = small_features::<R>(n, seed + 2);
        let scores: Vec<i64> = (0..q)
            .map(|j| {
                b[j].to_i64() + (0..n).map(|i| f[j * n + i].to_i64() * x[i].to_i64()).sum::<i64>()
            })
            .collect();
        let want = (0..q).fold(0, |bi, j| if scores[j] > scores[bi] { j } else { bi });
        let program = |mut p: Party| {
            let (f, b, x) = (f.clone(), b.clone(), x.clone());
            async move {
                let me = p.me();
                let model = (me == PartyId(0)).then_some((&f[..], &b[..]));
                let xs = (me == PartyId(1)).then_some(&x[..]);
                apps::svm(&mut p, (PartyId(0), PartyId(1)), (q, n), model, xs).await
            }
        };
        let outs = if own {
            testing::run_spdz2k_generating(&Net::new(2), 2, seed, program)
        } else {
            testing::run_spdz2k(2, seed, program)
        };
        let what = format!("{q} classes, {n} features, {} bits, own {own}", R::BITS);
        assert_eq!(outs[0].as_ref().unwrap_or_else(|e| panic!("{what}: P0: {e}")), &None);
        assert_eq!(
            outs[1].as_ref().unwrap_or_else(|e| panic!("{what}: P1: {e}")),
            &Some(R::from_u64(want as u64)),
            "{what}: scores {scores:?}"
        );
    }
    for (q, n, seed) in [(2, 3, 60), (3, 5, 61), (10, 16, 62), (7, 4, 63)] {
        run::<Z64>(false, q, n, seed);
        run::<Z32>(false, q, n, seed + 100);
    }
    run::<Z32>(true, 4, 6, 64);
}

/// Shipped models end to end on the parties' own material, between two parties (the page and
/// the server): P0 shares the weights (the logistic regression's, the tree ensemble's), P1 its
/// digits; the setup makes all the material, the online phase none, and only P1 learns the
/// classes, which are onnxruntime's.
#[test]
fn a_model_runs_on_the_parties_own_material() {
    use ringfence_core::nn::{import_onnx, FixedPlan, Inference, Output, DEFAULT_FRAC_BITS};
    let batch = 2;
    for (name, onnx, reference) in [("logreg", LOGREG, LOGREG_REF), ("tree", TREE, TREE_REF)] {
        let plan = FixedPlan::<Z64>::new(&import_onnx(onnx).unwrap(), DEFAULT_FRAC_BITS).unwrap();
        let shape = plan.shape();
        let x = plan.encode_input(&digits8()[..batch * shape.input_len]).unwrap();
        let net = Net::new(2);
        let outs = testing::run_spdz2k_generating(&net, 2, 8, |mut p| {
            let (plan, shape, x) = (plan.clone(), shape.clone(), x.clone());
            async move {
                let me = p.me();
                let model =
                    p.share_model(PartyId(0), (me == PartyId(0)).then_some(&plan), &shape).await?;
                let mut prep = p.preprocess(&model, batch, Output::Argmax, PartyId(1)).await?;
                let before = p.made_on_demand();
                let input = Party::take_input(&mut prep)?;
                let sx = p.input(PartyId(1), (me == PartyId(1)).then_some(&x[..]), input).await?;
                let y = p.infer(&model, sx, prep).await?;
                let out = p.open_to(PartyId(1), y).await;
                // Everything was made in the setup: the online phase made nothing.
                assert_eq!(p.made_on_demand(), before, "{name}, {me}: material made online");
                out
            }
        });
        assert!(matches!(outs[0], Ok(None)), "{name}: P0 learns nothing: {:?}", outs[0]);
        let classes = outs[1].as_ref().expect("P1's run").as_ref().expect("P1's classes");
        let labels = import_onnx(onnx).unwrap().class_labels;
        let ort = json_numbers(reference, "argmax");
        for (i, c) in classes.iter().enumerate() {
            let label = common::int_label(labels.as_ref(), c.to_u64() as usize);
            assert_eq!(label, ort[i] as i64, "{name}: sample {i}");
        }
    }
}

/// edaBits from the parties' own generation: the opened bits are the opened value's, the
/// parties agree, the values are spread and the bits balanced; among two and three parties
/// under both keys, two draws (each a run of its own size, so of its own bucket size).
#[test]
fn the_parties_edabits_are_values_with_their_bits() {
    fn run<R: Spdz2kRing>(n: usize) {
        let net = Net::new(n);
        let outs = testing::run_spdz2k_generating(&net, n, 29, |mut p| async move {
            let first = p.eda_bits_for_test::<R>(100).await?;
            let second = p.eda_bits_for_test::<R>(300).await?;
            Ok((first, second))
        });
        let what = format!("{n} parties, k = {}", R::BITS);
        let o0 = outs[0].as_ref().unwrap_or_else(|e| panic!("P0, {what}: {e}"));
        for (i, o) in outs.iter().enumerate() {
            let o = o.as_ref().unwrap_or_else(|e| panic!("P{i}, {what}: {e}"));
            assert_eq!(o, o0, "P{i}, {what}: the parties opened different edaBits");
        }
        for (r, bits) in [&o0.0, &o0.1] {
            let m = r.len();
            assert_eq!(bits.len(), m * R::BITS as usize, "{what}");
            for (j, &v) in r.iter().enumerate() {
                let from_bits = (0..R::BITS as usize)
                    .filter(|&i| bits[i * m + j])
                    .fold(R::ZERO, |a, i| a + R::ONE.shl(i as u32));
                assert_eq!(from_bits, v, "{what}: edaBit {j}");
            }
            let mut sorted = r.clone();
            sorted.sort_by_key(|v| v.to_u64());
            sorted.dedup();
            assert_eq!(sorted.len(), m, "{what}: repeated values");
            let ones = bits.iter().filter(|&&b| b).count();
            assert!(ones.abs_diff(bits.len() / 2) < bits.len() / 20, "{what}: {ones} ones");
        }
    }
    run::<Z32>(2);
    // Under WASI (several times slower) the two-party run at k = 32 alone.
    if !common::UNDER_WASM {
        run::<Z64>(2);
        run::<Z32>(3);
    }
}

/// A party whose authenticated bits are not its value's (one bit of one candidate flipped,
/// its MACs consistent, as a corrupt party can choose) is caught by the bucket check at every
/// honest party, wherever the coins place the candidate.
#[test]
fn a_party_whose_edabits_are_not_its_values_is_caught() {
    let cases: &[(usize, usize, u32)] =
        if common::UNDER_WASM { &[(2, 777, 31)] } else { &[(2, 0, 0), (2, 777, 31), (3, 5, 17)] };
    for &(n, candidate, bit) in cases {
        let net = Net::new(n);
        let outs = testing::run_spdz2k_generating(&net, n, 31, move |mut p| async move {
            let deviation = (p.me() == PartyId(1)).then_some((candidate, bit));
            p.deviate_in_edabits_for_test::<Z32>(deviation).await?;
            p.eda_bits_for_test::<Z32>(10).await
        });
        for (i, o) in outs.iter().enumerate().filter(|(i, _)| *i != 1) {
            match o {
                Err(Error::Abort { reason, .. }) => assert!(reason.contains("edaBits"), "{reason}"),
                o => panic!("P{i} ({n} parties, candidate {candidate}) went on: {o:?}"),
            }
        }
    }
}

/// Faults on the wire in the edaBits generation (the candidates' correlated OTs, the adders'
/// TinyOT triples and openings, the bucket check's openings, the conversion) end in aborts.
#[test]
fn faults_in_the_edabits_generation_end_in_aborts() {
    let program = |mut p: Party| async move { p.eda_bits_for_test::<Z32>(10).await };
    faults_in(if common::UNDER_WASM { 8 } else { 40 }, 5, true, &program);
}

/// A session's generation reports what it makes while it runs: sampled at every wake-up of
/// a party's protocol, the triples' count rises batch by batch (never past the total, never
/// back), then a later request (edaBits) starts from zero with the triples counted as made
/// before, and ends complete.
#[test]
fn the_generation_reports_its_progress_while_it_runs() {
    use ringfence_core::progress::{Progress, Report};
    let triples = 2 * ringfence_core::spdz2k::offline::TRIPLE_BATCH + 100;
    let net = Net::new(2);
    let outs = testing::run_spdz2k_generating(&net, 2, 31, move |mut p| async move {
        let progress = Progress::default();
        p.report_progress_to(progress.clone());
        let mut seen: Vec<Report> = Vec::new();
        let mut work = Box::pin(async move {
            p.triples_for_test::<Z32>(triples).await?;
            p.eda_bits_for_test::<Z32>(20).await?;
            Ok::<_, Error>(())
        });
        std::future::poll_fn(|cx| {
            seen.push(progress.report());
            work.as_mut().poll(cx)
        })
        .await?;
        seen.push(progress.report());
        Ok(seen)
    });
    for (i, seen) in outs.into_iter().enumerate() {
        let seen = seen.unwrap_or_else(|e| panic!("P{i}: {e}"));
        let of = |what: &str| seen.iter().filter(|r| r.making == what).copied().collect::<Vec<_>>();
        let made = of("multiplication triples");
        assert!(made.iter().all(|r| r.total == triples as u64 && r.made_before == 0), "P{i}");
        assert!(made.windows(2).all(|w| w[0].done <= w[1].done), "P{i}: went back");
        let between: Vec<u64> =
            made.iter().map(|r| r.done).filter(|&d| d > 0 && d < triples as u64).collect();
        assert!(!between.is_empty(), "P{i}: no report while the triples were made: {made:?}");
        let eda = of("edaBits");
        assert!(!eda.is_empty(), "P{i}: no edaBits reported");
        let counted = |r: &Report| r.total == 20 && r.done <= 20 && r.made_before >= triples as u64;
        assert!(eda.iter().all(counted), "P{i}: {eda:?}");
        // Everything made is counted at the end (the openings' checks draw masks after them).
        let end = seen.last().expect("a final report");
        assert!(end.made_before + end.done >= triples as u64 + 20, "P{i}: {end:?}");
    }
}
