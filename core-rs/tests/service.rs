//! Private classification as a service (`service`): a client and three parties on the in-memory
//! network, on both backends, against the plaintext plan; refusals and bad requests.

use crate::common;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ringfence_core::meteor::online_cost;
use ringfence_core::net::frame::HEADER_LEN;
use ringfence_core::net::{Ctx, FrameError, PartyId, Roster, SessionId, Stats};
use ringfence_core::nn::{
    argmax_rows, import_onnx, ClassLabels, Dense, FixedPlan, InputRange, Label, Layer, Model,
    ModelFile, ModelShape, NnError, Output, DEFAULT_FRAC_BITS, MAX_LABEL_BYTES,
};
use ringfence_core::prg::Seed;
use ringfence_core::rep3::{Comparisons, Rep3};
use ringfence_core::ring::fixed::FixedPoint;
use ringfence_core::ring::Z64;
use ringfence_core::rss::Rss;
use ringfence_core::service::stock::{Mesh, Shelf, Step, Target};
use ringfence_core::service::{
    self, Backend, Catalog, Classification, ModelPolicy, Outcome, Request, ServiceBase, Stage,
    CLIENT, MAX_SCORES,
};
use ringfence_core::testing::conformance::TestBase;
use ringfence_core::testing::{self, Action, MemTransport};
use ringfence_core::Error;

type Fut<'a, O> = Pin<Box<dyn Future<Output = O> + 'a>>;

/// How a party's service ended and its stages in order, or its error.
/// A party's outcome, its stages in order and the counters at each.
type PartyResult = Result<(Outcome, Vec<Stage>, Vec<Stats>), Error>;

/// What a participant's run gives: a party's stages in order, or the client's result.
enum Out {
    Party(PartyResult),
    Client(Result<Classification, Error>),
}

fn logreg_plan() -> FixedPlan<Z64> {
    FixedPlan::new(&import_onnx(common::LOGREG).unwrap(), DEFAULT_FRAC_BITS).unwrap()
}

/// Party `me`'s catalogue serving `plan` as "logreg", scores allowed.
fn catalog(me: u8, plan: &FixedPlan<Z64>) -> Catalog {
    let mut c = Catalog::new(16);
    c.add("logreg", plan.shape(), (me == 0).then(|| plan.clone()), Output::Logits);
    c
}

/// The shape file of an ONNX model.
fn shape_file(onnx: &[u8]) -> Vec<u8> {
    ModelFile::parse(onnx).unwrap().shape().encode()
}

/// The catalogues of a deployment as it is meant to run: P0 loads the ONNX file, P1 and P2
/// its shape file, each with its own policy.
fn loaded(onnx: &[u8], policies: [ModelPolicy; 3]) -> [Catalog; 3] {
    let shape = shape_file(onnx);
    [0u8, 1, 2].map(|i| {
        let mut c = Catalog::new(16);
        let bytes = if i == 0 { onnx } else { &shape[..] };
        c.load(PartyId(i), "logreg", bytes, policies[usize::from(i)]).unwrap();
        c
    })
}

/// Every party refused, and the client was told a reason containing `want`.
fn assert_all_refused(parties: &[PartyResult], out: Result<Classification, Error>, want: &str) {
    let reason = refused(out);
    assert!(reason.contains(want), "{reason}");
    for p in parties {
        assert!(matches!(p, Ok((Outcome::Refused(_), ..))), "{p:?}");
    }
}

/// Runs the three parties serving `plan` as "logreg" and `client` on a fresh network; returns
/// the parties' stages and the client's result.
fn run<'a, C>(
    plan: &'a FixedPlan<Z64>,
    client: C,
) -> (Vec<PartyResult>, Result<Classification, Error>)
where
    C: FnOnce(Ctx<MemTransport>) -> Fut<'a, Result<Classification, Error>>,
{
    run_seeded(7, plan, client)
}

/// [`run`] with the parties' randomness from `seed`.
fn run_seeded<'a, C>(
    seed: u64,
    plan: &'a FixedPlan<Z64>,
    client: C,
) -> (Vec<PartyResult>, Result<Classification, Error>)
where
    C: FnOnce(Ctx<MemTransport>) -> Fut<'a, Result<Classification, Error>>,
{
    run_catalogs(seed, [0, 1, 2].map(|i| catalog(i, plan)), client)
}

/// A test's client: what it does with its context.
trait ClientRun<'a>: FnOnce(Ctx<MemTransport>) -> Fut<'a, Result<Classification, Error>> {}
impl<'a, F: FnOnce(Ctx<MemTransport>) -> Fut<'a, Result<Classification, Error>>> ClientRun<'a>
    for F
{
}

/// [`run_seeded`] with each party's catalogue given.
fn run_catalogs<'a>(
    seed: u64,
    catalogs: [Catalog; 3],
    client: impl ClientRun<'a>,
) -> (Vec<PartyResult>, Result<Classification, Error>) {
    run_on(&testing::Net::new(4), seed, catalogs, client)
}

/// [`run_catalogs`] on a given network of four (e.g. with a hook).
fn run_on<'a>(
    net: &testing::Net,
    seed: u64,
    catalogs: [Catalog; 3],
    client: impl ClientRun<'a>,
) -> (Vec<PartyResult>, Result<Classification, Error>) {
    run_base::<Rep3<MemTransport>>(net, Roster::THREE, seed, catalogs.into(), client)
}

/// The compute parties of `roster` on session `B` serving their `catalogs`, and `client`, on
/// `net`; returns the parties' stages and the client's result.
fn run_base<'a, B: TestBase + ServiceBase<MemTransport> + 'a>(
    net: &testing::Net,
    roster: Roster,
    seed: u64,
    catalogs: Vec<Catalog>,
    client: impl ClientRun<'a>,
) -> (Vec<PartyResult>, Result<Classification, Error>) {
    let participants = roster.participants(1);
    let mut futs: Vec<Fut<'a, Out>> = Vec::new();
    for (me, cat) in roster.parties().zip(catalogs) {
        let ctx = Ctx::new(me, participants, SessionId([3; 16]), net.transport(me));
        let client = roster.first_client();
        futs.push(Box::pin(async move {
            let (mut stages, mut stats) = (Vec::new(), Vec::new());
            let r = async {
                let p = B::setup(ctx, roster, seed).await?;
                service::serve(p, client, &cat, |s: &Stage, c: Stats| {
                    stages.push(s.clone());
                    stats.push(c);
                })
                .await
            }
            .await;
            Out::Party(r.map(|(_, outcome)| (outcome, stages, stats)))
        }));
    }
    let me = roster.first_client();
    let ctx = Ctx::new(me, participants, SessionId([3; 16]), net.transport(me));
    let c = client(ctx);
    futs.push(Box::pin(async move { Out::Client(c.await) }));
    let (mut parties, mut result) = (Vec::new(), None);
    for o in net.run(futs) {
        match o {
            Out::Party(p) => parties.push(p),
            Out::Client(c) => result = Some(c),
        }
    }
    (parties, result.expect("the client ran"))
}

fn classify<'a>(
    req: Request,
    input: Vec<f64>,
) -> impl FnOnce(Ctx<MemTransport>) -> Fut<'a, Result<Classification, Error>> {
    classify_seeded(5, req, input)
}

