//! What spdz2k costs with material the parties make themselves (k = s = 32): bytes per party
//! and time for triples and random bits (the preprocessing), then the online products of those
//! triples with their opening and MAC check. All parties run on one thread of the in-memory
//! harness, so a time is the sum of every party's work (on `n` cores it would be about `1/n`).
//! `cargo run --release -p ringfence-core --example spdz2k_costs -- [triples] [bits] [parties]`
//! (defaults 100,000, 10,000 and 2).

use std::time::Instant;

use ringfence_core::net::Stats;
use ringfence_core::ring::Z32;
use ringfence_core::sharing::{Arith, Len};
use ringfence_core::testing::{self, Net};
use ringfence_core::Error;

fn arg(i: usize, default: usize) -> usize {
    std::env::args().nth(i).and_then(|a| a.parse().ok()).unwrap_or(default)
}

fn main() {
    let (n, bits, parties) = (arg(1, 100_000), arg(2, 10_000), arg(3, 2));
    let net = Net::new(parties);
    let outs = testing::run_spdz2k_generating(&net, parties, 1, |mut p| async move {
        let mut marks: Vec<(Stats, Instant)> = vec![(p.ctx().stats(), Instant::now())];
        // Setup (base OTs) on a first small batch, apart from the rates.
        p.triples_for_test::<Z32>(1).await?;
        marks.push((p.ctx().stats(), Instant::now()));
        let (prep, t) = Arith::<Z32>::mul_prep(&mut p, &Len(n), &Len(n), 0).await?;
        marks.push((p.ctx().stats(), Instant::now()));
        let b = p.rand_bits_for_test::<Z32>(bits).await?;
        marks.push((p.ctx().stats(), Instant::now()));
        let x = p.constant(&vec![Z32(3); t.0]);
        let z = p.mul(&x, &x, prep).await?;
        let opened = p.open(z).await?;
        marks.push((p.ctx().stats(), Instant::now()));
        assert!(opened.iter().all(|&v| v == Z32(9)));
        drop(b);
        Ok::<_, Error>(marks)
    });
    let marks = match &outs[0] {
        Ok(m) => m,
        Err(e) => panic!("P0: {e}"),
    };
    let row = |what: &str, i: usize, count: usize, unit: &str| {
        let (s0, t0) = marks[i];
        let (s1, t1) = marks[i + 1];
        let d = s1 - s0;
        let secs = (t1 - t0).as_secs_f64();
        println!(
            "{what:<28} {count:>8} {unit:<8} {:>10.3} s  {:>12.0} {unit}/s  {:>10.1} B/{unit} per party  {:>4} rounds",
            secs,
            count as f64 / secs,
            d.payload_bytes_sent as f64 / count as f64,
            d.rounds
        );
    };
    println!("spdz2k, k = s = 32, {parties} parties on one thread (in-memory harness)");
    row("setup (base OTs, 1 triple)", 0, 1, "setup");
    row("triples (OT, auth, sacrifice)", 1, n, "triple");
    row("random bits (square root)", 2, bits, "bit");
    row("online products + MAC check", 3, n, "mult");
}
