//! The input provider of a private classification ([`ringfence_core::service`]): the participant
//! after the compute parties (3 of 4, or 5 of 6, 7 of 8 for rss), over a JS transport whose links
//! reach them (the SDK gives it Noise links through the relay). Its three steps are separate calls so the
//! SDK can report each as a progress stage:
//!
//! ```text
//! request(model, backend, output, batch) → {inputLen, outputLen, fracBits, batch}   accepted or REFUSED
//! setup()                                → undefined                                  METEOR: the input's mask
//! run(input)                             → {classes, scores?, sent}                   input out, result back
//! ```
//!
//! Each call checks that the previous step finished. A step that fails after the client sent
//! or awaited anything leaves the parties out of step with it, so it poisons the client: every
//! later call fails with the same error. After `run`, a new `request` may start (when the
//! parties serve several requests on one session).

use core::mem;

use js_sys::{Array, BigUint64Array, Float64Array, Object, Promise, Uint32Array};
use ringfence_core::net::{Ctx, SessionId, Stats};
use ringfence_core::nn::{InputRange, Label, Output};
use ringfence_core::prg::Seed;
use ringfence_core::progress::Progress;
use ringfence_core::service::{self, Backend, Classification, ModelInfo, Ready, Request};
use wasm_bindgen::prelude::*;

use super::args::{bytes, describe, index, object, reals};
use super::error::{from_core, js_error, Code};
use super::slot::{stats_object, Counted, Slot};
use super::transport::{JsTransport, RawTransport};

/// The largest batch a request may name (the parties set their own, smaller limit).
const MAX_BATCH: u64 = 1 << 20;

/// The input provider of a classification session.
#[wasm_bindgen]
pub struct Client {
    session: Slot<Session>,
    /// The session's setup reports here; read while `setup` runs (the slot is busy then).
    progress: Progress,
}

struct Session {
    inner: service::Client<JsTransport>,
    step: Step,
}

/// Where the client is in the request → setup → run sequence.
enum Step {
    /// No request in flight: `request` may start one.
    Idle,
    /// The parties accepted the request; `setup` comes next.
    Accepted(ModelInfo),
    /// Setup done; `run` takes the input.
    Ready(ModelInfo, Ready),
    /// A step failed: every later call gets its error.
    Failed(JsValue),
}

impl Counted for Session {
    fn counters(&self) -> Stats {
        self.inner.stats()
    }
}

#[wasm_bindgen]
impl Client {
    /// A client of session `session` (16 bytes) with private randomness `own` (32 bytes, from a
    /// CSPRNG) over `transport`, whose links reach the `servers` compute parties (1, 2, 3, 5 or 7;
    /// default 3). Sends nothing.
    #[wasm_bindgen(constructor)]
    pub fn new(
        session: JsValue,
        own: JsValue,
        transport: RawTransport,
        servers: JsValue,
    ) -> Result<Self, JsValue> {
        let session = SessionId(bytes::<16>(&session, "session id")?);
        let own = Seed::from_bytes(bytes::<32>(&own, "own")?);
        if !transport.is_object() {
            return Err(js_error(Code::InvalidArgument, "transport must be an object"));
        }
        let servers = match servers.is_undefined() {
            true => service::ROSTER.n(),
            false => index(&servers, "servers", 255)?,
        };
        if let Err(e) = service::Deployment::new(servers) {
            return Err(js_error(Code::InvalidArgument, format!("servers: {e}")));
        }
        let me = ringfence_core::net::PartyId(servers as u8);
        let ctx = Ctx::new(me, servers + 1, session, JsTransport::new(transport));
        let inner = service::Client::new(ctx, own);
        let progress = inner.progress();
        Ok(Self { session: Slot::new(Session { inner, step: Step::Idle }, "the client"), progress })
    }

    /// Communication counters so far: `{bytesSent, payloadBytesSent, framesSent, rounds}` (as
    /// of the last finished step).
    pub fn stats(&self) -> Object {
        stats_object(self.session.stats())
    }