/// [`classify`] with the client's randomness from `seed`.
fn classify_seeded<'a>(
    seed: u8,
    req: Request,
    input: Vec<f64>,
) -> impl FnOnce(Ctx<MemTransport>) -> Fut<'a, Result<Classification, Error>> {
    move |ctx| {
        Box::pin(async move {
            let mut c = service::Client::new(ctx, Seed::from_bytes([seed; 32]));
            let info = c.request(&req).await?;
            assert_eq!((info.input_len, info.output_len, info.batch), (64, 10, req.batch));
            // From the model file's metadata, through the parties' description.
            assert_eq!(info.input_range, InputRange::new(0.0, 16.0));
            let ready = c.setup(&info).await?;
            c.run(ready, &input).await
        })
    }
}

/// The plaintext plan's scores for `x` (`batch` samples).
fn plain_scores(plan: &FixedPlan<Z64>, x: &[f64], batch: usize) -> Vec<f64> {
    let fp = FixedPoint::new(plan.shape().frac_bits);
    let enc = fp.encode_slice::<Z64>(x).unwrap();
    plan.eval_plain(&enc, batch).unwrap().iter().map(|&v| fp.decode(v)).collect()
}

fn digits(n: usize) -> Vec<f64> {
    common::DIGITS8[..n * 64].iter().map(|&p| f64::from(p)).collect()
}

#[test]
fn every_backend_classifies_like_the_plaintext_plan() {
    let plan = logreg_plan();
    let batch = 5;
    let x = digits(batch);
    let fp = FixedPoint::new(DEFAULT_FRAC_BITS);
    let plain = plain_scores(&plan, &x, batch);
    let want = argmax_rows(&plain, 10);
    for backend in on_rep3() {
        let (parties, out) =
            run(&plan, classify(Request::new("logreg", backend, batch), x.clone()));
        let out = out.unwrap();
        assert_eq!(out.classes, want, "{backend:?}");
        let scores = out.scores.unwrap();
        let worst = scores.iter().zip(&plain).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(worst < 0.01, "{backend:?}: scores differ from the plaintext plan by {worst}");
        for p in parties {
            let (outcome, stages, _) = p.unwrap();
            assert_eq!(outcome, Outcome::Answered);
            assert!(
                matches!(&stages[0], Stage::Accepted { request } if request.backend == backend)
            );
            assert_eq!(&stages[1..], &[Stage::SetupDone { stocked: false }, Stage::OnlineDone]);
        }
    }
    // What the parties received is fresh randomness each run, never the input.
    let enc: Vec<u64> = fp.encode_slice::<Z64>(&x).unwrap().iter().map(|z| z.0).collect();
    for backend in on_rep3() {
        let views: Vec<Vec<Vec<u64>>> = (0..2u8)
            .map(|k| {
                let req = Request::new("logreg", backend, batch);
                let client = classify_seeded(k, req, x.clone());
                run_seeded(u64::from(k), &plan, client).1.unwrap().sent
            })
            .collect();
        for (i, (a, b)) in views[0].iter().zip(&views[1]).enumerate() {
            assert_eq!(a.len(), enc.len());
            let same = a.iter().zip(b).filter(|(u, v)| u == v).count();
            let plain = a.iter().zip(&enc).filter(|(u, v)| u == v).count();
            assert!(
                same <= 1 && plain <= 1,
                "{backend:?} P{i}: {same} repeated, {plain} in the clear"
            );
        }
        if backend == Backend::Meteor {
            assert!(views[0][0] == views[0][1] && views[0][1] == views[0][2]);
        } else {
            let sum: Vec<u64> = (0..enc.len())
                .map(|k| views[0].iter().fold(0u64, |acc, c| acc.wrapping_add(c[k])))
                .collect();
            assert_eq!(sum, enc, "{backend:?}: rep3 components add up to the input");
        }
    }
    // rep3 and mal3 can give the class alone.
    for backend in on_rep3().filter(|b| b.reveals_class()) {
        let mut req = Request::new("logreg", backend, batch);
        req.output = Output::Argmax;
        let (_, out) = run(&plan, classify(req, x.clone()));
        let out = out.unwrap();
        assert_eq!((out.scores, out.classes.clone()), (None, want.clone()), "{backend:?}");
    }
}

/// The answer names the model's classes as its file does (scikit-learn's `classes_`): the
/// model owner tells the labels with its description, on every three-server family and
/// through shape files that hold none; every label survives (`i64::MIN`/`MAX`, text of 1 to
/// [`MAX_LABEL_BYTES`] bytes in any script). A server other than the owner that tells labels,
/// or an owner's labels of another kind or length than their frame, are refused before the
/// setup.
#[test]
fn the_answer_carries_the_class_labels_the_model_owner_names() {
    let mut model = import_onnx(common::LOGREG).unwrap();
    let ints = vec![i64::MIN, -1, 0, 7, 42, 1 << 53, (1 << 53) + 1, 900, -900, i64::MAX];
    let long = "é".repeat(MAX_LABEL_BYTES / 2);
    let texts = ["zero", "один", "二", "trois", "vier", "🖐", &long, "sept", "x", "nine"];
    let batch = 5;
    let x = digits(batch);
    // P1 and P2 serve the shape without labels (`ringfence model shape --no-labels`).
    let catalogs = |plan: &FixedPlan<Z64>| {
        [0u8, 1, 2].map(|i| {
            let mut c = Catalog::new(16);
            c.add("logreg", plan.shape(), (i == 0).then(|| plan.clone()), Output::Logits);
            c
        })
    };
    let text_labels = ClassLabels::Strings(texts.map(String::from).to_vec());
    for labels in [ClassLabels::Ints(ints), text_labels.clone()] {
        model.class_labels = Some(labels.clone());
        let plan = FixedPlan::new(&model, DEFAULT_FRAC_BITS).unwrap();
        let want = argmax_rows(&plain_scores(&plan, &x, batch), 10);
        assert!(want.iter().collect::<std::collections::BTreeSet<_>>().len() > 2, "{want:?}");
        let named: Vec<Label> = want.iter().map(|&c| labels.get(c).unwrap()).collect();
        for backend in on_rep3() {
            let req = Request::new("logreg", backend, batch);
            let (_, out) = run_catalogs(7, catalogs(&plan), classify(req, x.clone()));
            let out = out.unwrap();
            assert_eq!((&out.classes, &out.labels), (&want, &named), "{backend:?}");
        }
    }
    // A model without labels answers each class by its index.
    let plain = FixedPlan::new(&Model { class_labels: None, ..model }, DEFAULT_FRAC_BITS).unwrap();
    let (_, out) = run(&plain, classify(Request::new("logreg", Backend::Rep3, batch), x.clone()));
    let out = out.unwrap();
    let indices: Vec<Label> = out.classes.iter().map(|&c| Label::Int(c as i64)).collect();
    assert_eq!(out.labels, indices);

    // Tampered descriptions (text labels served): P1 claims a labels frame (the description's
    // last word); P0's labels frame (its second frame to the client) of an unknown kind, with
    // a label's length out of range, or with lengths that overrun the frame.
    let plan = FixedPlan::new(
        &Model { class_labels: Some(text_labels), ..import_onnx(common::LOGREG).unwrap() },
        DEFAULT_FRAC_BITS,
    )
    .unwrap();
    let word = |from: u8, index: u64, at: usize, value: u64| {
        move |e: &mut testing::Envelope| {
            if e.to == CLIENT && e.from == PartyId(from) && e.index == index {
                let at = HEADER_LEN + 8 * at;
                e.bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
            }
            Action::Deliver
        }
    };
    for (hook, want) in [
        (word(1, 0, 5, 1), "class labels from a server other than the model owner"),
        (word(0, 1, 0, 3), "class labels that do not name every score"),
        (word(0, 1, 1, 0), "a class label's length is out of range"),
        (word(0, 1, 1, MAX_LABEL_BYTES as u64 + 1), "a class label's length is out of range"),
        (word(0, 1, 1, 9), "class labels of another length than their frame"),
        // More scores than any served model has: refused before a result is reserved.
        (word(0, 0, 2, MAX_SCORES as u64 + 1), "model sizes out of range"),
    ] {
        let net = testing::Net::new(4);
        net.set_hook(hook);
        let req = Request::new("logreg", Backend::Rep3, 1);
        let (_, out) = run_on(&net, 7, catalogs(&plan), classify(req, digits(1)));
        match out {
            Err(Error::PeerMisbehaved { reason: FrameError::Malformed(why), .. }) => {
                assert_eq!(why, want)
            }
            other => panic!("{want}: {other:?}"),
        }
    }
}

