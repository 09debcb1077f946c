//! mal3's validated triples: correct products when everyone follows the protocol, and an abort
//! at every honest party, releasing nothing, when one party deviates.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use ringfence_core::mal3::check;
use ringfence_core::mal3::scheme::Mal3Ring;
use ringfence_core::mal3::triples::{self, OnDemand, Params};
use ringfence_core::net::{frame, PartyId};
use ringfence_core::ring::{IntRing, Z32, Z64};
use ringfence_core::testing::{self, Action, Envelope, Net};
use ringfence_core::Error;

use crate::common;

/// A wire hook that the runs below install on the network.
type Hook = Box<dyn FnMut(&mut Envelope) -> Action>;

const SMALL: Params = Params { n: 256, b: 3, c: 1, l: 4 };

/// Runs the triple validation with `hook` on the wire; each party opens its triples.
fn run<R: IntRing>(
    prm: Params,
    hook: impl FnMut(&mut Envelope) -> Action + 'static,
) -> Vec<Result<[Vec<R>; 3], Error>> {
    let net = Net::new(3);
    net.set_hook(hook);
    testing::run_rep3_on(&net, 3, 77, |mut p| async move {
        let t = triples::validated::<R, _>(&mut p, &prm).await?;
        let [a, b, c] = t.into_parts_for_test();
        Ok([p.reveal(a).await?, p.reveal(b).await?, p.reveal(c).await?])
    })
}

fn honest<R: IntRing>() {
    let outs = run::<R>(SMALL, |_| Action::Deliver);
    let first = outs[0].as_ref().expect("P0 validates");
    for (i, o) in outs.iter().enumerate() {
        let [a, b, c] = o.as_ref().unwrap_or_else(|e| panic!("P{i}: {e}"));
        assert_eq!(a.len(), SMALL.n);
        assert_eq!([a, b, c], [&first[0], &first[1], &first[2]], "P{i} opened other triples");
        for j in 0..a.len() {
            assert_eq!(a[j] * b[j], c[j], "triple {j} is not a product");
        }
    }
    // Random, not constant, factors.
    assert!(first[0].windows(2).any(|w| w[0] != w[1]));
}

#[test]
fn honest_parties_get_products_z64() {
    honest::<Z64>();
}

#[test]
fn honest_parties_get_products_z32() {
    honest::<Z32>();
}

/// Changes one payload byte of the frame `index` on the link `from → to`, and records that it
/// did so on a frame of `elems` ring elements of 8 bytes.
fn tamper(
    from: u8,
    to: u8,
    index: u64,
    elems: usize,
    hit: Rc<Cell<bool>>,
) -> impl FnMut(&mut Envelope) -> Action {
    move |e| {
        if e.from == PartyId(from) && e.to == PartyId(to) && e.index == index {
            hit.set(e.bytes.len() == frame::HEADER_LEN + 8 * elems);
            let at = e.bytes.len() - 5;
            e.bytes[at] ^= 0x10;
        }
        Action::Deliver
    }
}

fn assert_all_abort(outs: &[Result<[Vec<Z64>; 3], Error>], what: &str) {
    for (i, o) in outs.iter().enumerate() {
        assert!(matches!(o, Err(Error::Abort { .. })), "{what}: P{i} did not abort: {o:?}");
    }
}

#[test]
fn a_wrong_product_in_generation_makes_every_party_abort() {
    // P1's resharing message of the semi-honest product goes to P0 (frame 1 on that link,
    // after the session's key agreement): an additive error on one product.
    let hit = Rc::new(Cell::new(false));
    let outs = run::<Z64>(SMALL, tamper(1, 0, 1, SMALL.generated(), hit.clone()));
    assert!(hit.get(), "the hook did not meet the product's message");
    assert_all_abort(&outs, "a wrong product");
}

#[test]
fn a_wrong_opening_makes_every_party_abort() {
    // On P2 → P0: the coin's opening (1), its tag (2), the verdict (3), then the opening of
    // the cut triples and the bucket checks' ρ, σ (4).
    let hit = Rc::new(Cell::new(false));
    let elems = 3 * SMALL.opened() + 2 * (SMALL.b - 1) * SMALL.n;
    let outs = run::<Z64>(SMALL, tamper(2, 0, 4, elems, hit.clone()));
    assert!(hit.get(), "the hook did not meet the openings");
    assert_all_abort(&outs, "a wrong opening");
}

#[test]
fn a_wrong_coin_makes_every_party_abort_before_the_shuffle() {
    let hit = Rc::new(Cell::new(false));
    let outs = run::<Z64>(SMALL, tamper(2, 0, 1, 4, hit.clone()));
    assert!(hit.get(), "the hook did not meet the coin");
    assert_all_abort(&outs, "a wrong coin");
}

#[test]
fn a_flipped_verdict_aborts_everyone() {
    // P2's first verdict to P0 (frame 3 on that link) says "failed".
    let hit = Rc::new(Cell::new(false));
    let h = hit.clone();
    let outs = run::<Z64>(SMALL, move |e| {
        if e.from == PartyId(2) && e.to == PartyId(0) && e.index == 3 {
            h.set(e.bytes.len() == frame::HEADER_LEN + 8);
            let last = e.bytes.len() - 8;
            e.bytes[last] = 1;
        }
        Action::Deliver
    });
    assert!(hit.get(), "the hook did not meet the verdict");
    // P0 aborts on the report; P1 and P2 go on until P0 stops talking, and fail too.
    assert!(matches!(outs[0], Err(Error::Abort { .. })), "{:?}", outs[0]);
    assert!(outs.iter().all(Result::is_err), "{outs:?}");
}

#[test]
fn bad_parameters_are_refused_before_anything_is_sent() {
    let outs = run::<Z64>(Params { l: 3, ..SMALL }, |_| Action::Deliver);
    for o in &outs {
        assert!(matches!(o, Err(Error::ApiMisuse(_))), "{o:?}");
    }
}