    /// How far the setup has come, readable while `setup` runs: `{making, done, total,
    /// madeBefore}` — what is being made now (spdz2k: `'multiplication triples'`, `'edaBits'`,
    /// …; `''` before any), how many of the `total` asked for are made, and how many items
    /// earlier requests made. Families whose client only receives (rep3, METEOR, …) report
    /// nothing.
    pub fn progress(&self) -> Object {
        let r = self.progress.report();
        object(&[
            ("making", JsValue::from_str(r.making)),
            ("done", (r.done as f64).into()),
            ("total", (r.total as f64).into()),
            ("madeBefore", (r.made_before as f64).into()),
        ])
    }

    /// Asks the parties to classify `batch` samples with `model` on `backend` (a name from
    /// `backends()`), revealing `output` (`'scores'` or `'class'`). Resolves with the model's
    /// description `{inputLen, outputLen, fracBits, batch}` once all three accepted; rejects
    /// with `REFUSED` and their reason otherwise (2 rounds).
    pub fn request(
        &self,
        model: JsValue,
        backend: JsValue,
        output: JsValue,
        batch: JsValue,
    ) -> Result<Promise, JsValue> {
        let model = word(&model, "model")?;
        let backend = word(&backend, "backend")?
            .parse::<Backend>()
            .map_err(|e| js_error(Code::InvalidArgument, e))?;
        let output = match word(&output, "output")?.as_str() {
            "scores" => Output::Logits,
            "class" => Output::Argmax,
            other => {
                return Err(js_error(
                    Code::InvalidArgument,
                    format!("unknown output {other:?} (scores or class)"),
                ))
            }
        };
        let batch = index(&batch, "batch", MAX_BATCH)?;
        let req = Request { output, ..Request::new(&model, backend, batch) };
        self.session.with(|s| match &s.step {
            Step::Idle => Ok(()),
            other => Err(other.misuse("request")),
        })?;
        self.session.spawn(move |s| {
            Box::pin(async move {
                let before = s.inner.stats().frames_sent;
                match s.inner.request(&req).await {
                    Ok(info) => {
                        let object = info_object(&info);
                        s.step = Step::Accepted(info);
                        Ok(object.into())
                    }
                    // A request the core rejected before sending it (a bad model name) never
                    // reached the parties: the client stays usable.
                    Err(e) if s.inner.stats().frames_sent == before => Err(from_core(e)),
                    Err(e) => Err(s.poison(e)),
                }
            })
        })
    }

    /// Takes part in the setup of the accepted request (METEOR: receives the input's mask;
    /// rep3: nothing to do). Resolves with `undefined`.
    pub fn setup(&self) -> Result<Promise, JsValue> {
        let info = self.session.with(|s| match &s.step {
            Step::Accepted(info) => Ok(info.clone()),
            other => Err(other.misuse("setup")),
        })?;
        self.session.spawn(move |s| {
            Box::pin(async move {
                match s.inner.setup(&info).await {
                    Ok(ready) => {
                        s.step = Step::Ready(info, ready);
                        Ok(JsValue::UNDEFINED)
                    }
                    Err(e) => Err(s.poison(e)),
                }
            })
        })
    }