/// The families served by three servers on rep3's session.
fn on_rep3() -> impl Iterator<Item = Backend> {
    Backend::all().filter(|b| b.servers() == [3])
}

/// `roster`'s rss deployment serving `plan` as "logreg" (scores allowed) to `client`.
fn run_rss<'a>(
    roster: Roster,
    seed: u64,
    plan: &FixedPlan<Z64>,
    client: impl ClientRun<'a>,
) -> (Vec<PartyResult>, Result<Classification, Error>) {
    let catalogs = roster.parties().map(|p| catalog(p.0, plan)).collect();
    let net = testing::Net::new(roster.participants(1));
    run_base::<Rss<MemTransport>>(&net, roster, seed, catalogs, client)
}

/// The classes are the plaintext plan's; the scores, where asked for, within 0.01 of its.
fn check_answer(out: &Classification, output: Output, plain: &[f64], what: &str) {
    assert_eq!(out.classes, argmax_rows(plain, 10), "{what}");
    match output {
        Output::Argmax => assert_eq!(out.scores, None, "{what}"),
        _ => {
            let scores = out.scores.as_ref().expect("scores");
            let worst = scores.iter().zip(plain).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            assert!(worst < 0.01, "{what}: scores off by {worst}");
        }
    }
}

#[test]
fn five_and_seven_servers_classify_on_rss_like_the_plaintext_plan() {
    let plan = logreg_plan();
    let batch = 3;
    let x = digits(batch);
    let fp = FixedPoint::new(DEFAULT_FRAC_BITS);
    let enc: Vec<u64> = fp.encode_slice::<Z64>(&x).unwrap().iter().map(|z| z.0).collect();
    let plain = plain_scores(&plan, &x, batch);
    for (n, t) in [(5, 2), (7, 3)] {
        let roster = Roster::new(n, t).unwrap();
        for output in [Output::Logits, Output::Argmax] {
            let mut req = Request::new("logreg", Backend::Rss, batch);
            req.output = output;
            let (parties, out) = run_rss(roster, 9, &plan, classify(req, x.clone()));
            let out = out.unwrap();
            check_answer(&out, output, &plain, &format!("{n} servers, {output:?}"));
            assert_eq!(parties.len(), n);
            for p in parties {
                let (outcome, stages, _) = p.unwrap();
                assert_eq!(outcome, Outcome::Answered);
                assert_eq!(&stages[1..], &[Stage::SetupDone { stocked: false }, Stage::OnlineDone]);
            }
            // Every party received shares that look random, never the input.
            for (i, got) in out.sent.iter().enumerate() {
                let plain = got.iter().zip(&enc).filter(|(u, v)| u == v).count();
                assert!(plain <= 1, "P{i} received {plain} input values in the clear");
            }
        }
    }
}

#[test]
fn a_request_for_a_family_the_deployment_does_not_run_is_refused_with_its_size() {
    let plan = logreg_plan();
    let x = digits(1);
    let roster = Roster::new(5, 2).unwrap();
    let (parties, out) =
        run_rss(roster, 2, &plan, classify(Request::new("logreg", Backend::Rep3, 1), x.clone()));
    assert_all_refused(
        &parties,
        out,
        "rep3 runs among 3 servers; this deployment has 5 and serves rss",
    );
    let (parties, out) = run(&plan, classify(Request::new("logreg", Backend::Rss, 1), x));
    assert_all_refused(
        &parties,
        out,
        "rss runs among 5 or 7 servers; this deployment has 3 and serves rep3, meteor, mal3",
    );
}

fn refused(out: Result<Classification, Error>) -> String {
    match out {
        Err(Error::Refused { reason, .. }) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn bad_requests_are_refused_by_all_parties_with_the_reason() {
    let plan = logreg_plan();
    let cases: Vec<(Request, &str)> = vec![
        (
            Request::new("lenet", Backend::Meteor, 1),
            "unknown model \"lenet\": this deployment does not serve it",
        ),
        (
            Request::new("logreg", Backend::Meteor, 17),
            "batch of 17 (this deployment takes 1 to 16)",
        ),
        (Request::new("logreg", Backend::Rep3, 0), "batch of 0"),
        (
            Request { output: Output::Argmax, ..Request::new("logreg", Backend::Meteor, 1) },
            "meteor reveals the scores",
        ),
    ];
    for (req, want) in cases {
        let (parties, out) = run(&plan, classify(req.clone(), digits(1)));
        let reason = refused(out);
        assert!(reason.starts_with(want), "{req:?}: {reason}");
        for p in parties {
            assert!(matches!(p, Ok((Outcome::Refused(r), ..)) if r == reason), "{req:?}");
        }
    }
}

/// A client that asks P0 and P1 for one sample of "logreg" on METEOR and P2 for two.
fn mismatched_requests<'a>(
) -> impl FnOnce(Ctx<MemTransport>) -> Fut<'a, Result<Classification, Error>> {
    |mut ctx| {
        Box::pin(async move {
            let words = |batch: u64| {
                let mut w = vec![Z64(0x5246_434c << 32 | 1 << 24 | 2 << 16 | 1 << 8), Z64(batch)];
                w.extend([Z64(u64::from_le_bytes(*b"logreg\0\0")), Z64(0), Z64(0), Z64(0)]);
                w
            };
            ctx.round();
            for (i, b) in [(0u8, 1), (1, 1), (2, 2)] {
                ctx.send(PartyId(i), &words(b))?;
            }
            Err(Error::ApiMisuse("sent".into()))
        })
    }
}

