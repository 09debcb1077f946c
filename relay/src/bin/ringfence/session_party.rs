//! `ringfence session-party` (hidden): one native compute party serving ONE client session,
//! driven by a parent over the line protocol of [`crate::msgs`] (keys and session on stdin).
//! The SDK's tests use it to put native parties beside SDK parties (`Party.serve`) in a session
//! whose participants are all known up front; deployments use `ringfence party` instead.
//!
//! `--model` is the model owner's ONNX file at P0 and the model's shape file at the others (as
//! at `ringfence party`); the model, served under the file's stem, reveals its scores (the
//! tests ask for them). With `--parties 5` or `7` the session is rss's among that many servers.

use std::path::Path;
use std::time::Instant;

use ringfence_core::net::Stats;
use ringfence_core::nn::Output;
use ringfence_core::service::{self, Catalog, ModelPolicy, Stage};

use crate::msgs::{FromChild, ServedReport};
use crate::party::{report, Base};

/// The party side: serves one classification request of the client (the participant after
/// the servers).
pub(crate) async fn serve<B: Base>(p: B, model: &Path) -> Result<B, String> {
    let me = p.ctx().me();
    let client = p.roster().first_client();
    let bytes = std::fs::read(model).map_err(|e| format!("{}: {e}", model.display()))?;
    let name = model.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut catalog = Catalog::new(1);
    let policy = ModelPolicy { reveals: Output::Logits, ..ModelPolicy::default() };
    catalog.load(me, &name, &bytes, policy).map_err(|e| format!("{}: {e}", model.display()))?;
    let mut marks: Vec<(Instant, Stats)> = Vec::new();
    let (p, outcome) =
        service::serve(p, client, &catalog, |_: &Stage, s| marks.push((Instant::now(), s)))
            .await
            .map_err(|e| e.to_string())?;
    if let service::Outcome::Refused(reason) = outcome {
        // Close cleanly so the refusal reaches the client before this process exits.
        p.into_ctx().into_transport().close().await.map_err(|e| e.to_string())?;
        return Err(format!("refused the client's request: {reason}"));
    }
    let [(t0, s0), (t1, s1), (t2, s2)] = marks[..] else {
        return Err("the session ended before its stages".into());
    };
    let (setup, online): (Stats, Stats) = (s1 - s0, s2 - s1);
    report(&FromChild::Served(ServedReport {
        setup_seconds: (t1 - t0).as_secs_f64(),
        setup_bytes: setup.bytes_sent,
        online_seconds: (t2 - t1).as_secs_f64(),
        online_bytes: online.bytes_sent,
        online_rounds: online.rounds,
    }));
    Ok(p)
}
