//! Private classification as a service: an input provider (the client, a participant with id ≥ 3)
//! asks the three compute parties to run one of the models they serve on its input, and alone
//! learns the result. Both sides are sans-IO `async fn`s over a [`Ctx`] with four participants,
//! so the native server parties, the native client and the SDK's client (WebAssembly) run this
//! same code.
//!
//! ```text
//!  client                       P0, P1, P2
//!  Request ───────────────────▶ (each)            model, backend, output, batch      1 round
//!                               P_i ↔ P_j          the parties compare the requests,  1 round
//!                                                  the model's shape digest and their
//!                                                  verdicts (P0 adds the id of a stocked
//!                                                  run, if any)
//!  ◀─────────────────────────── ModelInfo (each)  sizes, input range, or a refusal   1 round
//!  ··· setup: model weights shared by P0, masks, preprocessing (METEOR: the client
//!      receives its input mask); with a run made ahead of demand (see [`stock`]) only that
//!      mask delivery, and nothing at all on rep3 ···
//!  input shares / masked input ▶                                                       1 round
//!                               P_i ↔ P_j          digests of the input each received,    1 round
//!                                                  compared: a client that sent them
//!                                                  inconsistent shares is refused by all
//!  ··· online inference ···
//!  ◀─────────────────────────── output shares                                          1 round
//!                               P_i ↔ P_j          closing barrier (no party leaves early) 1 round
//! ```
//!
//! The three parties check that they received the same request before anything else runs, so a
//! client cannot make them run different programs, and that they hold the same shape of the
//! requested model ([`PlanShape::digest`]: P1 and P2 load a shape file, P0 the weights, see
//! [`nn::shape`]); each also sends its own verdict, so a refusal by any one is a refusal by all.
//! A refusal (unknown model, batch too large, an output the backend cannot give or the model's
//! owner does not allow, different shapes) reaches the client as [`Error::Refused`] with the
//! reason, and the parties as [`Outcome::Refused`].
//!
//! What a client may learn is the model owner's choice, per model ([`ModelPolicy::reveals`]):
//! the class only (the default: scores help extract a model by repeated queries) or the scores.
//! Every party enforces it; METEOR always reveals the scores, so it serves only models whose
//! scores may be revealed.
//! Control words travel as [`Z64`] elements in ordinary checked frames.
//!
//! ```
//! use std::pin::Pin;
//! use ringfence_core::{net::{Ctx, PartyId, SessionId}, nn::{self, Dense, Layer, Model, FixedPlan}, prg::Seed,
//!     rep3::Rep3, ring::Z64, service::{self, Backend, Catalog, Request}, testing};
//! // A one-layer model y = 2·x0 − x1 + 0.5.
//! let model = Model { input_name: "x".into(), input_shape: vec![2], class_labels: None,
//!     dropped_transforms: vec![], input_range: None, layers: vec![Layer::Dense(Dense {
//!         inputs: 2, outputs: 1, weights: vec![2.0, -1.0], bias: vec![0.5] })] };
//! let plan = FixedPlan::<Z64>::new(&model, 13).unwrap();
//! let net = testing::Net::new(4);
//! type Fut = Pin<Box<dyn std::future::Future<Output = Result<Option<Vec<f64>>, ringfence_core::Error>>>>;
//! let mut futs: Vec<Fut> = Vec::new();
//! for (i, seeds) in testing::rep3_seeds(1).into_iter().enumerate() {
//!     let me = PartyId(i as u8);
//!     let mut catalog = Catalog::new(8);
//!     // This example asks for the scores: the model's owner allows them.
//!     catalog.add("tiny", plan.shape(), (i == 0).then(|| plan.clone()), nn::Output::Logits);
//!     let ctx = Ctx::new(me, 4, SessionId([1; 16]), net.transport(me));
//!     futs.push(Box::pin(async move {
//!         let p = Rep3::setup(ctx, seeds).await?;
//!         let (_, outcome) = service::serve(p, service::CLIENT, &catalog, |_, _| {}).await?;
//!         assert_eq!(outcome, service::Outcome::Answered);
//!         Ok(None)
//!     }));
//! }
//! let ctx = Ctx::new(service::CLIENT, 4, SessionId([1; 16]), net.transport(service::CLIENT));
//! futs.push(Box::pin(async move {
//!     let mut c = service::Client::new(ctx, Seed::from_bytes([9; 32]));
//!     let info = c.request(&Request::new("tiny", Backend::Meteor, 1)).await?;
//!     let ready = c.setup(&info).await?;
//!     Ok(c.run(ready, &[1.0, 3.0]).await?.scores)
//! }));
//! let outs = net.run(futs);
//! let y = outs[3].as_ref().unwrap().as_ref().unwrap()[0];
//! assert!((y - (-0.5)).abs() < 1e-3);
//! ```

