//! The input provider's side of a session: a [`Client`] requests a served model, takes part
//! in its setup and receives its [`Classification`].

use super::messages::{
    decode_labels, decode_text, max_label_words, INFO_WORDS, MAGIC, MAX_REASON_WORDS, MAX_SCORES,
};
use std::any::Any;

use super::registry::{self, ForClient};
use super::{Backend, Deployment, ModelInfo, Request, MODEL_OWNER, VERSION};
use crate::net::{Ctx, FrameError, PartyId, Roster, Stats, Transport};
use crate::nn::geom::MAX_LAYER_VALUES;
use crate::nn::{
    argmax_rows, Inference, InputRange, Label, ModelShape, Output, PlanShape, SharedModel,
};
use crate::prg::Seed;
use crate::progress::Progress;
use crate::ring::fixed::FixedPoint;
use crate::ring::Z64;
use crate::sharing::InputClient;
use crate::sharing::{Arith, Session};
use crate::spdz2k::nn::NnPrep;
use crate::spdz2k::{Auth, Mesh, Source, Spdz2k};
use crate::Error;

/// The result of a classification, as the client reconstructs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    /// `batch × output_len` scores (`None` when only the class was requested).
    pub scores: Option<Vec<f64>>,
    /// The class index of each sample (the argmax of its scores).
    pub classes: Vec<usize>,
    /// The class label of each sample: the model's label of its class
    /// ([`ModelInfo::class_labels`], e.g. scikit-learn's `classes_`), or the index itself when
    /// the model names none.
    pub labels: Vec<Label>,
    /// What each party received of the input, as raw ring words, per party (METEOR: the masked
    /// input `m = x − ψ`, the same for all; rep3: the party's first additive component). Random
    /// to anyone but the client by design; for display (the demo draws it).
    pub sent: Vec<Vec<u64>>,
}

/// A request the parties accepted, ready for its input. Single use.
#[derive(Debug)]
pub struct Ready {
    info: ModelInfo,
    /// The input's material from setup, of the request's scheme (its client's `Prep`).
    prep: Box<dyn Any + Send>,
}

/// The client side: [`request`](Client::request), then [`setup`](Client::setup), then
/// [`run`](Client::run) (the split lets callers report progress). On a family whose client
/// computes (spdz2k), the client is the last compute party: `request` also receives the
/// model's public shape, `setup` runs the whole preprocessing with the server and `run` the
/// online phase. `Debug` is redacted.
pub struct Client<T> {
    ctx: Option<Ctx<T>>,
    own: Seed,
    /// A computing client's plan shape, from its request until its setup.
    shape: Option<PlanShape>,
    /// A computing client's session with its material, from its setup until its run.
    party: Option<Box<PartyRun<T>>>,
    /// Where a computing client's setup reports the material it makes.
    progress: Progress,
}

/// A computing client's session between setup and run: the shared model and one run's
/// material (bound to this session, used once).
struct PartyRun<T> {
    s: Spdz2k<T>,
    model: SharedModel<Auth<Z64>>,
    prep: NnPrep<Z64>,
}

/// The largest shape file a computing client accepts from a server (the shipped models' are
/// below 1 kB; a large tree ensemble takes about 40 B per node).
const MAX_CLIENT_SHAPE_BYTES: usize = 4 << 20;

impl<T> core::fmt::Debug for Client<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Client").finish_non_exhaustive()
    }
}

impl<T: Transport> Client<T> {
    /// A client on `ctx` with private randomness `own`: the session's compute parties are the
    /// participants before it (3 for rep3, METEOR and mal3; 5 or 7 for rss), and it is the last.
    pub fn new(ctx: Ctx<T>, own: Seed) -> Self {
        Self { ctx: Some(ctx), own, shape: None, party: None, progress: Progress::default() }
    }

    /// The compute parties of this client's session: every participant before the client, and
    /// the client too where the deployment computes with it ([`Deployment`]).
    fn roster(ctx: &Ctx<T>) -> Result<Roster, Error> {
        let n = ctx.me().index();
        if n + 1 != ctx.participants() {
            return Err(Error::ApiMisuse(format!(
                "a client is the last of its session's participants: {} of {}",
                ctx.me(),
                ctx.participants()
            )));
        }
        Ok(Deployment::new(n)?.roster())
    }

    fn ctx(&mut self) -> Result<&mut Ctx<T>, Error> {
        self.ctx.as_mut().ok_or_else(used_up)
    }

    /// Lends the context out to a protocol client; the caller puts it back.
    fn take_ctx(&mut self) -> Result<Ctx<T>, Error> {
        self.ctx.take().ok_or_else(used_up)
    }

