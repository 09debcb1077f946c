//! A compute party serving a request (`service::serve`): the client's request words
//! (`Request::decode`), the other parties' verdicts and shape digests, and, once accepted, the
//! start of the setup. The party is P1 serving the `logreg` shape file, with a batch limit of 4.
//! Input: the frames' payloads in the order the party reads them, each `len: u16 LE ‖ payload`
//! (the rep3 session setup's two, the client's request, P0's and P2's verdicts, …).
#![no_main]
use libfuzzer_sys::fuzz_target;
use ringfence_core::net::{Ctx, PartyId};
use ringfence_core::nn::Output;
use ringfence_core::rep3::Rep3;
use ringfence_core::service::{serve, Catalog, ModelPolicy, Outcome, CLIENT};
use ringfence_core::testing::rep3_seeds;
use ringfence_fuzz::{block_on, Script, SESSION};

const SHAPE: &[u8] = include_bytes!("../../models/logreg.rfshape");

fuzz_target!(|data: &[u8]| {
    let me = PartyId(1);
    let mut catalog = Catalog::new(4);
    let policy = ModelPolicy { public: false, reveals: Output::Logits };
    catalog.load(me, "logreg", SHAPE, policy).expect("the committed shape file");
    let [_, seeds, _] = rep3_seeds(1);
    let ctx = Ctx::new(me, 4, SESSION, Script::new(data));
    let run = async {
        let p = Rep3::setup(ctx, seeds).await?;
        serve(p, CLIENT, &catalog, |_, _| {}).await
    };
    if let Ok((_, Outcome::Refused(reason))) = block_on(run) {
        assert!(!reason.is_empty());
    }
});
