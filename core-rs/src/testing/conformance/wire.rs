//! What goes on the wire: fresh randomness per operation, and one party's view of an input.
//!
//! Both read [`Net::log`]. A party's frames appear there in the order it sent them, so the
//! frames of one operation are those between its `frames_sent` counter before and after.

use core::ops::Range;

use super::{input_now, label, plain_mul, random, run_with, stats_of, Party, Scheme, TestBase};
use crate::net::{frame, PartyId};
use crate::ring::IntRing;
use crate::testing::{Envelope, Net};

/// The frames a party sent in one operation, numbered by its own count of frames sent.
type Window = Range<u64>;

/// The payloads `from` sent in `window`, with their receivers.
fn sent<'a>(log: &'a [Envelope], from: PartyId, window: &Window) -> Vec<(PartyId, &'a [u8])> {
    let (skip, take) = (window.start as usize, (window.end - window.start) as usize);
    let own = log.iter().filter(|e| e.from == from).skip(skip).take(take);
    own.map(|e| (e.to, e.bytes.get(frame::HEADER_LEN..).unwrap_or_default())).collect()
}

/// Two runs of the same operation on the same values within one session send different
/// messages: two inputs of `x` by one owner, two products `x·y` (their reshared or masked
/// components), and the two openings of those products. Every message of the first run
/// differs from its counterpart in the second, at every party that sends one; the values
/// opened are the same.
pub fn fresh_randomness<R: IntRing, S: Party<R, B>, B: TestBase>(sc: &Scheme<S, B>) {
    let at = label::<R, S>();
    let parties = &sc.parties();
    let net = Net::new(sc.roster.n());
    let (x, y) = (&random::<R>(100, 32), &random::<R>(101, 32));
    let owner = PartyId(2);
    let stats = stats_of::<B, S>;
    let outs = run_with(sc, &at, &net, 102, |mut s| async move {
        let mut marks = vec![stats(&s).frames_sent];
        let mut mark = |s: &S| marks.push(stats(s).frames_sent);
        let vx = input_now(&mut s, owner, x).await?;
        mark(&s);
        let vx2 = input_now(&mut s, owner, x).await?;
        mark(&s);
        let vy = input_now(&mut s, PartyId(0), y).await?;
        let (p1, _) = s.mul_prep(&S::tag(&vx), &S::tag(&vy), 0).await?;
        let (p2, _) = s.mul_prep(&S::tag(&vx), &S::tag(&vy), 0).await?;
        mark(&s);
        let z1 = s.mul(&vx, &vy, p1).await?;
        mark(&s);
        let z2 = s.mul(&vx, &vy, p2).await?;
        mark(&s);
        let o1 = s.open(z1).await?;
        mark(&s);
        let o2 = s.open(z2).await?;
        mark(&s);
        let opened = [o1, o2, s.open(vx).await?, s.open(vx2).await?];
        Ok((marks, opened))
    });
    let log = net.log();
    // (operation, first run's window, second run's), as indices into the marks.
    let ops = [("inputs", 0, 1), ("products", 3, 4), ("openings of products", 5, 6)];
    for (what, first, second) in ops {
        let mut compared = 0;
        for (me, (marks, _)) in parties.iter().zip(&outs) {
            let one = sent(&log, *me, &(marks[first]..marks[first + 1]));
            let two = sent(&log, *me, &(marks[second]..marks[second + 1]));
            let shape = |v: &[(PartyId, &[u8])]| -> Vec<_> {
                v.iter().map(|(to, p)| (*to, p.len())).collect()
            };
            assert_eq!(shape(&one), shape(&two), "{at}: two {what}, messages of {me}");
            for ((to, m1), (_, m2)) in one.iter().zip(&two) {
                assert_ne!(m1, m2, "{at}: two {what}, {me} sent {to} the same message");
                compared += 1;
            }
        }
        assert!(compared > 0, "{at}: two {what} sent nothing to compare");
    }
    let want = [plain_mul(x, y), plain_mul(x, y), x.clone(), x.clone()];
    for (me, (_, opened)) in parties.iter().zip(&outs) {
        assert_eq!(opened, &want, "{at}: values opened at {me}");
    }
}

/// A single party's view of an input it does not own, and of that input's square: what it
/// receives looks uniform whatever the secret. For each of two constant secrets, 0 and −1
/// (all ones), and each owner, every bit position of the elements each other party receives
/// is set in between a quarter and three quarters of them (a secret sent in the clear, or
/// under a mask shorter than the ring, leaves a position at 0 or 1 throughout).
pub fn observer_view<R: IntRing, S: Party<R, B>, B: TestBase>(sc: &Scheme<S, B>) {
    let at = label::<R, S>();
    let parties = &sc.parties();
    let stats = stats_of::<B, S>;
    for secret in [R::ZERO, -R::ONE] {
        let x = &[secret; 256];
        for &owner in parties {
            let net = Net::new(sc.roster.n());
            let outs = run_with(sc, &at, &net, 110 + u64::from(owner.0), |mut s| async move {
                let start = stats(&s).frames_sent;
                let vx = input_now(&mut s, owner, x).await?;
                let input = start..stats(&s).frames_sent;
                let (p, _) = s.mul_prep(&S::tag(&vx), &S::tag(&vx), 0).await?;
                let start = stats(&s).frames_sent;
                let square = s.mul(&vx, &vx, p).await?;
                let mul = start..stats(&s).frames_sent;
                Ok(([input, mul], s.open(square).await?))
            });
            let log = net.log();
            for observer in sc.roster.others(owner) {
                let mut view: Vec<R> = Vec::new();
                for (from, (windows, _)) in parties.iter().zip(&outs) {
                    for w in windows {
                        for (to, payload) in sent(&log, *from, w) {
                            if to == observer {
                                R::decode(payload, &mut view);
                            }
                        }
                    }
                }
                assert!(!view.is_empty(), "{at}: {observer} receives nothing of {owner}'s input");
                let n = view.len();
                for bit in 0..R::BITS {
                    let set = view.iter().filter(|v| (v.to_u64() >> bit) & 1 == 1).count();
                    assert!(
                        (n / 4..=3 * n / 4).contains(&set),
                        "{at}: bit {bit} is set in {set} of the {n} elements {observer} receives \
                         of {owner}'s input of {secret:?}"
                    );
                }
            }
            let want = plain_mul(x, x);
            for (me, (_, square)) in parties.iter().zip(&outs) {
                assert_eq!(square, &want, "{at}: {owner}'s secret squared, opened at {me}");
            }
        }
    }
}
