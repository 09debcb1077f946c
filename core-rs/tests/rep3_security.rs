//! Security properties: fresh masks, redacted Debug, and robust handling of bad frames.

use ringfence_core::net::{FrameError, PartyId, TransportError};
use ringfence_core::rep3::Rep3Vec;
use ringfence_core::ring::Z64;
use ringfence_core::testing::{self, Action, Net};
use ringfence_core::Error;

#[test]
fn two_multiplications_of_the_same_inputs_send_different_messages() {
    let net = Net::new(3);
    let outs = testing::run_rep3_on(&net, 3, 21, |mut p| async move {
        let x = p.random::<Z64>(64);
        let y = p.random::<Z64>(64);
        let z1 = p.mul(&x, &y).await?;
        let z2 = p.mul(&x, &y).await?;
        Ok((p.reveal(z1).await?, p.reveal(z2).await?))
    });
    for o in &outs {
        let (a, b) = o.as_ref().unwrap();
        assert_eq!(a, b, "same product");
    }
    // Frames 0 (setup), 1 and 2 (the two muls) on each link P_i -> P_{i-1}.
    let log = net.log();
    for i in 0..3u8 {
        let to = PartyId((i + 2) % 3);
        let frames: Vec<_> = log.iter().filter(|e| e.from == PartyId(i) && e.to == to).collect();
        let (m1, m2) = (&frames[1].bytes[28..], &frames[2].bytes[28..]);
        assert_eq!(m1.len(), 64 * 8);
        assert_ne!(m1, m2, "reshare of P{i} reused its mask");
    }
}

#[test]
fn debug_output_never_shows_shares_or_seeds() {
    let seeds = testing::rep3_seeds(5);
    let text = format!("{:?}", seeds[0]);
    assert!(text.contains("redacted"));
    let outs = testing::run_rep3(22, |mut p| async move {
        let v = [Z64(0x1234_5678_9abc_def0); 3];
        let x = p.input(PartyId(0), (p.me() == PartyId(0)).then_some(&v[..]), 3).await?;
        Ok(format!("{x:?} {p:?}"))
    });
    for t in outs {
        assert!(
            !t.contains("1311768467463790320") && !t.to_lowercase().contains("123456789abcdef0"),
            "{t}"
        );
        assert!(!t.contains("Z64("), "{t}");
    }
    let pubshare = Rep3Vec::public(PartyId(0), &[Z64(42)]);
    assert!(!format!("{pubshare:?}").contains("42"));
}

/// Runs a mul + reveal with `hook` on the wire and returns each party's result.
fn run_with_hook(
    hook: impl FnMut(&mut testing::Envelope) -> Action + 'static,
) -> Vec<Result<Vec<Z64>, Error>> {
    let net = Net::new(3);
    net.set_hook(hook);
    testing::run_rep3_on(&net, 3, 23, |mut p| async move {
        let x = p.random::<Z64>(10);
        let z = p.mul(&x, &x).await?;
        p.reveal(z).await
    })
}

fn is_misbehaviour(r: &Result<Vec<Z64>, Error>, pred: impl Fn(&FrameError) -> bool) -> bool {
    matches!(r, Err(Error::PeerMisbehaved { reason, .. }) if pred(reason))
}

#[test]
fn tampered_payload_length_is_rejected() {
    let outs = run_with_hook(|e| {
        if e.from == PartyId(1) && e.index == 1 {
            e.bytes.truncate(e.bytes.len() - 3);
        }
        Action::Deliver
    });
    assert!(
        is_misbehaviour(&outs[0], |r| matches!(r, FrameError::LengthMismatch { .. })),
        "{outs:?}"
    );
}

#[test]
fn truncated_header_is_rejected() {
    let outs = run_with_hook(|e| {
        if e.from == PartyId(2) && e.index == 1 {
            e.bytes.truncate(5);
        }
        Action::Deliver
    });
    assert!(is_misbehaviour(&outs[1], |r| matches!(r, FrameError::Truncated(5))), "{outs:?}");
}

#[test]
fn oversized_or_resized_payload_is_rejected() {
    let outs = run_with_hook(|e| {
        if e.from == PartyId(0) && e.index == 1 {
            e.bytes.extend_from_slice(&[0; 8]);
            let len = (e.bytes.len() - 28) as u32;
            e.bytes[24..28].copy_from_slice(&len.to_le_bytes());
        }
        Action::Deliver
    });
    assert!(
        is_misbehaviour(&outs[2], |r| matches!(r, FrameError::WrongSize { expected: 80, got: 88 })),
        "{outs:?}"
    );
}

#[test]
fn wrong_session_is_rejected() {
    let outs = run_with_hook(|e| {
        if e.from == PartyId(0) && e.index == 1 {
            e.bytes[0] ^= 1;
        }
        Action::Deliver
    });
    assert!(
        is_misbehaviour(&outs[2], |r| matches!(r, FrameError::WrongSession { .. })),
        "{outs:?}"
    );
}

#[test]
fn reordered_frames_are_rejected() {
    // Delay P0's first mul frame to P2 so the second mul's frame overtakes it.
    let net = Net::new(3);
    net.set_hook(|e| {
        if e.from == PartyId(0) && e.to == PartyId(2) && e.index == 1 {
            Action::Delay(50)
        } else {
            Action::Deliver
        }
    });
    let outs = testing::run_rep3_on(&net, 3, 25, |mut p| async move {
        let x = p.random::<Z64>(10);
        let y = p.mul(&x, &x).await?;
        let z = p.mul(&x, &x).await?;
        p.reveal(y.add(&z)?).await
    });
    assert!(
        is_misbehaviour(&outs[2], |r| matches!(r, FrameError::WrongStep { expected: 1, got: 2 })),
        "{outs:?}"
    );
}

#[test]
fn a_vanished_peer_times_out_instead_of_hanging() {
    let outs = run_with_hook(|e| {
        if e.from == PartyId(1) && e.index >= 1 {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    assert!(
        matches!(
            &outs[0],
            Err(Error::Transport { peer: PartyId(1), source: TransportError::Timeout(_) })
        ),
        "{outs:?}"
    );
    // Poisoned: the failed party reports the same error again.
}

#[test]
fn a_poisoned_context_keeps_failing() {
    let net = Net::new(3);
    net.set_hook(
        |e| if e.from == PartyId(1) && e.index >= 1 { Action::Drop } else { Action::Deliver },
    );
    let outs = testing::run_rep3_on(&net, 3, 24, |mut p| async move {
        let x = p.random::<Z64>(4);
        let first = p.mul(&x, &x).await;
        let second = p.mul(&x, &x).await;
        Ok((first.err(), second.err()))
    });
    let (first, second) = outs[0].as_ref().unwrap();
    assert!(first.is_some());
    assert_eq!(first, second);
}
