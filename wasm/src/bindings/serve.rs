//! A compute party serving models ([`service::serve`]): the party side of a private
//! classification, for a [`Party`] whose session includes the client (joined with 4
//! participants or more).
//!
//! ```text
//! serve(models, maxBatch, client, onStage) → {outcome: 'answered', request} | {outcome: 'refused', reason}
//!   onStage('accepted' | 'setup-done' | 'online-done', counters)   as each point is reached
//! ```
//!
//! Every model is loaded before anything is sent, so a malformed file fails with
//! `INVALID_MODEL` and the importer's message while the party is still fresh. Only the model
//! owner (P0) may hold the weights (ONNX bytes): the others take the model's shape file
//! ([`modelShape`], `ringfence model shape`) and refuse weights unless the model is `public`
//! ([`Catalog::load`]). Each model reveals the class only unless its entry says
//! `output: 'scores'`.

use js_sys::{Function, Object, Promise, Uint8Array};
use ringfence_core::net::{PartyId, Stats};
use ringfence_core::nn::{ModelFile, NnError, Output};
use ringfence_core::rep3::Comparisons;
use ringfence_core::service::{self, Catalog, ModelPolicy, Outcome, Request, Stage};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::args::{describe, field, index, object};
use super::error::{from_core, js_error, Code};
use super::slot::stats_object;
use super::Party;

/// The largest `maxBatch` a party may set (the same bound as a client's request).
const MAX_BATCH: u64 = 1 << 20;