use crate::meteor::client::MeteorClient;
use crate::meteor::Meteor;
use crate::net::{digest_words, words_digest, Ctx, FrameError, PartyId, Stats, Transport};
use crate::nn::{
    argmax_rows, FixedPlan, Inference, InputRange, ModelFile, NnError, Output, PlanShape,
};
use crate::prg::Seed;
use crate::rep3::client::Rep3Client;
use crate::rep3::Rep3;
use crate::ring::fixed::FixedPoint;
use crate::ring::Z64;
use crate::Error;

mod limits;
pub mod stock;
pub use limits::request_limit;
use stock::Shelf;

/// The client's participant id in a classification session (compute parties are 0, 1, 2).
pub const CLIENT: PartyId = PartyId(3);
/// The compute party that holds the model's weights and shares them.
pub const MODEL_OWNER: PartyId = PartyId(0);
/// Longest model name, in bytes.
pub const MAX_NAME: usize = 32;
/// Version of the session's messages; a request of another version is refused with a reason
/// that names both. 2: the parties check a client's input for consistency (one more round) and
/// limit what a client may send (`service/limits.rs`); a version-1 client or server would fail
/// mid-session on the extra round instead.
pub const VERSION: u8 = 2;

const MAGIC: u64 = 0x5246_434c; // "RFCL"
const REQUEST_WORDS: usize = 2 + MAX_NAME / 8;
const INFO_WORDS: usize = 5;
/// Longest refusal text, in words.
const MAX_REASON_WORDS: usize = 32;

/// The protocol family a request runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Replicated 3-party sharing ([`crate::rep3`]): can reveal only the class.
    Rep3,
    /// METEOR ([`crate::meteor`]): fewer online rounds; reveals the scores to the client.
    Meteor,
}

impl Backend {
    /// Its name on command lines and in the SDK.
    pub fn name(self) -> &'static str {
        match self {
            Self::Rep3 => "rep3",
            Self::Meteor => "meteor",
        }
    }

    fn code(self) -> u64 {
        match self {
            Self::Rep3 => 1,
            Self::Meteor => 2,
        }
    }

    fn from_code(c: u64) -> Option<Self> {
        [Self::Rep3, Self::Meteor].into_iter().find(|b| b.code() == c)
    }
}

impl core::str::FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "rep3" => Ok(Self::Rep3),
            "meteor" => Ok(Self::Meteor),
            _ => Err(format!("unknown backend {s:?} (rep3 or meteor)")),
        }
    }
}

fn output_code(o: Output) -> u64 {
    match o {
        Output::Argmax => 2,
        _ => 1,
    }
}

/// What a client asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// A model name the parties serve (at most [`MAX_NAME`] bytes).
    pub model: String,
    /// The protocol family.
    pub backend: Backend,
    /// What the client receives: the scores, or only the class (rep3 only).
    pub output: Output,
    /// Samples in this request.
    pub batch: usize,
}

impl Request {
    /// A request for the scores of `batch` samples (the most common one).
    pub fn new(model: &str, backend: Backend, batch: usize) -> Self {
        Self { model: model.into(), backend, output: Output::Logits, batch }
    }

    /// Checks what can be checked without the parties: the model name's form.
    pub fn validate(&self) -> Result<(), Error> {
        let name = self.model.as_bytes();
        if name.is_empty() || name.len() > MAX_NAME || name.contains(&0) {
            return Err(Error::ApiMisuse(format!(
                "model name {:?}: 1 to {MAX_NAME} bytes, no NUL",
                self.model
            )));
        }
        Ok(())
    }

