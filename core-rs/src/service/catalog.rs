//! What a compute party serves: the [`Catalog`] of models by name, each with its shape, the
//! owner's weights and its [`ModelPolicy`], and the check of a request against it.

use super::stock::Shelf;
use super::{Backend, ModelInfo, Request, MAX_SCORES, MODEL_OWNER};
use crate::net::PartyId;
use crate::nn::{FixedPlan, ModelFile, NnError, Output, PlanShape};
use crate::rep3::Comparisons;
use crate::ring::Z64;

/// A model a party serves.
pub(super) struct Served {
    pub(super) name: String,
    pub(super) shape: PlanShape,
    /// [`PlanShape::digest`] of `shape`, compared among the parties for every request.
    pub(super) digest: [u8; 32],
    pub(super) plan: Option<FixedPlan<Z64>>,
    pub(super) reveals: Output,
}

/// How a party serves one model: its deployment's per-model settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelPolicy {
    /// The weights are public: a party other than the owner may load the weight-bearing file
    /// (else it must be given the shape file, see [`nn::shape`](crate::nn::shape)).
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
    pub(super) models: Vec<Served>,
    pub(super) max_batch: usize,
    pub(super) shelf: Option<std::sync::Arc<Shelf>>,
    pub(super) comparisons: Comparisons,
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
        Self { models: Vec::new(), max_batch, shelf: None, comparisons: Comparisons::TwoInput }
    }

    /// Runs rep3's comparisons as `c` ([`Comparisons`]: on multi-fan-in gates, fewer rounds
    /// for more bytes). The three parties compare their settings for every request and refuse
    /// it, saying so, when they differ. METEOR and mal3 compare their own way.
    pub fn with_comparisons(mut self, c: Comparisons) -> Self {
        self.comparisons = c;
        self
    }

    /// Serves requests of one sample from setup runs made ahead of demand on `shelf` when one
    /// is ready for the model and backend (see [`stock`](super::stock)); all three parties must
    /// use one, filled by the same mesh. Other requests, and any when the shelf is empty, run
    /// their setup in the session.
    pub fn with_shelf(mut self, shelf: std::sync::Arc<Shelf>) -> Self {
        self.shelf = Some(shelf);
        self
    }

    pub(super) fn find(&self, name: &str) -> Option<&Served> {
        self.models.iter().find(|m| m.name == name)
    }

    /// Serves `shape` under `name`, revealing at most `reveals` to clients; the owner passes
    /// the weights (`plan`), others `None`. Clients refuse a model of more than
    /// [`MAX_SCORES`] scores per sample ([`Catalog::load`] refuses to serve one).
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
        if shape.output_len() > MAX_SCORES {
            return Err(NnError::NotServable(format!(
                "model {name:?}: {} scores per sample; clients accept at most {MAX_SCORES} (a \
                 classifier's classes)",
                shape.output_len()
            )));
        }
        self.add(name, shape, plan, policy.reveals);
        Ok(())
    }

    /// The public shape of the served model `name`.
    pub fn shape(&self, name: &str) -> Option<&crate::nn::PlanShape> {
        self.find(name).map(|m| &m.shape)
    }

    /// The served names, in the order they were added.
    pub fn names(&self) -> Vec<&str> {
        self.models.iter().map(|m| m.name.as_str()).collect()
    }

    /// Checks a request against what party `me` serves; `Err` is the refusal reason.
    pub(super) fn admit(&self, me: PartyId, req: &Request) -> Result<(&Served, ModelInfo), String> {
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
                if req.backend.reveals_class() {
                    String::new()
                } else {
                    format!(
                        " on {} ({} always reveals the scores)",
                        Backend::class_revealers(),
                        req.backend.name()
                    )
                }
            ));
        }
        if m.shape.is_integer() && !req.backend.runs_integer_plans() {
            return Err(format!(
                "model {:?} is quantized (int8): {} runs fixed-point models only; ask for {}",
                req.model,
                req.backend.name(),
                Backend::integer_runners()
            ));
        }
        if !req.backend.reveals_class() && req.output == Output::Argmax {
            return Err(format!(
                "{} reveals the scores (it has no argmax protocol); ask for the scores or use {}",
                req.backend.name(),
                Backend::class_revealers()
            ));
        }
        let info = ModelInfo {
            input_len: m.shape.input_len,
            output_len: m.shape.output_len(),
            frac_bits: m.shape.frac_bits,
            batch: req.batch,
            input_range: m.shape.input_range,
            // The owner's, from the model itself (see `ModelInfo::class_labels`).
            class_labels: (me == MODEL_OWNER)
                .then(|| m.plan.as_ref().and_then(FixedPlan::class_labels))
                .flatten()
                .cloned(),
            backend: req.backend,
            output: req.output,
        };
        Ok((m, info))
    }
}
