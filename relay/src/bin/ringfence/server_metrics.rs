//! A server party's metrics (`metrics = ADDR` in its configuration): one set of counters shared
//! by the session threads and the mesh thread, rendered in the Prometheus text format at each
//! `GET /metrics` ([`ringfence_relay::metrics`], the relay's endpoint code). Ready runs are read
//! from the shelf at that moment, not counted.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use ringfence_core::service::stock::{Shelf, Target};
use ringfence_core::service::Backend;
use ringfence_relay::metrics::{Kind, TextFormat};

/// How a client session ended, as counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    Answered,
    Refused,
    Failed,
}

/// What bytes sent were for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// A client session up to the end of its setup (from its first message: the request too).
    Setup,
    /// A client session after its setup.
    Online,
    /// The mesh (its start, the runs it makes, keep-alives).
    Mesh,
}

/// The counters; every update is one relaxed atomic operation.
#[derive(Debug)]
pub(crate) struct Metrics {
    /// By [`Ended`].
    sessions: [AtomicU64; 3],
    running: AtomicU64,
    stocked: AtomicU64,
    mesh_up: AtomicBool,
    /// By [`Phase`].
    bytes: [AtomicU64; 3],
    models: Vec<ModelCounters>,
    /// The mesh's shelf (none without `[mesh]`).
    shelf: Option<Arc<Shelf>>,
}

#[derive(Debug)]
struct ModelCounters {
    name: String,
    backend: Backend,
    /// Runs to keep ready (0 without a mesh).
    target: usize,
    prepared: AtomicU64,
}

/// Holds one unit of `ringfence_party_sessions_running` while it lives.
pub(crate) struct Running<'a>(&'a AtomicU64);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Metrics {
    /// Counters for the served models, in configuration order; `shelf` is the mesh's.
    pub(crate) fn new(targets: &[Target], shelf: Option<Arc<Shelf>>) -> Self {
        let models = targets
            .iter()
            .map(|t| ModelCounters {
                name: t.model.clone(),
                backend: t.backend,
                target: if shelf.is_some() { t.runs } else { 0 },
                prepared: AtomicU64::new(0),
            })
            .collect();
        Self {
            sessions: Default::default(),
            running: AtomicU64::new(0),
            stocked: AtomicU64::new(0),
            mesh_up: AtomicBool::new(false),
            bytes: Default::default(),
            models,
            shelf,
        }
    }

