//! One LeNet inference (batch 1) on METEOR, all three parties on one thread of the in-memory
//! harness: `cargo run --release -p ringfence-core --example meteor_lenet -- [setup|full]`.
//!
//! For instruction counts (repeatable on a loaded machine), run it under
//! `valgrind --tool=callgrind` twice: `setup` stops after the setup phase, `full` also runs the
//! online phase; online = full − setup. Wall-clock figures cover all three parties.

use std::time::Instant;

use ringfence_core::meteor::Meteor;
use ringfence_core::net::PartyId;
use ringfence_core::nn::Inference;
use ringfence_core::nn::{import_onnx, FixedPlan, Output, DEFAULT_FRAC_BITS};
use ringfence_core::ring::Z64;
use ringfence_core::testing;

const LENET: &[u8] = include_bytes!("../../models/lenet.onnx");

fn main() {
    let online = std::env::args().nth(1).as_deref() != Some("setup");
    let plan = FixedPlan::<Z64>::new(&import_onnx(LENET).expect("lenet"), DEFAULT_FRAC_BITS)
        .expect("plan");
    let shape = plan.shape();
    let x: Vec<Z64> = (0..shape.input_len as u64)
        .map(|i| Z64((i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 52) & 0x1fff))
        .collect();
    let outs = testing::run_rep3(5, |p| {
        let (shape, x, plan) = (shape.clone(), x.clone(), &plan);
        async move {
            let mut p = Meteor::new(p);
            let me = p.me();
            let model = p.share_model(PartyId(0), (me.0 == 0).then_some(plan), &shape).await?;
            let t = Instant::now();
            let mut prep = p.preprocess(&model, 1, Output::Logits, PartyId(1)).await?;
            let setup = t.elapsed();
            if !online {
                return Ok((setup, Default::default()));
            }
            let t = Instant::now();
            let mask = prep.take_input_mask()?;
            let sx = p.share(PartyId(1), (me.0 == 1).then_some(&x[..]), mask).await?;
            let y = p.infer(&model, sx, prep).await?;
            let out = p.reveal_to(PartyId(1), y).await?;
            std::hint::black_box(out);
            Ok((setup, t.elapsed()))
        }
    });
    // The harness interleaves the parties, so each party's span covers all three's work.
    let (setup, online) = outs[0];
    println!("LeNet batch 1: setup {setup:?}, online {online:?} (three parties on one thread)");
}