fn assert_all_refused_different_requests(parties: Vec<PartyResult>) {
    for p in parties {
        match p {
            Ok((Outcome::Refused(reason), ..)) => {
                assert!(reason.contains("different requests"), "{reason}")
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
}

#[test]
fn a_client_cannot_send_the_parties_different_requests() {
    let plan = logreg_plan();
    let (parties, out) = run(&plan, mismatched_requests());
    assert!(matches!(out, Err(Error::ApiMisuse(m)) if m == "sent"));
    assert_all_refused_different_requests(parties);
}

/// The tampered runs of [`a_client_cannot_send_the_parties_inconsistent_input`]: model, backend,
/// the party whose copy of the input is altered, the payload byte flipped, and the reason every
/// party must give. rep3 sends P_i components i and i + 1 (3 samples of 64 values each), METEOR
/// the masked input to all three.
fn inconsistent_inputs() -> Vec<(&'static [u8], Backend, u8, usize, &'static str)> {
    let second = 3 * 64 * 8;
    vec![
        (
            common::LOGREG,
            Backend::Meteor,
            1,
            0,
            "the client sent P0 and P1 different masked inputs",
        ),
        (
            common::LOGREG,
            Backend::Rep3,
            1,
            5,
            "the client sent P0 and P1 different copies of component 1 of its input",
        ),
        (
            common::LOGREG,
            Backend::Rep3,
            1,
            second + 17,
            "the client sent P1 and P2 different copies of component 2 of its input",
        ),
        (common::TREE, Backend::Meteor, 2, 40, "the client sent P1 and P2 different masked inputs"),
        (
            common::LOGREG,
            Backend::Mal3,
            2,
            0,
            "the client sent P1 and P2 different copies of component 2 of its input",
        ),
        (
            common::TREE,
            Backend::Rep3,
            0,
            0,
            "the client sent P0 and P2 different copies of component 0 of its input",
        ),
    ]
}

/// A client that sends one server a different share of its input (the in-memory network alters
/// one bit of its input frame to that server, as a cheating client would send it) is caught by
/// all three servers, which fail naming it before anything computed from the input is opened;
/// nothing more reaches the client. Unaltered, the same run answers the plaintext plan's class,
/// and METEOR's online counters are the cost model's plus the input's sharing, its check (one
/// round, a 32-byte digest to each peer) and the reveal.
#[test]
fn a_client_cannot_send_the_parties_inconsistent_input() {
    let x = digits(3);
    for (onnx, backend, victim, at, want) in inconsistent_inputs() {
        let plan = FixedPlan::<Z64>::new(&import_onnx(onnx).unwrap(), DEFAULT_FRAC_BITS).unwrap();
        let req = Request::new("logreg", backend, 3);
        let case = format!("{backend:?}, P{victim}'s byte {at}");

        let net = testing::Net::new(4);
        let after_input = std::rc::Rc::new(std::cell::Cell::new((false, 0)));
        let seen = after_input.clone();
        net.set_hook(move |e| {
            // The client's frames: the request (index 0), then its input (index 1).
            if e.from == CLIENT && e.to == PartyId(victim) && e.index == 1 {
                e.bytes[HEADER_LEN + at] ^= 1;
                seen.set((true, 0));
            } else if e.to == CLIENT && seen.get().0 {
                seen.set((true, seen.get().1 + 1));
            }
            Action::Deliver
        });
        let catalogs = [0, 1, 2].map(|i| catalog(i, &plan));
        let (parties, out) = run_on(&net, 7, catalogs, classify(req.clone(), x.clone()));
        // Nothing of the run reaches the client after its input: on mal3, whose servers abort
        // together, only each server's abort notice (header and reason code).
        let notices = if backend == Backend::Mal3 { 3 } else { 0 };
        assert_eq!(after_input.get(), (true, notices), "{case}: frames to the client");
        match (&out, backend) {
            (Err(Error::Abort { blame: None, reason }), Backend::Mal3) => {
                assert!(reason.contains("stopped the run: a check failed"), "{case}: {reason}")
            }
            (Err(_), b) if b != Backend::Mal3 => {}
            _ => panic!("{case}: the client got {out:?}"),
        }
        for p in parties {
            match p {
                Err(Error::PeerMisbehaved { peer, reason: FrameError::Inconsistent(r) }) => {
                    assert_eq!((peer, r.as_str()), (CLIENT, want), "{case}")
                }
                // A cheating server could fail the comparison too: mal3 blames no one.
                Err(Error::Abort { blame: None, reason }) if backend == Backend::Mal3 => {
                    assert!(reason.contains(want), "{case}: {reason}")
                }
                other => panic!("{case}: expected the client blamed, got {other:?}"),
            }
        }

        let (parties, out) = run(&plan, classify(req, x.clone()));
        let plain = plain_scores(&plan, &x, 3);
        assert_eq!(out.unwrap().classes, argmax_rows(&plain, 10), "{case}: honest client");
        for (i, p) in parties.into_iter().enumerate() {
            let (outcome, _, stats) = p.unwrap();
            assert_eq!(outcome, Outcome::Answered);
            if backend == Backend::Meteor {
                let online = stats[2] - stats[1];
                let (bytes, rounds) = online_cost(&plan.shape(), 64, 3);
                // The scores' reveal: each party's mask component, and P0 the public m too.
                let reveal = 8 * 30 * if i == 0 { 2 } else { 1 };
                assert_eq!(
                    (online.payload_bytes_sent, online.rounds),
                    (bytes + 2 * 32 + reveal, rounds + 3),
                    "{case}: P{i}'s online counters"
                );
            }
        }
    }
}

#[test]
fn a_mal3_server_that_deviates_makes_every_party_and_the_client_fail_with_the_check() {
    let plan = logreg_plan();
    let x = digits(2);
    // Honest: how many frames P1 sends P2 in the whole session.
    let net = testing::Net::new(4);
    let (parties, out) = run_on(
        &net,
        9,
        [0, 1, 2].map(|i| catalog(i, &plan)),
        classify(Request::new("logreg", Backend::Mal3, 2), x.clone()),
    );
    assert!(out.is_ok() && parties.iter().all(Result::is_ok), "{out:?}");
    let frames = net.log().iter().filter(|e| e.from == PartyId(1) && e.to == PartyId(2)).count();
    assert!(frames > 20, "{frames}");
    // P1 alters one word of a late frame to P2 (in the online phase), then of an early one.
    let mut altered = 0;
    for at in [frames as u64 - 3, frames as u64 / 2] {
        let net = testing::Net::new(4);
        let hit = std::rc::Rc::new(std::cell::Cell::new(0));
        let seen = hit.clone();
        net.set_hook(move |e| {
            let ours = e.from == PartyId(1) && e.to == PartyId(2) && e.index == at;
            if ours && e.bytes.len() >= HEADER_LEN + 8 {
                let last = e.bytes.len() - 1;
                e.bytes[last] ^= 1;
                seen.set(e.bytes.len());
            }
            Action::Deliver
        });
        let (parties, out) = run_on(
            &net,
            9,
            [0, 1, 2].map(|i| catalog(i, &plan)),
            classify(Request::new("logreg", Backend::Mal3, 2), x.clone()),
        );
        if hit.get() == 0 {
            continue; // an empty frame (a verdict round): nothing to alter
        }
        altered += 1;
        match &out {
            Err(Error::Abort { blame: None, reason }) => {
                assert!(reason.contains("stopped the run: a check failed"), "frame {at}: {reason}")
            }
            other => panic!("frame {at}: the client got {other:?}"),
        }
        for (i, p) in parties.iter().enumerate() {
            assert!(matches!(p, Err(Error::Abort { .. })), "frame {at}: P{i} ended {p:?}");
        }
    }
    assert!(altered > 0, "no frame was altered");
}

#[test]
fn a_refused_request_leaves_the_stocked_runs_on_every_shelf() {
    let plan = logreg_plan();
    let shelves: [Arc<Shelf>; 3] = Default::default();
    fill_shelves(&plan, &shelves, 1, &[Backend::Meteor]);
    let catalogs = [0, 1, 2].map(|i| catalog(i, &plan).with_shelf(shelves[i as usize].clone()));
    // P0 takes its run for the stockable request it got; the refusal puts it back.
    let (parties, _) = run_catalogs(3, catalogs, mismatched_requests());
    assert_all_refused_different_requests(parties);
    for sh in &shelves {
        assert_eq!(sh.ready("logreg", Backend::Meteor), 1);
    }
}

#[test]
fn bad_input_fails_before_it_is_sent() {
    let plan = logreg_plan();
    for (input, want) in [(vec![0.0; 63], "input has 63 values"), (vec![f64::NAN; 64], "")] {
        let (_, out) = run(&plan, move |ctx| {
            Box::pin(async move {
                let mut c = service::Client::new(ctx, Seed::from_bytes([5; 32]));
                let info = c.request(&Request::new("logreg", Backend::Meteor, 1)).await?;
                let ready = c.setup(&info).await?;
                let before = c.stats();
                let r = c.run(ready, &input).await;
                assert_eq!(c.stats(), before, "nothing may be sent for bad input");
                r
            })
        });
        let e = out.unwrap_err();
        assert!(
            matches!(&e, Error::ApiMisuse(m) if m.starts_with(want))
                || matches!(e, Error::OutOfRange(_)),
            "{e:?}"
        );
    }
}

/// The three parties' mesh on its own network: opens an epoch and makes runs until P0 has
/// `runs` of "logreg" on its shelf for each backend in `backends`. Returns each party's steps.
fn fill_shelves(
    plan: &FixedPlan<Z64>,
    shelves: &[Arc<Shelf>; 3],
    runs: usize,
    backends: &[Backend],
) -> Vec<Vec<Step>> {
    let net = testing::Net::new(3);
    let targets: Vec<Target> =
        backends.iter().map(|&backend| Target { model: "logreg".into(), backend, runs }).collect();
    let mut futs: Vec<Fut<'_, Result<Vec<Step>, Error>>> = Vec::new();
    for (i, seeds) in testing::rep3_seeds(11).into_iter().enumerate() {
        let me = PartyId(i as u8);
        let ctx = Ctx::new(me, 3, SessionId([9; 16]), net.transport(me));
        let (shelf, targets) = (shelves[i].clone(), &targets);
        futs.push(Box::pin(async move {
            let p = Rep3::setup(ctx, seeds).await?;
            let cat = catalog(i as u8, plan);
            let mut mesh = Mesh::start(p, &cat, targets, &shelf, 0xabcd).await?;
            assert_eq!(mesh.epoch(), 0xabcd);
            let mut steps = Vec::new();
            loop {
                let step = mesh.step(&shelf, true).await?;
                let idle = step == Step::Idle;
                steps.push(step);
                if idle {
                    return Ok(steps);
                }
            }
        }));
    }
    net.run(futs).into_iter().map(Result::unwrap).collect()
}

#[test]
fn runs_made_ahead_of_demand_serve_sessions_once_then_the_setup_runs_in_the_session() {
    let plan = logreg_plan();
    let shelves: [Arc<Shelf>; 3] = Default::default();
    let steps = fill_shelves(&plan, &shelves, 2, &[Backend::Meteor]);
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s.len(), 3, "P{i}: two runs, then idle");
        let Step::Made { model, backend, ready, target, cost } = &s[1] else {
            panic!("P{i}: {s:?}")
        };
        assert_eq!((model.as_str(), *backend, *ready, *target), ("logreg", Backend::Meteor, 2, 2));
        assert!(cost.bytes_sent > 0, "making a run communicates");
    }
    for sh in &shelves {
        assert_eq!(sh.counts(), vec![("logreg".to_string(), Backend::Meteor, 2)]);
    }
    // Debug output names counts, never material.
    assert_eq!(format!("{:?}", shelves[0]), r#"Shelf { ready: [("logreg", Meteor, 2)] }"#);

    let x = digits(1);
    let fp = FixedPoint::new(DEFAULT_FRAC_BITS);
    let plain = plan.eval_plain(&fp.encode_slice::<Z64>(&x).unwrap(), 1).unwrap();
    let want = argmax_rows(&plain.iter().map(|&v| fp.decode(v)).collect::<Vec<_>>(), 10);
    let stocked_catalogs =
        || [0, 1, 2].map(|i| catalog(i, &plan).with_shelf(shelves[i as usize].clone()));
    let setup_bytes = |parties: &[PartyResult]| -> Vec<bool> {
        parties
            .iter()
            .map(|p| matches!(&p.as_ref().unwrap().1[1], Stage::SetupDone { stocked: true }))
            .collect()
    };
    for left in [1, 0] {
        let req = Request::new("logreg", Backend::Meteor, 1);
        let (parties, out) = run_catalogs(3, stocked_catalogs(), classify(req, x.clone()));
        assert_eq!(out.unwrap().classes, want);
        assert_eq!(setup_bytes(&parties), [true; 3], "a stocked run was used by all three");
        for sh in &shelves {
            assert_eq!(sh.ready("logreg", Backend::Meteor), left, "single use: left every shelf");
        }
    }
    // The shelf is empty: the next session makes its own setup, and still answers right.
    let req = Request::new("logreg", Backend::Meteor, 1);
    let (parties, out) = run_catalogs(3, stocked_catalogs(), classify(req, x.clone()));
    assert_eq!(out.unwrap().classes, want);
    assert_eq!(setup_bytes(&parties), [false; 3]);
    // Batches other than one never take a stocked run, nor does rep3 take a METEOR one.
    let _ = fill_shelves(&plan, &shelves, 1, &[Backend::Meteor]);
    for req in
        [Request::new("logreg", Backend::Meteor, 2), Request::new("logreg", Backend::Rep3, 1)]
    {
        let input = digits(req.batch);
        let (parties, out) = run_catalogs(3, stocked_catalogs(), classify(req, input));
        out.unwrap();
        assert_eq!(setup_bytes(&parties), [false; 3]);
        assert_eq!(shelves[0].ready("logreg", Backend::Meteor), 1);
    }
}

#[test]
fn rep3_runs_made_ahead_serve_either_output_with_no_setup_traffic() {
    let plan = logreg_plan();
    let shelves: [Arc<Shelf>; 3] = Default::default();
    fill_shelves(&plan, &shelves, 2, &[Backend::Rep3, Backend::Meteor]);
    for sh in &shelves {
        let want = [("logreg", Backend::Meteor, 2), ("logreg", Backend::Rep3, 2)];
        assert_eq!(sh.counts(), want.map(|(m, b, n)| (m.to_string(), b, n)));
    }
    let x = digits(1);
    let fp = FixedPoint::new(DEFAULT_FRAC_BITS);
    let plain = plan.eval_plain(&fp.encode_slice::<Z64>(&x).unwrap(), 1).unwrap();
    let want = argmax_rows(&plain.iter().map(|&v| fp.decode(v)).collect::<Vec<_>>(), 10);
    for (output, left) in [(Output::Argmax, 1), (Output::Logits, 0)] {
        let catalogs = [0, 1, 2].map(|i| catalog(i, &plan).with_shelf(shelves[i as usize].clone()));
        let req = Request { output, ..Request::new("logreg", Backend::Rep3, 1) };
        let (parties, out) = run_catalogs(3, catalogs, classify(req, x.clone()));
        let out = out.unwrap();
        assert_eq!(out.classes, want, "{output:?}");
        assert_eq!(out.scores.is_some(), output == Output::Logits);
        for (i, p) in parties.iter().enumerate() {
            let (outcome, stages, stats) = p.as_ref().unwrap();
            assert_eq!(*outcome, Outcome::Answered);
            assert_eq!(stages[1], Stage::SetupDone { stocked: true }, "P{i}");
            // Accepted → SetupDone: no weights shared, no preprocessing made in the session.
            assert_eq!(stats[1].bytes_sent, stats[0].bytes_sent, "P{i}: setup traffic");
            assert_eq!(stats[1].rounds, stats[0].rounds, "P{i}: setup rounds");
        }
        for sh in &shelves {
            assert_eq!(sh.ready("logreg", Backend::Rep3), left, "single use");
            assert_eq!(sh.ready("logreg", Backend::Meteor), 2, "METEOR's runs untouched");
        }
    }
}

#[test]
fn a_party_without_the_named_run_fails_the_session_clearly() {
    let plan = logreg_plan();
    let shelves: [Arc<Shelf>; 3] = Default::default();
    fill_shelves(&plan, &shelves, 1, &[Backend::Meteor]);
    // P2 restarted: its shelf is new and empty.
    let mut catalogs = [0, 1, 2].map(|i| catalog(i, &plan).with_shelf(shelves[i as usize].clone()));
    catalogs[2] = catalog(2, &plan).with_shelf(Arc::new(Shelf::new()));
    let req = Request::new("logreg", Backend::Meteor, 1);
    let (parties, out) = run_catalogs(3, catalogs, classify(req, digits(1)));
    assert!(out.is_err());
    match &parties[2] {
        Err(Error::PreprocessingExhausted(why)) => {
            assert!(why.contains("does not hold"), "{why}");
        }
        other => panic!("P2: {other:?}"),
    }
}

/// The decision tree on METEOR through the service: admitted, answered with the plaintext
/// plan's scores exactly (tree comparisons and sums are exact), with the session's own setup
/// and with a run the mesh made ahead. (The helpers serve any plan under the name "logreg".)
#[test]
fn the_decision_tree_runs_on_meteor_in_a_session_and_from_a_run_made_ahead() {
    let plan =
        FixedPlan::<Z64>::new(&import_onnx(common::TREE).unwrap(), DEFAULT_FRAC_BITS).unwrap();
    let x = digits(3);
    let plain = plain_scores(&plan, &x, 3);
    let (parties, out) = run(&plan, classify(Request::new("logreg", Backend::Meteor, 3), x));
    let out = out.unwrap();
    assert_eq!(out.scores.as_deref(), Some(&plain[..]));
    assert_eq!(out.classes, argmax_rows(&plain, 10));
    assert!(parties.iter().all(|p| matches!(p, Ok((Outcome::Answered, ..)))), "{parties:?}");

    let shelves: [Arc<Shelf>; 3] = Default::default();
    fill_shelves(&plan, &shelves, 1, &[Backend::Meteor]);
    let x = digits(1);
    let catalogs = [0, 1, 2].map(|i| catalog(i, &plan).with_shelf(shelves[i as usize].clone()));
    let (parties, out) =
        run_catalogs(3, catalogs, classify(Request::new("logreg", Backend::Meteor, 1), x));
    assert_eq!(out.unwrap().scores.as_deref(), Some(&plain[..10]));
    for p in parties {
        let stages = p.unwrap().1;
        assert_eq!(stages[1], Stage::SetupDone { stocked: true }, "the run made ahead was used");
    }
    assert!(shelves.iter().all(|s| s.ready("logreg", Backend::Meteor) == 0));
}

/// By default a model reveals only the class: every party refuses a request for the scores, on
/// rep3 and on METEOR (which has no other output), and answers a request for the class.
#[test]
fn a_class_only_model_refuses_the_scores_on_both_backends_and_answers_the_class() {
    let plan = logreg_plan();
    for backend in [Backend::Rep3, Backend::Meteor] {
        let catalogs = loaded(common::LOGREG, [ModelPolicy::default(); 3]);
        let req = Request::new("logreg", backend, 1);
        let (parties, out) = run_catalogs(3, catalogs, classify(req, digits(1)));
        assert_all_refused(&parties, out, "model \"logreg\" reveals only the class");
    }
    let catalogs = loaded(common::LOGREG, [ModelPolicy::default(); 3]);
    let req = Request { output: Output::Argmax, ..Request::new("logreg", Backend::Rep3, 2) };
    let (parties, out) = run_catalogs(3, catalogs, classify(req, digits(2)));
    let fp = FixedPoint::new(DEFAULT_FRAC_BITS);
    let plain = plan.eval_plain(&fp.encode_slice::<Z64>(&digits(2)).unwrap(), 2).unwrap();
    let want = argmax_rows(&plain.iter().map(|v| fp.decode(*v)).collect::<Vec<_>>(), 10);
    assert_eq!(out.unwrap().classes, want);
    assert!(parties.iter().all(|p| matches!(p, Ok((Outcome::Answered, ..)))), "{parties:?}");
}

/// A party whose settings refuse what the others accept makes all of them refuse (none runs a
/// protocol the others do not).
#[test]
fn one_party_s_refusal_is_every_party_s() {
    let scores = ModelPolicy { reveals: Output::Logits, ..ModelPolicy::default() };
    let catalogs = loaded(common::LOGREG, [scores, scores, ModelPolicy::default()]);
    let (parties, out) =
        run_catalogs(3, catalogs, classify(Request::new("logreg", Backend::Rep3, 1), digits(1)));
    assert_all_refused(&parties, out, "P2 refused the request for model \"logreg\"");
}

/// Servers given shapes of different models under one name refuse it, naming it, before any
/// weight or input moves.
#[test]
fn servers_holding_different_shapes_of_a_model_refuse_it_by_name() {
    let scores = ModelPolicy { reveals: Output::Logits, ..ModelPolicy::default() };
    let mut catalogs = loaded(common::LOGREG, [scores; 3]);
    let model = import_onnx(common::LOGREG).unwrap();
    let other = ModelShape::new(&model, FixedPlan::<Z64>::new(&model, 12).unwrap().shape());
    catalogs[2].load(PartyId(2), "logreg", &other.encode(), scores).unwrap();
    let (parties, out) =
        run_catalogs(3, catalogs, classify(Request::new("logreg", Backend::Meteor, 1), digits(1)));
    assert_all_refused(&parties, out, "the servers hold different shapes of model \"logreg\"");
    for p in &parties {
        let Ok((Outcome::Refused(r), stages, _)) = p else { unreachable!() };
        assert!(r.contains("different shapes"), "{r}");
        assert!(stages.is_empty(), "nothing ran: {stages:?}");
    }
}

/// Only the model owner may load the weights, unless the model is public; the owner needs them.
#[test]
fn a_server_other_than_the_owner_refuses_the_weights_unless_the_model_is_public() {
    let shape = shape_file(common::LOGREG);
    let load = |me: u8, bytes: &[u8], public: bool| {
        Catalog::new(1).load(
            PartyId(me),
            "logreg",
            bytes,
            ModelPolicy { public, ..Default::default() },
        )
    };
    for me in [1, 2] {
        let e = load(me, common::LOGREG, false).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, NnError::NotServable(_)), "{e:?}");
        assert!(msg.contains("holds the model's weights"), "{msg}");
        assert!(msg.contains("ringfence model shape"), "{msg}");
        assert!(msg.contains("public = true"), "{msg}");
        load(me, common::LOGREG, true).unwrap();
        load(me, &shape, false).unwrap();
    }
    load(0, common::LOGREG, false).unwrap();
    let e = load(0, &shape, false).unwrap_err().to_string();
    assert!(e.contains("shape file, without weights") && e.contains("model owner"), "{e}");
    let mut damaged = shape.clone();
    damaged[20] ^= 1;
    assert!(matches!(load(1, &damaged, false), Err(NnError::ShapeFile(_))));
    assert!(matches!(load(1, b"not a model", false), Err(NnError::Malformed(_))));
    // A model of more scores per sample than clients accept is not served.
    let wide = Model {
        input_name: "x".into(),
        input_shape: vec![1],
        layers: vec![Layer::Dense(Dense {
            inputs: 1,
            outputs: MAX_SCORES + 1,
            weights: vec![0.5; MAX_SCORES + 1],
            bias: vec![0.0; MAX_SCORES + 1],
        })],
        class_labels: None,
        dropped_transforms: vec![],
        input_range: None,
    };
    let wide = ModelShape::new(&wide, FixedPlan::<Z64>::new(&wide, 12).unwrap().shape()).encode();
    let e = load(1, &wide, false).unwrap_err().to_string();
    assert!(e.contains("65537 scores per sample; clients accept at most 65536"), "{e}");
}