    /// A session starts; it counts as running until the guard is dropped.
    pub(crate) fn session_started(&self) -> Running<'_> {
        self.running.fetch_add(1, Ordering::Relaxed);
        Running(&self.running)
    }

    /// Client sessions running now.
    pub(crate) fn running(&self) -> u64 {
        self.running.load(Ordering::Relaxed)
    }

    pub(crate) fn session_ended(&self, how: Ended) {
        self.sessions[how as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// A session's setup was a run taken from the shelf.
    pub(crate) fn setup_stocked(&self) {
        self.stocked.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn sent(&self, phase: Phase, bytes: u64) {
        self.bytes[phase as usize].fetch_add(bytes, Ordering::Relaxed);
    }

    /// The mesh made a run of `model` on `backend`.
    pub(crate) fn prepared(&self, model: &str, backend: Backend) {
        if let Some(m) = self.models.iter().find(|m| m.name == model && m.backend == backend) {
            m.prepared.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn set_mesh_up(&self, up: bool) {
        self.mesh_up.store(up, Ordering::Relaxed);
    }

    /// The metrics page.
    pub(crate) fn render(&self) -> String {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let mut t = TextFormat::new();
        t.family(
            "ringfence_party_sessions_total",
            Kind::Counter,
            "Client sessions served, by how they ended (refused: the client was told why).",
        );
        let outcomes =
            [(Ended::Answered, "answered"), (Ended::Refused, "refused"), (Ended::Failed, "failed")];
        for (how, outcome) in outcomes {
            t.sample(&[("outcome", outcome)], get(&self.sessions[how as usize]));
        }
        t.single(
            "ringfence_party_sessions_running",
            Kind::Gauge,
            "Client sessions being served now.",
            get(&self.running),
        );
        t.single(
            "ringfence_party_setup_stocked_total",
            Kind::Counter,
            "Client sessions whose setup was a run made ahead of demand by the mesh.",
            get(&self.stocked),
        );
        let ready =
            |m: &ModelCounters| self.shelf.as_ref().map_or(0, |s| s.ready(&m.name, m.backend));
        fn labels(m: &ModelCounters) -> [(&'static str, &str); 2] {
            [("model", m.name.as_str()), ("backend", m.backend.name())]
        }
        t.family(
            "ringfence_party_ready_runs",
            Kind::Gauge,
            "Runs made ahead of demand and ready for a client session, per model and backend.",
        );
        for m in &self.models {
            t.sample(&labels(m), ready(m) as u64);
        }
        t.family(
            "ringfence_party_ready_target",
            Kind::Gauge,
            "Runs the mesh keeps ready, per model and backend (0 without a mesh).",
        );
        for m in &self.models {
            t.sample(&labels(m), m.target as u64);
        }
        t.family(
            "ringfence_party_prepared_total",
            Kind::Counter,
            "Runs made ahead of demand by the mesh, per model and backend.",
        );
        for m in &self.models {
            t.sample(&labels(m), get(&m.prepared));
        }
        t.single(
            "ringfence_party_mesh_up",
            Kind::Gauge,
            "1 while the mesh links to the other two server parties are up.",
            u64::from(self.mesh_up.load(Ordering::Relaxed)),
        );
        t.family(
            "ringfence_party_bytes_sent_total",
            Kind::Counter,
            "Protocol bytes this party sent (before encryption): client sessions up to the end \
             of setup (the request included) and after it, and the mesh.",
        );
        for (phase, name) in
            [(Phase::Setup, "setup"), (Phase::Online, "online"), (Phase::Mesh, "mesh")]
        {
            t.sample(&[("phase", name)], get(&self.bytes[phase as usize]));
        }
        t.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_every_series_with_model_names_escaped() {
        let targets = [
            Target { model: "nn-a".into(), backend: Backend::Meteor, runs: 2 },
            Target { model: "nn-a".into(), backend: Backend::Rep3, runs: 1 },
            Target { model: "odd \"name\"\\\n".into(), backend: Backend::Meteor, runs: 0 },
        ];
        let m = Metrics::new(&targets, Some(Arc::new(Shelf::new())));
        {
            let _running = m.session_started();
            m.session_ended(Ended::Answered);
            m.setup_stocked();
            m.sent(Phase::Online, 40);
            m.sent(Phase::Online, 2);
            m.prepared("nn-a", Backend::Meteor);
            m.prepared("unknown", Backend::Meteor);
            m.set_mesh_up(true);
            let page = m.render();
            assert!(page.lines().any(|l| l == "ringfence_party_sessions_running 1"), "{page}");
        }
        let page = m.render();
        for line in [
            "# TYPE ringfence_party_sessions_total counter",
            "ringfence_party_sessions_total{outcome=\"answered\"} 1",
            "ringfence_party_sessions_total{outcome=\"refused\"} 0",
            "ringfence_party_sessions_total{outcome=\"failed\"} 0",
            "ringfence_party_sessions_running 0",
            "ringfence_party_setup_stocked_total 1",
            "# TYPE ringfence_party_ready_runs gauge",
            "ringfence_party_ready_runs{model=\"nn-a\",backend=\"meteor\"} 0",
            "ringfence_party_ready_runs{model=\"odd \\\"name\\\"\\\\\\n\",backend=\"meteor\"} 0",
            "ringfence_party_ready_target{model=\"nn-a\",backend=\"meteor\"} 2",
            "ringfence_party_ready_target{model=\"nn-a\",backend=\"rep3\"} 1",
            "ringfence_party_prepared_total{model=\"nn-a\",backend=\"meteor\"} 1",
            "ringfence_party_prepared_total{model=\"nn-a\",backend=\"rep3\"} 0",
            "ringfence_party_mesh_up 1",
            "ringfence_party_bytes_sent_total{phase=\"online\"} 42",
            "ringfence_party_bytes_sent_total{phase=\"mesh\"} 0",
        ] {
            assert!(page.lines().any(|l| l == line), "{line} missing from:\n{page}");
        }
        // Without a mesh nothing is kept ready, whatever `ready` says.
        let page = Metrics::new(&targets, None).render();
        assert!(page
            .lines()
            .any(|l| l == "ringfence_party_ready_target{model=\"nn-a\",backend=\"meteor\"} 0"));
    }
}