    fn encode(&self) -> Result<Vec<Z64>, Error> {
        self.validate()?;
        let name = self.model.as_bytes();
        let head = MAGIC << 32
            | u64::from(VERSION) << 24
            | self.backend.code() << 16
            | output_code(self.output) << 8;
        let mut w = vec![Z64(head), Z64(self.batch as u64)];
        let mut padded = [0u8; MAX_NAME];
        padded[..name.len()].copy_from_slice(name);
        w.extend(padded.chunks(8).map(|c| Z64(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))));
        Ok(w)
    }

    /// Decodes a request; `Err` is the refusal reason.
    fn decode(w: &[Z64]) -> Result<Self, String> {
        let head = w[0].0;
        if head >> 32 != MAGIC {
            return Err("not a classification request".into());
        }
        if (head >> 24) as u8 != VERSION {
            return Err(format!(
                "request version {} is not the served version {VERSION}",
                (head >> 24) as u8
            ));
        }
        let backend = Backend::from_code((head >> 16) & 0xff)
            .ok_or_else(|| format!("unknown backend code {}", (head >> 16) & 0xff))?;
        let output = match (head >> 8) & 0xff {
            1 => Output::Logits,
            2 => Output::Argmax,
            c => return Err(format!("unknown output code {c}")),
        };
        let bytes: Vec<u8> = w[2..].iter().flat_map(|z| z.0.to_le_bytes()).collect();
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        let model = core::str::from_utf8(&bytes[..end])
            .map_err(|_| "model name is not UTF-8".to_string())?
            .to_string();
        let batch = usize::try_from(w[1].0).map_err(|_| "batch too large".to_string())?;
        Ok(Self { model, backend, output, batch })
    }
}

/// What the parties tell the client about the requested model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelInfo {
    /// Values per input sample.
    pub input_len: usize,
    /// Scores per sample (classes).
    pub output_len: usize,
    /// Fractional bits of the fixed-point encoding.
    pub frac_bits: u32,
    /// Samples in the accepted request.
    pub batch: usize,
    /// The input range the model was trained on, when its file says (see
    /// [`crate::nn::Model::input_range`]); the client refuses input outside it.
    pub input_range: Option<InputRange>,
    backend: Backend,
    output: Output,
}

impl ModelInfo {
    fn encode(&self) -> Vec<Z64> {
        let head = MAGIC << 32 | u64::from(VERSION) << 24;
        // The last word: the input range (0: none), where a refusal has its reason's length.
        let range = self.input_range.map_or(0, InputRange::to_bits);
        [head, self.input_len as u64, self.output_len as u64, u64::from(self.frac_bits), range]
            .map(Z64)
            .to_vec()
    }

    /// The values the client receives back: all scores, or one class per sample.
    fn result_len(&self) -> usize {
        match self.output {
            Output::Argmax => self.batch,
            _ => self.batch * self.output_len,
        }
    }
}

/// A model a party serves.
struct Served {
    name: String,
    shape: PlanShape,
    /// [`PlanShape::digest`] of `shape`, compared among the parties for every request.
    digest: [u8; 32],
    plan: Option<FixedPlan<Z64>>,
    reveals: Output,
}

/// How a party serves one model: its deployment's per-model settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelPolicy {
    /// The weights are public: a party other than the owner may load the weight-bearing file
    /// (else it must be given the shape file, see [`nn::shape`]).
    pub public: bool,
    /// The most a client may learn: [`Output::Argmax`] (the class only, the default) or
    /// [`Output::Logits`] (the scores, or the class).
    pub reveals: Output,
}

impl Default for ModelPolicy {
    fn default() -> Self {
        Self { public: false, reveals: Output::Argmax }
    }
}

/// The models a compute party serves, by name, and its limits. The model owner
/// ([`MODEL_OWNER`]) holds every model's weights; the other parties only the public shapes.
pub struct Catalog {
    models: Vec<Served>,
    max_batch: usize,
    shelf: Option<std::sync::Arc<Shelf>>,
}

impl core::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let names: Vec<&str> = self.models.iter().map(|m| m.name.as_str()).collect();
        f.debug_struct("Catalog")
            .field("models", &names)
            .field("max_batch", &self.max_batch)
            .finish_non_exhaustive()
    }
}

