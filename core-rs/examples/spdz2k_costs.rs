//! What spdz2k costs, printed per operation: time, rate and bytes per party.
//!
//! 1. With material the parties make themselves (k = s = 32 and 64): setup (base OTs),
//!    triples, random bits, bit triples and edaBits, then products, comparisons and equalities
//!    **end to end** (their preprocessing included, as it is drawn when they run).
//! 2. The **online phase alone** at k = s = 32 and 64, with material from the test dealer
//!    (feature `test-utils`; it knows every secret and stands in for preprocessing made
//!    beforehand, so these rows are the online phase only, the paper's Table I setting).
//!
//! All parties run on one thread of the in-memory harness, so a time is the sum of every
//! party's work. `cargo run --release -p ringfence-core --features test-utils --example
//! spdz2k_costs -- [products] [comparisons] [parties] [own products] [own comparisons]`
//! (defaults 100,000, 5,000, 2, 20,000 and 200: the own material's rows are smaller, as
//! making it is most of their time).

use std::time::Instant;

use ringfence_core::net::{PartyId, Stats};
use ringfence_core::ring::{Z32, Z64};
use ringfence_core::sharing::{Arith, Boolean, Gates, Linear};
use ringfence_core::spdz2k::{Spdz2k, Spdz2kRing};
use ringfence_core::testing::{self, MemTransport, Net};
use ringfence_core::Error;

fn arg(i: usize, default: usize) -> usize {
    std::env::args().nth(i).and_then(|a| a.parse().ok()).unwrap_or(default)
}

type Marks = Vec<(Stats, Instant)>;

fn mark(p: &Spdz2k<MemTransport>, marks: &mut Marks) {
    marks.push((p.ctx().stats(), Instant::now()));
}

/// Products of `n` pairs, then comparisons and equalities of `c` pairs, each with its opening
/// (and so its MAC check); material drawn as each runs.
async fn operations<R: Spdz2kRing>(
    mut p: Spdz2k<MemTransport>,
    n: usize,
    c: usize,
    marks: &mut Marks,
) -> Result<(), Error> {
    let me = p.me();
    let x: Vec<R> =
        (0..n as u64).map(|i| R::from_u64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))).collect();
    let (px, t) = Arith::<R>::input_prep(&mut p, PartyId(0), n);
    let vx = p.input(PartyId(0), (me == PartyId(0)).then_some(&x[..]), px).await?;
    let vc = vx.slice(0..c);
    let vd = vx.slice(c..2 * c);
    p.check().await?;
    mark(&p, marks);
    let (prep, _) = Arith::<R>::mul_prep(&mut p, &t, &t, 0).await?;
    let z = p.mul(&vx, &vx, prep).await?;
    let opened = p.open(z).await?;
    mark(&p, marks);
    assert!(opened.iter().zip(&x).all(|(&z, &v)| z == v * v), "products");
    let lt = Boolean::<R>::lt_bounded(&mut p, &vc, &vd).await?;
    p.open_bits(lt).await?;
    mark(&p, marks);
    let eq = Boolean::<R>::eq(&mut p, &vc, &vd).await?;
    p.open_bits(eq).await?;
    mark(&p, marks);
    Ok(())
}

fn row(what: &str, marks: &Marks, i: usize, count: usize, unit: &str) {
    let ((s0, t0), (s1, t1)) = (marks[i], marks[i + 1]);
    let d = s1 - s0;
    let secs = (t1 - t0).as_secs_f64();
    println!(
        "  {what:<34} {count:>8} {unit:<7} {secs:>9.3} s {:>11.0} {unit}/s {:>11.1} B/{unit}/party {:>4} rounds",
        count as f64 / secs,
        d.payload_bytes_sent as f64 / count as f64,
        d.rounds
    );
}

fn first(outs: Vec<Result<Marks, Error>>) -> Marks {
    outs.into_iter().next().and_then(Result::ok).expect("P0 ran")
}

fn dealer<R: Spdz2kRing>(n: usize, c: usize, parties: usize) {
    let outs = testing::run_spdz2k(parties, 2, |p| async move {
        let mut marks = Marks::new();
        operations::<R>(p, n, c, &mut marks).await?;
        Ok(marks)
    });
    let m = first(outs);
    println!("online phase alone, k = s = {}, dealer's material:", R::BITS);
    row("products (Beaver) + opening", &m, 0, n, "mult");
    row("comparisons (MSB) + opening", &m, 1, c, "cmp");
    row("equalities (EQZ) + opening", &m, 2, c, "eq");
}

/// Bit triples and edaBits in one run of each (the largest).
const BIT_TRIPLES: usize = 16_384;
const EDA_BITS: usize = 2048;

/// The rows with the parties' own material at ring `R`'s k = s.
fn own<R: Spdz2kRing>(parties: usize, n: usize, c: usize) {
    let net = Net::new(parties);
    let outs = testing::run_spdz2k_generating(&net, parties, 1, |mut p| async move {
        let mut marks = Marks::new();
        mark(&p, &mut marks);
        p.triples_for_test::<R>(1).await?;
        mark(&p, &mut marks);
        p.triples_for_test::<R>(n).await?;
        mark(&p, &mut marks);
        p.rand_bits_for_test::<R>(n).await?;
        mark(&p, &mut marks);
        // Whole runs, so that nothing made here is left for the operations below.
        p.bit_triples_for_test::<R>(BIT_TRIPLES).await?;
        mark(&p, &mut marks);
        p.eda_bits_for_test::<R>(EDA_BITS).await?;
        mark(&p, &mut marks);
        operations::<R>(p, n, c, &mut marks).await?;
        Ok(marks)
    });
    let m = first(outs);
    println!("the parties' own material, k = s = {} (end to end):", R::BITS);
    row("setup (base OTs, one triple)", &m, 0, 1, "setup");
    row("triples (OT, auth, sacrifice)", &m, 1, n, "triple");
    row("random bits (square root)", &m, 2, n, "bit");
    row("bit triples (TinyOT, converted)", &m, 3, BIT_TRIPLES, "triple");
    row("edaBits (TinyOT adders, buckets)", &m, 4, EDA_BITS, "edabit");
    row("products + opening, with prep", &m, 6, n, "mult");
    row("comparisons + opening, with prep", &m, 7, c, "cmp");
    row("equalities + opening, with prep", &m, 8, c, "eq");
}

fn main() {
    let (n, c, parties) = (arg(1, 100_000), arg(2, 5_000), arg(3, 2));
    let (own_n, own_c) = (arg(4, 20_000), arg(5, 200));
    println!("spdz2k, {parties} parties on one thread (in-memory harness)");
    own::<Z32>(parties, own_n, own_c);
    own::<Z64>(parties, own_n, own_c);
    dealer::<Z32>(n, c, parties);
    dealer::<Z64>(n, c, parties);
}
