//! Oblivious transfer against its ideal functionality: base OTs give the receiver exactly the
//! key of its choice, the extension gives rows with `t_j = q_j ⊕ r_j·Δ`, and a receiver that
//! deviates in the extension is caught by the consistency check (or, where a changed column
//! meets a zero bit of Δ, changes nothing).

use std::cell::Cell;
use std::rc::Rc;

use ringfence_core::net::{frame, Ctx, PartyId, SessionId};
use ringfence_core::ot::{base, BaseOts, Cot, KAPPA};
use ringfence_core::prg::{Prg, Seed};
use ringfence_core::testing::{self, Action, Envelope, MemTransport, Net};
use ringfence_core::Error;

fn prg(me: PartyId, salt: u8) -> Prg {
    Prg::new(&Seed::from_bytes([salt ^ me.0; 32]), 7, 0)
}

fn bits(prg: &mut Prg, n: usize) -> Vec<bool> {
    (0..n).map(|_| prg.next_u32() & 1 == 1).collect()
}

/// Runs `f` as each of `n` parties on `net`.
fn run<O>(
    net: &Net,
    n: usize,
    f: impl Fn(Ctx<MemTransport>) -> testing::PartyFuture<'static, Result<O, Error>>,
) -> Vec<Result<O, Error>> {
    let futs = (0..n)
        .map(|i| {
            let me = PartyId(i as u8);
            f(Ctx::new(me, n, SessionId([4; 16]), net.transport(me)))
        })
        .collect();
    net.run(futs)
}

/// A seed's first output words (seeds do not print their bytes).
fn id(s: &Seed) -> [u64; 2] {
    let mut p = Prg::new(s, 0, 0);
    [p.next_u64(), p.next_u64()]
}

fn peers(me: PartyId, n: usize) -> Vec<PartyId> {
    (0..n as u8).map(PartyId).filter(|&p| p != me).collect()
}

#[test]
fn base_ots_give_the_receiver_the_key_of_its_choice_and_not_the_other() {
    let n = 3;
    let net = Net::new(n);
    let outs = run(&net, n, |mut ctx| {
        Box::pin(async move {
            let me = ctx.me();
            let mut own = prg(me, 1);
            let choices = bits(&mut prg(me, 2), 40);
            let ots =
                base::exchange(&mut ctx, &mut own, &peers(me, n), &choices, |_| 40, 5).await?;
            Ok((choices, ots))
        })
    });
    let outs: Vec<(Vec<bool>, Vec<BaseOts>)> = outs.into_iter().map(Result::unwrap).collect();
    let slot = |me: usize, peer: usize| if peer < me { peer } else { peer - 1 };
    for (r, (choices, ots)) in outs.iter().enumerate() {
        for s in (0..n).filter(|&s| s != r) {
            let received = &ots[slot(r, s)].received;
            let sent = &outs[s].1[slot(s, r)].sent;
            for (l, &b) in choices.iter().enumerate() {
                let pair = &sent[l];
                assert_eq!(id(&received[l]), id(&pair[usize::from(b)]), "P{r} from P{s}, OT {l}");
                assert_ne!(id(&received[l]), id(&pair[usize::from(!b)]), "P{r} from P{s}, OT {l}");
            }
        }
    }
}

/// Base OTs choosing each party's Δ, then one extension of `m` OTs with random choices, with
/// `hook` on the wire. Returns each party's Δ, choices and rows.
#[allow(clippy::type_complexity)]
fn extension(
    n: usize,
    m: usize,
    hook: impl FnMut(&mut Envelope) -> Action + 'static,
) -> Vec<Result<(u128, Vec<bool>, Vec<Vec<u128>>, Vec<Vec<u128>>), Error>> {
    let net = Net::new(n);
    net.set_hook(hook);
    run(&net, n, move |mut ctx| {
        Box::pin(async move {
            let me = ctx.me();
            let mut own = prg(me, 3);
            let delta = u128::from(own.next_u64()) | u128::from(own.next_u64()) << 64;
            let delta_bits: Vec<bool> = (0..KAPPA).map(|l| delta >> l & 1 == 1).collect();
            let ps = peers(me, n);
            let ots = base::exchange(&mut ctx, &mut own, &ps, &delta_bits, |_| KAPPA, 1).await?;
            let bases: Vec<_> = ps.iter().copied().zip(&ots).collect();
            let mut cot = Cot::new(delta, me, &bases, n)?;
            let choices = bits(&mut prg(me, 4), m);
            let ext = cot.extend(&mut ctx, &mut own, &choices).await?;
            Ok((delta, choices, ext.received, ext.sent))
        })
    })
}

