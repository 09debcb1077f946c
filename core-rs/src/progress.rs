//! How far a long preprocessing has come, readable from elsewhere while it runs.
//!
//! A spdz2k setup makes its material for seconds in a page and minutes for a large network
//! (LeNet's matrix products take millions of triples): a caller that holds a [`Progress`]
//! handle reads what is being made and how much of it is done, from another task or between
//! the events that drive the protocol, and shows it.
//!
//! ```
//! use ringfence_core::progress::Progress;
//!
//! let p = Progress::default();
//! // Given to a session (e.g. `service::Client::progress`), then read while its setup runs:
//! let r = p.report();
//! assert_eq!((r.making, r.done, r.total), ("", 0, 0));
//! ```

use std::sync::{Arc, Mutex, PoisonError};

/// A shared progress counter: clones see the same counts.
#[derive(Clone, Debug, Default)]
pub struct Progress(Arc<Mutex<Report>>);

/// Where a preprocessing is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// What is being made now, e.g. `"multiplication triples"` (empty before the first).
    pub making: &'static str,
    /// Items of it made so far.
    pub done: u64,
    /// Items of it asked for.
    pub total: u64,
    /// Items of every earlier request, made.
    pub made_before: u64,
}

impl Progress {
    /// The counts now.
    pub fn report(&self) -> Report {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn update(&self, f: impl FnOnce(&mut Report)) {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner));
    }

    /// `total` items of `making` are asked for now.
    pub(crate) fn start(&self, making: &'static str, total: usize) {
        self.update(|r| {
            r.made_before += r.done;
            *r = Report { making, done: 0, total: total as u64, made_before: r.made_before };
        });
    }

    /// `n` more items are made (never past the total).
    pub(crate) fn advance(&self, n: usize) {
        self.update(|r| r.done = (r.done + n as u64).min(r.total));
    }

    /// Every item asked for is made.
    pub(crate) fn finish(&self) {
        self.update(|r| r.done = r.total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_counts_and_never_pass_the_total() {
        let p = Progress::default();
        let reader = p.clone();
        p.start("triples", 10);
        p.advance(4);
        assert_eq!(
            reader.report(),
            Report { making: "triples", done: 4, total: 10, made_before: 0 }
        );
        p.advance(40);
        assert_eq!(reader.report().done, 10);
        p.start("bits", 3);
        p.finish();
        assert_eq!(reader.report(), Report { making: "bits", done: 3, total: 3, made_before: 10 });
    }
}
