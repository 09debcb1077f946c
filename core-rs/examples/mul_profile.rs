//! Repeated 10^6-element multiplications among three in-process parties, for profilers:
//! `perf record target/release/examples/mul_profile`.
use ringfence_core::ring::Z64;
use ringfence_core::testing;

fn main() {
    let n = 1_000_000;
    let reps: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    let t = std::time::Instant::now();
    testing::run_rep3(1, |mut p| async move {
        let x = p.random::<Z64>(n);
        let y = p.random::<Z64>(n);
        for _ in 0..reps {
            let _ = p.mul(&x, &y).await?;
        }
        Ok(())
    });
    let s = t.elapsed().as_secs_f64();
    println!(
        "{reps} x {n} muls, 3 parties on one thread: {:.1} ms per 10^6 (all parties)",
        s * 1e3 / reps as f64
    );
}
