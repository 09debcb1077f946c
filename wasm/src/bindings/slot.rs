//! A session that one asynchronous operation at a time borrows by value: the operation's future
//! owns it while it runs (a `Promise` cannot hold a borrow across awaits), and puts it back when
//! it ends. Calls made meanwhile fail with `API_MISUSE` instead of racing on the same links. The
//! compute party ([`super::Party`]) and the classification client ([`super::Client`]) share it.

use core::cell::{Cell, RefCell};
use core::future::Future;
use core::pin::Pin;
use std::rc::Rc;

use js_sys::{Object, Promise};
use ringfence_core::net::Stats;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::future_to_promise;

use super::args::object;
use super::error::{js_error, Code};

/// An operation's future, borrowing the session for its whole run.
pub(crate) type OpFuture<'a> = Pin<Box<dyn Future<Output = Result<JsValue, JsValue>> + 'a>>;

/// A session whose communication counters can be read.
pub(crate) trait Counted {
    /// The counters so far.
    fn counters(&self) -> Stats;
}

/// The session and the counters as of the last finished operation (readable while one runs).
pub(crate) struct Slot<T> {
    /// `None` while an operation runs (it owns the session meanwhile).
    value: Rc<RefCell<Option<T>>>,
    stats: Rc<Cell<Stats>>,
    /// Who is busy, for the error message ("the party", "the client").
    owner: &'static str,
}

impl<T: Counted + 'static> Slot<T> {
    pub(crate) fn new(value: T, owner: &'static str) -> Self {
        let stats = Rc::new(Cell::new(value.counters()));
        Self { value: Rc::new(RefCell::new(Some(value))), stats, owner }
    }

    /// Communication counters as of the last finished operation.
    pub(crate) fn stats(&self) -> Stats {
        self.stats.get()
    }

    /// Fails unless no operation runs.
    pub(crate) fn idle(&self) -> Result<(), JsValue> {
        match self.value.borrow().is_some() {
            true => Ok(()),
            false => Err(self.busy()),
        }
    }

    /// Runs `f` on the idle session right now (no communication).
    pub(crate) fn with<R>(
        &self,
        f: impl FnOnce(&mut T) -> Result<R, JsValue>,
    ) -> Result<R, JsValue> {
        let mut guard = self.value.borrow_mut();
        f(guard.as_mut().ok_or_else(|| self.busy())?)
    }

    /// Runs `op` on the session and gives the session back when it finishes.
    pub(crate) fn spawn(
        &self,
        op: impl for<'a> FnOnce(&'a mut T) -> OpFuture<'a> + 'static,
    ) -> Result<Promise, JsValue> {
        let mut session = self.value.borrow_mut().take().ok_or_else(|| self.busy())?;
        let (slot, stats) = (Rc::clone(&self.value), Rc::clone(&self.stats));
        Ok(future_to_promise(async move {
            let out = op(&mut session).await;
            stats.set(session.counters());
            *slot.borrow_mut() = Some(session);
            out
        }))
    }

    /// The error for a call made while an operation runs.
    pub(crate) fn busy(&self) -> JsValue {
        js_error(
            Code::ApiMisuse,
            format!(
                "{} is running another operation: await each operation before starting the next",
                self.owner
            ),
        )
    }
}

/// Counters as the JS object `{bytesSent, payloadBytesSent, framesSent, rounds}`.
pub(crate) fn stats_object(s: Stats) -> Object {
    object(&[
        ("bytesSent", (s.bytes_sent as f64).into()),
        ("payloadBytesSent", (s.payload_bytes_sent as f64).into()),
        ("framesSent", (s.frames_sent as f64).into()),
        ("rounds", (s.rounds as f64).into()),
    ])
}
