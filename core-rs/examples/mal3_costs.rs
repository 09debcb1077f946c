//! What mal3's checks cost next to rep3: bytes per party per operation, everything included
//! (the validation of the triples from an empty pool, the products, their checks and the
//! opening), the rounds, and the time for all three parties on one thread of the in-memory
//! harness. `cargo run --release -p ringfence-core --example mal3_costs -- [n]` (n values,
//! default 65,536; an AND is counted per bit).

use std::time::Instant;

use ringfence_core::mal3::Mal3;
use ringfence_core::net::{PartyId, Stats};
use ringfence_core::rep3::Rep3;
use ringfence_core::ring::Z64;
use ringfence_core::sharing::{Boolean, Linear, Session};
use ringfence_core::testing::{self, MemTransport};
use ringfence_core::Error;

const OPS: [&str; 4] = ["AND (per bit)", "product, exact", "product, fixed point", "ReLU"];

/// Operation `which` on `x` and `y`, then opening its result; the counters and milliseconds
/// from just before the operation (after any value it needs as input) to the opening's end.
async fn op<S>(s: &mut S, which: usize, x: S::V, y: S::V) -> Result<(Stats, f64), Error>
where
    S: Boolean<Z64> + Session<Rep3<MemTransport>>,
{
    let bits = match which {
        0 => Some((s.ltz(&x).await?, s.ltz(&y).await?)),
        _ => None,
    };
    // An opening now settles mal3's checks of what came before (the inputs' comparisons).
    let zero = s.constant(&[Z64(0)]);
    s.open(zero).await?;
    let before = s.base().ctx().stats();
    let t = Instant::now();
    match (which, bits) {
        (0, Some((bx, by))) => {
            let z = s.and(&bx, &by).await?;
            s.open_bits(z).await?;
        }
        (1 | 2, _) => {
            let frac = if which == 2 { 13 } else { 0 };
            let (p, _) = s.mul_prep(&S::tag(&x), &S::tag(&y), frac).await?;
            let z = s.mul(&x, &y, p).await?;
            s.open(z).await?;
        }
        _ => {
            let bits = s.bit_prep(x.len()).await?;
            let z = s.relu(&x, bits).await?;
            s.open(z).await?;
        }
    }
    Ok((s.base().ctx().stats() - before, t.elapsed().as_secs_f64() * 1e3))
}

fn table<S>(n: usize)
where
    S: Boolean<Z64> + Session<Rep3<MemTransport>>,
{
    let x: Vec<Z64> = (0..n as u64).map(|i| Z64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))).collect();
    for (which, what) in OPS.iter().enumerate() {
        let outs = testing::run_rep3(3, |p| {
            let x = x.clone();
            async move {
                let mut s = S::start(p);
                let me = s.me();
                let (p0, _) = s.input_prep(PartyId(0), n);
                let (p2, _) = s.input_prep(PartyId(2), n);
                let vx = s.input(PartyId(0), (me == PartyId(0)).then_some(&x[..]), p0).await?;
                let vy = s.input(PartyId(2), (me == PartyId(2)).then_some(&x[..]), p2).await?;
                op(&mut s, which, vx, vy).await
            }
        });
        let bytes = outs.iter().map(|o| o.0.payload_bytes_sent).max().unwrap_or(0);
        let rounds = outs.iter().map(|o| o.0.rounds).max().unwrap_or(0);
        let ms = outs.iter().map(|o| o.1).fold(0.0, f64::max);
        println!(
            "{:<5} {:<22} {:>9.2} B/op  {:>3} rounds  {:>8.1} ms",
            S::NAME,
            what,
            bytes as f64 / n as f64,
            rounds,
            ms
        );
    }
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(65_536);
    println!("n = {n}; the busiest party's bytes per operation, setup and checks included");
    table::<Rep3<MemTransport>>(n);
    table::<Mal3<MemTransport>>(n);
}