#[wasm_bindgen]
impl Party {
    /// Serves one classification request of participant `client` (≥ 3) with the models in
    /// `models` (an object mapping each served name to its file, a `Uint8Array` — ONNX at the
    /// owner P0 or for a public model, else the shape file — or to `{model, output, public}`
    /// with `output` `'class'` (default) or `'scores'` and `public` a boolean), accepting batches of 1 to `maxBatch` samples. `onStage` (a function, or `undefined`) is
    /// `comparisons` (a string or `undefined`) is how rep3's comparisons run, as in a native
    /// party's configuration. `onStage` (a function, or `undefined`) is
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
        comparisons: JsValue,
        on_stage: JsValue,
    ) -> Result<Promise, JsValue> {
        if self.backend.client_computes() {
            return Err(js_error(
                Code::ApiMisuse,
                format!(
                    "serve: a joined {} session has no seat for a client (its client computes as \
                     the last party); serve {} with `ringfence party`",
                    self.backend.name(),
                    self.backend.name()
                ),
            ));
        }
        let client = index(&client, "client", 254)?;
        let roster = self.roster;
        if !roster.is_client(PartyId(client as u8)) || client >= self.participants {
            let clients = match self.participants > roster.n() {
                true => format!(" and clients from {}", roster.first_client().0),
                false => " only".into(),
            };
            return Err(js_error(
                Code::ApiMisuse,
                format!(
                    "serve: client {client} is not a client of this session (its {} participants \
                     are the parties 0 to {}{clients}): join with one more participant per client",
                    self.participants,
                    roster.n() - 1,
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
        // How rep3's comparisons run (`'two-input'`, `'fan-in'` or `'fan-in:R,L'`); the three
        // parties compare their settings on every request.
        let comparisons = match comparisons.as_string() {
            Some(c) => c.parse::<Comparisons>().map_err(|e| js_error(Code::InvalidArgument, e))?,
            None if comparisons.is_undefined() => Comparisons::TwoInput,
            None => {
                return Err(js_error(
                    Code::InvalidArgument,
                    format!("comparisons must be a string, got {}", describe(&comparisons)),
                ))
            }
        };
        let catalog = catalog(self.me, &models, max_batch)?.with_comparisons(comparisons);
        let client = PartyId(client as u8);
        self.session.spawn_owned(move |party| {
            Box::pin(async move {
                // Serving runs the scheme each request asks for on the party's session, then
                // this party's scheme starts again on it.
                let mut accepted = None;
                let mut observe = |stage: &Stage, stats: Stats| {
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
                let (party, outcome) =
                    party.serve(client, &catalog, &mut observe).await.map_err(from_core)?;
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
                Ok((party, Ok(result.into())))
            })
        })
    }
}

/// The catalogue of `models` (`{name: Uint8Array | {model, output, public}}`) as party `me`
/// serves it: every file loaded here, before the request is awaited.
fn catalog(me: PartyId, models: &JsValue, max_batch: usize) -> Result<Catalog, JsValue> {
    if !models.is_object()
        || js_sys::Array::is_array(models)
        || models.is_instance_of::<Uint8Array>()
    {
        return Err(js_error(
            Code::InvalidArgument,
            format!("models must be an object {{name: model bytes}}, got {}", describe(models)),
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
        let (bytes, policy) = served_model(&name, &entry.get(1))?;
        catalog.load(me, &name, &bytes, policy).map_err(|e| {
            let code = match e {
                NnError::NotServable(_) => Code::InvalidArgument,
                _ => Code::InvalidModel,
            };
            js_error(code, format!("model {name:?} ({} bytes): {e}", bytes.len()))
        })?;
    }
    Ok(catalog)
}

/// One entry of `models`: the file's bytes and how to serve it.
fn served_model(name: &str, v: &JsValue) -> Result<(Vec<u8>, ModelPolicy), JsValue> {
    let bad = |what: String| js_error(Code::InvalidArgument, format!("models[{name:?}]: {what}"));
    if let Some(b) = v.dyn_ref::<Uint8Array>() {
        return Ok((b.to_vec(), ModelPolicy::default()));
    }
    let what = format!("models[{name:?}] (the model file, a Uint8Array, or {{model, output}})");
    let field = |k: &str| field(v, k, &what);
    let model = field("model")?;
    let bytes = model
        .dyn_ref::<Uint8Array>()
        .map(Uint8Array::to_vec)
        .ok_or_else(|| bad(format!("model must be a Uint8Array, got {}", describe(&model))))?;
    let reveals = match field("output")? {
        o if o.is_undefined() => Output::Argmax,
        o => match o.as_string().as_deref() {
            Some("class") => Output::Argmax,
            Some("scores") => Output::Logits,
            _ => {
                return Err(bad(format!(
                    "output must be 'class' or 'scores', got {}",
                    describe(&o)
                )))
            }
        },
    };
    let public = match field("public")? {
        p if p.is_undefined() => false,
        p => p
            .as_bool()
            .ok_or_else(|| bad(format!("public must be a boolean, got {}", describe(&p))))?,
    };
    Ok((bytes, ModelPolicy { public, reveals }))
}

/// The shape file of a model (its ONNX bytes): its layers, sizes and fixed-point parameters
/// without any weight, what the parties other than the model owner serve. A malformed model
/// fails with `INVALID_MODEL`.
#[wasm_bindgen(js_name = modelShape)]
pub fn model_shape(onnx: JsValue) -> Result<Uint8Array, JsValue> {
    let Some(bytes) = onnx.dyn_ref::<Uint8Array>().map(Uint8Array::to_vec) else {
        return Err(js_error(
            Code::InvalidArgument,
            format!(
                "modelShape needs the model's ONNX bytes (a Uint8Array), got {}",
                describe(&onnx)
            ),
        ));
    };
    match ModelFile::parse(&bytes) {
        Ok(ModelFile::Weights { shape, .. }) => Ok(Uint8Array::from(shape.encode().as_slice())),
        Ok(ModelFile::Shape(_)) => Err(js_error(
            Code::InvalidArgument,
            "modelShape: already a shape file (give the ONNX bytes)",
        )),
        Err(e) => Err(js_error(Code::InvalidModel, format!("modelShape: {e}"))),
    }
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