impl Catalog {
    /// An empty catalogue accepting requests of at most `max_batch` samples.
    pub fn new(max_batch: usize) -> Self {
        Self { models: Vec::new(), max_batch, shelf: None }
    }

    /// Serves requests of one sample from setup runs made ahead of demand on `shelf` when one
    /// is ready for the model and backend (see [`stock`]); all three parties must use one,
    /// filled by the same mesh. Other requests, and any when the shelf is empty, run their
    /// setup in the session.
    pub fn with_shelf(mut self, shelf: std::sync::Arc<Shelf>) -> Self {
        self.shelf = Some(shelf);
        self
    }

    fn find(&self, name: &str) -> Option<&Served> {
        self.models.iter().find(|m| m.name == name)
    }

    /// Serves `shape` under `name`, revealing at most `reveals` to clients; the owner passes
    /// the weights (`plan`), others `None`.
    pub fn add(
        &mut self,
        name: &str,
        shape: PlanShape,
        plan: Option<FixedPlan<Z64>>,
        reveals: Output,
    ) {
        self.models.retain(|m| m.name != name);
        let digest = shape.digest();
        self.models.push(Served { name: name.into(), shape, digest, plan, reveals });
    }

    /// Serves the model file `bytes` (ONNX or a shape file, see [`ModelFile`]) under `name` as
    /// party `me`, with `policy`. The owner ([`MODEL_OWNER`]) needs the weights; any other party
    /// refuses them unless the model is public (it takes the shape file instead, which holds no
    /// weight). Errors say what is wrong and how to fix it.
    pub fn load(
        &mut self,
        me: PartyId,
        name: &str,
        bytes: &[u8],
        policy: ModelPolicy,
    ) -> Result<(), NnError> {
        let file = ModelFile::parse(bytes)?;
        let (shape, plan) = match file {
            ModelFile::Weights { plan, .. } if me == MODEL_OWNER => (plan.shape(), Some(plan)),
            ModelFile::Weights { shape, .. } if policy.public => (shape.plan, None),
            ModelFile::Weights { .. } => {
                return Err(NnError::NotServable(format!(
                    "model {name:?}: this file holds the model's weights (ONNX), and {me} is not \
                     the model owner ({MODEL_OWNER}), which alone may hold them: give {me} the \
                     weight-free shape file instead (ringfence model shape MODEL.onnx --out \
                     {name}.rfshape), or mark the model public (public = true) if its weights \
                     may be shown to every server"
                )))
            }
            ModelFile::Shape(_) if me == MODEL_OWNER => {
                return Err(NnError::NotServable(format!(
                    "model {name:?}: this is a shape file, without weights, and {me} is the \
                     model owner, which shares them: give {me} the model's ONNX file"
                )))
            }
            ModelFile::Shape(shape) => (shape.plan, None),
        };
        self.add(name, shape, plan, policy.reveals);
        Ok(())
    }

    /// The served names, in the order they were added.
    pub fn names(&self) -> Vec<&str> {
        self.models.iter().map(|m| m.name.as_str()).collect()
    }

    /// Checks a request against what this party serves; `Err` is the refusal reason.
    fn admit(&self, req: &Request) -> Result<(&Served, ModelInfo), String> {
        // The refusal names no other model: a client may not enumerate what a deployment
        // serves (its operator publishes the names it wants known).
        let m = self.find(&req.model).ok_or_else(|| {
            format!("unknown model {:?}: this deployment does not serve it", req.model)
        })?;
        if req.batch == 0 || req.batch > self.max_batch {
            return Err(format!(
                "batch of {} (this deployment takes 1 to {})",
                req.batch, self.max_batch
            ));
        }
        if req.output != Output::Argmax && m.reveals == Output::Argmax {
            return Err(format!(
                "model {:?} reveals only the class, not the scores (its owner's choice): ask for \
                 the class{}",
                req.model,
                if req.backend == Backend::Meteor {
                    " on rep3 (meteor always reveals the scores)"
                } else {
                    ""
                }
            ));
        }
        if req.backend == Backend::Meteor && req.output == Output::Argmax {
            return Err("meteor reveals the scores (it has no argmax protocol); ask for the \
                        scores or use rep3"
                .into());
        }
        let info = ModelInfo {
            input_len: m.shape.input_len,
            output_len: m.shape.output_len(),
            frac_bits: m.shape.frac_bits,
            batch: req.batch,
            input_range: m.shape.input_range,
            backend: req.backend,
            output: req.output,
        };
        Ok((m, info))
    }
}

