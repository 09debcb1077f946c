//! Setup material made ahead of demand, so that a client's session runs only the online phase:
//! METEOR's masks and mask products, and `rep3`'s truncation pairs and daBits.
//!
//! Setup material is input-independent: the three compute parties can make it among
//! themselves before any client arrives, in a long-lived session of their own (the *mesh*),
//! and keep it until a client session consumes it. The shares are plain values, valid in any
//! later session of the same three parties; what a session needs of its own (keys for fresh
//! randomness, the client's links) it still sets up itself.
//!
//! ```text
//!  mesh (P0, P1, P2 only)                         client session (P0, P1, P2, client)
//!  P0 ─ epoch ─▶ P1, P2; models shared once        request compared; P0 names a stocked
//!  loop: P0 ─ which target ─▶ P1, P2 (1 round)      run (its id) in the same message
//!        preprocess(model, batch 1) for a client   METEOR: the client receives that run's
//!        P1, P2 shelve it, then barrier; P0          input mask (its only setup round);
//!        shelves it after the barrier                rep3: no setup round at all
//!                                                  online inference, as without a stock
//! ```
//!
//! Single use: a run leaves every party's [`Shelf`] when a session takes it, whatever happens
//! next. P0 decides which run a session uses and shelves a run only once the other two have
//! shelved it (the barrier), so P1 and P2 always find the id P0 names — unless one of them
//! restarted, which starts a new mesh epoch: every party then empties its shelf, and a session
//! that names an id from the old epoch fails with [`Error::PreprocessingExhausted`].

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use std::any::Any;

use super::catalog::Served;
use super::registry::{Dispatch, ForScheme, ServedScheme};
use super::{Backend, Catalog, MODEL_OWNER};
use crate::net::{FrameError, PartyId, Roster, Stats, Transport};
use crate::nn::{FixedPlan, Inference, Output, SharedModel};
use crate::rep3::Rep3;
use crate::ring::Z64;
use crate::sharing::Arith;
use crate::Error;

/// One run's setup material for a batch of one sample, made in the mesh. `Debug` is redacted.
pub struct Stocked {
    /// Names this run at all three parties: the mesh epoch (high 32 bits), then a sequence
    /// number. Never 0.
    pub id: u64,
    /// The model's weights and the run's single-use material.
    pub material: Material,
}

/// A stocked run's contents: the model's shares and the run's single-use material, of the
/// scheme the run was made for (METEOR: masks and mask products; rep3: truncation pairs and
/// daBits, made for [`Output::Argmax`] where the scheme reveals the class, so that they serve
/// either output). The weights are shared once per mesh epoch: every run of that epoch refers
/// to them.
pub struct Material(Box<dyn Any + Send>);

/// A run's contents as scheme `S`'s types: the model's shares and the run's material.
type Contents<S> = (Arc<SharedModel<<S as Arith<Z64>>::V>>, <S as Inference<Z64>>::Prep);

impl Material {
    fn new<T: Transport, S: ServedScheme<T, Rep3<T>>>(contents: Contents<S>) -> Self {
        Self(Box::new(contents))
    }

    /// The contents, as scheme `S`'s (a run of another scheme is an error: the shelf keys runs
    /// by backend, so it would be a bug).
    pub(super) fn take<T: Transport, B, S: ServedScheme<T, B>>(self) -> Result<Contents<S>, Error> {
        self.0.downcast().map(|b| *b).map_err(|_| {
            Error::ApiMisuse(format!("the stocked run taken is not {} material", S::NAME))
        })
    }
}

/// Which runs a shelf queue holds: a model on a backend.
type Kind = (String, Backend);

impl core::fmt::Debug for Stocked {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Stocked(#{:x}, <redacted>)", self.id)
    }
}

/// A party's runs ready for client sessions, per model name. Shared between the mesh (which
/// fills it) and the sessions (which take from it), across threads.
#[derive(Default)]
pub struct Shelf {
    runs: Mutex<HashMap<Kind, VecDeque<Stocked>>>,
}

impl core::fmt::Debug for Shelf {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Shelf").field("ready", &self.counts()).finish()
    }
}

impl Shelf {
    /// An empty shelf.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Kind, VecDeque<Stocked>>> {
        // A panic elsewhere cannot leave the map half-updated: every change is one call.
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs ready for `model` on `backend`.
    pub fn ready(&self, model: &str, backend: Backend) -> usize {
        self.lock().get(&(model.to_string(), backend)).map_or(0, VecDeque::len)
    }

