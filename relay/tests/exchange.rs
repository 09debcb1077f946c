//! Three parties over real TCP+Noise exchange frames of many sizes, then run a rep3 `mul` and
//! `reveal` checked against plaintext.

use crate::common;

use std::time::Duration;

use ringfence_core::net::{Ctx, PartyId, Transport};
use ringfence_core::rep3::{Rep3, Rep3Seeds};
use ringfence_core::ring::Z64;
use ringfence_relay::TcpTransport;

const SIZES: [usize; 5] = [0, 1, 8190, 8191, 100_000];

fn pattern(from: u8, to: u8, n: usize) -> Vec<Z64> {
    (0..n as u64)
        .map(|i| Z64(i.wrapping_mul(0x9e37_79b9) ^ (u64::from(from) << 40 | u64::from(to))))
        .collect()
}

async fn exchange(me: PartyId, t: TcpTransport) -> TcpTransport {
    let mut ctx = Ctx::new(me, 3, common::SESSION, t);
    for n in SIZES {
        ctx.round();
        for j in 0..3u8 {
            if j != me.0 {
                ctx.send(PartyId(j), &pattern(me.0, j, n)).unwrap();
            }
        }
        for j in 0..3u8 {
            if j != me.0 {
                let got: Vec<Z64> = ctx.recv(PartyId(j), n).await.unwrap();
                assert_eq!(got, pattern(j, me.0, n), "{me} from P{j}, n = {n}");
            }
        }
    }
    let sent = ctx.stats().bytes_sent;
    let t = ctx.into_transport();
    // Wire bytes cover every frame byte plus record overhead and the handshakes.
    assert!(t.wire_bytes_sent() > sent, "{} wire vs {sent} frame bytes", t.wire_bytes_sent());
    t
}

#[test]
fn frames_of_many_sizes_cross_every_link() {
    for plain in [false, true] {
        let (parties, _) = common::parties(3, plain, Duration::from_secs(5));
        common::run(parties, |me, t| async move {
            exchange(me, t.unwrap()).await.close().await.unwrap();
        });
    }
}

#[test]
fn rep3_mul_and_reveal_match_plaintext() {
    const N: usize = 10_000;
    let xs: Vec<Z64> = (0..N as u64).map(|i| Z64(i * 31 + 7)).collect();
    let ys: Vec<Z64> = (0..N as u64).map(|i| Z64(u64::MAX - i * 1_000_003)).collect();
    let expect: Vec<Z64> = xs.iter().zip(&ys).map(|(x, y)| *x * *y).collect();
    let (parties, _) = common::parties(3, false, Duration::from_secs(5));
    let results = common::run(parties, move |me, t| {
        let (xs, ys) = (xs.clone(), ys.clone());
        async move {
            let t = t.unwrap();
            let seeds = Rep3Seeds {
                prev: t.seed_with(PartyId((me.0 + 2) % 3)),
                next: t.seed_with(PartyId((me.0 + 1) % 3)),
                own: ringfence_relay::os_seed().unwrap(),
            };
            let ctx = Ctx::new(me, 3, common::SESSION, t);
            let mut p = Rep3::setup(ctx, seeds).await.unwrap();
            let x = p.input(PartyId(0), (me.0 == 0).then_some(&xs[..]), N).await.unwrap();
            let y = p.input(PartyId(1), (me.0 == 1).then_some(&ys[..]), N).await.unwrap();
            let before = p.ctx().stats();
            let z = p.mul(&x, &y).await.unwrap();
            let cost = p.ctx().stats() - before;
            let out = p.reveal(z).await.unwrap();
            p.into_ctx().into_transport().close().await.unwrap();
            (out, cost.rounds, cost.payload_bytes_sent)
        }
    });
    for (out, rounds, payload) in results {
        assert_eq!(out, expect);
        assert_eq!((rounds, payload), (1, 8 * N as u64));
    }
}

#[test]
fn send_to_an_unknown_party_is_an_error() {
    let (parties, _) = common::parties(2, false, Duration::from_secs(5));
    common::run(parties, |_, t| async move {
        let mut t = t.unwrap();
        assert!(t.send(PartyId(7), vec![1]).is_err());
        assert!(t.recv(PartyId(7)).await.is_err());
    });
}