/// Each party sends one element per generated triple (the products), one per opened triple
/// component and two per bucket check (ρ, σ), plus fixed words for the coin (4), the three
/// tags (2 each) and two verdicts (2 each; the openings' tags are settled with the zero test's):
/// 8 rounds.
#[test]
fn validation_costs_what_the_protocol_says() {
    let prm = SMALL;
    let outs = testing::run_rep3(78, |mut p| async move {
        let before = p.ctx().stats();
        triples::validated::<Z64, _>(&mut p, &prm).await?;
        Ok(p.ctx().stats() - before)
    });
    let elems = run_words(&prm);
    for (i, s) in outs.iter().enumerate() {
        assert_eq!((s.payload_bytes_sent, s.rounds), (8 * elems as u64, 8), "P{i}");
    }
}

/// Computes `x·y` with rep3's product and checks it against validated triples, then opens it
/// with both holders' components; `hook` sees the wire.
fn checked_product(
    hook: impl FnMut(&mut Envelope) -> Action + 'static,
) -> Vec<Result<Vec<Z64>, Error>> {
    let net = Net::new(3);
    net.set_hook(hook);
    let prm = Params { n: 64, b: 3, c: 1, l: 2 };
    testing::run_rep3_on(&net, 3, 79, |mut p| async move {
        let t = triples::validated::<Z64, _>(&mut p, &prm).await?;
        let (x, y) = (p.random::<Z64>(prm.n), p.random::<Z64>(prm.n));
        let z = p.mul(&x, &y).await?;
        check::check_products(&mut p, &x, &y, &z, t).await?;
        let xs = check::open(&mut p, x).await?;
        let ys = check::open(&mut p, y).await?;
        let zs = check::open(&mut p, z).await?;
        assert!(xs.iter().zip(&ys).zip(&zs).all(|((x, y), z)| *x * *y == *z));
        Ok(zs)
    })
}

#[test]
fn a_right_product_passes_its_check_and_opens() {
    let outs = checked_product(|_| Action::Deliver);
    let first = outs[0].as_ref().expect("P0");
    assert!(outs.iter().all(|o| o.as_ref().ok() == Some(first)), "{outs:?}");
}

#[test]
fn a_wrong_product_fails_its_check_at_every_party() {
    // On P1 → P0 (P1's messages to its previous party): the key agreement (0), the triples'
    // products (1), two verdicts (2–3), then the checked product (4).
    let hit = Rc::new(Cell::new(false));
    let outs = checked_product(tamper(1, 0, 4, 64, hit.clone()));
    assert!(hit.get(), "the hook did not meet the product's message");
    for (i, o) in outs.iter().enumerate() {
        assert!(matches!(o, Err(Error::Abort { .. })), "P{i} did not abort: {o:?}");
    }
}

/// P1 sends P2 a wrong component of the product check's opening (ρ, σ): P2's opening is then
/// wrong, and P0, whose own opening P2's tag does not match, sends P1 zeros in place of its
/// zero test's tag (the openings' comparison is settled with the zero test's, so this is what
/// keeps a tag of values computed from a mismatched opening from the party that caused it);
/// every party aborts.
#[test]
fn a_party_that_cannot_confirm_an_opening_sends_no_tag_of_it() {
    let opening = frame::HEADER_LEN + 8 * 2 * 64;
    let tag = frame::HEADER_LEN + 16;
    let (hit, seen) = (Rc::new(Cell::new(false)), Rc::new(RefCell::new(Vec::new())));
    let (h, log) = (hit.clone(), seen.clone());
    let outs = checked_product(move |e| {
        if !h.get() && e.from == PartyId(1) && e.to == PartyId(2) && e.bytes.len() == opening {
            h.set(true);
            let at = e.bytes.len() - 5;
            e.bytes[at] ^= 0x10;
        } else if h.get() && e.from == PartyId(0) && e.to == PartyId(1) && e.bytes.len() == tag {
            log.borrow_mut().push(e.bytes[frame::HEADER_LEN..].to_vec());
        }
        Action::Deliver
    });
    assert!(hit.get(), "the hook did not meet the check's opening");
    let tags = seen.borrow();
    assert_eq!(tags.len(), 2, "P0's tags to P1 after the change: {tags:?}");
    assert!(tags[0].iter().any(|&b| b != 0), "the openings' tag");
    assert!(tags[1].iter().all(|&b| b == 0), "P0 sent P1 a zero test's tag: {:?}", tags[1]);
    for (i, o) in outs.iter().enumerate() {
        assert!(matches!(o, Err(Error::Abort { .. })), "P{i} did not abort: {o:?}");
    }
}

#[test]
fn a_wrong_component_in_an_opening_makes_every_party_abort() {
    for (from, to) in [(2u8, 0u8), (1, 0)] {
        let net = Net::new(3);
        let hit = Rc::new(Cell::new(false));
        // Frame 1 on either link to P0 is the opening (after the key agreement).
        net.set_hook(tamper(from, to, 1, 20, hit.clone()));
        let outs = testing::run_rep3_on(&net, 3, 80, |mut p| async move {
            let x = p.random::<Z64>(20);
            check::open(&mut p, x).await
        });
        assert!(hit.get(), "the hook did not meet the opening from P{from}");
        for (i, o) in outs.iter().enumerate() {
            assert!(matches!(o, Err(Error::Abort { .. })), "P{from}: P{i}: {o:?}");
        }
    }
}

/// `x·y` of P0's and P1's inputs through mal3's `Arith`, opened to all (the products are
/// checked at the opening); `hook` sees the wire.
fn mal3_product(
    hook: impl FnMut(&mut Envelope) -> Action + 'static,
) -> Vec<Result<Vec<Z64>, Error>> {
    use ringfence_core::mal3::Mal3;
    use ringfence_core::sharing::{Arith, Session};
    let net = Net::new(3);
    net.set_hook(hook);
    let (x, y) = (vec![Z64(3), Z64(u64::MAX), Z64(1 << 40)], vec![Z64(5), Z64(7), Z64(1 << 30)]);
    testing::run_rep3_on(&net, 3, 81, move |p| {
        let (x, y) = (x.clone(), y.clone());
        async move {
            let mut s = Mal3::start(p);
            let me = s.me();
            let (px, tx) = Arith::<Z64>::input_prep(&mut s, PartyId(0), 3);
            let (py, ty) = Arith::<Z64>::input_prep(&mut s, PartyId(1), 3);
            let (pm, _) = s.mul_prep(&tx, &ty, 0).await?;
            let vx = s.input(PartyId(0), (me == PartyId(0)).then_some(&x[..]), px).await?;
            let vy = s.input(PartyId(1), (me == PartyId(1)).then_some(&y[..]), py).await?;
            let z = s.mul(&vx, &vy, pm).await?;
            s.open(z).await
        }
    })
}

