//! A compute party serving models ([`service::serve`]): the party side of a private
//! classification, for a [`Party`] whose session includes the client (joined with 4
//! participants or more).
//!
//! ```text
//! serve(models, maxBatch, client, onStage) → {outcome: 'answered', request} | {outcome: 'refused', reason}
//!   onStage('accepted' | 'setup-done' | 'online-done', counters)   as each point is reached
//! ```
//!
//! Every model is imported and planned before anything is sent, so a malformed file fails with
//! `INVALID_MODEL` and the importer's message while the party is still fresh. The model owner
//! (P0) keeps the weights; the others keep only the shapes (they may load the same file).

use js_sys::{Function, Object, Promise, Uint8Array};
use ringfence_core::net::{PartyId, Stats};
use ringfence_core::nn::{self, FixedPlan, Output, DEFAULT_FRAC_BITS};
use ringfence_core::ring::Z64;
use ringfence_core::service::{self, Catalog, Outcome, Request, Stage};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::args::{describe, index, object};
use super::error::{from_core, js_error, Code};
use super::slot::stats_object;
use super::Party;

/// The largest `maxBatch` a party may set (the same bound as a client's request).
const MAX_BATCH: u64 = 1 << 20;

#[wasm_bindgen]
impl Party {
    /// Serves one classification request of participant `client` (≥ 3) with the models in
    /// `models` (an object mapping each served name to its ONNX bytes, a `Uint8Array`),
    /// accepting batches of 1 to `maxBatch` samples. `onStage` (a function, or `undefined`) is
    /// called with `'accepted'`, `'setup-done'` and `'online-done'` and the counters
    /// `{bytesSent, payloadBytesSent, framesSent, rounds}` as the session reaches each point.
    /// Resolves with `{outcome: 'answered', request: {model, backend, output, batch}}` or
    /// `{outcome: 'refused', reason}` (the client was told why; the party stays usable). A
    /// protocol failure rejects, and the party's session is lost with it.
    pub fn serve(
        &self,
        models: JsValue,
        max_batch: JsValue,
        client: JsValue,
        on_stage: JsValue,
    ) -> Result<Promise, JsValue> {
        let client = index(&client, "client", 254)?;
        if client < 3 || client >= self.participants {
            return Err(js_error(
                Code::ApiMisuse,
                format!(
                    "serve: client {client} is not a client of this session (its {} participants \
                     are the parties 0, 1, 2{}): join with one more participant per client",
                    self.participants,
                    if self.participants > 3 { " and clients from 3" } else { " only" }
                ),
            ));
        }
        let max_batch = index(&max_batch, "maxBatch", MAX_BATCH)?;
        if max_batch == 0 {
            return Err(js_error(Code::InvalidArgument, "maxBatch must be at least 1"));
        }
        let on_stage = match on_stage.dyn_into::<Function>() {
            Ok(f) => Some(f),
            Err(v) if v.is_undefined() => None,
            Err(v) => {
                return Err(js_error(
                    Code::InvalidArgument,
                    format!("onStage must be a function, got {}", describe(&v)),
                ))
            }
        };
        let catalog = catalog(self.me, &models, max_batch)?;
        let client = PartyId(client as u8);
        self.session.spawn_owned(move |rep| {
            Box::pin(async move {
                let mut accepted = None;
                let observe = |stage: &Stage, stats: Stats| {
                    let name = match stage {
                        Stage::Accepted { request } => {
                            accepted = Some(request.clone());
                            "accepted"
                        }
                        Stage::SetupDone { .. } => "setup-done",
                        Stage::OnlineDone => "online-done",
                        // A stage added to the core later: not reported until named here.
                        _ => return,
                    };
                    if let Some(f) = &on_stage {
                        // A throwing progress handler must not break the protocol mid-way.
                        let _ = f.call2(&JsValue::NULL, &name.into(), &stats_object(stats));
                    }
                };
                let (rep, outcome) =
                    service::serve(rep, client, &catalog, observe).await.map_err(from_core)?;
                let result = match (outcome, accepted) {
                    (Outcome::Answered, Some(request)) => answered(&request),
                    (Outcome::Refused(reason), _) => {
                        object(&[("outcome", "refused".into()), ("reason", reason.as_str().into())])
                    }
                    (other, _) => {
                        return Err(js_error(
                            Code::Internal,
                            format!("serve ended as {other:?} without an accepted request"),
                        ))
                    }
                };
                Ok((rep, Ok(result.into())))
            })
        })
    }
}

/// The catalogue of `models` (`{name: Uint8Array}`) as party `me` serves it: every file
/// imported and planned here, before the request is awaited.
fn catalog(me: PartyId, models: &JsValue, max_batch: usize) -> Result<Catalog, JsValue> {
    if !models.is_object()
        || js_sys::Array::is_array(models)
        || models.is_instance_of::<Uint8Array>()
    {
        return Err(js_error(
            Code::InvalidArgument,
            format!("models must be an object {{name: ONNX bytes}}, got {}", describe(models)),
        ));
    }
    let entries = Object::entries(models.unchecked_ref::<Object>());
    if entries.length() == 0 {
        return Err(js_error(Code::InvalidArgument, "models must name at least one model"));
    }
    let mut catalog = Catalog::new(max_batch);
    for entry in entries.iter() {
        let entry: js_sys::Array = entry.unchecked_into();
        let name = entry.get(0).as_string().unwrap_or_default();
        // The model name travels in requests: the same bounds as a client's.
        Request::new(&name, service::Backend::Meteor, 1).validate().map_err(|e| {
            let why = match e {
                ringfence_core::Error::ApiMisuse(m) => m,
                other => other.to_string(),
            };
            js_error(Code::InvalidArgument, format!("models: {why}"))
        })?;
        let Some(bytes) = entry.get(1).dyn_ref::<Uint8Array>().map(Uint8Array::to_vec) else {
            return Err(js_error(
                Code::InvalidArgument,
                format!(
                    "models[{name:?}] must be the model's ONNX bytes (a Uint8Array), got {}",
                    describe(&entry.get(1))
                ),
            ));
        };
        let plan = plan(&bytes).map_err(|e| {
            js_error(Code::InvalidModel, format!("model {name:?} ({} bytes): {e}", bytes.len()))
        })?;
        catalog.add(&name, plan.shape(), (me == service::MODEL_OWNER).then_some(plan));
    }
    Ok(catalog)
}

/// Imports an ONNX file and plans it in fixed point, as native parties do.
fn plan(bytes: &[u8]) -> Result<FixedPlan<Z64>, nn::NnError> {
    FixedPlan::new(&nn::import_onnx(bytes)?, DEFAULT_FRAC_BITS)
}

fn answered(r: &Request) -> Object {
    let output = match r.output {
        Output::Argmax => "class",
        _ => "scores",
    };
    let request = object(&[
        ("model", r.model.as_str().into()),
        ("backend", r.backend.name().into()),
        ("output", output.into()),
        ("batch", (r.batch as f64).into()),
    ]);
    object(&[("outcome", "answered".into()), ("request", request.into())])
}
