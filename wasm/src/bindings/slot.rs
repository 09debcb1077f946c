//! A session that one asynchronous operation at a time borrows by value: the operation's future
//! owns it while it runs (a `Promise` cannot hold a borrow across awaits), and puts it back when
//! it ends. Calls made meanwhile fail with `API_MISUSE` instead of racing on the same links. The
//! compute party ([`super::Party`]) and the classification client ([`super::Client`]) share it.
//!
//! Some core protocols take the session by value and return it only on success
//! (`service::serve`): [`Slot::spawn_owned`] runs those, and a failure leaves the slot
//! [`State::Lost`], so every later call gets that error (the session is gone with it).

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

/// An operation's future that owns the session: `Ok` gives it back with the operation's result,
/// `Err` means it was lost with this error.
pub(crate) type OwnedFuture<T> =
    Pin<Box<dyn Future<Output = Result<(T, Result<JsValue, JsValue>), JsValue>>>>;

/// A session whose communication counters can be read.
pub(crate) trait Counted {
    /// The counters so far.
    fn counters(&self) -> Stats;
}

/// Where the session is.
enum State<T> {
    /// Free for the next operation.
    Idle(T),
    /// An operation owns it.
    Busy,
    /// An operation that took it by value failed: the session is gone, and this is why.
    Lost(JsValue),
}

/// The session and the counters as of the last finished operation (readable while one runs).
pub(crate) struct Slot<T> {
    state: Rc<RefCell<State<T>>>,
    stats: Rc<Cell<Stats>>,
    /// Who is busy, for the error message ("the party", "the client").
    owner: &'static str,
}

impl<T: Counted + 'static> Slot<T> {
    pub(crate) fn new(value: T, owner: &'static str) -> Self {
        let stats = Rc::new(Cell::new(value.counters()));
        Self { state: Rc::new(RefCell::new(State::Idle(value))), stats, owner }
    }

    /// Communication counters as of the last finished operation.
    pub(crate) fn stats(&self) -> Stats {
        self.stats.get()
    }

    /// Fails unless no operation runs.
    pub(crate) fn idle(&self) -> Result<(), JsValue> {
        let idle = matches!(&*self.state.borrow(), State::Idle(_));
        if idle {
            Ok(())
        } else {
            Err(self.busy())
        }
    }

    /// Runs `f` on the idle session right now (no communication).
    pub(crate) fn with<R>(
        &self,
        f: impl FnOnce(&mut T) -> Result<R, JsValue>,
    ) -> Result<R, JsValue> {
        let mut state = self.state.borrow_mut();
        let State::Idle(v) = &mut *state else {
            drop(state);
            return Err(self.busy());
        };
        f(v)
    }

    /// Runs `op` on the session and gives the session back when it finishes.
    pub(crate) fn spawn(
        &self,
        op: impl for<'a> FnOnce(&'a mut T) -> OpFuture<'a> + 'static,
    ) -> Result<Promise, JsValue> {
        self.spawn_owned(move |mut session| {
            Box::pin(async move {
                let out = op(&mut session).await;
                Ok((session, out))
            })
        })
    }

    /// Runs `op`, which takes the session by value: it comes back with `op`'s result, or is
    /// lost with `op`'s error (every later call then fails with that error).
    pub(crate) fn spawn_owned(
        &self,
        op: impl FnOnce(T) -> OwnedFuture<T> + 'static,
    ) -> Result<Promise, JsValue> {
        let session = self.take()?;
        let (state, stats) = (Rc::clone(&self.state), Rc::clone(&self.stats));
        Ok(future_to_promise(async move {
            match op(session).await {
                Ok((session, out)) => {
                    stats.set(session.counters());
                    *state.borrow_mut() = State::Idle(session);
                    out
                }
                Err(e) => {
                    *state.borrow_mut() = State::Lost(e.clone());
                    Err(e)
                }
            }
        }))
    }

    /// Takes the idle session, marking the slot busy.
    fn take(&self) -> Result<T, JsValue> {
        let mut state = self.state.borrow_mut();
        match core::mem::replace(&mut *state, State::Busy) {
            State::Idle(v) => Ok(v),
            other => {
                *state = other;
                drop(state);
                Err(self.busy())
            }
        }
    }

    /// The error for a call made while the session is not idle: an operation runs, or the
    /// session was lost (then that loss's error).
    pub(crate) fn busy(&self) -> JsValue {
        if let State::Lost(e) = &*self.state.borrow() {
            return e.clone();
        }
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