#[test]
fn mal3_products_open_to_the_right_values() {
    let outs = mal3_product(|_| Action::Deliver);
    // 3·5, (−1)·7, and 2^40·2^30 = 2^70 ≡ 0 mod 2^64.
    let want = vec![Z64(15), Z64(7u64.wrapping_neg()), Z64(0)];
    for (i, o) in outs.iter().enumerate() {
        assert_eq!(o.as_ref().ok(), Some(&want), "P{i}: {o:?}");
    }
}

#[test]
fn a_party_that_cheats_in_a_mal3_product_makes_the_opening_abort() {
    // On P1 → P0: the key agreement (0), the pool's products (1), its two verdicts (2–3),
    // then the computation's product (4; the inputs travel P_i → P_{i+1}).
    let hit = Rc::new(Cell::new(false));
    let outs = mal3_product(tamper(1, 0, 4, 3, hit.clone()));
    assert!(hit.get(), "the hook did not meet the product's message");
    for (i, o) in outs.iter().enumerate() {
        assert!(matches!(o, Err(Error::Abort { .. })), "P{i} released {o:?}");
    }
}

/// What a party opened, and the payload bytes it sent.
type Sent<R> = (Vec<R>, u64);

/// Matrix products `X·Y` of P0's `X` and P2's `Y` through mal3's `Arith::matmul` (one session,
/// checked together at the opening), opened to all, with what each party sent (payload bytes)
/// from the first product to the end; `hook` sees the wire.
fn mal3_matmuls<R: IntRing + Mal3Ring>(
    shapes: &[(usize, usize, usize)],
    seed: u64,
    hook: impl FnMut(&mut Envelope) -> Action + 'static,
) -> (Vec<Result<Sent<R>, Error>>, Vec<R>) {
    use ringfence_core::mal3::Mal3;
    use ringfence_core::prg::{Prg, Seed};
    use ringfence_core::sharing::{Arith, Linear, Session};
    let mut prg = Prg::new(&Seed::from_bytes([0x4d; 32]), seed, 0);
    let edges = [0i64, 1, -1, i64::MAX, i64::MIN, 2].map(R::from_i64);
    let mut value =
        |i: usize| if i % 3 == 0 { edges[i / 3 % 6] } else { R::from_u64(prg.next_u64()) };
    let operands: Vec<(Vec<R>, Vec<R>)> = shapes
        .iter()
        .map(|&(m, k, n)| {
            ((0..m * k).map(&mut value).collect(), (0..k * n).map(&mut value).collect())
        })
        .collect();
    let mut want = Vec::new();
    for (&(m, k, n), (x, y)) in shapes.iter().zip(&operands) {
        for i in 0..m {
            for j in 0..n {
                want.push((0..k).fold(R::ZERO, |acc, t| acc + x[i * k + t] * y[t * n + j]));
            }
        }
    }
    let net = Net::new(3);
    net.set_hook(hook);
    let shapes = shapes.to_vec();
    let outs = testing::run_rep3_on(&net, 3, 89, move |p| {
        let (shapes, operands) = (shapes.clone(), operands.clone());
        async move {
            let mut s = Mal3::start(p);
            let me = s.me();
            // Material first (a preparation checks what is pending), as the inference walk does.
            let mut preps = Vec::new();
            for &(m, k, n) in &shapes {
                let (px, tx) = Arith::<R>::input_prep(&mut s, PartyId(0), m * k);
                let (py, ty) = Arith::<R>::input_prep(&mut s, PartyId(2), k * n);
                preps.push((px, py, s.matmul_prep(&tx, &ty, (m, k, n), 0).await?.0));
            }
            let mut zs = Vec::new();
            let mut sent = 0;
            for ((&(m, k, n), (x, y)), (px, py, pm)) in shapes.iter().zip(&operands).zip(preps) {
                let vx = s.input(PartyId(0), (me == PartyId(0)).then_some(&x[..]), px).await?;
                let vy = s.input(PartyId(2), (me == PartyId(2)).then_some(&y[..]), py).await?;
                let before = s.base().ctx().stats().payload_bytes_sent;
                zs.push(s.matmul(&vx, &vy, (m, k, n), pm).await?);
                sent += s.base().ctx().stats().payload_bytes_sent - before;
            }
            let before = s.base().ctx().stats().payload_bytes_sent;
            let z = Linear::<R>::concat(&zs.iter().collect::<Vec<_>>());
            let opened = s.open(z).await?;
            Ok((opened, sent + s.base().ctx().stats().payload_bytes_sent - before))
        }
    });
    (outs, want)
}

fn matrix_products_equal_plaintext<R: IntRing + Mal3Ring>() {
    let shapes = [(1, 1, 1), (3, 5, 7), (1, 17, 4), (6, 1, 2), (4, 9, 1)];
    let (outs, want) = mal3_matmuls::<R>(&shapes, 1, |_| Action::Deliver);
    for (i, o) in outs.iter().enumerate() {
        assert_eq!(o.as_ref().map(|o| &o.0).ok(), Some(&want), "P{i}: {o:?}");
    }
}

#[test]
fn mal3_matrix_products_equal_plaintext_z64() {
    matrix_products_equal_plaintext::<Z64>();
}

#[test]
fn mal3_matrix_products_equal_plaintext_z32() {
    matrix_products_equal_plaintext::<Z32>();
}

