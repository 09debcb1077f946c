//! The compute party's side of a session: [`serve`] one request, reporting each [`Stage`], and
//! how it ended ([`Outcome`]).

use std::sync::Arc;

use super::catalog::Served;
use super::messages::{encode_text, MAGIC, REQUEST_WORDS};
use super::registry::{ForScheme, ServedScheme, ServiceBase};
use super::{stock, Backend, Catalog, Request, MODEL_OWNER, VERSION};
use crate::net::{digest_words, words_digest, PartyId, Stats, Transport};
use crate::nn::{FixedPlan, ModelShape, PlanShape};
use crate::rep3::Comparisons;
use crate::ring::Z64;
use crate::Error;

/// A point in a served session, reported to [`serve`]'s observer with the counters so far
/// (the caller, which has a clock, times the stages).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// The request was accepted by every compute party.
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
/// and how the request ended. The session is rep3's (three servers: rep3, METEOR, mal3) or
/// rss's (5 or 7 servers: rss); a request for a family that does not run on it is refused.
pub async fn serve<T: Transport, B: ServiceBase<T>>(
    mut p: B,
    client: PartyId,
    catalog: &Catalog,
    mut observe: impl FnMut(&Stage, Stats),
) -> Result<(B, Outcome), Error> {
    let roster = p.roster();
    let me = p.ctx().me();
    // A client is a participant after the compute parties, or, on a session whose family
    // computes with its client (spdz2k), the last compute party.
    let computing = B::client_computes() && roster.is_party(client) && client != me;
    if !roster.is_party(me) || !(roster.is_client(client) || computing) {
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
    let others: Vec<PartyId> = roster.others(me).filter(|&j| j != client).collect();
    let mut verdict = Request::decode(&words)
        .and_then(|r| runs_here::<T, B>(&r, roster.n() - usize::from(computing)).map(|()| r))
        .and_then(|r| catalog.admit(me, &r).map(|a| (r, a)));
    let shelf = catalog.shelf.as_deref();
    let mut stocked = match (&verdict, shelf) {
        (Ok((r, _)), Some(shelf)) if me == MODEL_OWNER && r.batch == 1 => {
            shelf.take_oldest(&r.model, r.backend)
        }
        _ => None,
    };
    // After the request: the ticket, this party's verdict (1: accepted), how it runs rep3's
    // comparisons and the digest of the model's shape it holds (zeros when it refuses).
    let digest = verdict.as_ref().map_or([0; 32], |(_, (m, _))| m.digest);
    let mut mine = words.clone();
    mine.push(Z64(stocked.as_ref().map_or(0, |r| r.id)));
    mine.push(Z64(u64::from(verdict.is_ok())));
    mine.push(Z64(catalog.comparisons.word()));
    mine.extend(digest_words(&digest));
    for &j in &others {
        ctx.send(j, &mine)?;
    }
    let mut ticket = 0;
    for &j in &others {
        let theirs = ctx.recv::<Z64>(j, REQUEST_WORDS + 7).await?;
        if theirs[..REQUEST_WORDS] != words[..] {
            verdict = Err(format!("the client sent {j} and {me} different requests"));
        } else if let Ok((r, _)) = &verdict {
            // Keep this party's own reason if it refused; otherwise say whose verdict differs.
            if theirs[REQUEST_WORDS + 1].0 != 1 {
                verdict = Err(format!("{j} refused the request for model {:?}", r.model));
            } else if theirs[REQUEST_WORDS + 2] != mine[REQUEST_WORDS + 2]
                && r.backend == Backend::Rep3
            {
                let theirs = Comparisons::from_word(theirs[REQUEST_WORDS + 2].0)
                    .map_or_else(|| "unknown".into(), |c| c.to_string());
                verdict = Err(format!(
                    "the servers run rep3's comparisons differently ({me}: {}, {j}: {theirs}): \
                     give every server the same `comparisons`",
                    catalog.comparisons
                ));
            } else if theirs[REQUEST_WORDS + 3..] != mine[REQUEST_WORDS + 3..] {
                verdict = Err(format!(
                    "the servers hold different shapes of model {:?} ({me}: {}, {j}: {}): \
                     give every server the shape of the same model file (ringfence model \
                     shape)",
                    r.model,
                    short_hex(&digest),
                    short_hex(&words_digest(&theirs[REQUEST_WORDS + 3..]))
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
            msg.extend([Z64(text.len() as u64), Z64(0)]);
            ctx.send(client, &msg)?;
            ctx.send(client, &text)?;
            return Ok((p, Outcome::Refused(reason)));
        }
    };
    // Raised before the client hears it was admitted, so that its input is never early.
    if computing {
        // A computing client sends what a party does, preprocessing included: bounded by
        // what may wait unread, not by message.
        ctx.limit_from(client, super::limits::COMPUTING_CLIENT_LIMIT);
    } else {
        ctx.expect_from::<Z64>(client, &info.input_frames(roster, me));
    }
    for frame in info.encode() {
        ctx.send(client, &frame)?;
    }
    if computing && me == MODEL_OWNER {
        // It runs the plan too: the model's public shape (what the servers' shape files hold).
        send_shape(ctx, client, &served.shape)?;
    }
    observe(&Stage::Accepted { request: request.clone() }, p.ctx().stats());
    let owner_plan = if me == MODEL_OWNER { served.plan.as_ref() } else { None };
    if me == MODEL_OWNER && owner_plan.is_none() {
        return Err(Error::ApiMisuse(format!(
            "{me} owns the models but has no weights for {:?}",
            served.name
        )));
    }
    let answer = Answer {
        client,
        owner_plan,
        served,
        request: &request,
        material: stocked.map(|run| run.material),
        observe: &mut observe,
    };
    p.configure(catalog);
    let (mut p, answered) = p.dispatch(request.backend, answer).await;
    let answered = answered.unwrap_or_else(|| {
        Err(Error::ApiMisuse(format!("{} does not run on this session", request.backend.name())))
    });
    if let Err(Error::Abort { .. }) = &answered {
        // The client would wait for an output that is never sent, then see its links close:
        // each server that aborted tells it why instead (best effort: the link may be gone).
        let _ = p.ctx_mut().send_abort_notice(client);
    }
    answered?;
    p.barrier().await?;
    Ok((p, Outcome::Answered))
}

/// The setup (unless `material` was made ahead of demand) and online phase of an admitted
/// request, written once for every scheme.
struct Answer<'a, O> {
    client: PartyId,
    owner_plan: Option<&'a FixedPlan<Z64>>,
    served: &'a Served,
    request: &'a Request,
    material: Option<stock::Material>,
    observe: &'a mut O,
}

impl<T: Transport, B: ServiceBase<T>, O: FnMut(&Stage, Stats)> ForScheme<T, B> for Answer<'_, O> {
    type Out = Result<(), Error>;
    async fn run<S: ServedScheme<T, B>>(self, s: &mut S) -> Result<(), Error> {
        let Self { client, owner_plan, served, request, material, observe } = self;
        let stocked = material.is_some();
        let (model, mut prep) = match material {
            Some(m) => {
                let (model, prep) = m.take::<T, B, S>()?;
                (model, S::for_output(prep, request.output)?)
            }
            None => {
                let model = s.share_model(MODEL_OWNER, owner_plan, &served.shape).await?;
                let prep = s.preprocess(&model, request.batch, request.output, client).await?;
                (Arc::new(model), prep)
            }
        };
        let input = S::take_input(&mut prep)?;
        s.deliver_input_prep(&input).await?;
        observe(&Stage::SetupDone { stocked }, ServiceBase::ctx(s.base()).stats());
        let x = s.input(client, None, input).await?;
        let y = s.infer(&model, x, prep).await?;
        s.open_to(client, y).await?;
        observe(&Stage::OnlineDone, ServiceBase::ctx(s.base()).stats());
        Ok(())
    }
}

/// Sends `shape` to a computing client as a shape file ([`ModelShape`]): its length in bytes,
/// then its bytes in words.
fn send_shape<T: Transport>(
    ctx: &mut crate::net::Ctx<T>,
    to: PartyId,
    shape: &PlanShape,
) -> Result<(), Error> {
    let file = ModelShape {
        input_name: String::new(),
        input_shape: vec![shape.input_len],
        class_labels: None,
        plan: shape.clone(),
    }
    .encode();
    ctx.send(to, &[Z64(file.len() as u64)])?;
    ctx.send(to, &bytes_words(&file))
}

/// Bytes as little-endian words, the last one zero-padded.
pub(super) fn bytes_words(b: &[u8]) -> Vec<Z64> {
    b.chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            Z64(u64::from_le_bytes(w))
        })
        .collect()
}

/// Refuses a request for a family that does not run among this session's `servers` (before
/// the catalogue is asked, so the reason is the deployment's size).
fn runs_here<T: Transport, B: ServiceBase<T>>(r: &Request, servers: usize) -> Result<(), String> {
    if B::runs(r.backend) {
        return Ok(());
    }
    let here: Vec<&str> = Backend::all().filter(|&b| B::runs(b)).map(Backend::name).collect();
    let among: Vec<String> = r.backend.servers().iter().map(usize::to_string).collect();
    let runs = if r.backend.client_computes() {
        format!("between {} server(s) and the client, which computes too", among.join(" or "))
    } else {
        format!("among {} servers", among.join(" or "))
    };
    Err(format!(
        "{} runs {runs}; this deployment has {servers} and serves {}",
        r.backend.name(),
        here.join(", ")
    ))
}

/// The first 8 bytes of a digest in hex: enough to tell two apart in a message.
fn short_hex(d: &[u8; 32]) -> String {
    d[..8].iter().map(|b| format!("{b:02x}")).collect()
}