/// Servers given different shapes of a model do not make runs of it ahead of demand: the mesh
/// fails at its start, at every party, naming the model.
#[test]
fn a_mesh_of_servers_holding_different_shapes_of_a_model_fails_naming_it() {
    let scores = ModelPolicy { reveals: Output::Logits, ..ModelPolicy::default() };
    let mut catalogs = loaded(common::LOGREG, [scores; 3]);
    let model = import_onnx(common::LOGREG).unwrap();
    let other = ModelShape::new(&model, FixedPlan::<Z64>::new(&model, 12).unwrap().shape());
    catalogs[1].load(PartyId(1), "logreg", &other.encode(), scores).unwrap();
    let net = testing::Net::new(3);
    let targets = [Target { model: "logreg".into(), backend: Backend::Rep3, runs: 1 }];
    let mut futs: Vec<Fut<'_, Result<(), Error>>> = Vec::new();
    for ((i, seeds), cat) in testing::rep3_seeds(11).into_iter().enumerate().zip(&catalogs) {
        let me = PartyId(i as u8);
        let ctx = Ctx::new(me, 3, SessionId([9; 16]), net.transport(me));
        let targets = &targets;
        futs.push(Box::pin(async move {
            let p = Rep3::setup(ctx, seeds).await?;
            Mesh::start(p, cat, targets, &Shelf::new(), 7).await.map(|_| ())
        }));
    }
    for r in net.run(futs) {
        let e = r.unwrap_err().to_string();
        assert!(e.contains("hold different shapes of model \"logreg\""), "{e}");
    }
}

