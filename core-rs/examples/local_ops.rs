//! Compute cost of `rep3` operations with all three parties on one thread (in-memory network):
//! the wall time is the sum of the three parties' local work, no I/O.
//!
//! `cargo run --release -p ringfence-core --features test-utils --example local_ops [n]`

use std::time::Instant;

use ringfence_core::ring::Z64;
use ringfence_core::sharing::Boolean;
use ringfence_core::testing;

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let outs = testing::run_rep3(1, |mut p| async move {
        let x = p.random::<Z64>(n);
        let y = p.random::<Z64>(n);
        let mut times = Vec::new();
        let t = Instant::now();
        let _ = p.mul(&x, &y).await?;
        times.push(("mul", t.elapsed()));
        let t = Instant::now();
        let _ = p.ltz(&x).await?;
        times.push(("ltz", t.elapsed()));
        let t = Instant::now();
        let _ = p.lt(&x, &y).await?;
        times.push(("lt", t.elapsed()));
        let t = Instant::now();
        let d = p.dabits::<Z64>(n).await?;
        times.push(("dabits (setup)", t.elapsed()));
        let t = Instant::now();
        let _ = p.relu(&x, d).await?;
        times.push(("relu", t.elapsed()));
        let t = Instant::now();
        let pairs = p.trunc_pairs::<Z64>(n, 16).await?;
        times.push(("trunc_pairs (setup)", t.elapsed()));
        let t = Instant::now();
        let _ = p.mul_fixed(&x, &y, pairs).await?;
        times.push(("mul_fixed", t.elapsed()));
        let a = p.random::<Z64>(128 * 128);
        let b = p.random::<Z64>(128 * 128);
        let t = Instant::now();
        let _ = p.matmul(&a, &b, 128, 128, 128).await?;
        times.push(("matmul 128^3", t.elapsed()));
        Ok(times)
    });
    // Each party's timer spans the whole op (the harness interleaves the three), so any one
    // party's figure is the total local work of all three.
    for (name, t) in &outs[0] {
        println!(
            "{name:>22}: {:8.1} ms for n = {n} (all 3 parties, one thread)",
            t.as_secs_f64() * 1e3
        );
    }
}