    /// A handle on how far this client's setup has come: a computing client (spdz2k) makes
    /// the run's material with the server in [`Client::setup`], which can take minutes for a
    /// large network; read it from another task (or between a page's events) meanwhile. Other
    /// families' setups report nothing (they are one or two rounds).
    ///
    /// ```ignore
    /// let progress = client.progress();
    /// let watch = async {
    ///     loop {
    ///         sleep(Duration::from_secs(2)).await;
    ///         let r = progress.report();
    ///         eprintln!("setup: {} {} of {}", r.making, r.done, r.total);
    ///     }
    /// };
    /// let ready = tokio::select! { r = client.setup(&info) => r?, _ = watch => unreachable!() };
    /// ```
    pub fn progress(&self) -> Progress {
        self.progress.clone()
    }

    /// The counters so far.
    pub fn stats(&self) -> Stats {
        let party = || self.party.as_ref().map(|p| p.s.base().ctx().stats());
        self.ctx.as_ref().map(Ctx::stats).or_else(party).unwrap_or_default()
    }

    /// Gives the context back (e.g. to close its transport).
    pub fn into_ctx(self) -> Option<Ctx<T>> {
        self.ctx.or_else(|| self.party.map(|p| p.s.finish().into_ctx()))
    }

    /// Sends `req` to the compute parties and returns the model's description once all of
    /// them accepted it ([`Error::Refused`] with their reason otherwise).
    pub async fn request(&mut self, req: &Request) -> Result<ModelInfo, Error> {
        let words = req.encode()?;
        let ctx = self.ctx()?;
        let me = ctx.me();
        let roster = Self::roster(ctx)?;
        let servers: Vec<PartyId> = roster.parties().filter(|&i| i != me).collect();
        ctx.round();
        for &i in &servers {
            ctx.send(i, &words)?;
        }
        ctx.round();
        let (mut infos, mut labels) = (Vec::with_capacity(servers.len()), None);
        for &i in &servers {
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
            let size =
                |z: Z64, max: usize| usize::try_from(z.0).ok().filter(|&v| v > 0 && v <= max);
            // The result is `batch × output_len` words: a description may not make the client
            // reserve more than the largest model's scores.
            let (Some(input_len), Some(output_len)) =
                (size(w[1], MAX_LAYER_VALUES), size(w[2], MAX_SCORES))
            else {
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
            // Labels come from the model owner alone (see `ModelInfo::class_labels`): one per
            // score, or none.
            let words = usize::try_from(w[5].0).unwrap_or(usize::MAX);
            if words > 0 && i != MODEL_OWNER {
                return Err(bad("class labels from a server other than the model owner"));
            }
            if words > max_label_words(output_len) {
                return Err(bad("class labels that do not name every score"));
            }
            if words > 0 {
                let frame = ctx.recv::<Z64>(i, words).await?;
                labels = Some(decode_labels(&frame, output_len).map_err(bad)?);
            }
            infos.push(ModelInfo {
                input_len,
                output_len,
                frac_bits,
                batch: req.batch,
                input_range,
                class_labels: None,
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
        let info = ModelInfo { class_labels: labels, ..infos.swap_remove(0) };
        if req.backend.client_computes() {
            self.shape = Some(self.receive_shape(&info).await?);
        }
        Ok(info)
    }

    /// A computing client's plan shape from the model owner, checked against its
    /// description.
    async fn receive_shape(&mut self, info: &ModelInfo) -> Result<PlanShape, Error> {
        let ctx = self.ctx()?;
        let bad = |what: &'static str| Error::PeerMisbehaved {
            peer: MODEL_OWNER,
            reason: FrameError::Malformed(what),
        };
        let len = ctx.recv::<Z64>(MODEL_OWNER, 1).await?[0].0;
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= MAX_CLIENT_SHAPE_BYTES)
            .ok_or_else(|| bad("the model's shape is too large"))?;
        let words = ctx.recv::<Z64>(MODEL_OWNER, len.div_ceil(8)).await?;
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.0.to_le_bytes()).take(len).collect();
        let plan = ModelShape::decode(&bytes).map_err(|_| bad("not a shape file"))?.plan;
        if plan.input_len != info.input_len
            || plan.output_len() != info.output_len
            || plan.frac_bits != info.frac_bits
        {
            return Err(bad("the model's shape does not match its description"));
        }
        Ok(plan)
    }

    /// Takes part in the setup (METEOR: receives the input's mask; rep3: nothing to do).
    pub async fn setup(&mut self, info: &ModelInfo) -> Result<Ready, Error> {
        if info.backend.client_computes() {
            return self.setup_party(info).await;
        }
        let n = info.batch * info.input_len;
        let ctx = self.take_ctx()?;
        let (ctx, prep) =
            registry::dispatch_client(info.backend, ctx, self.own.clone(), ReceivePrep { n }).await;
        self.ctx = Some(ctx);
        let prep = prep.ok_or_else(|| no_client_side(info.backend))??;
        Ok(Ready { info: info.clone(), prep })
    }

    /// A computing client's setup: the session with the server, the model's weights shared
    /// by their owner and one run's preprocessing, every part of it made by the two.
    async fn setup_party(&mut self, info: &ModelInfo) -> Result<Ready, Error> {
        let shape = self
            .shape
            .take()
            .ok_or_else(|| Error::ApiMisuse("setup: request the model first".into()))?;
        let ctx = self.take_ctx()?;
        let (me, roster) = (ctx.me(), Self::roster(&ctx)?);
        let mut s = Spdz2k::start(Mesh::new(ctx, roster, self.own.clone(), Source::parties())?);
        s.report_progress_to(self.progress.clone());
        let made = async {
            let model = s.share_model(MODEL_OWNER, None, &shape).await?;
            let prep = s.preprocess(&model, info.batch, info.output, me).await?;
            Ok::<_, Error>((model, prep))
        }
        .await;
        match made {
            Ok((model, prep)) => {
                self.party = Some(Box::new(PartyRun { s, model, prep }));
                Ok(Ready { info: info.clone(), prep: Box::new(()) })
            }
            Err(e) => {
                self.ctx = Some(s.finish().into_ctx());
                Err(e)
            }
        }
    }

    /// A computing client's online phase: its input, the plan, the result to it alone, and
    /// the closing barrier.
    async fn run_party(&mut self, x: &[Z64]) -> Result<Vec<Z64>, Error> {
        let PartyRun { mut s, model, mut prep } = *self
            .party
            .take()
            .ok_or_else(|| Error::ApiMisuse("run: set the request up first".into()))?;
        let me = s.me();
        let result = async {
            let input = <Spdz2k<T> as Inference<Z64>>::take_input(&mut prep)?;
            let sx = s.input(me, Some(x), input).await?;
            let y = s.infer(&model, sx, prep).await?;
            s.open_to(me, y).await?.ok_or_else(|| Error::ApiMisuse("no output".into()))
        }
        .await;
        let mut base = s.finish();
        let result = match result {
            Ok(out) => base.barrier().await.map(|()| out),
            Err(e) => Err(e),
        };
        self.ctx = Some(base.into_ctx());
        result
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
        let (out, sent) = if info.backend.client_computes() {
            // What the server receives of the input is masked by the client's own random
            // mask, inside the protocol: nothing to show here.
            (self.run_party(&x).await?, Vec::new())
        } else {
            let exchange = Exchange { x, prep: ready.prep, n: info.result_len() };
            let ctx = self.take_ctx()?;
            let (ctx, out) =
                registry::dispatch_client(info.backend, ctx, self.own.clone(), exchange).await;
            self.ctx = Some(ctx);
            out.ok_or_else(|| no_client_side(info.backend))??
        };
        if out.len() != info.result_len() {
            return Err(Error::ApiMisuse(format!(
                "the result has {} values, {} expected",
                out.len(),
                info.result_len()
            )));
        }
        let sent = sent.into_iter().map(|v| v.into_iter().map(|z| z.0).collect()).collect();
        let (scores, classes) = match info.output {
            Output::Argmax => {
                let classes = out.iter().map(|c| usize::try_from(c.0).unwrap_or(usize::MAX));
                (None, classes.collect::<Vec<_>>())
            }
            _ => {
                let scores: Vec<f64> = out.iter().map(|&v| fp.decode(v)).collect();
                let classes = argmax_rows(&scores, info.output_len);
                (Some(scores), classes)
            }
        };
        if let Some(&c) = classes.iter().find(|&&c| c >= info.output_len) {
            return Err(Error::OutOfRange(format!(
                "the parties' answer names class {c} of a model with {} classes",
                info.output_len
            )));
        }
        let labels = classes.iter().map(|&c| info.label(c)).collect();
        Ok(Classification { scores, classes, labels, sent })
    }
}

/// The client's setup for its input of `n` values.
struct ReceivePrep {
    n: usize,
}

impl<T: Transport> ForClient<T> for ReceivePrep {
    type Out = Result<Box<dyn Any + Send>, Error>;
    async fn run<C: InputClient<T, Z64>>(self, c: &mut C) -> Self::Out {
        Ok(Box::new(c.receive_prep(self.n).await?))
    }
}

/// The online phase at the client: share `x` under `prep`, reconstruct `n` values.
struct Exchange {
    x: Vec<Z64>,
    prep: Box<dyn Any + Send>,
    n: usize,
}

impl<T: Transport> ForClient<T> for Exchange {
    type Out = Result<(Vec<Z64>, Vec<Vec<Z64>>), Error>;
    async fn run<C: InputClient<T, Z64>>(self, c: &mut C) -> Self::Out {
        let prep = self
            .prep
            .downcast::<C::Prep>()
            .map_err(|_| Error::ApiMisuse("the request was set up for another backend".into()))?;
        let sent = c.share(&self.x, *prep)?;
        Ok((c.reconstruct(self.n).await?, sent))
    }
}

fn no_client_side(backend: Backend) -> Error {
    Error::ApiMisuse(format!("{} has no input-provider client", backend.name()))
}

fn used_up() -> Error {
    Error::ApiMisuse("the client's session was used up".into())
}