/// Servers that run rep3's comparisons on multi-fan-in gates answer with the plaintext plan's
/// classes in fewer online rounds; servers that disagree on the setting refuse a rep3 request,
/// saying so, and still serve METEOR, which compares its own way.
#[test]
fn servers_compare_on_multi_fan_in_gates_when_all_agree() {
    let plan = logreg_plan();
    let batch = 3;
    let x = digits(batch);
    let want = argmax_rows(&plain_scores(&plan, &x, batch), 10);
    let fan: Comparisons = "fan-in".parse().unwrap();
    let mut online = Vec::new();
    for cmp in [Comparisons::TwoInput, fan] {
        let mut req = Request::new("logreg", Backend::Rep3, batch);
        req.output = Output::Argmax;
        let cats = [0, 1, 2].map(|i| catalog(i, &plan).with_comparisons(cmp));
        let (parties, out) = run_catalogs(7, cats, classify(req, x.clone()));
        assert_eq!(out.unwrap().classes, want, "{cmp}");
        let (outcome, _, stats) = parties[0].as_ref().unwrap();
        assert_eq!(outcome, &Outcome::Answered);
        online.push(stats[2].rounds - stats[1].rounds);
    }
    // The input and its consistency check, the dense layer, 4 argmax levels of an MSB and a
    // selection, the output: the MSB takes 8 rounds on two-input gates, 3 on multi-fan-in ones.
    assert_eq!(online, [2 + 1 + 4 * 9 + 1, 2 + 1 + 4 * 4 + 1]);
    let mixed = || {
        [0, 1, 2].map(|i| {
            catalog(i, &plan).with_comparisons(if i == 2 { fan } else { Comparisons::TwoInput })
        })
    };
    let (parties, out) =
        run_catalogs(7, mixed(), classify(Request::new("logreg", Backend::Rep3, 1), digits(1)));
    assert_all_refused(&parties, out, "run rep3's comparisons differently");
    let (_, out) =
        run_catalogs(7, mixed(), classify(Request::new("logreg", Backend::Meteor, 1), digits(1)));
    assert_eq!(out.unwrap().classes, argmax_rows(&plain_scores(&plan, &digits(1), 1), 10));
}

