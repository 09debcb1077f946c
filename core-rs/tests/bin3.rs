//! bin3 (π₂³ sharing, multi-fan-in products in one round): every gate against plaintext over
//! bits, Z_2^32 and Z_2^64, for every seating of the three parties; random composed circuits;
//! P3 receiving nothing while gates run; and the exact elements each seat sends per gate.

use std::fmt::Debug;
use std::future::Future;

use ringfence_core::bin3::{self, gates::MAX_FAN_IN, Bin3, Bin3Vec, FanIn, Role, Roles};
use ringfence_core::net::frame::HEADER_LEN;
use ringfence_core::net::{PartyId, Stats};
use ringfence_core::prg::{Prg, Seed};
use ringfence_core::rep3::{Comparisons, Rep3};
use ringfence_core::ring::{Bits, IntRing, Ring, Z32, Z64};
use ringfence_core::sharing::{Gates, Session};
use ringfence_core::testing::{self, Action, Envelope, MemTransport, Net};
use ringfence_core::Error;

/// Rings the tests run over, with a way to make test values from words.
trait Word: Ring {
    fn from_word(w: u64) -> Self;
    /// 0, 1, −1, the most and least significant bit alone, the largest positive.
    fn edges() -> Vec<Self> {
        [0, 1, u64::MAX, 1 << 63, 1 << 31, (1 << 63) - 1, (1 << 31) - 1, 2]
            .into_iter()
            .map(Self::from_word)
            .collect()
    }
}

impl Word for Bits {
    fn from_word(w: u64) -> Self {
        Self(w)
    }
}
impl Word for Z64 {
    fn from_word(w: u64) -> Self {
        Self(w)
    }
}
impl Word for Z32 {
    fn from_word(w: u64) -> Self {
        Self(w as u32)
    }
}

fn words<R: Word>(seed: u64, n: usize) -> Vec<R> {
    testing::random_words(seed, n).into_iter().map(R::from_word).collect()
}