/// A point in a served session, reported to [`serve`]'s observer with the counters so far
/// (the caller, which has a clock, times the stages).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// The request was accepted by all three parties.
    Accepted {
        /// The request.
        request: Request,
    },
    /// Weights shared and preprocessing made (or a run made ahead of demand taken, `stocked`);
    /// the online phase starts.
    SetupDone {
        /// Whether the setup material was made ahead of demand ([`stock`]).
        stocked: bool,
    },
    /// The result was sent to the client.
    OnlineDone,
}

/// How a served request ended (errors aside).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// The client received its result.
    Answered,
    /// The request was refused (the client was told why); the session is intact, so the caller
    /// can close it cleanly (flushing the refusal) or go on using it.
    Refused(String),
}

/// Serves one request of `client` on the session `p` (compute party side): negotiation, setup
/// and online inference, with `observe` called at each [`Stage`]. Returns the session for reuse
/// and how the request ended.
pub async fn serve<T: Transport>(
    mut p: Rep3<T>,
    client: PartyId,
    catalog: &Catalog,
    mut observe: impl FnMut(&Stage, Stats),
) -> Result<(Rep3<T>, Outcome), Error> {
    let me = p.me();
    if me.0 >= 3 || client.0 < 3 {
        return Err(Error::ApiMisuse(format!(
            "serve: {me} is not a compute party or {client} not a client"
        )));
    }
    let ctx = p.ctx_mut();
    ctx.expect_from::<Z64>(client, &[REQUEST_WORDS]);
    ctx.round();
    let words = ctx.recv::<Z64>(client, REQUEST_WORDS).await?;
    // The parties compare the raw request before interpreting it, so all of them refuse or
    // accept together. P0 adds the id of the stocked setup run it took for this session (0:
    // none), in the same message.
    ctx.round();
    let others: Vec<PartyId> = (0..3).map(PartyId).filter(|&j| j != me).collect();
    let mut verdict = Request::decode(&words).and_then(|r| catalog.admit(&r).map(|a| (r, a)));
    let shelf = catalog.shelf.as_deref();
    let mut stocked = match (&verdict, shelf) {
        (Ok((r, _)), Some(shelf)) if me == MODEL_OWNER && r.batch == 1 => {
            shelf.take_oldest(&r.model, r.backend)
        }
        _ => None,
    };
    // After the request: the ticket, this party's verdict (1: accepted) and the digest of the
    // model's shape it holds (zeros when it refuses).
    let digest = verdict.as_ref().map_or([0; 32], |(_, (m, _))| m.digest);
    let mut mine = words.clone();
    mine.push(Z64(stocked.as_ref().map_or(0, |r| r.id)));
    mine.push(Z64(u64::from(verdict.is_ok())));
    mine.extend(digest_words(&digest));
    for &j in &others {
        ctx.send(j, &mine)?;
    }
    let mut ticket = 0;
    for &j in &others {
        let theirs = ctx.recv::<Z64>(j, REQUEST_WORDS + 6).await?;
        if theirs[..REQUEST_WORDS] != words[..] {
            verdict = Err(format!("the client sent {j} and {me} different requests"));
        } else if let Ok((r, _)) = &verdict {
            // Keep this party's own reason if it refused; otherwise say whose verdict differs.
            if theirs[REQUEST_WORDS + 1].0 != 1 {
                verdict = Err(format!("{j} refused the request for model {:?}", r.model));
            } else if theirs[REQUEST_WORDS + 2..] != mine[REQUEST_WORDS + 2..] {
                verdict = Err(format!(
                    "the servers hold different shapes of model {:?} ({me}: {}, {j}: {}): \
                     give every server the shape of the same model file (ringfence model \
                     shape)",
                    r.model,
                    short_hex(&digest),
                    short_hex(&words_digest(&theirs[REQUEST_WORDS + 2..]))
                ));
            }
        }
        if j == MODEL_OWNER {
            ticket = theirs[REQUEST_WORDS].0;
        }
    }
    if me != MODEL_OWNER && ticket != 0 {
        // Taken at once, as P0 took it before sending the ticket: from here on, whatever
        // becomes of this session, the run has left every shelf (or goes back to every shelf
        // on a refusal below) — none is left behind at one party for P0 never to name again.
        let shelf = shelf.ok_or_else(|| {
            Error::PreprocessingExhausted(
                "P0 named a stocked setup run, but this party keeps none".into(),
            )
        })?;
        if let Ok((r, _)) = &verdict {
            stocked = Some(shelf.take_named(&r.model, r.backend, ticket)?);
        }
    }
    ctx.round();
    let (request, (served, info)) = match verdict {
        Ok(v) => v,
        Err(reason) => {
            if let (Some(run), Some(shelf), Ok(r)) = (stocked, shelf, Request::decode(&words)) {
                shelf.put_back(&r.model, r.backend, run);
            }
            let mut msg =
                vec![Z64(MAGIC << 32 | u64::from(VERSION) << 24 | 1), Z64(0), Z64(0), Z64(0)];
            let text = encode_text(&reason);
            msg.push(Z64(text.len() as u64));
            ctx.send(client, &msg)?;
            ctx.send(client, &text)?;
            return Ok((p, Outcome::Refused(reason)));
        }
    };
    // Raised before the client hears it was admitted, so that its input is never early.
    ctx.expect_from::<Z64>(client, &[info.input_elems()]);
    ctx.send(client, &info.encode())?;
    observe(&Stage::Accepted { request: request.clone() }, p.ctx().stats());
    let batch = request.batch;
    let owner_plan = if me == MODEL_OWNER { served.plan.as_ref() } else { None };
    if me == MODEL_OWNER && owner_plan.is_none() {
        return Err(Error::ApiMisuse(format!(
            "{me} owns the models but has no weights for {:?}",
            served.name
        )));
    }
    let from_stock = stocked.is_some();
    let material = stocked.map(|run| run.material);
    match request.backend {
        Backend::Meteor => {
            let mut m = Meteor::new(p);
            let (model, mut prep) = match material {
                Some(stock::Material::Meteor(model, prep)) => (model, prep),
                Some(_) => return Err(wrong_material(request.backend)),
                None => {
                    let model = m.share_model(MODEL_OWNER, owner_plan, &served.shape).await?;
                    let prep = m.preprocess(&model, batch, Output::Logits, client).await?;
                    (std::sync::Arc::new(model), prep)
                }
            };
            m.deliver_mask(prep.input_mask()?).await?;
            observe(&Stage::SetupDone { stocked: from_stock }, m.rep3().ctx().stats());
            let mask = prep.take_input_mask()?;
            let x = m.share(client, None, mask).await?;
            let y = m.infer(&model, x, prep).await?;
            m.reveal_to_client(client, y).await?;
            observe(&Stage::OnlineDone, m.rep3().ctx().stats());
            let mut p = m.into_rep3();
            p.barrier().await?;
            Ok((p, Outcome::Answered))
        }
        Backend::Rep3 => {
            let (model, prep) = match material {
                Some(stock::Material::Rep3(model, prep)) => {
                    (model, prep.for_output(request.output)?)
                }
                Some(_) => return Err(wrong_material(request.backend)),
                None => {
                    let model = p.share_model(MODEL_OWNER, owner_plan, &served.shape).await?;
                    let prep = p.preprocess(&model, batch, request.output, client).await?;
                    (std::sync::Arc::new(model), prep)
                }
            };
            observe(&Stage::SetupDone { stocked: from_stock }, p.ctx().stats());
            let x = p.input_from_client::<Z64>(client, batch * served.shape.input_len).await?;
            let y = p.infer(&model, x, prep).await?;
            p.reveal_to_client(client, y).await?;
            observe(&Stage::OnlineDone, p.ctx().stats());
            p.barrier().await?;
            Ok((p, Outcome::Answered))
        }
    }
}