/// A quantized model's integer plan is served on rep3 (the client's class is onnxruntime's) and
/// refused on METEOR, which runs fixed-point plans only, by every party with the reason.
#[test]
fn a_quantized_model_is_served_on_rep3_and_refused_on_meteor() {
    let plan = FixedPlan::new(&import_onnx(common::MINIONN_Q).unwrap(), DEFAULT_FRAC_BITS).unwrap();
    let client = |req: Request| {
        move |ctx: Ctx<MemTransport>| -> Fut<'_, Result<Classification, Error>> {
            Box::pin(async move {
                let mut c = service::Client::new(ctx, Seed::from_bytes([4; 32]));
                let info = c.request(&req).await?;
                assert_eq!((info.input_len, info.output_len), (784, 10));
                let ready = c.setup(&info).await?;
                c.run(ready, &common::mnist(2)).await
            })
        }
    };
    let req = Request::new("logreg", Backend::Meteor, 2);
    let (parties, out) = run(&plan, client(req));
    assert_all_refused(&parties, out, "is quantized (int8): meteor runs fixed-point models only");
    let req = Request { output: Output::Argmax, ..Request::new("logreg", Backend::Rep3, 2) };
    let (parties, out) = run(&plan, client(req));
    let want: Vec<usize> = common::json_numbers(common::MINIONN_Q_REF, "argmax")[..2]
        .iter()
        .map(|&v| v as usize)
        .collect();
    assert_eq!(out.unwrap().classes, want);
    assert!(parties.iter().all(|p| matches!(p, Ok((Outcome::Answered, ..)))), "{parties:?}");
}

