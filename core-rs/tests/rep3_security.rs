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

/// The digests that check a client's input are keyed with keys only each piece's holders know:
/// the same client input (same values, same client randomness, so the same component that P0
/// lacks) gives P0 different digests of that component in sessions with different party keys.
/// Unkeyed, they would be equal, and P0 could test guesses of a low-entropy input against them.
#[test]
fn a_party_cannot_test_guesses_of_a_client_input_against_the_consistency_digests() {
    use ringfence_core::net::{Ctx, SessionId};
    use ringfence_core::prg::Seed;
    use ringfence_core::rep3::{client::Rep3Client, Rep3};
    let digests_p0_gets = |party_seed: u64| -> Vec<u8> {
        let net = Net::new(4);
        let client = PartyId(3);
        let mut futs: Vec<testing::PartyFuture<'_, Result<(), Error>>> = Vec::new();
        for (i, seeds) in testing::rep3_seeds(party_seed).into_iter().enumerate() {
            let ctx =
                Ctx::new(PartyId(i as u8), 4, SessionId([1; 16]), net.transport(PartyId(i as u8)));
            futs.push(Box::pin(async move {
                let mut p = Rep3::setup(ctx, seeds).await?;
                p.input_from_client::<Z64>(client, 1).await.map(drop)
            }));
        }
        let ctx = Ctx::new(client, 4, SessionId([1; 16]), net.transport(client));
        futs.push(Box::pin(async move {
            Rep3Client::new(ctx, Seed::from_bytes([9; 32])).share(&[Z64(1)]).map(drop)
        }));
        assert!(net.run(futs).iter().all(Result::is_ok));
        // P1's frames to P0: the setup round's, then the two digests (64 bytes).
        let log = net.log();
        let frames: Vec<_> =
            log.iter().filter(|e| e.from == PartyId(1) && e.to == PartyId(0)).collect();
        assert_eq!(frames.len(), 2);
        frames[1].bytes[frames[1].bytes.len() - 64..].to_vec()
    };
    let (a, b) = (digests_p0_gets(1), digests_p0_gets(2));
    // Digest 1 of P1's is of component 2, which P0 lacks; both runs share it identically.
    assert_ne!(a[32..], b[32..], "the digest of the piece P0 lacks is keyed");
}
