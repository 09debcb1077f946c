//! Local 128×128×128 matrix product kernel timing (one party's two products per `rep3::matmul`).
//! `cargo run --release -p ringfence-core --example matmul_kernel`
use ringfence_core::ring::{kernels, Z64};
fn main() {
    let d: u64 = 128;
    let a: Vec<Z64> = (0..d * d).map(|i| Z64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))).collect();
    let b: Vec<Z64> = (0..d * d).map(|i| Z64(i ^ 0xdead_beef)).collect();
    let reps = 200;
    let t = std::time::Instant::now();
    let mut acc = Z64(0);
    for _ in 0..reps {
        let c = kernels::matmul(&a, &b, d as usize, d as usize, d as usize);
        acc += c[7];
    }
    println!("{:.3} ms per 128^3 product ({acc:?})", t.elapsed().as_secs_f64() * 1e3 / reps as f64);
}