/// P1 adds an error to one output of its matrix product's resharing (P1 → P0): in the top bit
/// only (the error a check with coefficients from Z_2^k would miss half of the time), in the
/// lowest bit, or a whole byte, at each output in turn. Every party aborts, every time.
fn a_wrong_matrix_product_aborts<R: IntRing + Mal3Ring>() {
    let (m, n) = (3, 7);
    for at in 0..m * n {
        for (byte, mask) in [(R::BYTES - 1, 0x80u8), (0, 0x01), (R::BYTES / 2, 0xff)] {
            let hit = Rc::new(Cell::new(false));
            let seen = hit.clone();
            let (outs, _) = mal3_matmuls::<R>(&[(2, 3, 4), (m, 5, n)], at as u64, move |e| {
                if e.from == PartyId(1)
                    && e.to == PartyId(0)
                    && e.bytes.len() == frame::HEADER_LEN + R::BYTES * m * n
                {
                    e.bytes[frame::HEADER_LEN + R::BYTES * at + byte] ^= mask;
                    seen.set(true);
                }
                Action::Deliver
            });
            assert!(hit.get(), "the hook did not meet the product's resharing");
            for (i, o) in outs.iter().enumerate() {
                assert!(
                    matches!(o, Err(Error::Abort { .. })),
                    "output {at}, byte {byte} ^ {mask:#x}: P{i} released {o:?}"
                );
            }
        }
    }
}

#[test]
fn a_wrong_matrix_product_aborts_z64() {
    a_wrong_matrix_product_aborts::<Z64>();
}

#[test]
fn a_wrong_matrix_product_aborts_z32() {
    a_wrong_matrix_product_aborts::<Z32>();
}

/// A matrix product sends rep3's `m·n` elements; the batch's check sends the dot-product
/// triples (2·42 elements), a coin (4 words, a tag, two verdicts), `ρ₀`, `ρ` and `σ` (3·42 per
/// unit of the products' inner dimensions), and two tags settled by one pair of verdicts;
/// the opening 2 elements per value and two verdicts. Counted exactly, per party.
#[test]
fn matrix_products_cost_their_outputs_and_one_check_of_their_inner_dimensions() {
    use ringfence_core::ring::galois::D;
    let shapes = [(2, 30, 4), (5, 7, 3)];
    let (outs, _) = mal3_matmuls::<Z64>(&shapes, 2, |_| Action::Deliver);
    let outputs: usize = shapes.iter().map(|(m, _, n)| m * n).sum();
    let inner: usize = shapes.iter().map(|s| s.1).sum();
    let check = 2 * D + (4 + 2 + 2) + 3 * D * inner + 2 + (2 + 2);
    let words = outputs + check + 2 * outputs + 2;
    for (i, o) in outs.iter().enumerate() {
        assert_eq!(o.as_ref().map(|o| o.1).ok(), Some(8 * words as u64), "P{i}");
    }
    // At LeNet's shapes (convolutions as im2col products), the check's formula against the
    // elementwise check the products had before (3B + 1 words each, B = 2 on demand): small
    // products pay more than they did, a network's layers about 70 times less.
    let lenet = [(576, 25, 20), (64, 500, 50), (1, 800, 500), (1, 500, 10)];
    let now = 2 * D + 16 + 3 * D * lenet.iter().map(|s| s.1).sum::<usize>();
    let before = 7 * lenet.iter().map(|(m, k, n)| m * k * n).sum::<usize>();
    assert!(60 * now < before, "{now} {before}");
    assert!(3 * D * inner > 7 * shapes.iter().map(|(m, k, n)| m * k * n).sum::<usize>());
}

/// ReLU of P0's values and `[x < y]` injected into the ring, with P2's `y`, through mal3's
/// `Boolean` (checked ANDs in the full adders and carries, daBits, masked openings), opened to
/// all. P1 owns no input, so every message it sends is protocol, none its own choice.
fn mal3_boolean(hook: Hook) -> Vec<Result<[Vec<Z64>; 2], Error>> {
    use ringfence_core::mal3::Mal3;
    use ringfence_core::sharing::{Arith, Boolean, Session};
    let net = Net::new(3);
    net.set_hook(hook);
    let x: Vec<Z64> = [5i64, -5, 0, 1, -1, i64::MAX, i64::MIN, 77].map(Z64::from_i64).to_vec();
    let y: Vec<Z64> = [6i64, -6, 0, 0, 3, i64::MIN, i64::MAX, 77].map(Z64::from_i64).to_vec();
    testing::run_rep3_on(&net, 3, 82, move |p| {
        let (x, y) = (x.clone(), y.clone());
        async move {
            let mut s = Mal3::start(p);
            let me = s.me();
            let mut store = Boolean::<Z64>::bit_prep(&mut s, 16).await?;
            let (px, _) = Arith::<Z64>::input_prep(&mut s, PartyId(0), 8);
            let (py, _) = Arith::<Z64>::input_prep(&mut s, PartyId(2), 8);
            let vx = s.input(PartyId(0), (me == PartyId(0)).then_some(&x[..]), px).await?;
            let vy = s.input(PartyId(2), (me == PartyId(2)).then_some(&y[..]), py).await?;
            let relu = s.relu(&vx, store.take(8)?).await?;
            let lt = s.lt(&vx, &vy).await?;
            let lt = s.b2a(&lt, store.take(8)?).await?;
            Ok([s.open(relu).await?, s.open(lt).await?])
        }
    })
}

#[test]
fn mal3_comparisons_open_to_the_right_values() {
    let outs = mal3_boolean(Box::new(|_| Action::Deliver));
    let relu: Vec<Z64> = [5i64, 0, 0, 1, 0, i64::MAX, 0, 77].map(Z64::from_i64).to_vec();
    let lt: Vec<Z64> = [1u64, 0, 0, 0, 1, 0, 1, 0].map(Z64).to_vec();
    for (i, o) in outs.iter().enumerate() {
        assert_eq!(o.as_ref().ok(), Some(&[relu.clone(), lt.clone()]), "P{i}: {o:?}");
    }
}

/// Every message P1 sends in a mal3 comparison run, to either party, changed in one bit in turn
/// (after the key agreement): an honest party either fails or releases the right values, and
/// at least one honest party aborts on a failed check. (An honest party may still finish: a
/// cheater that lies only in its last verdict to one party makes that party abort and the
/// other output; this is security with abort, not unanimous abort, which three parties with
/// one cheater cannot agree on without a broadcast channel.)
#[test]
fn any_change_to_any_message_of_a_mal3_comparison_aborts_it() {
    sweep_p1_messages(mal3_boolean);
}

