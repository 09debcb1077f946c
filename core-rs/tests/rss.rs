//! `rss`: n-party replicated sharing at (n, t) = (3, 1), (5, 2), (7, 3), against plaintext, the
//! paper's cost model (Table 2: elements sent, rounds, PRG draws per party), and what `t`
//! colluding parties see.

use ringfence_core::net::{PartyId, Roster, Stats};
use ringfence_core::ring::{IntRing, Z32, Z64};
use ringfence_core::rss::{RssVec, SUPPORTED};
use ringfence_core::testing::{self, random_words, Net};

fn rosters() -> Vec<Roster> {
    SUPPORTED.iter().map(|&(n, t)| Roster::new(n, t).unwrap()).collect()
}

fn binom(n: u64, k: u64) -> u64 {
    (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
}

/// Random values, then 0, ±1, the most negative and the most positive value.
fn values<R: IntRing>(seed: u64, n: usize) -> Vec<R> {
    let mut v: Vec<R> = random_words(seed, n).into_iter().map(R::from_u64).collect();
    let min = R::from_u64(1 << (R::BITS - 1));
    v.extend([R::ZERO, R::ONE, -R::ONE, min, min - R::ONE]);
    v
}

fn inputs_products_and_openings<R: IntRing>() {
    for roster in rosters() {
        let at = format!("({}, {}) over Z_2^{}", roster.n(), roster.t(), R::BITS);
        let (x, y) = (values::<R>(1, 40), values::<R>(2, 40));
        let (a, b) = (values::<R>(3, 7)[..12].to_vec(), values::<R>(4, 10)[..15].to_vec());
        let owner_x = PartyId(roster.n() as u8 - 1);
        let outs = testing::run_rss(roster, 5, |mut p| {
            let (x, y, a, b) = (x.clone(), y.clone(), a.clone(), b.clone());
            async move {
                let me = p.me();
                let vx = p.input(owner_x, (me == owner_x).then_some(&x[..]), x.len()).await?;
                let vy = p.input(PartyId(0), (me == PartyId(0)).then_some(&y[..]), y.len()).await?;
                let va = p.input(PartyId(1), (me == PartyId(1)).then_some(&a[..]), 12).await?;
                let vb = p.input(PartyId(2), (me == PartyId(2)).then_some(&b[..]), 15).await?;
                let xy = p.mul(&vx, &vy).await?;
                let ab = p.matmul(&va, &vb, (4, 3, 5)).await?;
                let lin = vx.add(&vy)?.scale(R::from_i64(3)).add_public(&y)?;
                let public = p.mul_pub(&vx, &vy).await?;
                let mut to_each = Vec::new();
                for to in p.roster().parties() {
                    to_each.push(p.open_to_party(to, xy.clone()).await?);
                }
                Ok((p.open(xy).await?, p.open(ab).await?, p.open(lin).await?, public, to_each))
            }
        });
        let xy: Vec<R> = x.iter().zip(&y).map(|(&a, &b)| a * b).collect();
        let mut ab = vec![R::ZERO; 20];
        for i in 0..4 {
            for j in 0..5 {
                for k in 0..3 {
                    ab[i * 5 + j] += a[i * 3 + k] * b[k * 5 + j];
                }
            }
        }
        let lin: Vec<R> = x.iter().zip(&y).map(|(&a, &b)| (a + b) * R::from_i64(3) + b).collect();
        for (i, (got_xy, got_ab, got_lin, public, to_each)) in outs.iter().enumerate() {
            assert_eq!(got_xy, &xy, "{at}: x·y at P{i}");
            assert_eq!(got_ab, &ab, "{at}: a·b at P{i}");
            assert_eq!(got_lin, &lin, "{at}: 3(x + y) + y at P{i}");
            assert_eq!(public, &xy, "{at}: multiply-and-open at P{i}");
            for (to, got) in to_each.iter().enumerate() {
                assert_eq!(
                    got.as_ref(),
                    (to == i).then_some(&xy),
                    "{at}: opening to P{to} at P{i}"
                );
            }
        }
    }
}

#[test]
fn inputs_products_and_openings_match_plaintext_z64() {
    inputs_products_and_openings::<Z64>();
}

#[test]
fn inputs_products_and_openings_match_plaintext_z32() {
    inputs_products_and_openings::<Z32>();
}

/// Table 2, per party and value: input t elements (owner only), open t, mul t, one matrix
/// product's output t, multiply-and-open n − 1, each in one round; PRandR draws C(n−1, t)
/// elements and a product (t+1)(C(n−1, t) − 1); nothing else draws.
#[test]
fn costs_per_party_equal_table_2() {
    for roster in rosters() {
        let (n, t) = (roster.n() as u64, roster.t() as u64);
        let held = binom(n - 1, t);
        let len = 9u64;
        let outs = testing::run_rss(roster, 6, |mut p| async move {
            let me = p.me();
            let mut m: Vec<(&str, Stats, u64)> = Vec::new();
            let (s0, d0) = (p.ctx().stats(), p.prg_draws());
            let x = p.random::<Z64>(len as usize);
            m.push(("random", p.ctx().stats() - s0, p.prg_draws() - d0));
            let (s0, d0) = (p.ctx().stats(), p.prg_draws());
            let v = vec![Z64(7); len as usize];
            let y = p.input(PartyId(1), (me == PartyId(1)).then_some(&v[..]), len as usize).await?;
            m.push(("input", p.ctx().stats() - s0, p.prg_draws() - d0));
            let (s0, d0) = (p.ctx().stats(), p.prg_draws());
            let z = p.mul(&x, &y).await?;
            m.push(("mul", p.ctx().stats() - s0, p.prg_draws() - d0));
            let (s0, d0) = (p.ctx().stats(), p.prg_draws());
            p.matmul(&x, &y, (3, 3, 3)).await?;
            m.push(("matmul", p.ctx().stats() - s0, p.prg_draws() - d0));
            let (s0, d0) = (p.ctx().stats(), p.prg_draws());
            p.mul_pub(&x, &y).await?;
            m.push(("mul_pub", p.ctx().stats() - s0, p.prg_draws() - d0));
            let (s0, d0) = (p.ctx().stats(), p.prg_draws());
            p.open(z).await?;
            m.push(("open", p.ctx().stats() - s0, p.prg_draws() - d0));
            Ok((me, m))
        });
        for (me, m) in outs {
            for (op, s, draws) in m {
                let at = format!("({n}, {t}) {me} {op}");
                let (elems, rounds, want_draws) = match op {
                    "random" => (0, 0, held * len),
                    "input" if me == PartyId(1) => (t * len, 1, (held - 1) * len),
                    "input" => (0, 1, 0), // checked below: depends on the shares held
                    "mul" | "matmul" => (t * len, 1, (t + 1) * (held - 1) * len),
                    "mul_pub" => ((n - 1) * len, 1, 0),
                    "open" => (t * len, 1, 0),
                    _ => unreachable!(),
                };
                assert_eq!(s.payload_bytes_sent, elems * 8, "{at}: bytes");
                assert_eq!(s.rounds, rounds, "{at}: rounds");
                match op {
                    "input" if me != PartyId(1) => {
                        // C(n−2, t) shares without the owner, one of which may be χ(owner).
                        let shared = binom(n - 2, t);
                        assert!(
                            draws == shared * len || draws == (shared - 1) * len,
                            "{at}: {draws}"
                        );
                    }
                    // A holder of rank j < t draws once per share, the last holder t times.
                    "mul_pub" => assert!(draws >= held * len && draws <= t * held * len, "{at}"),
                    _ => assert_eq!(draws, want_draws, "{at}: PRG draws"),
                }
            }
        }
    }
}

/// An external client's input and output: the client sends seeds and the designated share,
/// gets one masked element per value from each party, and reconstructs; the parties never
/// see the values.
#[test]
fn a_client_shares_its_input_and_alone_gets_the_result() {
    for roster in rosters() {
        let x = values::<Z64>(9, 30);
        let client = roster.first_client();
        let (parties, got) = testing::run_rss_with_client(
            roster,
            7,
            |mut p| async move {
                let v = p.input_from_client::<Z64>(client, 35).await?;
                let sq = p.mul(&v, &v).await?;
                p.open_to_client(client, sq).await?;
                Ok(p.ctx().stats())
            },
            |mut c| {
                let x = x.clone();
                async move {
                    c.share(&x)?;
                    c.reconstruct::<Z64>(35).await
                }
            },
        );
        let want: Vec<Z64> = x.iter().map(|&v| v * v).collect();
        assert_eq!(got, want, "({}, {})", roster.n(), roster.t());
        assert_eq!(parties.len(), roster.n());
    }
}

/// A client that sends two holders of a share different seeds is caught by every party before
/// the input is used, naming the client.
#[test]
fn a_client_sending_inconsistent_shares_is_refused_by_every_party() {
    for roster in rosters() {
        let net = Net::new(roster.participants(1));
        let client = roster.first_client();
        // The client's seed message to P1 (its first frame to P1), one byte changed.
        net.set_hook(move |e| {
            if e.from == client && e.to == PartyId(1) && e.index == 0 {
                let last = e.bytes.len() - 1;
                e.bytes[last] ^= 1;
            }
            testing::Action::Deliver
        });
        let results = run_client_input(&net, roster, 8);
        for (i, r) in results.iter().enumerate() {
            let e = r.as_ref().expect_err("the input is refused").to_string();
            assert!(e.contains(&client.to_string()) && e.contains("different"), "P{i}: {e}");
        }
    }
}

fn run_client_input(
    net: &Net,
    roster: Roster,
    seed: u64,
) -> Vec<Result<RssVec<Z64>, ringfence_core::Error>> {
    use ringfence_core::net::{Ctx, SessionId};
    use ringfence_core::rss::client::RssClient;
    let client = roster.first_client();
    let participants = roster.participants(1);
    let mut futs: Vec<
        testing::PartyFuture<'_, Result<Option<RssVec<Z64>>, ringfence_core::Error>>,
    > = roster
        .parties()
        .map(|me| {
            Box::pin(async move {
                let mut p = testing::rss_party(net, roster, participants, seed, me).await?;
                Ok(Some(p.input_from_client::<Z64>(client, 4).await?))
            }) as testing::PartyFuture<'_, _>
        })
        .collect();
    let ctx = Ctx::new(client, participants, SessionId([1; 16]), net.transport(client));
    let mut c = RssClient::new(ctx, roster, testing::rss_own_seed(seed, client));
    futs.push(Box::pin(async move {
        c.share(&[Z64(1), Z64(2), Z64(3), Z64(4)])?;
        Ok(None)
    }));
    net.run(futs).into_iter().take(roster.n()).map(|r| r.map(|o| o.expect("a party's"))).collect()
}

/// What any `t` colluding parties hold of a secret does not depend on it: over many sharings
/// of 0 and of −1 (inputs from an honest party, and their squares), every bit of every share
/// the coalition holds is 1 about half the time under both secrets — except the shares of an
/// input whose set contains its owner, which are 0 by construction under both. And any `t + 1`
/// parties hold every share between them, which sum to the secret.
#[test]
fn t_colluding_parties_see_shares_independent_of_the_secret_and_t_plus_one_reconstruct() {
    const RUNS: u64 = 200;
    for roster in rosters() {
        let (n, t) = (roster.n(), roster.t());
        // Coalitions without the owner P0: the t parties after it, and the t before it.
        for coalition in [(1..=t).collect::<Vec<_>>(), (n - t..n).collect::<Vec<_>>()] {
            let at = format!("({n}, {t}) {coalition:?}");
            let count = |secret: Z64| {
                let mut ones: Vec<[u32; 64]> = Vec::new();
                for run in 0..RUNS {
                    let outs = testing::run_rss(roster, 1000 + run, |mut p| async move {
                        let me = p.me();
                        let s = [secret];
                        let x =
                            p.input(PartyId(0), (me == PartyId(0)).then_some(&s[..]), 1).await?;
                        let y = p.mul(&x, &x).await?;
                        Ok((me, shares_of(&x), shares_of(&y)))
                    });
                    let seen: Vec<u64> = outs
                        .iter()
                        .filter(|(me, _, _)| coalition.contains(&me.index()))
                        .flat_map(|(_, x, y)| x.iter().chain(y).copied())
                        .collect();
                    ones.resize(seen.len(), [0; 64]);
                    for (c, w) in ones.iter_mut().zip(&seen) {
                        for (b, c) in c.iter_mut().enumerate() {
                            *c += (w >> b & 1) as u32;
                        }
                    }
                }
                ones
            };
            let (zero, minus_one) = (count(Z64(0)), count(Z64(u64::MAX)));
            let mut uniform = 0;
            for (i, (a, b)) in zero.iter().zip(&minus_one).enumerate() {
                if a.iter().chain(b).all(|&c| c == 0) {
                    continue; // a share that is 0 by construction under both secrets
                }
                for (bit, (&ca, &cb)) in a.iter().zip(b).enumerate() {
                    // Binomial(200, 1/2): mean 100, sd ≈ 7.1; ±50 is over 7 sd.
                    for c in [ca, cb] {
                        assert!(
                            (50..=150).contains(&c),
                            "{at}: word {i} bit {bit} is 1 {c} times in {RUNS}"
                        );
                    }
                }
                uniform += 1;
            }
            assert!(uniform >= 2 * t, "{at}: only {uniform} uniform words");
        }
        // t + 1 parties: every share between them, summing to the secret.
        let secret = [Z64(0xdead_beef), Z64(u64::MAX)];
        let outs = testing::run_rss(roster, 77, |mut p| async move {
            let me = p.me();
            let x = p.input(PartyId(0), (me == PartyId(0)).then_some(&secret[..]), 2).await?;
            let y = p.mul(&x, &x).await?;
            Ok((me, x, y))
        });
        let access = ringfence_core::rss::Access::for_roster(roster).unwrap();
        for first in 0..n {
            let group: Vec<usize> = (0..=t).map(|j| (first + j) % n).collect();
            for (which, want) in
                [(0, secret.to_vec()), (1, secret.iter().map(|&v| v * v).collect())]
            {
                let mut by_share: Vec<Option<Vec<Z64>>> = vec![None; access.shares()];
                for &p in &group {
                    let (me, x, y) = &outs[p];
                    let v = if which == 0 { x } else { y };
                    for (&s, comp) in access.held(*me).iter().zip(v.components()) {
                        by_share[s] = Some(comp.clone());
                    }
                }
                let mut sum = vec![Z64(0); 2];
                for s in &by_share {
                    let s =
                        s.as_ref().unwrap_or_else(|| panic!("({n}, {t}) {group:?} miss a share"));
                    for (a, b) in sum.iter_mut().zip(s) {
                        *a += *b;
                    }
                }
                assert_eq!(sum, want, "({n}, {t}): {group:?} reconstruct");
            }
        }
    }
}

/// Every word of a party's shares.
fn shares_of(x: &RssVec<Z64>) -> Vec<u64> {
    x.components().iter().flatten().map(|z| z.0).collect()
}

/// The draw discipline the security argument rests on (extract §12.1; the paper's reference
/// code breaks it at 5 and 7 parties): no party draws any stream of a share key twice, over
/// every protocol — random sharings, inputs, products, matrix products, multiply-and-open,
/// random bits, truncation, comparisons, bit decomposition and injection, openings.
#[test]
fn no_party_draws_a_stream_of_a_share_key_twice() {
    use ringfence_core::sharing::{Arith, Boolean};
    for roster in rosters() {
        let logs = testing::run_rss(roster, 12, |mut p| async move {
            let me = p.me();
            let v = [Z64(5), Z64(u64::MAX), Z64(0)];
            let x = p.input(PartyId(0), (me == PartyId(0)).then_some(&v[..]), 3).await?;
            let y = p.random::<Z64>(3);
            let xy = p.mul(&x, &y).await?;
            p.matmul(&x, &y, (1, 3, 1)).await?;
            p.mul_pub(&x, &y).await?;
            let (prep, _) = Arith::<Z64>::mul_prep(
                &mut p,
                &ringfence_core::sharing::Len(3),
                &ringfence_core::sharing::Len(3),
                8,
            )
            .await?;
            Arith::mul(&mut p, &x, &xy, prep).await?;
            let bits = Boolean::<Z64>::bit_prep(&mut p, 3).await?;
            let m = p.ltz(&xy).await?;
            p.b2a(&m, bits).await?;
            p.a2b(&x).await?;
            p.open(xy).await?;
            Ok(p.draw_log().to_vec())
        });
        for (i, log) in logs.iter().enumerate() {
            let mut sorted = log.clone();
            sorted.sort_unstable();
            let before = sorted.len();
            sorted.dedup();
            assert_eq!(
                sorted.len(),
                before,
                "({}, {}) P{i} drew a stream twice",
                roster.n(),
                roster.t()
            );
            assert!(before > 20, "P{i} drew only {before} streams");
        }
    }
}

/// The boolean primitives' costs per party, from the module documentation (`rss::boolean`),
/// for `N` values (a multiple of 64, so packing adds no padding) over Z_2^64: an AND is `t` bits;
/// an MSB is `k` random bits (one multiply-and-open of `n − 1` elements of Z_2^128 each), an
/// opening (`t` elements) and a tree of `k − 2` generate/propagate nodes of 2 ANDs over
/// ⌈log₂(k − 1)⌉ rounds; a bit injection opens `t` bits per bit.
#[test]
fn boolean_costs_per_party() {
    use ringfence_core::sharing::{Boolean, Gates};
    const N: u64 = 128;
    for roster in rosters() {
        let (n, t) = (roster.n() as u64, roster.t() as u64);
        let outs = testing::run_rss(roster, 13, |mut p| async move {
            p.set_bit_source(ringfence_core::rss::BitSource::RandBits);
            let x = p.random::<Z64>(N as usize);
            let bits = p.constant_bits(&[true; N as usize]);
            let s0 = p.ctx().stats();
            p.and(&bits, &bits).await?;
            let and = p.ctx().stats() - s0;
            let s0 = p.ctx().stats();
            let m = p.ltz(&x).await?;
            let msb = p.ctx().stats() - s0;
            let prep = Boolean::<Z64>::bit_prep(&mut p, N as usize).await?;
            let s0 = p.ctx().stats();
            Boolean::<Z64>::b2a(&mut p, &m, prep).await?;
            let b2a = p.ctx().stats() - s0;
            Ok((and, msb, b2a))
        });
        for (i, (and, msb, b2a)) in outs.iter().enumerate() {
            let at = format!("({n}, {t}) P{i}");
            assert_eq!((and.payload_bytes_sent, and.rounds), (t * N / 8, 1), "{at}: AND");
            let msb_bytes = N * ((n - 1) * 64 * 16 + t * 8) + t * 2 * 62 * N / 8;
            assert_eq!((msb.payload_bytes_sent, msb.rounds), (msb_bytes, 8), "{at}: MSB");
            assert_eq!((b2a.payload_bytes_sent, b2a.rounds), (t * N / 8, 1), "{at}: B2A");
        }
    }
}

/// edaBits: the opened value's bits are the opened bit planes, at every roster and both ring
/// widths, for batches that do and do not fill whole words; and with either bit source, MSBs
/// and bit decompositions agree with plaintext on edge and random values.
fn edabits_and_comparisons_on_them<R: IntRing + ringfence_core::rss::Widen>() {
    use ringfence_core::rss::BitSource;
    use ringfence_core::sharing::{Boolean, Gates};
    for roster in rosters() {
        let at = format!("({}, {}) over Z_2^{}", roster.n(), roster.t(), R::BITS);
        let x = values::<R>(21, 70);
        for source in [BitSource::RandBits, BitSource::EdaBits] {
            let outs = testing::run_rss(roster, 14, |mut p| {
                let x = x.clone();
                async move {
                    p.set_bit_source(source);
                    let mut eda = Vec::new();
                    for n in [1, 64, 100] {
                        let (planes, r) = p.edabits::<R>(n).await?;
                        let mut bits = Vec::new();
                        for pl in planes {
                            bits.push(p.open_bits(pl).await?);
                        }
                        eda.push((p.open(r).await?, bits));
                    }
                    let me = p.me();
                    let v =
                        p.input(PartyId(0), (me == PartyId(0)).then_some(&x[..]), x.len()).await?;
                    let msb = p.ltz(&v).await?;
                    let msb = p.open_bits(msb).await?;
                    let mut bits = Vec::new();
                    for b in Boolean::<R>::a2b(&mut p, &v).await? {
                        bits.push(p.open_bits(b).await?);
                    }
                    Ok((eda, msb, bits))
                }
            });
            for (eda, msb, bits) in &outs {
                for (r, planes) in eda {
                    for (j, v) in r.iter().enumerate() {
                        for (i, plane) in planes.iter().enumerate() {
                            assert_eq!(
                                plane[j],
                                v.to_u64() >> i & 1 == 1,
                                "{at}: edaBit {j} bit {i}"
                            );
                        }
                    }
                }
                for (j, v) in x.iter().enumerate() {
                    assert_eq!(msb[j], v.msb(), "{at} {source:?}: msb of {v:?}");
                    for (i, plane) in bits.iter().enumerate() {
                        assert_eq!(
                            plane[j],
                            v.to_u64() >> i & 1 == 1,
                            "{at} {source:?}: bit {i} of {v:?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn edabits_and_comparisons_on_them_z64() {
    edabits_and_comparisons_on_them::<Z64>();
}

#[test]
fn edabits_and_comparisons_on_them_z32() {
    edabits_and_comparisons_on_them::<Z32>();
}

/// With edaBits as the bit source, an MSB over Z_2^64 takes the dealers' input round,
/// ⌈log₂(t + 1)⌉ adder levels of 1 + 6 rounds, the opening and the 6 rounds of BitLT — and
/// sends far fewer bytes than with random bits by multiply-and-open.
#[test]
fn edabit_msb_rounds_and_bytes() {
    use ringfence_core::rss::BitSource;
    use ringfence_core::sharing::Boolean;
    for roster in rosters() {
        let t = roster.t() as u64;
        let levels = u64::from(u64::BITS - t.leading_zeros()); // ⌈log₂(t + 1)⌉ for t = 1, 2, 3
        let outs = testing::run_rss(roster, 15, |mut p| async move {
            let x = p.random::<Z64>(128);
            let mut got = Vec::new();
            for source in [BitSource::RandBits, BitSource::EdaBits] {
                p.set_bit_source(source);
                let s0 = p.ctx().stats();
                p.ltz(&x).await?;
                got.push(p.ctx().stats() - s0);
            }
            Ok(got)
        });
        for (i, got) in outs.iter().enumerate() {
            let at = format!("({}, {t}) P{i}", roster.n());
            assert_eq!(got[1].rounds, 1 + levels * 7 + 1 + 6, "{at}: rounds");
            assert!(
                got[1].payload_bytes_sent * 4 < got[0].payload_bytes_sent,
                "{at}: edaBits {} B, random bits {} B",
                got[1].payload_bytes_sent,
                got[0].payload_bytes_sent
            );
        }
    }
}

/// Masks made ahead (`stock_masks`, which `bit_prep` calls) serve the next MSBs: an MSB of
/// stocked values is its opening and carry tree alone (1 + 6 rounds over Z_2^64), one that
/// needs more than the stock makes the rest, masks over another ring are not used, and every
/// result equals the plaintext's.
#[test]
fn masks_made_ahead_leave_an_msb_its_opening_and_carry_tree() {
    use ringfence_core::rss::BitSource;
    use ringfence_core::sharing::{Boolean, Gates};
    for roster in rosters() {
        let x = values::<Z64>(32, 24);
        let n = x.len();
        for source in [BitSource::RandBits, BitSource::EdaBits] {
            let outs = testing::run_rss(roster, 17, |mut p| {
                let x = x.clone();
                async move {
                    p.set_bit_source(source);
                    let me = p.me();
                    let v =
                        p.input(PartyId(0), (me == PartyId(0)).then_some(&x[..]), x.len()).await?;
                    let mut rounds = Vec::new();
                    let mut opened = Vec::new();
                    // Stocked for all, for some, over the other ring.
                    for (ahead, narrow) in [(n, 0), (10, 0), (0, n)] {
                        if ahead > 0 {
                            p.stock_masks::<Z64>(ahead).await?;
                        }
                        if narrow > 0 {
                            p.stock_masks::<Z32>(narrow).await?;
                        }
                        let s0 = p.ctx().stats();
                        let b = p.ltz(&v).await?;
                        rounds.push((p.ctx().stats() - s0).rounds);
                        assert_eq!(p.stocked_masks::<Z64>(), 0);
                        opened.push(p.open_bits(b).await?);
                    }
                    assert_eq!(p.stocked_masks::<Z32>(), n, "Z32's masks stay for Z32");
                    Ok((rounds, opened))
                }
            });
            let want: Vec<bool> = x.iter().map(|v| (v.0 as i64) < 0).collect();
            let at = format!("({}, {}) {source:?}", roster.n(), roster.t());
            for (rounds, opened) in &outs {
                assert!(opened.iter().all(|o| *o == want), "{at}");
                assert_eq!(rounds[0], 1 + 6, "{at}: stocked");
                assert!(rounds[1] > rounds[0] && rounds[1] == rounds[2], "{at}: {rounds:?}");
            }
        }
    }
}

/// Ring conversion Z_2^32 → Z_2^64 (Protocol 4) gives the same value, signed or unsigned, at
/// every roster and with both bit sources, on edge and random values; its rounds are the bit
/// decomposition's plus one.
#[test]
fn conversion_to_a_wider_ring_keeps_the_value() {
    use ringfence_core::rss::BitSource;
    for roster in rosters() {
        let x = values::<Z32>(31, 40);
        for source in [BitSource::RandBits, BitSource::EdaBits] {
            let outs = testing::run_rss(roster, 16, |mut p| {
                let x = x.clone();
                async move {
                    p.set_bit_source(source);
                    let me = p.me();
                    let v =
                        p.input(PartyId(1), (me == PartyId(1)).then_some(&x[..]), x.len()).await?;
                    let mut got = Vec::new();
                    for signed in [true, false] {
                        let prep = p.convert_prep::<Z32, Z64>(x.len()).await?;
                        let w = p.convert::<Z32, Z64>(&v, signed, prep).await?;
                        got.push(p.open(w).await?);
                    }
                    Ok(got)
                }
            });
            for got in &outs {
                let signed: Vec<Z64> =
                    x.iter().map(|v| Z64(i64::from(v.0 as i32) as u64)).collect();
                let unsigned: Vec<Z64> = x.iter().map(|v| Z64(u64::from(v.0))).collect();
                assert_eq!(got[0], signed, "({}, {}) {source:?}: signed", roster.n(), roster.t());
                assert_eq!(
                    got[1],
                    unsigned,
                    "({}, {}) {source:?}: unsigned",
                    roster.n(),
                    roster.t()
                );
            }
        }
    }
}

/// Truncation by private amounts: with `[2^(M−m)]` from the model owner and the public bound
/// `M = 16`, each value is divided by its own `2^m` (the floor or one less), at every roster.
#[test]
fn truncation_by_private_amounts() {
    for roster in rosters() {
        let x: Vec<Z64> = [0i64, 1, -1, 1 << 30, -(1 << 30) + 7, 123_456_789, -987_654]
            .into_iter()
            .map(|v| Z64(v as u64))
            .collect();
        let m: Vec<u32> = vec![0, 3, 9, 16, 5, 11, 1];
        let pow: Vec<Z64> = m.iter().map(|&m| Z64(1 << (16 - m))).collect();
        let outs = testing::run_rss(roster, 17, |mut p| {
            let (x, pow) = (x.clone(), pow.clone());
            async move {
                let me = p.me();
                let vx = p.input(PartyId(1), (me == PartyId(1)).then_some(&x[..]), x.len()).await?;
                let vp =
                    p.input(PartyId(0), (me == PartyId(0)).then_some(&pow[..]), x.len()).await?;
                let pairs = p.trunc_pairs::<Z64>(x.len(), 16).await?;
                let y = p.trunc_private(&vx, &vp, pairs).await?;
                p.open(y).await
            }
        });
        for got in &outs {
            for ((g, v), m) in got.iter().zip(&x).zip(&m) {
                let floor = (v.0 as i64) >> m;
                let below = floor - g.0 as i64;
                assert!(
                    below == 0 || below == 1,
                    "({}, {}): {v:?} >> {m} gave {g:?}",
                    roster.n(),
                    roster.t()
                );
            }
        }
    }
}

/// Fixed-point products with truncation material from either bit source (random bits, or
/// edaBits corrected by their adders' carries) are the floor of the exact quotient or one
/// less, at every roster and both ring widths, on edge and random values of the range.
fn fixed_point_with_both_bit_sources<R: IntRing + ringfence_core::rss::Widen>() {
    use ringfence_core::rss::BitSource;
    let bits = (R::BITS - 16) / 2;
    let d = R::BITS / 4;
    let mut x: Vec<R> = random_words(41, 60)
        .into_iter()
        .map(|w| R::from_i64((w as i64) >> (64 - bits - 1)))
        .collect();
    let top = 1i64 << bits;
    x.extend([0, 1, -1, top - 1, -top].map(R::from_i64));
    let y: Vec<R> = x.iter().rev().copied().collect();
    for roster in rosters() {
        for source in [BitSource::RandBits, BitSource::EdaBits] {
            let outs = testing::run_rss(roster, 18, |mut p| {
                let (x, y) = (x.clone(), y.clone());
                async move {
                    p.set_bit_source(source);
                    let me = p.me();
                    let vx =
                        p.input(PartyId(0), (me == PartyId(0)).then_some(&x[..]), x.len()).await?;
                    let vy =
                        p.input(PartyId(2), (me == PartyId(2)).then_some(&y[..]), y.len()).await?;
                    let pairs = p.trunc_pairs::<R>(x.len(), d).await?;
                    let z = p.mul_fixed(&vx, &vy, pairs).await?;
                    p.open(z).await
                }
            });
            for got in &outs {
                for ((g, a), b) in got.iter().zip(&x).zip(&y) {
                    let floor = (i128::from(a.to_i64()) * i128::from(b.to_i64())) >> d;
                    let below = floor - i128::from(g.to_i64());
                    assert!(
                        below == 0 || below == 1,
                        "({}, {}) Z_2^{} {source:?}: {a:?}·{b:?} gave {g:?}, floor {floor}",
                        roster.n(),
                        roster.t(),
                        R::BITS
                    );
                }
            }
        }
    }
}

#[test]
fn fixed_point_with_both_bit_sources_z64() {
    fixed_point_with_both_bit_sources::<Z64>();
}

#[test]
fn fixed_point_with_both_bit_sources_z32() {
    fixed_point_with_both_bit_sources::<Z32>();
}

/// A tampered (resized), dropped or replayed frame during an rss product and opening is an
/// error at the receiving party naming the sender — never a panic, a hang or an answer — at
/// every roster.
#[test]
fn a_tampered_dropped_or_replayed_frame_is_an_error_naming_the_sender() {
    for roster in rosters() {
        // P1's frames to P0 carry its product's share (after the setup frame, index 0).
        let (from, to) = (PartyId(1), PartyId(0));
        for attack in ["truncate", "drop", "replay"] {
            let net = Net::new(roster.n());
            let mut replayed: Option<Vec<u8>> = None;
            net.set_hook(move |e| {
                if e.from != from || e.to != to {
                    return testing::Action::Deliver;
                }
                match (attack, e.index) {
                    ("truncate", 1) => {
                        e.bytes.truncate(e.bytes.len() - 3);
                        testing::Action::Deliver
                    }
                    ("drop", 1) => testing::Action::Drop,
                    ("replay", 0) => {
                        replayed = Some(e.bytes.clone());
                        testing::Action::Deliver
                    }
                    ("replay", _) => {
                        if let Some(old) = &replayed {
                            e.bytes = old.clone();
                        }
                        testing::Action::Deliver
                    }
                    _ => testing::Action::Deliver,
                }
            });
            let outs = testing::run_base(
                &net,
                roster,
                roster.n(),
                19,
                |_, mut p: ringfence_core::rss::Rss<testing::MemTransport>| async move {
                    let x = p.random::<Z64>(8);
                    let y = p.mul(&x, &x).await?;
                    p.open(y).await
                },
            );
            let e = outs[to.index()].as_ref().expect_err("the receiver fails").to_string();
            assert!(
                e.contains(&from.to_string()),
                "({}, {}) {attack}: {e}",
                roster.n(),
                roster.t()
            );
        }
    }
}