    /// Shares `input` (`batch × inputLen` reals: a `Float64Array`, `Float32Array` or
    /// `number[]`), waits for the result and reconstructs it: `{classes: Uint32Array, labels:
    /// (number | bigint | string)[], scores: Float64Array | undefined, sent: [BigUint64Array,
    /// BigUint64Array, BigUint64Array]}` (`labels[i]`: the model's label of `classes[i]`;
    /// `sent[i]`: what party `i` received of the input). A wrong length throws
    /// `LENGTH_MISMATCH` before anything is sent and leaves the request ready.
    pub fn run(&self, input: JsValue) -> Result<Promise, JsValue> {
        let x = reals(&input, "input")?;
        let ready = self.session.with(|s| match mem::replace(&mut s.step, Step::Idle) {
            Step::Ready(info, ready) if x.len() == info.batch * info.input_len => Ok(ready),
            other => {
                let e = match &other {
                    Step::Ready(info, _) => js_error(
                        Code::LengthMismatch,
                        format!(
                            "input has {} values; the model takes {} per sample and the \
                             request is for {} sample(s)",
                            x.len(),
                            info.input_len,
                            info.batch
                        ),
                    ),
                    step => step.misuse("run"),
                };
                s.step = other;
                Err(e)
            }
        })?;
        self.session.spawn(move |s| {
            Box::pin(async move {
                // `run` consumed the request's setup: on failure (even an encoding error before
                // sending) the parties wait for an input that will never come.
                match s.inner.run(ready, &x).await {
                    Ok(c) => Ok(classification_object(&c).into()),
                    Err(e) => Err(s.poison(e)),
                }
            })
        })
    }
}

impl Session {
    /// Converts a step's error and makes it this client's answer to every later call.
    fn poison(&mut self, e: ringfence_core::Error) -> JsValue {
        let e = from_core(e);
        self.step = Step::Failed(e.clone());
        e
    }
}

impl Step {
    /// The error for calling `what` in this step.
    fn misuse(&self, what: &str) -> JsValue {
        let why = match self {
            Self::Failed(e) => return e.clone(),
            Self::Idle => "no request was accepted yet: call request first",
            Self::Accepted(_) => "the request was accepted: call setup next",
            Self::Ready(..) => "the setup is done: call run with the input next",
        };
        js_error(Code::ApiMisuse, format!("{what}: {why}"))
    }
}

/// A string argument.
fn word(v: &JsValue, what: &str) -> Result<String, JsValue> {
    v.as_string().ok_or_else(|| {
        js_error(Code::InvalidArgument, format!("{what} must be a string, got {}", describe(v)))
    })
}

fn info_object(info: &ModelInfo) -> Object {
    object(&[
        ("inputLen", (info.input_len as f64).into()),
        ("outputLen", (info.output_len as f64).into()),
        ("fracBits", info.frac_bits.into()),
        ("batch", (info.batch as f64).into()),
        ("inputRange", info.input_range.map_or(JsValue::UNDEFINED, |r| range_array(r).into())),
        (
            "classLabels",
            info.class_labels.as_ref().map_or(JsValue::UNDEFINED, |l| label_array(l.iter()).into()),
        ),
    ])
}

/// Labels as JavaScript values: text as a string, an integer as a number where it is exact
/// (|label| < 2^53, every label scikit-learn writes), else as a `bigint`, so no label is ever
/// rounded.
fn label_array(labels: impl Iterator<Item = Label>) -> Array {
    const EXACT: u64 = (1 << 53) - 1;
    labels
        .map(|l| match l {
            Label::Int(v) if v.unsigned_abs() <= EXACT => JsValue::from(v as f64),
            Label::Int(v) => js_sys::BigInt::from(v).into(),
            Label::Text(t) => JsValue::from(t),
        })
        .collect()
}

/// `[min, max]`.
fn range_array(r: InputRange) -> Array {
    [f64::from(r.min), f64::from(r.max)].into_iter().map(JsValue::from).collect()
}

fn classification_object(c: &Classification) -> Object {
    let classes: Vec<u32> =
        c.classes.iter().map(|&k| u32::try_from(k).unwrap_or(u32::MAX)).collect();
    let scores = match &c.scores {
        Some(s) => Float64Array::from(s.as_slice()).into(),
        None => JsValue::UNDEFINED,
    };
    let sent: Array = c.sent.iter().map(|v| BigUint64Array::from(v.as_slice())).collect();
    object(&[
        ("classes", Uint32Array::from(classes.as_slice()).into()),
        ("labels", label_array(c.labels.iter().cloned()).into()),
        ("scores", scores),
        ("sent", sent.into()),
    ])
}