/// spdz2k's deployment: one server (P0, the model owner) and the client, which computes as
/// P1: every part of the preprocessing is made by the two, the client learns the result and
/// the server nothing.
fn run_spdz2k<'a>(
    net: &testing::Net,
    plan: &FixedPlan<Z64>,
    client: impl ClientRun<'a>,
) -> (PartyResult, Result<Classification, Error>) {
    let (mut parties, c) = run_spdz2k_among(1, net, plan, client);
    (parties.remove(0), c)
}

/// spdz2k's deployment of `servers` servers (P0 the model owner, the others holding the
/// shape) and the client, which computes as the last party.
fn run_spdz2k_among<'a>(
    servers: u8,
    net: &testing::Net,
    plan: &FixedPlan<Z64>,
    client: impl ClientRun<'a>,
) -> (Vec<PartyResult>, Result<Classification, Error>) {
    use ringfence_core::spdz2k::{Mesh, Source};
    let n = usize::from(servers) + 1;
    let roster = Roster::new(n, n - 1).unwrap();
    let mut runs: Vec<Fut<'_, Out>> = Vec::new();
    for i in 0..servers {
        let cat = catalog(i, plan);
        let ctx = Ctx::new(PartyId(i), n, SessionId([3; 16]), net.transport(PartyId(i)));
        runs.push(Box::pin(async move {
            let (mut stages, mut stats) = (Vec::new(), Vec::new());
            let r = async {
                let p = Mesh::new(ctx, roster, Seed::from_bytes([4 + i; 32]), Source::parties())?;
                service::serve(p, PartyId(servers), &cat, |s: &Stage, c: Stats| {
                    stages.push(s.clone());
                    stats.push(c);
                })
                .await
            }
            .await;
            Out::Party(r.map(|(_, outcome)| (outcome, stages, stats)))
        }));
    }
    let ctx = Ctx::new(PartyId(servers), n, SessionId([3; 16]), net.transport(PartyId(servers)));
    let c = client(ctx);
    runs.push(Box::pin(async move { Out::Client(c.await) }));
    let mut outs = net.run(runs);
    let Some(Out::Client(c)) = outs.pop() else { panic!("the client last") };
    let parties = outs
        .into_iter()
        .map(|o| match o {
            Out::Party(p) => p,
            Out::Client(_) => panic!("a party"),
        })
        .collect();
    (parties, c)
}

#[test]
fn a_page_and_one_server_classify_on_spdz2k_like_the_plaintext_plan() {
    let plan = logreg_plan();
    let batch = 2;
    let x = digits(batch);
    let plain = plain_scores(&plan, &x, batch);
    for output in [Output::Logits, Output::Argmax] {
        let mut req = Request::new("logreg", Backend::Spdz2k, batch);
        req.output = output;
        let (party, out) = run_spdz2k(&testing::Net::new(2), &plan, classify(req, x.clone()));
        let out = out.unwrap_or_else(|e| panic!("{output:?}: {e}"));
        check_answer(&out, output, &plain, &format!("{output:?}"));
        let (outcome, stages, _) = party.unwrap();
        assert_eq!(outcome, Outcome::Answered);
        assert_eq!(&stages[1..], &[Stage::SetupDone { stocked: false }, Stage::OnlineDone]);
    }
}

/// Three compute parties: two servers and the client, none trusting the others (any two may
/// collude against the third).
#[test]
fn two_servers_and_the_client_classify_on_spdz2k_like_the_plaintext_plan() {
    let plan = logreg_plan();
    let batch = 2;
    let x = digits(batch);
    let plain = plain_scores(&plan, &x, batch);
    let mut req = Request::new("logreg", Backend::Spdz2k, batch);
    req.output = Output::Argmax;
    let (parties, out) = run_spdz2k_among(2, &testing::Net::new(3), &plan, classify(req, x));
    check_answer(&out.unwrap(), Output::Argmax, &plain, "three parties");
    for p in parties {
        let (outcome, stages, _) = p.unwrap();
        assert_eq!(outcome, Outcome::Answered);
        assert_eq!(&stages[1..], &[Stage::SetupDone { stocked: false }, Stage::OnlineDone]);
    }
}

#[test]
fn spdz2k_is_refused_by_a_three_server_deployment_with_the_reason() {
    let plan = logreg_plan();
    let (parties, out) =
        run(&plan, classify(Request::new("logreg", Backend::Spdz2k, 1), digits(1)));
    assert_all_refused(
        &parties,
        out,
        "spdz2k runs between 1 or 2 server(s) and the client, which computes too; this deployment \
         has 3 and serves rep3, meteor, mal3",
    );
}

/// A server that alters one word of any of a sample of its frames to the client (setup or
/// online) makes both stop with an abort, or changes nothing: the client never gets a wrong
/// answer.
#[test]
fn a_spdz2k_server_that_deviates_makes_the_client_abort() {
    let plan = logreg_plan();
    let x = digits(1);
    let req = Request::new("logreg", Backend::Spdz2k, 1);
    let net = testing::Net::new(2);
    let (party, out) = run_spdz2k(&net, &plan, classify(req.clone(), x.clone()));
    assert!(out.is_ok() && party.is_ok(), "{out:?}");
    let honest = out.ok();
    let frames = net.log().iter().filter(|e| e.from == PartyId(0)).count() as u64;
    let (mut altered, mut aborted) = (0, 0);
    let trials = if common::UNDER_WASM { 4 } else { 12 };
    // After the request's answer (frame 2: the description, then the shape).
    for at in (4..frames).step_by((frames / trials).max(1) as usize) {
        let net = testing::Net::new(2);
        let hit = std::rc::Rc::new(std::cell::Cell::new(0));
        let seen = hit.clone();
        net.set_hook(move |e| {
            if e.from == PartyId(0) && e.index == at && e.bytes.len() >= HEADER_LEN + 8 {
                let last = e.bytes.len() - 1;
                e.bytes[last] ^= 1;
                seen.set(e.bytes.len());
            }
            Action::Deliver
        });
        let (party, out) = run_spdz2k(&net, &plan, classify(req.clone(), x.clone()));
        if hit.get() == 0 {
            continue; // an empty frame: nothing to alter
        }
        altered += 1;
        match out {
            Err(Error::Abort { .. }) => {
                aborted += 1;
                assert!(party.is_err(), "frame {at}: the server went on: {party:?}");
            }
            // A flipped bit that meets a zero private choice bit in the generation (a column
            // of the OT extension where the receiver's correlation bit is 0, a vector OLE
            // element where a key bit is 0) changes nothing: the honest answer.
            Ok(c) => assert_eq!(Some(&c), honest.as_ref(), "frame {at} of {frames}"),
            Err(e) => panic!("frame {at} of {frames}: {e}"),
        }
    }
    assert!(
        altered * 2 >= trials && aborted * 2 >= altered,
        "{aborted} of {altered} altered runs aborted"
    );
}