/// Runs `protocol` honestly, then once per message P1 sends (after the key agreement) with
/// that message changed in one bit, and checks the outcome (see the test above).
fn sweep_p1_messages<V: PartialEq + Clone + core::fmt::Debug>(
    protocol: fn(Hook) -> Vec<Result<V, Error>>,
) {
    let counts = Rc::new(Cell::new([0u64; 2]));
    let c = counts.clone();
    let honest = protocol(Box::new(move |e| {
        if e.from == PartyId(1) {
            let mut n = c.get();
            n[usize::from(e.to.0 == 2)] = n[usize::from(e.to.0 == 2)].max(e.index + 1);
            c.set(n);
        }
        Action::Deliver
    }));
    let right = honest[0].as_ref().expect("an honest run").clone();
    let [to0, to2] = counts.get();
    assert!(to0 > 10 && to2 > 10, "too few messages to be the whole protocol: {to0}, {to2}");
    let mut finished = 0;
    for (to, count) in [(0u8, to0), (2, to2)] {
        for index in 1..count {
            let hit = Rc::new(Cell::new(false));
            let h = hit.clone();
            let outs = protocol(Box::new(move |e| {
                if e.from == PartyId(1) && e.to == PartyId(to) && e.index == index {
                    let at = e.bytes.len() - 1;
                    e.bytes[at] ^= 0x01;
                    h.set(true);
                }
                Action::Deliver
            }));
            assert!(hit.get(), "frame {index} to P{to} was not sent");
            let what = format!("P1's frame {index} to P{to}");
            for i in [0, 2] {
                if let Ok(v) = &outs[i] {
                    assert_eq!(v, &right, "{what}: P{i} released a wrong value");
                    finished += 1;
                }
            }
            assert!(
                [0, 2].iter().any(|&i| matches!(outs[i], Err(Error::Abort { .. }))),
                "{what}: no honest party saw a failed check: {outs:?}"
            );
        }
    }
    // Only the two last verdicts (one per link) can leave an honest party finished.
    assert!(finished <= 2, "{finished} honest parties finished after a change");
}

/// mal3's truncation pairs open to `(r, r >> d)` exactly (arithmetic shift), for shifts at
/// both ends of the range; `r` is random, so 300 pairs cover both signs and carries.
fn mal3_trunc<R: IntRing + ringfence_core::mal3::scheme::Mal3Ring>(d: u32) {
    use ringfence_core::mal3::Mal3;
    use ringfence_core::sharing::{Arith, Session};
    let outs = testing::run_rep3(83 + u64::from(d), move |p| async move {
        let mut s = Mal3::start(p);
        let pairs = s.trunc_pairs::<R>(300, d).await?;
        let (r, rs) = pairs.into_parts_for_test();
        Ok((Arith::<R>::open(&mut s, r).await?, Arith::<R>::open(&mut s, rs).await?))
    });
    for (i, (r, rs)) in outs.iter().enumerate() {
        assert!(r.windows(2).any(|w| w[0] != w[1]), "P{i}: constant masks");
        assert!(r.iter().any(|v| v.msb()) && r.iter().any(|v| !v.msb()), "P{i}: one sign");
        for (a, b) in r.iter().zip(rs) {
            assert_eq!(a.shr_arith(d), *b, "P{i}: d = {d}, pair ({a:?}, {b:?})");
        }
    }
}

#[test]
fn mal3_truncation_pairs_are_exact() {
    for d in [1, 13, 62] {
        mal3_trunc::<Z64>(d);
    }
    for d in [1, 8, 30] {
        mal3_trunc::<Z32>(d);
    }
    // Shifts that leave no integer part are refused.
    let outs = testing::run_rep3(84, |p| async move {
        use ringfence_core::mal3::Mal3;
        use ringfence_core::sharing::Session;
        let mut s = Mal3::start(p);
        Ok([s.trunc_pairs::<Z64>(4, 0).await.err(), s.trunc_pairs::<Z64>(4, 63).await.err()])
    });
    for o in outs {
        assert!(o.iter().all(|e| matches!(e, Some(Error::ApiMisuse(_)))), "{o:?}");
    }
}

/// A fixed-point product of P0's and P2's values (8 fractional bits), opened to all; `hook`
/// sees the wire. P1 owns no input.
fn mal3_fixed(hook: Hook) -> Vec<Result<Vec<Z64>, Error>> {
    use ringfence_core::mal3::Mal3;
    use ringfence_core::sharing::{Arith, Session};
    let net = Net::new(3);
    net.set_hook(hook);
    let x: Vec<Z64> = [256i64, -512, 0, 1, -1, 3 << 20].map(Z64::from_i64).to_vec();
    let y: Vec<Z64> = [256i64, 384, -7, -1, -1, -(5 << 12)].map(Z64::from_i64).to_vec();
    testing::run_rep3_on(&net, 3, 85, move |p| {
        let (x, y) = (x.clone(), y.clone());
        async move {
            let mut s = Mal3::start(p);
            let me = s.me();
            let (px, tx) = Arith::<Z64>::input_prep(&mut s, PartyId(0), 6);
            let (py, ty) = Arith::<Z64>::input_prep(&mut s, PartyId(2), 6);
            let (pm, _) = s.mul_prep(&tx, &ty, 8).await?;
            let vx = s.input(PartyId(0), (me == PartyId(0)).then_some(&x[..]), px).await?;
            let vy = s.input(PartyId(2), (me == PartyId(2)).then_some(&y[..]), py).await?;
            let z = s.mul(&vx, &vy, pm).await?;
            s.open(z).await
        }
    })
}

#[test]
fn mal3_fixed_point_products_are_within_one_ulp() {
    let outs = mal3_fixed(Box::new(|_| Action::Deliver));
    // ⌊x·y / 2^8⌋, or one less.
    let floor = [256i64, -768, -1, -1, 0, -(15 << 24)];
    for (i, o) in outs.iter().enumerate() {
        let got = o.as_ref().unwrap_or_else(|e| panic!("P{i}: {e}"));
        for (g, f) in got.iter().zip(floor) {
            assert!([f, f - 1].contains(&g.to_i64()), "P{i}: {} for ⌊⌋ = {f}", g.to_i64());
        }
    }
}

/// Every message P1 sends in a fixed-point product (the truncation pairs' setup included),
/// changed in one bit in turn, is detected as in the comparison sweep above.
#[test]
fn any_change_to_any_message_of_a_mal3_fixed_point_product_aborts_it() {
    sweep_p1_messages(mal3_fixed);
}

