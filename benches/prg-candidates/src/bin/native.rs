//! Native runner: prints `name<TAB>workload<TAB>GB/s` (GB = 1e9 bytes), best of 7 runs timed by thread CPU time, of
//! ~0.12 s each after calibration.
#[cfg(feature = "experiments")]
use prg_candidates::EXPERIMENTS;
use prg_candidates::{core_digest, BIG, CANDIDATES, SMALL};

/// This thread's CPU time in seconds: other jobs on the (shared, 2-core) machine that preempt us
/// do not count against a run, unlike wall time.
fn cpu_now() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid out-pointer; CLOCK_THREAD_CPUTIME_ID is supported on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn measure(f: fn(u32) -> u64, bytes_per_iter: usize) -> f64 {
    let mut iters = 1u32;
    loop {
        let t = cpu_now();
        std::hint::black_box(f(iters));
        let dt = cpu_now() - t;
        if dt > 0.05 {
            iters = ((iters as f64) * 0.12 / dt).max(1.0) as u32;
            break;
        }
        iters *= 2;
    }
    let mut best = f64::INFINITY;
    for _ in 0..7 {
        let t = cpu_now();
        std::hint::black_box(f(iters));
        best = best.min(cpu_now() - t);
    }
    iters as f64 * bytes_per_iter as f64 / best / 1e9
}

fn main() {
    let filter: Vec<String> = std::env::args().skip(1).collect();
    println!("#digest\t{:016x}", core_digest());
    #[cfg(feature = "experiments")]
    let all = CANDIDATES.iter().chain(EXPERIMENTS);
    #[cfg(not(feature = "experiments"))]
    let all = CANDIDATES.iter();
    for (name, big, small) in all {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        println!("{name}\t1m\t{:.3}", measure(*big, BIG));
        println!("{name}\t4k\t{:.3}", measure(*small, SMALL));
    }
}