    /// Runs ready, per model and backend (those with none are left out), sorted.
    pub fn counts(&self) -> Vec<(String, Backend, usize)> {
        let mut c: Vec<_> = self
            .lock()
            .iter()
            .filter(|(_, q)| !q.is_empty())
            .map(|((m, b), q)| (m.clone(), *b, q.len()))
            .collect();
        c.sort_by(|a, b| (&a.0, a.1.name()).cmp(&(&b.0, b.1.name())));
        c
    }

    fn put(&self, model: &str, backend: Backend, run: Stocked) {
        self.lock().entry((model.to_string(), backend)).or_default().push_back(run);
    }

    /// The oldest run of `model` on `backend` (P0's choice for a session).
    pub(super) fn take_oldest(&self, model: &str, backend: Backend) -> Option<Stocked> {
        self.lock().get_mut(&(model.to_string(), backend))?.pop_front()
    }

    /// The run `id` of `model` on `backend` (what P1 and P2 take when P0 names it).
    pub(super) fn take_named(
        &self,
        model: &str,
        backend: Backend,
        id: u64,
    ) -> Result<Stocked, Error> {
        let mut runs = self.lock();
        let q = runs.get_mut(&(model.to_string(), backend));
        let at = q.as_ref().and_then(|q| q.iter().position(|r| r.id == id));
        match (q, at) {
            (Some(q), Some(at)) => Ok(q.remove(at).expect("position is in the queue")),
            _ => Err(Error::PreprocessingExhausted(format!(
                "P0 named {} setup run #{id:x} of {model:?}, which this party does not hold (a \
                 compute party restarted since it was made?)",
                backend.name()
            ))),
        }
    }

    /// Puts back a run that P0 took for a session that was then refused (it was never used).
    pub(super) fn put_back(&self, model: &str, backend: Backend, run: Stocked) {
        self.lock().entry((model.to_string(), backend)).or_default().push_front(run);
    }

    /// Drops every run (e.g. when the mesh that made them broke: a peer may have lost its).
    pub fn clear(&self) {
        self.lock().clear();
    }
}

/// How many runs of a model to keep ready on a backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// A model name the catalogue serves.
    pub model: String,
    /// The backend the runs are for.
    pub backend: Backend,
    /// Runs (batch 1) to keep ready.
    pub runs: usize,
}

/// What one step of the mesh did.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Nothing was needed (P0 sent a keep-alive).
    Idle,
    /// One run of `model` on `backend` was made and shelved; `ready` are now on this party's
    /// shelf.
    Made {
        /// The model.
        model: String,
        /// The backend.
        backend: Backend,
        /// Runs of it on this party's shelf now.
        ready: usize,
        /// Runs of it the mesh keeps ready (its [`Target::runs`]).
        target: usize,
        /// What making it cost this party (bytes, rounds).
        cost: Stats,
    },
}

/// A party's side of the mesh: the three compute parties making setup material for client
/// sessions. Start it with [`Mesh::start`] on a fresh three-party session, then call
/// [`Mesh::step`] in a loop (P0 decides what each step makes; the others follow).
pub struct Mesh<T> {
    /// `None` once a step failed: the session's state is then unknown, and the mesh is over.
    session: Option<Rep3<T>>,
    epoch: u64,
    seq: u64,
    /// Each target with its model's shares (an `Arc<SharedModel<_>>` of the target's scheme).
    models: Vec<(Target, Arc<dyn Any + Send + Sync>)>,
}

impl<T> core::fmt::Debug for Mesh<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let t: Vec<_> = self.models.iter().map(|(t, _)| t).collect();
        f.debug_struct("Mesh").field("epoch", &self.epoch).field("targets", &t).finish()
    }
}