/// What a server returns in a client run: `None` (it learns nothing), or why it stopped.
type ServerResult = Result<Option<Vec<Z64>>, Error>;

/// A client (P3) shares `x`, the servers compute `x·x` with mal3 and open it to the client
/// only; `hook` sees the wire, and `skew` lets the client send P1 a different copy of one
/// component. Returns the servers' results (`Ok(None)` when they finished) and the client's.
fn mal3_client_run(hook: Hook, skew: bool) -> (Vec<ServerResult>, Error) {
    use ringfence_core::mal3::client::Mal3Client;
    use ringfence_core::mal3::Mal3;
    use ringfence_core::net::{Ctx, SessionId};
    use ringfence_core::prg::Seed;
    use ringfence_core::rep3::Rep3;
    use ringfence_core::sharing::{Arith, Session};
    use std::pin::Pin;
    type Fut<'a> = Pin<Box<dyn std::future::Future<Output = ServerResult> + 'a>>;
    let net = Net::new(4);
    let mut hook = hook;
    net.set_hook(move |e: &mut Envelope| {
        if skew && e.from == PartyId(3) && e.to == PartyId(1) {
            // P1's first component (component 1, which P0 also receives).
            e.bytes[frame::HEADER_LEN] ^= 1;
        }
        hook(e)
    });
    let client = PartyId(3);
    let mut futs: Vec<Fut<'_>> = Vec::new();
    for (i, seeds) in testing::rep3_seeds(12).into_iter().enumerate() {
        let me = PartyId(i as u8);
        let ctx = Ctx::new(me, 4, SessionId([2; 16]), net.transport(me));
        futs.push(Box::pin(async move {
            let mut s = Mal3::start(Rep3::setup(ctx, seeds).await?);
            let (slot, t) = Arith::<Z64>::input_prep(&mut s, client, 3);
            let (pm, _) = s.mul_prep(&t, &t, 0).await?;
            let x = s.input(client, None, slot).await?;
            let y = s.mul(&x, &x, pm).await?;
            s.open_to(client, y).await
        }));
    }
    let ctx = Ctx::new(client, 4, SessionId([2; 16]), net.transport(client));
    futs.push(Box::pin(async move {
        let mut c = Mal3Client::new(ctx, Seed::from_bytes([3; 32]));
        c.share(&[Z64(3), Z64(u64::MAX), Z64(1 << 33)])?;
        Ok(Some(c.reconstruct::<Z64>(3).await?))
    }));
    let mut outs = net.run(futs);
    let client_out = outs.pop().expect("the client's result");
    let err = match client_out {
        Ok(Some(v)) => {
            assert_eq!(v, vec![Z64(9), Z64(1), Z64(0)], "the client's squares");
            Error::ApiMisuse("no error: the client got its output".into())
        }
        Ok(None) => unreachable!("the client always returns its output"),
        Err(e) => e,
    };
    (outs, err)
}

#[test]
fn a_mal3_client_gets_its_answer_and_the_servers_nothing() {
    let (servers, client) = mal3_client_run(Box::new(|_| Action::Deliver), false);
    assert!(servers.iter().all(|o| matches!(o, Ok(None))), "{servers:?}");
    assert!(matches!(client, Error::ApiMisuse(_)), "the client failed: {client}");
}

#[test]
fn a_server_that_changes_its_part_of_the_output_makes_the_client_abort() {
    // P1 → P3 carries only the output (P1's two components).
    let hook: Hook = Box::new(|e| {
        if e.from == PartyId(1) && e.to == PartyId(3) {
            e.bytes[frame::HEADER_LEN] ^= 1;
        }
        Action::Deliver
    });
    let (servers, client) = mal3_client_run(hook, false);
    assert!(servers.iter().all(|o| matches!(o, Ok(None))), "{servers:?}");
    assert!(
        matches!(client, Error::Abort { .. }),
        "the client accepted a changed output: {client}"
    );
}

#[test]
fn a_client_that_sends_inconsistent_copies_makes_every_server_abort() {
    let (servers, client) = mal3_client_run(Box::new(|_| Action::Deliver), true);
    for (i, o) in servers.iter().enumerate() {
        assert!(matches!(o, Err(Error::Abort { .. })), "P{i}: {o:?}");
    }
    assert!(!matches!(client, Error::ApiMisuse(_)), "the client got an output");
}

#[test]
fn a_server_that_cheats_in_a_product_leaves_the_client_without_an_answer() {
    // On P1 → P0 after the key agreement: the pool's products (1), its verdicts (2–3), then the
    // input check's digests (4) and the computation's product (5).
    let hit = Rc::new(Cell::new(false));
    let h = hit.clone();
    let hook: Hook = Box::new(move |e| {
        if e.from == PartyId(1) && e.to == PartyId(0) && e.index == 5 {
            h.set(e.bytes.len() == frame::HEADER_LEN + 8 * 3);
            e.bytes[frame::HEADER_LEN] ^= 1;
        }
        Action::Deliver
    });
    let (servers, client) = mal3_client_run(hook, false);
    assert!(hit.get(), "the hook did not meet the product");
    for i in [0, 2] {
        assert!(matches!(servers[i], Err(Error::Abort { .. })), "P{i}: {:?}", servers[i]);
    }
    assert!(!matches!(client, Error::ApiMisuse(_)), "the client got an output");
}

/// Products (one plain, one fixed-point with its truncation), `ReLU(x)` and `[x < y]` of P0's
/// `x` and P2's `y` in `R`, opened to all in three openings: mal3's triple generation, its
/// arithmetic and boolean circuits (the bits' triples, daBits, B2A), every check and every
/// opening. P1 owns no input, so every message it sends is protocol.
/// How a run's checks take their triples.
#[derive(Clone, Copy)]
enum Checks {
    /// Protocol 3.1's pool.
    Pool,
    /// Protocol 3.9, buckets of 2.
    OnDemand(OnDemand),
    /// The pool, made by the paper's baseline runs (Protocol A.1).
    Baseline,
}