/// A shelf queue held a run for another backend (the shelf keys runs by backend: a bug).
fn wrong_material(backend: Backend) -> Error {
    Error::ApiMisuse(format!(
        "the stocked run taken for a {} session is not {0} material",
        backend.name()
    ))
}

/// The first 8 bytes of a digest in hex: enough to tell two apart in a message.
fn short_hex(d: &[u8; 32]) -> String {
    d[..8].iter().map(|b| format!("{b:02x}")).collect()
}

fn used_up() -> Error {
    Error::ApiMisuse("the client's session was used up".into())
}

fn encode_text(s: &str) -> Vec<Z64> {
    let mut b = s.as_bytes().to_vec();
    b.truncate(MAX_REASON_WORDS * 8);
    b.resize(b.len().div_ceil(8) * 8, 0);
    b.chunks(8).map(|c| Z64(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))).collect()
}

fn decode_text(w: &[Z64]) -> String {
    let b: Vec<u8> = w.iter().flat_map(|z| z.0.to_le_bytes()).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&b).into_owned()
}

/// The result of a classification, as the client reconstructs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    /// `batch × output_len` scores (`None` when only the class was requested).
    pub scores: Option<Vec<f64>>,
    /// The class index of each sample (the argmax of its scores).
    pub classes: Vec<usize>,
    /// What each party received of the input, as raw ring words (METEOR: the masked input
    /// `m = x − ψ`, the same for all three; rep3: the party's first additive component). Random
    /// to anyone but the client by design; for display (the demo draws it).
    pub sent: [Vec<u64>; 3],
}