impl<T: Transport> Mesh<T> {
    /// Opens a mesh epoch: P0 draws the epoch and sends it (1 round), every party empties its
    /// shelf (runs of an older epoch may be missing elsewhere), the parties compare the shape
    /// digests of the models with a nonzero target (1 round; a difference is an error naming
    /// the model, as for a client's request), and those models are shared once per backend (1
    /// round each; the model owner P0 passes its weights through `catalog`). Unknown names,
    /// and models a backend does not run, are refused.
    pub async fn start(
        mut p: Rep3<T>,
        catalog: &Catalog,
        targets: &[Target],
        shelf: &Shelf,
        epoch_seed: u32,
    ) -> Result<Self, Error> {
        let me = p.me();
        let e =
            from_owner(&mut p, (me == MODEL_OWNER).then(|| u64::from(epoch_seed.max(1)))).await?;
        if e == 0 || e > u64::from(u32::MAX) {
            return Err(Error::PeerMisbehaved {
                peer: MODEL_OWNER,
                reason: FrameError::Malformed("mesh epoch is not a nonzero 32-bit value"),
            });
        }
        let epoch = e;
        shelf.clear();
        let active: Vec<&Target> = targets.iter().filter(|t| t.runs > 0).collect();
        if let Some(t) = active.iter().find(|t| !Rep3::<T>::runs(t.backend)) {
            return Err(Error::ApiMisuse(format!(
                "mesh: {} keeps no runs ready (the mesh makes them for rep3, METEOR and mal3)",
                t.backend.name()
            )));
        }
        let served = active
            .iter()
            .map(|t| {
                catalog.find(&t.model).ok_or_else(|| {
                    Error::ApiMisuse(format!("mesh: {:?} is not a served model", t.model))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if let Some((t, _)) = active
            .iter()
            .zip(&served)
            .find(|(t, m)| m.shape.is_integer() && !t.backend.runs_integer_plans())
        {
            return Err(Error::ApiMisuse(format!(
                "mesh: {:?} is quantized (int8) and {} runs fixed-point models only: keep none of \
                 its {} runs ready",
                t.model,
                t.backend.name(),
                t.backend.name()
            )));
        }
        same_shapes(&mut p, &active, &served).await?;
        let mut models = Vec::new();
        for (t, served) in active.into_iter().zip(served) {
            let plan = if me == MODEL_OWNER { served.plan.as_ref() } else { None };
            let share = ShareModel { plan, served };
            let (back, weights) = p.dispatch(t.backend, share).await;
            p = back;
            models.push((t.clone(), ran(weights)??));
        }
        Ok(Self { session: Some(p), epoch, seq: 0, models })
    }

    /// The mesh's session (for its counters).
    pub fn session(&self) -> Result<&Rep3<T>, Error> {
        self.session.as_ref().ok_or_else(broken)
    }

    /// The epoch P0 drew.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// One step: P0 picks the target furthest below its count on its own shelf and tells the
    /// others (1 round, 8 bytes); if there is one, all three make a run of it for a client and
    /// shelve it. Every party calls this in the same order; P0 returns [`Step::Idle`] at once
    /// when all targets are met or when `may_make` is false (its caller waits a little before
    /// the next step, which is the others' keep-alive). `may_make` is P0's to decide (the
    /// others' is ignored): e.g. false while client sessions run, so that making runs does not
    /// take CPU from their online phase.
    pub async fn step(&mut self, shelf: &Shelf, may_make: bool) -> Result<Step, Error> {
        let mut p = self.session.take().ok_or_else(broken)?;
        let me = p.me();
        let word = (me == MODEL_OWNER).then(|| {
            let missing =
                |(t, _): &(Target, _)| t.runs.saturating_sub(shelf.ready(&t.model, t.backend));
            (0..self.models.len())
                .filter(|&i| may_make && missing(&self.models[i]) > 0)
                .max_by_key(|&i| missing(&self.models[i]))
                .map_or(0, |i| i as u64 + 1)
        });
        let choice = match usize::try_from(from_owner(&mut p, word).await?) {
            Ok(0) => None,
            Ok(i) if i <= self.models.len() => Some(i - 1),
            _ => {
                return Err(Error::PeerMisbehaved {
                    peer: MODEL_OWNER,
                    reason: FrameError::Malformed("mesh step names an unknown model"),
                })
            }
        };
        let Some(i) = choice else {
            self.session = Some(p);
            return Ok(Step::Idle);
        };
        let before = p.ctx().stats();
        let (target, weights) = &self.models[i];
        // Made for the class where the scheme can reveal it: such material serves either.
        let output = if target.backend.reveals_class() { Output::Argmax } else { Output::Logits };
        let (mut p, material) =
            p.dispatch(target.backend, MakeRun { weights: weights.clone(), output }).await;
        let material = ran(material)??;
        self.seq += 1;
        let run = Stocked { id: self.epoch << 32 | self.seq, material };
        let (model, backend) = (&target.model, target.backend);
        // P1 and P2 shelve before the barrier and P0 after it: whatever P0 can hand to a
        // session, the others already hold.
        if me != MODEL_OWNER {
            shelf.put(model, backend, run);
            p.barrier().await?;
        } else {
            p.barrier().await?;
            shelf.put(model, backend, run);
        }
        let cost = p.ctx().stats() - before;
        self.session = Some(p);
        let ready = shelf.ready(model, backend);
        Ok(Step::Made { model: model.clone(), backend, ready, target: target.runs, cost })
    }
}

/// What a dispatch on the mesh gave (`start` refused the families that do not run on it).
fn ran<O>(out: Option<O>) -> Result<O, Error> {
    out.ok_or_else(|| Error::ApiMisuse("mesh: a family that does not run on rep3's session".into()))
}

fn broken() -> Error {
    Error::ApiMisuse("the mesh's session broke in an earlier step: start a new mesh".into())
}

/// Shares a served model's weights for one scheme (once per mesh epoch).
struct ShareModel<'a> {
    plan: Option<&'a FixedPlan<Z64>>,
    served: &'a Served,
}

impl<T: Transport> ForScheme<T, Rep3<T>> for ShareModel<'_> {
    type Out = Result<Arc<dyn Any + Send + Sync>, Error>;
    async fn run<S: ServedScheme<T, Rep3<T>>>(self, s: &mut S) -> Self::Out {
        let model = s.share_model(MODEL_OWNER, self.plan, &self.served.shape).await?;
        Ok(Arc::new(Arc::new(model)))
    }
}

/// Makes one run's material for a client, from a model shared by [`ShareModel`].
struct MakeRun {
    weights: Arc<dyn Any + Send + Sync>,
    output: Output,
}

impl<T: Transport> ForScheme<T, Rep3<T>> for MakeRun {
    type Out = Result<Material, Error>;
    async fn run<S: ServedScheme<T, Rep3<T>>>(self, s: &mut S) -> Self::Out {
        let model = self
            .weights
            .downcast_ref::<Arc<SharedModel<S::V>>>()
            .ok_or_else(|| Error::ApiMisuse(format!("the mesh holds no {} weights", S::NAME)))?
            .clone();
        let prep = s.preprocess(&model, 1, self.output, super::CLIENT).await?;
        Ok(Material::new::<T, S>((model, prep)))
    }
}

/// One word from P0 to P1 and P2 (1 round): P0 passes `Some(word)` and gets it back, the others
/// pass `None` and get P0's.
/// Checks with the two other parties that each holds the same shape of every model in
/// `targets` (`served`, in the same order): one round, the digests to both.
async fn same_shapes<T: Transport>(
    p: &mut Rep3<T>,
    targets: &[&Target],
    served: &[&Served],
) -> Result<(), Error> {
    let me = p.me();
    let ctx = p.ctx_mut();
    ctx.round();
    let mine: Vec<Z64> = served.iter().flat_map(|s| crate::net::digest_words(&s.digest)).collect();
    let others: Vec<PartyId> = Roster::THREE.others(me).collect();
    for &j in &others {
        ctx.send(j, &mine)?;
    }
    for &j in &others {
        let theirs = ctx.recv::<Z64>(j, mine.len()).await?;
        let differs = theirs.chunks(4).zip(mine.chunks(4)).position(|(a, b)| a != b);
        if let Some(i) = differs {
            return Err(Error::ApiMisuse(format!(
                "mesh: {me} and {j} hold different shapes of model {:?}: give every server the \
                 shape of the same model file (ringfence model shape)",
                targets[i].model
            )));
        }
    }
    Ok(())
}

async fn from_owner<T: Transport>(p: &mut Rep3<T>, word: Option<u64>) -> Result<u64, Error> {
    let ctx = p.ctx_mut();
    ctx.round();
    match word {
        Some(w) => {
            for j in Roster::THREE.others(MODEL_OWNER) {
                ctx.send(j, &[Z64(w)])?;
            }
            Ok(w)
        }
        None => Ok(ctx.recv::<Z64>(MODEL_OWNER, 1).await?[0].0),
    }
}