fn mal3_program<R: IntRing + Mal3Ring>(
    net: &Net,
    checks: Checks,
) -> Vec<Result<[Vec<R>; 3], Error>> {
    use ringfence_core::mal3::Mal3;
    use ringfence_core::sharing::{Arith, Boolean, Len, Linear, Session};
    let x: Vec<R> = [5i64, -5, 0, 1, -1, i64::MAX, i64::MIN, 300].map(R::from_i64).to_vec();
    let y: Vec<R> = [6i64, -6, 0, 0, 3, i64::MIN, i64::MAX, -300].map(R::from_i64).to_vec();
    testing::run_rep3_on(net, 3, 86, move |p| {
        let (x, y) = (x.clone(), y.clone());
        async move {
            let mut s = Mal3::start(p);
            match checks {
                Checks::Pool => {}
                Checks::OnDemand(d) => s.check_on_demand(d)?,
                Checks::Baseline => s.use_baseline_runs()?,
            }
            let me = s.me();
            let n = x.len();
            let mut store = Boolean::<R>::bit_prep(&mut s, 2 * n).await?;
            let (px, tx) = Arith::<R>::input_prep(&mut s, PartyId(0), n);
            let (py, ty) = Arith::<R>::input_prep(&mut s, PartyId(2), n);
            let (pm, _) = s.mul_prep(&tx, &ty, 0).await?;
            let (pf, _) = s.mul_prep(&tx, &ty, 8).await?;
            let (pmm, _) = s.matmul_prep(&tx, &Len(2 * n), (2, 4, 4), 0).await?;
            let vx = s.input(PartyId(0), (me == PartyId(0)).then_some(&x[..]), px).await?;
            let vy = s.input(PartyId(2), (me == PartyId(2)).then_some(&y[..]), py).await?;
            let z = s.mul(&vx, &vy, pm).await?;
            let f = s.mul(&vx, &vy, pf).await?;
            let mm = s.matmul(&vx, &Linear::<R>::concat(&[&vy, &vx]), (2, 4, 4), pmm).await?;
            let products = s.open(Linear::<R>::concat(&[&z, &mm])).await?;
            let fixed = s.open(f).await?;
            let relu = s.relu(&vx, store.take(n)?).await?;
            let lt = s.lt(&vx, &vy).await?;
            let lt = s.b2a(&lt, store.take(n)?).await?;
            let relu_lt = s.open(Linear::<R>::concat(&[&relu, &lt])).await?;
            Ok([products, fixed, relu_lt])
        }
    })
}

/// `trials` seeded faults by P1 (a changed byte, a replayed earlier payload of the same
/// length, or a lost frame, at a random one of its frames): each honest party aborts or holds
/// the honest run's outputs, never another value, and the harness ends every run (a lost frame
/// is a receive that times out, not a hang). Both honest parties stop, except when the fault
/// hit a verdict (the last message of a check: a cheater can always make one honest party stop
/// and leave the other with its correct output, as the sweep tests above say).
fn mal3_faults<R: IntRing + Mal3Ring>(trials: u64, seed: u64, checks: Checks) {
    const SETUP_FRAMES: u64 = 2;
    use ringfence_core::prg::{Prg, Seed};
    use ringfence_core::testing::faults::{self, Fault};
    let net = Net::new(3);
    let count = faults::inject(&net, PartyId(1), u64::MAX, Fault::Drop);
    let honest: Vec<[Vec<R>; 3]> = mal3_program::<R>(&net, checks)
        .into_iter()
        .map(|o| o.expect("the honest run completes"))
        .collect();
    let frames = count.sent();
    assert!(frames > 30, "{frames} frames cannot be the whole program");
    let mut prg = Prg::new(&Seed::from_bytes([0x3a; 32]), seed, 0);
    let (mut verdicts, mut dropped, mut replayed) = (0, 0, 0);
    for t in 0..trials {
        // P1's first two frames are its contributions to the session's common seed, its own
        // random choice (mal3 draws no coin from that seed: its coins are opened sharings).
        let target = SETUP_FRAMES + prg.next_u64() % (frames - SETUP_FRAMES);
        let fault = Fault::draw(&mut prg);
        let net = Net::new(3);
        let injection = faults::inject(&net, PartyId(1), target, fault);
        let outs = mal3_program::<R>(&net, checks);
        let hit = injection.hit();
        let what = format!("trial {t} (frame {target} of {} bytes, {fault:?})", hit.len);
        if !hit.met {
            // An empty frame (nothing to change): the run is the honest one.
            assert!(outs.iter().zip(&honest).all(|(o, h)| o.as_ref().ok() == Some(h)), "{what}");
            continue;
        }
        let mut stopped = 0;
        for i in [0, 2] {
            match &outs[i] {
                Ok(o) => assert_eq!(o, &honest[i], "{what}: P{i} released a wrong value"),
                Err(_) => stopped += 1,
            }
        }
        verdicts += usize::from(hit.verdict);
        dropped += usize::from(fault == Fault::Drop);
        replayed += usize::from(fault == Fault::Replay && !hit.flipped);
        let need = if hit.verdict { 1 } else { 2 };
        assert!(stopped >= need, "{what}: {stopped} honest parties stopped: {outs:?}");
    }
    // The draw reaches every kind of fault and the verdicts (asserted where the trials are
    // many enough for it: the few under wasm check the same code on that platform, and a
    // short draw may miss a kind).
    if trials >= 100 {
        assert!(verdicts > 0 && dropped > 0 && replayed > 0, "{verdicts} {dropped} {replayed}");
    }
}

#[test]
fn seeded_faults_in_a_mal3_program_end_in_aborts_z64() {
    mal3_faults::<Z64>(if common::UNDER_WASM { 40 } else { 10_000 }, 1, Checks::Pool);
}

#[test]
fn seeded_faults_in_a_mal3_program_end_in_aborts_z32() {
    mal3_faults::<Z32>(if common::UNDER_WASM { 40 } else { 10_000 }, 2, Checks::Pool);
}

/// Protocol 3.9 with a small `N` (2^−20: a test's parameters; the paper's `N = 2^20` gives
/// 2^−40): every run of Protocol 3.1 has buckets of 2 and three triples opened per subarray.
fn small_on_demand() -> OnDemand {
    OnDemand::new(Params { n: 1024, b: 2, c: 3, l: 8 }).expect("within Theorem 3.10's conditions")
}