/// Every seating of the three parties.
fn seatings() -> Vec<Roles> {
    let p = |i: u8| PartyId(i);
    [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
        .into_iter()
        .map(|(a, b, c)| Roles::new(p(a), p(b), p(c)).expect("a permutation"))
        .collect()
}

/// Runs `f` at each party of a bin3 session seated by `roles`; returns every party's result
/// and every frame sent.
fn run<O, F, Fut>(roles: Roles, f: F) -> (Vec<O>, Vec<Envelope>)
where
    F: Fn(Bin3<MemTransport>) -> Fut,
    Fut: Future<Output = Result<O, Error>>,
    O: Debug,
{
    let net = Net::new(3);
    let outs = testing::run_rep3_on(&net, 3, 11, |base| f(Bin3::with_roles(base, roles)));
    let outs = outs.into_iter().map(|r| r.expect("party failed")).collect();
    (outs, net.log())
}

/// `values[k]` input by party `k % 3`, each a vector of `n`.
async fn inputs<R: Ring>(
    p: &mut Bin3<MemTransport>,
    values: &[Vec<R>],
) -> Result<Vec<Bin3Vec<R>>, Error> {
    let mut out = Vec::new();
    for (k, v) in values.iter().enumerate() {
        let owner = PartyId((k % 3) as u8);
        let mine = (p.me() == owner).then_some(&v[..]);
        out.push(p.input(owner, mine, v.len()).await?);
    }
    Ok(out)
}

fn product<R: Ring>(xs: &[&Vec<R>]) -> Vec<R> {
    (0..xs[0].len()).map(|j| xs.iter().fold(R::ONE, |acc, x| acc * x[j])).collect()
}

/// Every fan-in from 2 to 8 in one layer, on random and edge values, opened by all.
fn gates_agree_with_plaintext<R: Word>() {
    for (s, roles) in seatings().into_iter().enumerate() {
        let n = 12;
        let vals: Vec<Vec<R>> = (0..MAX_FAN_IN)
            .map(|k| {
                let mut v = R::edges();
                v.extend(words::<R>(100 * s as u64 + k as u64, n - v.len()));
                v.rotate_left(k); // edges meet other edges and random values
                v
            })
            .collect();
        let expected: Vec<Vec<R>> =
            (2..=MAX_FAN_IN).map(|l| product(&vals[..l].iter().collect::<Vec<_>>())).collect();
        let (outs, _) = run(roles, |mut p| {
            let vals = vals.clone();
            async move {
                let x = inputs(&mut p, &vals).await?;
                let gates: Vec<Vec<&Bin3Vec<R>>> =
                    (2..=MAX_FAN_IN).map(|l| x[..l].iter().collect()).collect();
                let refs: Vec<&[&Bin3Vec<R>]> = gates.iter().map(|g| &g[..]).collect();
                let before = p.stats().rounds;
                let out = p.mul_layer(&refs).await?;
                assert_eq!(p.stats().rounds - before, 1, "one layer, one round");
                let mut opened = Vec::new();
                for o in out {
                    opened.push(p.open(o).await?);
                }
                Ok(opened)
            }
        });
        for (i, o) in outs.iter().enumerate() {
            assert_eq!(o, &expected, "party {i}, seating {roles:?}");
        }
    }
}

#[test]
fn gates_of_every_fan_in_agree_with_plaintext_over_bits() {
    gates_agree_with_plaintext::<Bits>();
}

#[test]
fn gates_of_every_fan_in_agree_with_plaintext_over_z64() {
    gates_agree_with_plaintext::<Z64>();
}

#[test]
fn gates_of_every_fan_in_agree_with_plaintext_over_z32() {
    gates_agree_with_plaintext::<Z32>();
}

/// One step of a random circuit over wires `0..`: a local gate or a layer of products.
#[derive(Clone, Debug)]
enum Step {
    Add(usize, usize),
    Sub(usize, usize),
    Neg(usize),
    AddPublic(usize, u64),
    Scale(usize, u64),
    Layer(Vec<Vec<usize>>),
}

fn random_circuit(seed: u64, inputs: usize, steps: usize) -> Vec<Step> {
    let mut prg = Prg::new(&Seed::from_bytes([7; 32]), seed, 0);
    let mut wires = inputs;
    let mut out = Vec::new();
    let pick = |prg: &mut Prg, w: usize| (prg.next_u64() % w as u64) as usize;
    for _ in 0..steps {
        let step = match prg.next_u64() % 6 {
            0 => Step::Add(pick(&mut prg, wires), pick(&mut prg, wires)),
            1 => Step::Sub(pick(&mut prg, wires), pick(&mut prg, wires)),
            2 => Step::Neg(pick(&mut prg, wires)),
            3 => Step::AddPublic(pick(&mut prg, wires), prg.next_u64()),
            4 => Step::Scale(pick(&mut prg, wires), prg.next_u64() | 1),
            _ => {
                let gates = 1 + (prg.next_u64() % 4) as usize;
                Step::Layer(
                    (0..gates)
                        .map(|_| {
                            let l = 2 + (prg.next_u64() % (MAX_FAN_IN as u64 - 1)) as usize;
                            // Repeated operands are allowed: the identity holds for any inputs.
                            (0..l).map(|_| pick(&mut prg, wires)).collect()
                        })
                        .collect(),
                )
            }
        };
        wires += match &step {
            Step::Layer(g) => g.len(),
            _ => 1,
        };
        out.push(step);
    }
    out
}

fn plain_step<R: Word>(w: &mut Vec<Vec<R>>, step: &Step) {
    let map = |x: &Vec<R>, f: &dyn Fn(R) -> R| x.iter().map(|v| f(*v)).collect::<Vec<R>>();
    let zip = |x: &Vec<R>, y: &Vec<R>, f: &dyn Fn(R, R) -> R| {
        x.iter().zip(y).map(|(a, b)| f(*a, *b)).collect::<Vec<R>>()
    };
    match step {
        Step::Add(a, b) => w.push(zip(&w[*a], &w[*b], &|x, y| x + y)),
        Step::Sub(a, b) => w.push(zip(&w[*a], &w[*b], &|x, y| x - y)),
        Step::Neg(a) => w.push(map(&w[*a], &|x| -x)),
        Step::AddPublic(a, c) => w.push(map(&w[*a], &|x| x + R::from_word(*c))),
        Step::Scale(a, c) => w.push(map(&w[*a], &|x| x * R::from_word(*c))),
        Step::Layer(gates) => {
            let outs: Vec<Vec<R>> = gates
                .iter()
                .map(|g| product(&g.iter().map(|&i| &w[i]).collect::<Vec<_>>()))
                .collect();
            w.extend(outs);
        }
    }
}

async fn shared_step<R: Word>(
    p: &mut Bin3<MemTransport>,
    w: &mut Vec<Bin3Vec<R>>,
    step: &Step,
) -> Result<(), Error> {
    let out = match step {
        Step::Add(a, b) => w[*a].add(&w[*b])?,
        Step::Sub(a, b) => w[*a].sub(&w[*b])?,
        Step::Neg(a) => w[*a].neg(),
        Step::AddPublic(a, c) => w[*a].add_public(&vec![R::from_word(*c); w[*a].len()])?,
        Step::Scale(a, c) => w[*a].scale(R::from_word(*c)),
        Step::Layer(gates) => {
            let ops: Vec<Vec<&Bin3Vec<R>>> =
                gates.iter().map(|g| g.iter().map(|&i| &w[i]).collect()).collect();
            let refs: Vec<&[&Bin3Vec<R>]> = ops.iter().map(|g| &g[..]).collect();
            let outs = p.mul_layer(&refs).await?;
            w.extend(outs);
            return Ok(());
        }
    };
    w.push(out);
    Ok(())
}

/// Random circuits of local gates and layers of mixed fan-in (repeated operands included):
/// every wire opened equals the plaintext evaluation, and P3 receives exactly the frames of
/// the openings, none from inputs or gates.
fn circuits_agree_with_plaintext<R: Word>() {
    for seed in 0..6u64 {
        let roles = seatings()[seed as usize % 6];
        let ins: Vec<Vec<R>> = (0..5).map(|k| words::<R>(seed * 10 + k, 4)).collect();
        let circuit = random_circuit(seed, ins.len(), 30);
        let mut plain = ins.clone();
        circuit.iter().for_each(|s| plain_step(&mut plain, s));
        let (outs, log) = run(roles, |mut p| {
            let (ins, circuit) = (ins.clone(), circuit.clone());
            async move {
                let mut w = inputs(&mut p, &ins).await?;
                for s in &circuit {
                    shared_step(&mut p, &mut w, s).await?;
                }
                let all = Bin3Vec::concat(&w.iter().collect::<Vec<_>>());
                p.open(all).await
            }
        });
        let expected: Vec<R> = plain.concat();
        for o in &outs {
            assert_eq!(o, &expected, "seed {seed}");
        }
        let p3 = roles.party(Role::P3);
        // Frame 0 of every link is the session's setup (its common key).
        let to_p3 = log.iter().filter(|e| e.to == p3 && e.index > 0).count();
        assert_eq!(to_p3, 1, "P3 receives the opening's one frame and nothing else (seed {seed})");
    }
}

#[test]
fn random_circuits_agree_with_plaintext_and_p3_receives_nothing_over_bits() {
    circuits_agree_with_plaintext::<Bits>();
}

#[test]
fn random_circuits_agree_with_plaintext_and_p3_receives_nothing_over_z64() {
    circuits_agree_with_plaintext::<Z64>();
}

#[test]
fn random_circuits_agree_with_plaintext_and_p3_receives_nothing_over_z32() {
    circuits_agree_with_plaintext::<Z32>();
}

/// Payload bytes each party sends for one gate of fan-in `l` on `n` words of bits (64
/// instances per word), by seat.
fn gate_cost(l: usize, n: usize) -> [u64; 3] {
    let (outs, _) = run(Roles::default(), |mut p| async move {
        let xs: Vec<Bin3Vec<Bits>> = (0..l).map(|_| p.constant(&vec![Bits(0); n])).collect();
        let refs: Vec<&Bin3Vec<Bits>> = xs.iter().collect();
        let before: Stats = p.stats();
        p.mul_many(&refs).await?;
        Ok((p.role(), (p.stats() - before).payload_bytes_sent))
    });
    let mut by_seat = [0; 3];
    for (role, bytes) in outs {
        by_seat[role as usize] = bytes;
    }
    by_seat
}

#[test]
fn each_seat_sends_what_the_paper_counts_per_gate() {
    let n = 3; // 192 instances
               // Two inputs: one bit per party per instance.
    assert_eq!(gate_cost(2, n), [8 * n as u64; 3]);
    for l in 3..=MAX_FAN_IN {
        let k = (1u64 << l) - l as u64 - 1;
        // P1 and P2: 2^ℓ − ℓ − 1 bits per instance; P3: one bit to each of them.
        assert_eq!(gate_cost(l, n), [8 * n as u64 * k, 8 * n as u64 * k, 16 * n as u64], "ℓ = {l}");
    }
}

#[test]
fn dot_and_matrix_products_cost_one_product_per_output() {
    let (m, k, n) = (3, 5, 2);
    let a = words::<Z64>(1, m * k);
    let b = words::<Z64>(2, k * n);
    let mut expected = vec![Z64(0); m * n];
    for i in 0..m {
        for j in 0..n {
            expected[i * n + j] = (0..k).fold(Z64(0), |s, t| s + a[i * k + t] * b[t * n + j]);
        }
    }
    let dots: Vec<Z64> =
        (0..m).map(|i| (0..k).fold(Z64(0), |s, t| s + a[i * k + t] * a[i * k + t])).collect();
    for roles in seatings() {
        let (outs, _) = run(roles, |mut p| {
            let (a, b) = (a.clone(), b.clone());
            async move {
                let x = inputs(&mut p, &[a, b]).await?;
                let before = p.stats();
                let c = p.matmul(&x[0], &x[1], (m, k, n)).await?;
                let d = p.dot(&x[0], &x[0], k).await?;
                let cost = p.stats() - before;
                Ok((p.open(c).await?, p.open(d).await?, p.role(), cost))
            }
        });
        for (c, d, role, cost) in outs {
            assert_eq!((&c, &d), (&expected, &dots), "{roles:?}");
            assert_eq!(cost.rounds, 2);
            // m·n and m elements each (P3 sends its only to P1).
            assert_eq!(cost.payload_bytes_sent, 8 * (m * n + m) as u64, "{role:?}");
        }
    }
}

#[test]
fn misuse_is_refused_before_anything_is_sent() {
    let (outs, log) = run(Roles::default(), |mut p| async move {
        let x = p.constant(&[Z64(1), Z64(2)]);
        let short = p.constant(&[Z64(1)]);
        let nine: Vec<&Bin3Vec<Z64>> = vec![&x; 9];
        let mut refused = Vec::new();
        refused.push(p.mul_many(&[&x]).await.is_err());
        refused.push(p.mul_many(&nine).await.is_err());
        refused.push(p.mul(&x, &short).await.is_err());
        refused.push(p.matmul(&x, &x, (1, 3, 1)).await.is_err());
        refused.push(p.dot(&x, &x, 0).await.is_err());
        // Shares of another seat.
        let other = if p.role() == Role::P1 { Role::P2 } else { Role::P1 };
        let theirs = Bin3Vec::public(other, &[Z64(1), Z64(2)]);
        refused.push(p.mul(&x, &theirs).await.is_err());
        Ok(refused)
    });
    for o in outs {
        assert!(o.iter().all(|&r| r), "{o:?}");
    }
    assert!(log.iter().all(|e| e.index == 0), "nothing was sent after the session's setup");
    assert!(Roles::new(PartyId(0), PartyId(0), PartyId(1)).is_err());
    assert!(Roles::new(PartyId(0), PartyId(1), PartyId(3)).is_err());
}

/// rep3 sessions comparing on bin3 gates ([`Comparisons::FanIn`]) for each seating and a few
/// group widths and fan-ins.
fn fan_in_settings() -> Vec<FanIn> {
    let mut out = Vec::new();
    for roles in seatings() {
        for (r, l) in [(4, 4), (1, 2), (8, 8), (3, 5), (2, 8), (6, 3)] {
            out.push(FanIn::new(roles, r, l).expect("in range"));
        }
    }
    out
}

/// Edge values of a signed ring: 0, ±1, the extremes and their neighbours.
fn signed_edges<R: Word + IntRing>() -> Vec<R> {
    let k = R::BITS as u64;
    let half = 1u64 << (k - 1);
    let top = if k >= 64 { u64::MAX } else { (1u64 << k) - 1 };
    [0, 1, top, half, half - 1, half + 1, top - 1, 2].into_iter().map(R::from_word).collect()
}

fn fan_in_msb_agrees_with_plaintext<R: Word + IntRing>() {
    // Three vectors at once (1, 70 and 130 values: partial words), as ReLU layers batch them.
    let lens = [1usize, 0, 70, 130];
    for (s, fan) in fan_in_settings().into_iter().enumerate() {
        let vals: Vec<Vec<R>> = lens
            .iter()
            .enumerate()
            .map(|(j, &n)| {
                let mut v = words::<R>(1000 * s as u64 + j as u64, n);
                for (d, e) in v.iter_mut().zip(signed_edges::<R>().into_iter().cycle().skip(j)) {
                    *d = e; // the edges first, then random values
                }
                v
            })
            .collect();
        let want: Vec<Vec<bool>> =
            vals.iter().map(|v| v.iter().map(|x| x.msb()).collect()).collect();
        let outs = testing::run_rep3(5 + s as u64, |mut p: Rep3<MemTransport>| {
            let vals = vals.clone();
            async move {
                let mut shared = Vec::new();
                for (j, v) in vals.iter().enumerate() {
                    let owner = PartyId((j % 3) as u8);
                    shared
                        .push(p.input(owner, (p.me() == owner).then_some(&v[..]), v.len()).await?);
                }
                p.set_comparisons(Comparisons::FanIn(fan));
                let before = p.ctx().stats();
                let refs: Vec<&_> = shared.iter().collect();
                let msbs = p.msb_many(&refs).await?;
                let rounds = (p.ctx().stats() - before).rounds;
                let mut opened = Vec::new();
                for m in msbs {
                    opened.push(p.reveal_bits(m).await?);
                }
                Ok((opened, rounds))
            }
        });
        for (i, (got, rounds)) in outs.iter().enumerate() {
            assert_eq!(got, &want, "party {i}, {fan:?}");
            assert_eq!(*rounds as usize, fan.msb_cost(R::BITS as usize).rounds, "{fan:?}");
        }
    }
}

#[test]
fn msb_on_multi_fan_in_gates_agrees_with_plaintext_over_z64() {
    fan_in_msb_agrees_with_plaintext::<Z64>();
}

#[test]
fn msb_on_multi_fan_in_gates_agrees_with_plaintext_over_z32() {
    fan_in_msb_agrees_with_plaintext::<Z32>();
}

/// Bytes each seat sends for one MSB of `n` values (a multiple of 64), and the frames P3
/// received meanwhile.
fn fan_in_msb_cost(fan: FanIn, n: usize) -> ([u64; 3], usize) {
    let net = Net::new(3);
    let outs = testing::run_rep3_on(&net, 3, 17, |mut p: Rep3<MemTransport>| async move {
        let x = p
            .input(PartyId(0), (p.me() == PartyId(0)).then(|| vec![Z64(7); n]).as_deref(), n)
            .await?;
        p.set_comparisons(Comparisons::FanIn(fan));
        let before = p.ctx().stats();
        p.msb_many(&[&x]).await?;
        Ok((p.me(), (p.ctx().stats() - before).payload_bytes_sent))
    });
    let p3 = fan.roles().party(Role::P3);
    // Frames: P3's join (setup) and input frames come before the MSB's; count those after.
    let log = net.log();
    let before_msb = log.iter().filter(|e| e.to == p3 && e.index < 2).count();
    let received = log.iter().filter(|e| e.to == p3).count() - before_msb;
    let mut by_seat = [0; 3];
    for r in outs {
        let (me, bytes) = r.expect("party failed");
        by_seat[fan.roles().role(me).expect("seated") as usize] = bytes;
    }
    (by_seat, received)
}

#[test]
fn msb_on_multi_fan_in_gates_sends_what_its_cost_model_says_and_p3_receives_nothing() {
    let n = 128;
    for fan in fan_in_settings() {
        let (bytes, p3_received) = fan_in_msb_cost(fan, n);
        let want = fan.msb_cost(64).bits.map(|b| (b * n / 8) as u64);
        assert_eq!(bytes, want, "{fan:?}");
        assert_eq!(p3_received, 0, "P3 receives nothing during the MSB ({fan:?})");
    }
    // For k = 64 with groups and gates of 4: 3 rounds (rep3's two-input network: 8), and
    // P1 and P2 send fewer bits than rep3's 181 + 64.
    let c = FanIn::default().msb_cost(64);
    assert_eq!(c.rounds, 3);
    assert!(c.bits[0] < 181 + 64 && c.bits[1] < 181 + 64, "{c:?}");
}

/// Rep3 bits moved to bin3 and back open to the same values, and bin3's gates run on them.
#[test]
fn rep3_bits_convert_to_bin3_and_back_locally() {
    for roles in seatings() {
        let bits: Vec<bool> = (0..150).map(|i| i % 7 < 3).collect();
        let outs = testing::run_rep3(23, |mut p: Rep3<MemTransport>| {
            let bits = bits.clone();
            async move {
                let x = p
                    .input_bits(PartyId(1), (p.me() == PartyId(1)).then_some(&bits[..]), 150)
                    .await?;
                let rounds = p.ctx().stats().rounds;
                let b = bin3::from_rep3(roles, &x)?;
                let back = bin3::to_rep3(roles, p.me(), &b);
                assert_eq!(p.ctx().stats().rounds, rounds, "local");
                let mut q = Bin3::with_roles(p, roles);
                let anded = q.and(&b, &b).await?; // x ∧ x = x, on bin3's gates
                let opened = q.open_bits(anded).await?;
                let mut p = q.finish();
                Ok((p.reveal_bits(back).await?, opened))
            }
        });
        for (back, anded) in outs {
            assert_eq!(back, bits, "{roles:?}");
            assert_eq!(anded, bits, "{roles:?}");
        }
    }
}

/// How often each payload bit each party receives during an operation is 1, over `runs`
/// sessions (`seed..seed + runs`): `f(p, true)` prepares and runs the operation, `f(p, false)`
/// only prepares, which tells the frames to skip on each link.
fn view_ones<F, Fut>(runs: u64, seed: u64, f: F) -> Vec<Vec<u32>>
where
    F: Fn(Rep3<MemTransport>, bool) -> Fut,
    Fut: Future<Output = Result<(), Error>>,
{
    let frames = |with_op: bool, seed: u64| {
        let net = Net::new(3);
        let outs = testing::run_rep3_on(&net, 3, seed, |p| f(p, with_op));
        outs.into_iter().for_each(|r| r.expect("party failed"));
        net.log()
    };
    let before = frames(false, seed);
    let skip =
        |e: &Envelope| before.iter().any(|b| (b.from, b.to, b.index) == (e.from, e.to, e.index));
    let mut ones: Vec<Vec<u32>> = vec![Vec::new(); 3];
    for run in 0..runs {
        let log = frames(true, seed + run);
        for (party, counts) in ones.iter_mut().enumerate() {
            let bits: Vec<bool> = log
                .iter()
                .filter(|e| e.to == PartyId(party as u8) && !skip(e))
                .flat_map(|e| {
                    e.bytes[HEADER_LEN..].iter().flat_map(|b| (0..8).map(move |i| b >> i & 1 == 1))
                })
                .collect();
            counts.resize(bits.len(), 0);
            counts.iter_mut().zip(bits).for_each(|(c, b)| *c += u32::from(b));
        }
    }
    ones
}

/// Asserts that P1 and P2 received something during the operation, every bit of it 1 in about
/// half the sessions, and that P3 received nothing.
fn assert_uniform_views(ones: &[Vec<u32>], runs: u32, roles: Roles, what: &str) {
    for (party, counts) in ones.iter().enumerate() {
        let seat = roles.role(PartyId(party as u8)).expect("seated");
        if seat == Role::P3 {
            assert!(counts.is_empty(), "{what}: P3 receives nothing");
            continue;
        }
        assert!(!counts.is_empty(), "{what}: {seat:?} receives the operation's messages");
        // Out of 120 sessions a uniform bit is 1 between 20 and 100 times except with
        // probability about 10^-13; a bit left unmasked is 1 in none or all of them.
        let (lo, hi) = (runs / 6, runs - runs / 6);
        let skewed = counts.iter().filter(|&&c| !(lo..=hi).contains(&c)).count();
        assert_eq!(skewed, 0, "{what}, {seat:?}: {skewed} of {} bits skewed", counts.len());
    }
}

/// What P1 and P2 receive during a multi-fan-in MSB is uniform, for an all-zero input and for
/// the extremes alike (a message left unmasked would show the input's bits); P3 receives
/// nothing.
#[test]
fn each_partys_view_of_a_multi_fan_in_msb_is_uniform() {
    let (n, runs) = (64, 120);
    for secret in [0u64, u64::MAX >> 1, u64::MAX] {
        for (s, roles) in seatings().into_iter().enumerate().step_by(2) {
            let fan = FanIn::new(roles, 4, 4).expect("in range");
            let ones = view_ones(runs, 1_000 * s as u64, |mut p, with_op| async move {
                let mine = (p.me() == PartyId(0)).then(|| vec![Z64(secret); n]);
                let x = p.input(PartyId(0), mine.as_deref(), n).await?;
                if with_op {
                    p.set_comparisons(Comparisons::FanIn(fan));
                    p.msb_many(&[&x]).await?;
                }
                Ok(())
            });
            assert_uniform_views(&ones, runs as u32, roles, &format!("msb of {secret:#x}"));
        }
    }
}

/// The same for a layer of gates of every fan-in (2 to 8) over bits and over Z_2^64, on
/// inputs from every seat that are all zeros or all ones.
#[test]
fn each_partys_view_of_a_gate_layer_is_uniform() {
    let runs = 120;
    for ones_in in [false, true] {
        for (s, roles) in seatings().into_iter().enumerate().step_by(3) {
            let ones = view_ones(runs, 7_000 * s as u64, |base, with_op| async move {
                let mut p = Bin3::with_roles(base, roles);
                let word = if ones_in { u64::MAX } else { 0 };
                let (bits, ring) =
                    (vec![vec![Bits(word); 2]; MAX_FAN_IN], vec![vec![Z64(word); 2]; MAX_FAN_IN]);
                let xb = inputs(&mut p, &bits).await?;
                let xr = inputs(&mut p, &ring).await?;
                if with_op {
                    let gb: Vec<Vec<&Bin3Vec<Bits>>> =
                        (2..=MAX_FAN_IN).map(|l| xb[..l].iter().collect()).collect();
                    let gr: Vec<Vec<&Bin3Vec<Z64>>> =
                        (2..=MAX_FAN_IN).map(|l| xr[..l].iter().collect()).collect();
                    p.mul_layer(&gb.iter().map(|g| &g[..]).collect::<Vec<_>>()).await?;
                    p.mul_layer(&gr.iter().map(|g| &g[..]).collect::<Vec<_>>()).await?;
                }
                Ok(())
            });
            assert_uniform_views(
                &ones,
                runs as u32,
                roles,
                &format!("gates on {}", if ones_in { "ones" } else { "zeros" }),
            );
        }
    }
}

/// Nothing to compare is no round and no message, and an empty result per vector.
#[test]
fn an_empty_msb_on_multi_fan_in_gates_sends_nothing() {
    let outs = testing::run_rep3(3, |mut p: Rep3<MemTransport>| async move {
        let x = p.input::<Z64>(PartyId(0), (p.me() == PartyId(0)).then_some(&[][..]), 0).await?;
        p.set_comparisons(Comparisons::FanIn(FanIn::default()));
        let before = p.ctx().stats();
        let m = p.msb_many(&[&x, &x]).await?;
        let spent = p.ctx().stats() - before;
        Ok((m.iter().map(|b| b.len()).collect::<Vec<_>>(), spent.rounds, spent.frames_sent))
    });
    for o in outs {
        assert_eq!(o, (vec![0, 0], 0, 0));
    }
}

/// A multi-fan-in MSB whose frames a hostile network changes: a truncated frame from P3, a
/// dropped one, and P2's first-round frame overtaken by its next — each is an error naming the
/// peer at the receiver (P1), never a panic, a hang or an answer.
#[test]
fn a_tampered_dropped_or_reordered_msb_frame_is_an_error() {
    let fan = FanIn::default();
    let (p1, p2, p3) =
        (fan.roles().party(Role::P1), fan.roles().party(Role::P2), fan.roles().party(Role::P3));
    let run = |with_op: bool, net: &Net| {
        testing::run_rep3_on(net, 3, 31, |mut p: Rep3<MemTransport>| async move {
            let mine = (p.me() == PartyId(0)).then(|| vec![Z64(5); 100]);
            let x = p.input(PartyId(0), mine.as_deref(), 100).await?;
            if !with_op {
                return Ok(Vec::new());
            }
            p.set_comparisons(Comparisons::FanIn(fan));
            let m = p.msb_many(&[&x]).await?;
            p.reveal_bits(m.into_iter().next().expect("one vector")).await
        })
    };
    // The frames each link carries before the MSB.
    let base = Net::new(3);
    run(false, &base).into_iter().for_each(|r| drop(r.expect("party failed")));
    let first = |from: PartyId, to: PartyId| {
        base.log().iter().filter(|e| (e.from, e.to) == (from, to)).count() as u64
    };
    let (from_p3, from_p2) = (first(p3, p1), first(p2, p1));
    type Hook = Box<dyn FnMut(&mut Envelope) -> Action>;
    let cases: Vec<(&str, Hook)> = vec![
        (
            "truncated",
            Box::new(move |e: &mut Envelope| {
                if (e.from, e.to, e.index) == (p3, p1, from_p3) {
                    e.bytes.truncate(e.bytes.len() - 8);
                }
                Action::Deliver
            }),
        ),
        (
            "dropped",
            Box::new(move |e: &mut Envelope| {
                if (e.from, e.to, e.index) == (p3, p1, from_p3) {
                    Action::Drop
                } else {
                    Action::Deliver
                }
            }),
        ),
        (
            "reordered",
            Box::new(move |e: &mut Envelope| {
                if (e.from, e.to, e.index) == (p2, p1, from_p2) {
                    Action::Delay(50)
                } else {
                    Action::Deliver
                }
            }),
        ),
    ];
    for (what, hook) in cases {
        let net = Net::new(3);
        net.set_hook(hook);
        let outs = run(true, &net);
        let at_p1 = &outs[p1.index()];
        let named = match at_p1 {
            Err(Error::PeerMisbehaved { peer, .. }) | Err(Error::Transport { peer, .. }) => {
                *peer == p3 || *peer == p2
            }
            _ => false,
        };
        assert!(named, "{what}: P1 got {at_p1:?}");
    }
}