/// A request the parties accepted, ready for its input. Single use.
#[derive(Debug)]
pub struct Ready {
    info: ModelInfo,
    mask: Option<crate::meteor::client::ClientMask<Z64>>,
}

/// The client side: [`request`](Client::request), then [`setup`](Client::setup), then
/// [`run`](Client::run) (the split lets callers report progress). `Debug` is redacted.
pub struct Client<T> {
    ctx: Option<Ctx<T>>,
    own: Seed,
}

impl<T> core::fmt::Debug for Client<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Client").finish_non_exhaustive()
    }
}

impl<T: Transport> Client<T> {
    /// A client on `ctx` (id ≥ 3, four participants) with private randomness `own`.
    pub fn new(ctx: Ctx<T>, own: Seed) -> Self {
        Self { ctx: Some(ctx), own }
    }

    fn ctx(&mut self) -> Result<&mut Ctx<T>, Error> {
        self.ctx.as_mut().ok_or_else(used_up)
    }

    /// Lends the context out to a protocol client; the caller puts it back.
    fn take_ctx(&mut self) -> Result<Ctx<T>, Error> {
        self.ctx.take().ok_or_else(used_up)
    }

    /// The counters so far.
    pub fn stats(&self) -> Stats {
        self.ctx.as_ref().map(Ctx::stats).unwrap_or_default()
    }

    /// Gives the context back (e.g. to close its transport).
    pub fn into_ctx(self) -> Option<Ctx<T>> {
        self.ctx
    }

