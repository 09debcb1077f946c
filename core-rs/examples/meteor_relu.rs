//! Times METEOR's ReLU (setup and online) on one thread for all three parties of the in-memory
//! harness: `cargo run --release -p ringfence-core --example meteor_relu -- [n]`.
//! Per-party CPU time is about a third of the printed figures.

use std::time::Instant;

use ringfence_core::meteor::Meteor;
use ringfence_core::net::PartyId;
use ringfence_core::ring::Z64;
use ringfence_core::testing;

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(15_000);
    let outs = testing::run_rep3(1, |p| async move {
        let mut p = Meteor::new(p);
        let owner = PartyId(1);
        let m = p.input_mask::<Z64>(owner, n);
        let x: Vec<Z64> =
            (0..n as u64).map(|i| Z64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))).collect();
        let t = Instant::now();
        let out = p.mask(n);
        let prep = p.relu_setup(m.mask(), out).await?;
        let setup = t.elapsed();
        let sx = p.share(owner, (p.me() == owner).then_some(&x[..]), m).await?;
        let t = Instant::now();
        let y = p.relu(&sx, prep).await?;
        let online = t.elapsed();
        std::hint::black_box(y);
        Ok((setup, online))
    });
    // The harness interleaves the parties, so each party's span covers all three's work.
    let (setup, online) = outs[0];
    println!("n = {n}: ReLU setup {setup:?}, online {online:?} (three parties on one thread)");
}
