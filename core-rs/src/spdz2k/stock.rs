//! Material made ahead of its use: what [`super::Spdz2k::make_ahead`] makes waits here, by
//! kind, and every draw of that kind takes from it first (the generator makes only what is
//! missing). Every party makes and draws the same kinds in the same order, so their queues stay
//! aligned; the stock belongs to one session's party and each item is taken once.

use super::offline::{Wide, Widths};
use crate::net::PartyId;

/// What a generator makes: the key of a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Multiplication triples of this many value bits (1: the binary instance's, bit triples).
    Triples(u32),
    /// Random bits of the instance of this many value bits (1: the binary instance's).
    RandBits(u32),
    /// edaBits of the instance of this many value bits: the value, then its bits in the
    /// binary instance.
    EdaBits(u32),
    /// Random values of these widths (the MAC checks' masks, matrix triples' factors).
    Random(Widths),
    /// Input masks of these widths for this owner: its share is the value (which it alone
    /// knows), the others' are zero. They mask the owner's inputs and the outputs opened to it.
    Masks(Widths, PartyId),
}

impl Kind {
    /// What items of this kind are, for progress reports.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Triples(1) => "bit triples",
            Self::Triples(_) => "multiplication triples",
            Self::RandBits(1) => "random binary bits",
            Self::RandBits(_) => "random bits",
            Self::EdaBits(_) => "edaBits",
            Self::Random(_) => "random values",
            Self::Masks(..) => "input masks",
        }
    }

    /// Components per item.
    pub(crate) fn parts(self) -> usize {
        match self {
            Self::Triples(_) => 3,
            Self::EdaBits(k) => k as usize + 1,
            Self::RandBits(_) | Self::Random(_) | Self::Masks(..) => 1,
        }
    }
}

/// Queues of material, oldest first: one [`Wide`] per component (three for triples).
#[derive(Debug)]
pub(crate) struct Stock<W> {
    queues: Vec<(Kind, Vec<Wide<W>>)>,
    /// Items drawn so far, by kind (from the queues or made on demand).
    drawn: Vec<(Kind, usize)>,
}

impl<W> Default for Stock<W> {
    fn default() -> Self {
        Self { queues: Vec::new(), drawn: Vec::new() }
    }
}

impl<W> Stock<W> {
    /// `parts` (one batch of `kind`) after what waits.
    pub(crate) fn put(&mut self, kind: Kind, parts: Vec<Wide<W>>) {
        match self.queues.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, q)) => q.iter_mut().zip(parts).for_each(|(q, p)| q.append(p)),
            None => self.queues.push((kind, parts)),
        }
    }

    /// Records a draw of `n` items of `kind`.
    pub(crate) fn count(&mut self, kind: Kind, n: usize) {
        match self.drawn.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, d)) => *d += n,
            None => self.drawn.push((kind, n)),
        }
    }

    /// Items of every kind drawn so far.
    pub(crate) fn drawn(&self) -> &[(Kind, usize)] {
        &self.drawn
    }

    /// Up to `n` items of `kind`, the oldest first, in `kind.parts()` components: fewer (maybe
    /// none) when fewer wait.
    pub(crate) fn take(&mut self, kind: Kind, n: usize) -> Vec<Wide<W>> {
        match self.queues.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, q)) => q.iter_mut().map(|w| w.split_front(n)).collect(),
            None => (0..kind.parts()).map(|_| Wide { x: Vec::new(), m: Vec::new() }).collect(),
        }
    }
}