    /// Sends `req` to the three parties and returns the model's description once all three
    /// accepted it ([`Error::Refused`] with their reason otherwise).
    pub async fn request(&mut self, req: &Request) -> Result<ModelInfo, Error> {
        let words = req.encode()?;
        let ctx = self.ctx()?;
        ctx.round();
        for i in 0..3 {
            ctx.send(PartyId(i), &words)?;
        }
        ctx.round();
        let mut infos = Vec::with_capacity(3);
        for i in (0..3).map(PartyId) {
            let w = ctx.recv::<Z64>(i, INFO_WORDS).await?;
            let bad = |what: &'static str| Error::PeerMisbehaved {
                peer: i,
                reason: FrameError::Malformed(what),
            };
            if w[0].0 >> 24 != (MAGIC << 8 | u64::from(VERSION)) {
                return Err(bad("not a model description"));
            }
            if w[0].0 & 0xff == 1 {
                let n = usize::try_from(w[4].0).unwrap_or(usize::MAX);
                if n > MAX_REASON_WORDS {
                    return Err(bad("refusal text too long"));
                }
                let reason = decode_text(&ctx.recv::<Z64>(i, n).await?);
                return Err(Error::Refused { peer: i, reason });
            }
            let size = |z: Z64| usize::try_from(z.0).ok().filter(|&v| v > 0 && v <= 1 << 28);
            let (Some(input_len), Some(output_len)) = (size(w[1]), size(w[2])) else {
                return Err(bad("model sizes out of range"));
            };
            let frac_bits = u32::try_from(w[3].0)
                .ok()
                .filter(|&f| f < 62)
                .ok_or_else(|| bad("fractional bits out of range"))?;
            let input_range = match w[4].0 {
                0 => None,
                bits => Some(
                    InputRange::from_bits(bits).ok_or_else(|| bad("input range is not a range"))?,
                ),
            };
            infos.push(ModelInfo {
                input_len,
                output_len,
                frac_bits,
                batch: req.batch,
                input_range,
                backend: req.backend,
                output: req.output,
            });
        }
        if infos.iter().any(|i| *i != infos[0]) {
            return Err(Error::PeerMisbehaved {
                peer: PartyId(1),
                reason: FrameError::Malformed("the parties describe the model differently"),
            });
        }
        Ok(infos[0])
    }

    /// Takes part in the setup (METEOR: receives the input's mask; rep3: nothing to do).
    pub async fn setup(&mut self, info: &ModelInfo) -> Result<Ready, Error> {
        let mask = match info.backend {
            Backend::Meteor => {
                let mut c = MeteorClient::new(self.take_ctx()?);
                let mask = c.receive_mask::<Z64>(info.batch * info.input_len).await;
                self.ctx = Some(c.into_ctx());
                Some(mask?)
            }
            Backend::Rep3 => None,
        };
        Ok(Ready { info: *info, mask })
    }

    /// Encodes and shares `input` (`batch × input_len` reals), waits for the result and
    /// reconstructs it. Bad input (wrong length, non-finite or out-of-range values) is an
    /// error before anything is sent.
    pub async fn run(&mut self, ready: Ready, input: &[f64]) -> Result<Classification, Error> {
        let info = ready.info;
        if input.len() != info.batch * info.input_len {
            return Err(Error::ApiMisuse(format!(
                "input has {} values; the model takes {} per sample and the request is for {} sample(s)",
                input.len(),
                info.input_len,
                info.batch
            )));
        }
        let fp = FixedPoint::new(info.frac_bits);
        let x: Vec<Z64> = fp.encode_slice(input)?;
        let n = info.result_len();
        let ctx = self.take_ctx()?;
        let (out, ctx) = match ready.mask {
            Some(mask) => {
                let mut c = MeteorClient::new(ctx);
                let r = match c.share(&x, mask) {
                    Ok(m) => {
                        c.reconstruct::<Z64>(n).await.map(|out| (out, [m.clone(), m.clone(), m]))
                    }
                    Err(e) => Err(e),
                };
                (r, c.into_ctx())
            }
            None => {
                let mut c = Rep3Client::new(ctx, self.own.clone());
                let r = match c.share(&x) {
                    Ok(comps) => c.reconstruct::<Z64>(n).await.map(|out| (out, comps)),
                    Err(e) => Err(e),
                };
                (r, c.into_ctx())
            }
        };
        self.ctx = Some(ctx);
        let (out, sent) = out?;
        let sent = sent.map(|v| v.into_iter().map(|z| z.0).collect());
        Ok(match info.output {
            Output::Argmax => Classification {
                scores: None,
                classes: out.iter().map(|c| usize::try_from(c.0).unwrap_or(usize::MAX)).collect(),
                sent,
            },
            _ => {
                let scores: Vec<f64> = out.iter().map(|&v| fp.decode(v)).collect();
                let classes = argmax_rows(&scores, info.output_len);
                Classification { scores: Some(scores), classes, sent }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_of_another_version_is_refused_naming_both() {
        let words = Request::new("lenet", Backend::Meteor, 1).encode().unwrap();
        assert_eq!(Request::decode(&words), Ok(Request::new("lenet", Backend::Meteor, 1)));
        let mut old = words.clone();
        old[0] = Z64(old[0].0 & !(0xff << 24) | 1 << 24);
        let reason = Request::decode(&old).unwrap_err();
        assert_eq!(reason, format!("request version 1 is not the served version {VERSION}"));
    }
}