#[test]
fn on_demand_checks_give_the_same_results() {
    let net = Net::new(3);
    let want = mal3_program::<Z64>(&net, Checks::Pool);
    let got = mal3_program::<Z64>(&Net::new(3), Checks::OnDemand(small_on_demand()));
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.as_ref().ok(), Some(w.as_ref().expect("the bucketed run")), "P{i}");
    }
}

/// The paper's baseline runs (whole-array shuffles) validate triples the checks accept as
/// well: the same results, and seeded faults end in aborts with them too.
#[test]
fn baseline_runs_give_the_same_results_and_abort_on_faults() {
    let want = mal3_program::<Z64>(&Net::new(3), Checks::Pool);
    let got = mal3_program::<Z64>(&Net::new(3), Checks::Baseline);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.as_ref().ok(), Some(w.as_ref().expect("the subarray run")), "P{i}");
    }
    mal3_faults::<Z64>(if common::UNDER_WASM { 10 } else { 500 }, 5, Checks::Baseline);
}

#[test]
fn baseline_runs_are_chosen_before_any_triple_and_not_on_demand() {
    let outs = testing::run_rep3_on(&Net::new(3), 3, 87, |p| async move {
        use ringfence_core::mal3::Mal3;
        use ringfence_core::sharing::{Arith, Len, Session};
        let mut late = Mal3::start(p);
        Arith::<Z64>::mul_prep(&mut late, &Len(4), &Len(4), 0).await?;
        let first = late.use_baseline_runs();
        let mut s = Mal3::start(Session::finish(late));
        s.check_on_demand(small_on_demand())?;
        Ok([first, s.use_baseline_runs()])
    });
    for o in outs {
        let o = o.expect("the session runs");
        for r in o {
            assert!(matches!(&r, Err(Error::ApiMisuse(m)) if m.contains("baseline")), "{r:?}");
        }
    }
}

/// The seeded faults of the tests above with on-demand checks: also the coin that picks each
/// check's triple, and the refilled slots.
#[test]
fn seeded_faults_with_on_demand_checks_end_in_aborts() {
    let trials = if common::UNDER_WASM { 20 } else { 2_000 };
    mal3_faults::<Z64>(trials, 3, Checks::OnDemand(small_on_demand()));
    mal3_faults::<Z32>(trials, 4, Checks::OnDemand(small_on_demand()));
}

#[test]
fn on_demand_checks_are_chosen_before_any_product() {
    let outs = testing::run_rep3_on(&Net::new(3), 3, 87, |p| async move {
        use ringfence_core::mal3::Mal3;
        use ringfence_core::sharing::{Arith, Len, Session};
        let mut s = Mal3::start(p);
        Arith::<Z64>::mul_prep(&mut s, &Len(4), &Len(4), 0).await?;
        s.check_on_demand(small_on_demand())
    });
    for o in outs {
        assert!(
            matches!(&o, Err(Error::ApiMisuse(m)) if m.contains("before any product")),
            "{o:?}"
        );
    }
}

/// Words each party sends for one run of Protocol 3.1 with `prm` (see
/// `validation_costs_what_the_protocol_says`).
fn run_words(prm: &Params) -> usize {
    prm.generated() + 3 * prm.opened() + 2 * (prm.b - 1) * prm.n + 4 + 3 * 2 + 2 * 2
}

/// Bits each party sends per AND gate over a long run, from the same counts as the measured
/// test below: the gate (1), its check (ρ, σ: 2), and the share of the validation runs that
/// made its triple (`run_words / N` with `B − 1` extra arrays, one triple per check).
fn bits_per_and(prm: &Params) -> f64 {
    3.0 + run_words(prm) as f64 / prm.n as f64
}

/// The paper's accounting (extract §2): 7 bits per AND gate and party with B = 2 on demand,
/// 10 with B = 3 (Protocol 3.1 at its 2^−40 size); the difference is only the cut's opened
/// triples and fixed words. And what a sequence of requests costs, counted exactly: the first
/// check fills both arrays (two runs), a check that finds fewer refills than it needs runs
/// Protocol 3.1 once more, and every check costs its coin (4 words, a tag and a verdict),
/// the products' ρ and σ, and the check's two tags and verdicts.
#[test]
fn on_demand_ands_cost_seven_bits_and_bucketed_ten() {
    let paper = OnDemand::PAPER.run();
    assert!((bits_per_and(&paper) - 7.0).abs() < 0.01, "{}", bits_per_and(&paper));
    assert!((bits_per_and(&Params::PAPER) - 10.0).abs() < 0.01, "{}", bits_per_and(&Params::PAPER));
    assert_eq!(Params::for_count(1 << 20), Params { l: 1024, ..Params::PAPER });

    let od = small_on_demand();
    let prm = od.run();
    let w = 300; // words of 64 ANDs per request: the arrays' 1024 refills last three requests
    let outs = testing::run_rep3(88, move |p| async move {
        use ringfence_core::mal3::Mal3;
        use ringfence_core::sharing::{Gates, Session};
        let mut s = Mal3::start(p);
        s.check_on_demand(od)?;
        let bits: Vec<bool> = (0..64 * w).map(|i| i % 3 == 0).collect();
        let x =
            s.input_bits(PartyId(0), (s.me() == PartyId(0)).then_some(&bits[..]), 64 * w).await?;
        let mut sent = Vec::new();
        for _ in 0..5 {
            let before = s.base().ctx().stats();
            let z = s.and(&x, &x).await?;
            let opened = s.open_bits(z.slice(0..1)).await?;
            assert_eq!(opened, vec![true]);
            sent.push((s.base().ctx().stats() - before).payload_bytes_sent / 8);
        }
        Ok(sent)
    });
    let per_request = w + (4 + 2 + 2) + (2 * w + 2 + 2 + 2) + (2 + 2);
    let run = run_words(&prm);
    // Runs before each request's check: both arrays first; then d2 holds 724, 424, 124 (short
    // of 300: one run, 1148), 848.
    let runs = [2, 0, 0, 1, 0];
    let want: Vec<u64> = runs.iter().map(|r| (per_request + r * run) as u64).collect();
    for (i, o) in outs.iter().enumerate() {
        assert_eq!(o, &want, "P{i}");
    }
}
