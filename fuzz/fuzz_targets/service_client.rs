//! The client's side of a service request: the three parties' model descriptions (sizes,
//! fractional bits, input range, the owner's class labels) or refusals with their text, as
//! `Client::request` decodes them. Input: one byte choosing the request, then the parties' frames' payloads, each
//! `len: u16 LE ‖ payload` (see `ringfence_fuzz::chunks`).
#![no_main]
use libfuzzer_sys::fuzz_target;
use ringfence_core::net::Ctx;
use ringfence_core::nn::Output;
use ringfence_core::prg::Seed;
use ringfence_core::service::{Backend, Client, Request, CLIENT};
use ringfence_fuzz::{block_on, Script, SESSION};

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else { return };
    let backend = if choice & 1 == 0 { Backend::Rep3 } else { Backend::Meteor };
    let mut req = Request::new("logreg", backend, usize::from(choice >> 2) + 1);
    if choice & 2 != 0 {
        req.output = Output::Argmax;
    }
    let ctx = Ctx::new(CLIENT, 4, SESSION, Script::new(rest));
    let mut client = Client::new(ctx, Seed::from_bytes([7; 32]));
    if let Ok(info) = block_on(client.request(&req)) {
        assert!(info.input_len > 0 && info.output_len > 0 && info.frac_bits < 62);
        assert_eq!(info.batch, req.batch);
        assert!(info.class_labels.is_none_or(|l| l.len() == info.output_len));
    }
});
