//! Throughput of the PRG: `cargo run --release -p ringfence-core --example prg_speed`
use ringfence_core::prg::{Prg, Seed};
fn main() {
    let mut buf = vec![0u8; 8 << 20];
    let mut prg = Prg::new(&Seed::from_bytes([1; 32]), 1, 1);
    let t = std::time::Instant::now();
    for _ in 0..8 {
        prg.fill_bytes(&mut buf);
    }
    let s = t.elapsed().as_secs_f64();
    println!("PRG: {:.2} GB/s ({})", 64.0 * 1048576.0 / s / 1e9, buf[17]);
}