#[test]
fn extended_rows_are_correlated_by_the_senders_delta() {
    for n in [2, 3] {
        let outs: Vec<_> =
            extension(n, 1000, |_| Action::Deliver).into_iter().map(Result::unwrap).collect();
        for (r, (_, choices, received, _)) in outs.iter().enumerate() {
            for (s, (delta, _, _, sent)) in outs.iter().enumerate().filter(|&(s, _)| s != r) {
                let (t, q) = (&received[s], &sent[r]);
                assert_eq!(t.len(), 1000);
                for j in 0..1000 {
                    let want = q[j] ^ if choices[j] { *delta } else { 0 };
                    assert_eq!(t[j], want, "P{r} from P{s}, row {j}");
                }
            }
        }
        // Rows are random, not constant.
        assert_ne!(outs[0].3[1][0], outs[0].3[1][1]);
    }
}

/// A receiver that flips one bit of one column (a choice bit that differs between columns):
/// the sender aborts exactly when that column's bit of Δ is 1; otherwise the flip changes
/// nothing the sender computes, and the rows stay correct.
#[test]
fn an_inconsistent_receiver_is_caught_where_it_matters() {
    let (mut caught, mut harmless) = (0, 0);
    for column in [0usize, 5, 64, 100, 127] {
        let hit = Rc::new(Cell::new(false));
        let h = hit.clone();
        // P1's first extension message to P0 (frame 1 on that link, after the base OTs): the
        // 128 columns of 64·w bits each.
        let m = 1000;
        let w = (m + KAPPA + 64).div_ceil(64);
        let outs = extension(2, m, move |e| {
            if e.from == PartyId(1) && e.to == PartyId(0) && e.index == 1 {
                h.set(e.bytes.len() == frame::HEADER_LEN + 8 * KAPPA * w);
                e.bytes[frame::HEADER_LEN + 8 * column * w + 3] ^= 0x04;
            }
            Action::Deliver
        });
        assert!(hit.get(), "the hook met the columns");
        // P0's Δ is the same in every run (its randomness is fixed).
        let delta0 = match &outs[1] {
            Ok((_, _, _, _)) | Err(_) => {
                let mut own = prg(PartyId(0), 3);
                u128::from(own.next_u64()) | u128::from(own.next_u64()) << 64
            }
        };
        if delta0 >> column & 1 == 1 {
            assert!(
                matches!(&outs[0], Err(Error::Abort { blame: Some(PartyId(1)), .. })),
                "column {column}: P0 should abort, got {:?}",
                outs[0].as_ref().err()
            );
            caught += 1;
        } else {
            let (_, _, _, sent) = outs[0].as_ref().expect("P0 goes on");
            let (_, choices, received, _) = outs[1].as_ref().expect("P1 goes on");
            for j in 0..m {
                assert_eq!(received[0][j], sent[1][j] ^ if choices[j] { delta0 } else { 0 });
            }
            harmless += 1;
        }
    }
    assert!(caught > 0 && harmless > 0, "both cases met ({caught}, {harmless})");
}

#[test]
fn a_wrong_check_answer_is_caught() {
    // P1's answer to P0's challenge: frame 3 on that link (base OTs, columns, its own challenge, the answer).
    let outs = extension(2, 300, |e| {
        if e.from == PartyId(1) && e.to == PartyId(0) && e.index == 3 {
            let at = frame::HEADER_LEN + 20;
            e.bytes[at] ^= 1;
        }
        Action::Deliver
    });
    assert!(
        matches!(&outs[0], Err(Error::Abort { blame: Some(PartyId(1)), .. })),
        "{:?}",
        outs[0].as_ref().err()
    );
}

#[test]
fn a_point_off_the_group_is_a_deviation() {
    let net = Net::new(2);
    net.set_hook(|e: &mut Envelope| {
        if e.from == PartyId(1) {
            // The sender's point X: not a canonical Ristretto encoding once its top bit is set.
            e.bytes[frame::HEADER_LEN + 31] |= 0x80;
        }
        Action::Deliver
    });
    let outs = run(&net, 2, |mut ctx| {
        Box::pin(async move {
            let me = ctx.me();
            let mut own = prg(me, 1);
            base::exchange(&mut ctx, &mut own, &peers(me, 2), &[true, false], |_| 2, 5)
                .await
                .map(|_| ())
        })
    });
    assert!(matches!(&outs[0], Err(Error::Abort { blame: Some(PartyId(1)), .. })), "{:?}", outs[0]);
}
