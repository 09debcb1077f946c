//! Private classification as a service: an input provider (the client, the participant after
//! the compute parties) asks the compute parties to run one of the models they serve on its
//! input, and alone learns the result. Three compute parties run rep3, METEOR or mal3 on a
//! [`Rep3`](crate::rep3::Rep3) session; five or seven run rss on an [`Rss`](crate::rss::Rss)
//! session ([`ServiceBase`]). Both sides are sans-IO `async fn`s over a [`Ctx`], so the native
//! server parties, the native client and the SDK's client (WebAssembly) run this same code.
//!
//! ```text
//!  client                       P0, P1, P2
//!  Request ───────────────────▶ (each)            model, backend, output, batch      1 round
//!                               P_i ↔ P_j          the parties compare the requests,  1 round
//!                                                  the model's shape digest and their
//!                                                  verdicts (P0 adds the id of a stocked
//!                                                  run, if any)
//!  ◀─────────────────────────── ModelInfo (each)  sizes, input range (P0: the class   1 round
//!                                                  labels), or a refusal
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
//! let net = testing::Net::new(service::PARTICIPANTS);
//! type Fut = Pin<Box<dyn std::future::Future<Output = Result<Option<Vec<f64>>, ringfence_core::Error>>>>;
//! let mut futs: Vec<Fut> = Vec::new();
//! for (i, seeds) in testing::rep3_seeds(1).into_iter().enumerate() {
//!     let me = PartyId(i as u8);
//!     let mut catalog = Catalog::new(8);
//!     // This example asks for the scores: the model's owner allows them.
//!     catalog.add("tiny", plan.shape(), (i == 0).then(|| plan.clone()), nn::Output::Logits);
//!     let ctx = Ctx::new(me, service::PARTICIPANTS, SessionId([1; 16]), net.transport(me));
//!     futs.push(Box::pin(async move {
//!         let p = Rep3::setup(ctx, seeds).await?;
//!         let (_, outcome) = service::serve(p, service::CLIENT, &catalog, |_, _| {}).await?;
//!         assert_eq!(outcome, service::Outcome::Answered);
//!         Ok(None)
//!     }));
//! }
//! let ctx = Ctx::new(service::CLIENT, service::PARTICIPANTS, SessionId([1; 16]),
//!     net.transport(service::CLIENT));
//! futs.push(Box::pin(async move {
//!     let mut c = service::Client::new(ctx, Seed::from_bytes([9; 32]));
//!     let info = c.request(&Request::new("tiny", Backend::Meteor, 1)).await?;
//!     let ready = c.setup(&info).await?;
//!     Ok(c.run(ready, &[1.0, 3.0]).await?.scores)
//! }));
//! let outs = net.run(futs);
//! let y = outs[service::CLIENT.index()].as_ref().unwrap().as_ref().unwrap()[0];
//! assert!((y - (-0.5)).abs() < 1e-3);
//! ```
//!
//! [`Ctx`]: crate::net::Ctx
//! [`PlanShape::digest`]: crate::nn::PlanShape::digest
//! [`nn::shape`]: crate::nn::shape
//! [`Error::Refused`]: crate::Error::Refused
//! [`Z64`]: crate::ring::Z64

use crate::net::{PartyId, Roster};

mod catalog;
mod client;
pub mod erased;
mod limits;
mod messages;
mod registry;
mod server;
pub mod stock;

pub use catalog::{Catalog, ModelPolicy};
pub use client::{Classification, Client, Ready};
pub use limits::request_limit;
pub use messages::{ModelInfo, Request, MAX_NAME, MAX_SCORES, VERSION};
pub use registry::{Backend, Deployment, ServiceBase};
pub use server::{serve, Outcome, Stage};

/// Who takes part in a classification session of three compute parties (rep3, METEOR, mal3),
/// then the client. rss sessions have 5 or 7 ([`ServiceBase::roster`]).
pub const ROSTER: Roster = Roster::THREE;
/// The client's participant id in a classification session of three compute parties (0, 1, 2):
/// the first after [`ROSTER`]'s parties.
pub const CLIENT: PartyId = ROSTER.first_client();
/// Participants of a classification session of three compute parties and the one client: what
/// its [`Ctx`](crate::net::Ctx) is made for.
pub const PARTICIPANTS: usize = ROSTER.participants(1);
/// The compute party that holds the model's weights and shares them.
pub const MODEL_OWNER: PartyId = PartyId(0);
