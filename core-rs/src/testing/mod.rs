//! A deterministic in-memory network for multi-party tests (feature `test-utils`).
//!
//! All parties run as futures on one thread, polled in a fixed order by [`Net::run`]; there is
//! no real clock. Virtual time advances by one tick per scheduling pass. A hook sees every frame
//! in flight and may deliver, drop, delay (which lets later frames overtake it) or rewrite it.
//! When no party can make progress and nothing is in flight, pending receives fail with
//! [`TransportError::Timeout`], which is how "a peer vanished" looks to the core.
//!
//! [`conformance`] holds the suites every [`crate::sharing::Arith`] scheme passes, written once
//! and run for each scheme and ring width.
//!
//! ```
//! use ringfence_core::{rep3::Rep3, ring::Z64, testing};
//! let outs = testing::run_rep3(7, |mut p| async move {
//!     let x = p.random::<Z64>(4);
//!     let y = p.random::<Z64>(4);
//!     let z = p.mul(&x, &y).await?;
//!     p.reveal(z).await
//! });
//! assert_eq!(outs[0], outs[1]);
//! ```

pub mod conformance;
pub mod faults;
pub mod ideal;
mod rss;
mod spdz2k;

pub use rss::{rss_own_seed, rss_party, run_rss, run_rss_with_client};
pub use spdz2k::{run_spdz2k, run_spdz2k_generating};

use std::cell::RefCell;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use crate::net::{Ctx, PartyId, Roster, SessionId, Transport, TransportError};
use crate::prg::{Prg, Seed};
use crate::rep3::{Rep3, Rep3Seeds};
use crate::Error;

/// A frame in flight, as the hook sees it.
#[derive(Debug, Clone)]
pub struct Envelope {
    /// Sender.
    pub from: PartyId,
    /// Receiver.
    pub to: PartyId,
    /// Index of this frame on its link (0, 1, ...).
    pub index: u64,
    /// The frame bytes; the hook may rewrite them.
    pub bytes: Vec<u8>,
}

/// What the hook decides for a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Deliver it now.
    Deliver,
    /// Lose it.
    Drop,
    /// Deliver it after this many scheduling ticks; frames sent later may overtake it.
    Delay(u64),
}

type Hook = Box<dyn FnMut(&mut Envelope) -> Action>;

/// A party's protocol run, boxed so parties of one test can be polled side by side.
pub type PartyFuture<'a, O> = Pin<Box<dyn Future<Output = O> + 'a>>;

struct InFlight {
    from: PartyId,
    to: PartyId,
    ready_at: u64,
    bytes: Vec<u8>,
}

struct Inner {
    in_flight: Vec<InFlight>,
    link_counts: Vec<u64>,
    n: usize,
    hook: Option<Hook>,
    log: Vec<Envelope>,
    tick: u64,
    progress: u64,
    stalled: bool,
}

/// The shared in-memory network; clone it to hand out transports.
#[derive(Clone)]
pub struct Net {
    inner: Rc<RefCell<Inner>>,
}

impl Net {
    /// A network of `n` participants with no hook.
    pub fn new(n: usize) -> Self {
        Self {
            inner: Rc::new(RefCell::new(Inner {
                in_flight: Vec::new(),
                link_counts: vec![0; n * n],
                n,
                hook: None,
                log: Vec::new(),
                tick: 0,
                progress: 0,
                stalled: false,
            })),
        }
    }

    /// Installs a hook that sees (and may alter) every frame sent.
    pub fn set_hook(&self, hook: impl FnMut(&mut Envelope) -> Action + 'static) {
        self.inner.borrow_mut().hook = Some(Box::new(hook));
    }

    /// Every frame sent so far, as delivered (after the hook).
    pub fn log(&self) -> Vec<Envelope> {
        self.inner.borrow().log.clone()
    }

    /// The transport of participant `me`.
    pub fn transport(&self, me: PartyId) -> MemTransport {
        MemTransport { me, inner: self.inner.clone() }
    }

    /// Polls all futures in order until every one has finished, advancing virtual time.
    ///
    /// Deterministic: the same futures and hook give the same interleaving and outputs.
    pub fn run<'a, O>(&self, futures: Vec<PartyFuture<'a, O>>) -> Vec<O> {
        let mut futs: Vec<Option<PartyFuture<'a, O>>> = futures.into_iter().map(Some).collect();
        let mut outs: Vec<Option<O>> = futs.iter().map(|_| None).collect();
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            let before = self.inner.borrow().progress;
            for (f, out) in futs.iter_mut().zip(outs.iter_mut()) {
                if let Some(fut) = f {
                    if let Poll::Ready(o) = fut.as_mut().poll(&mut cx) {
                        *out = Some(o);
                        *f = None;
                        self.inner.borrow_mut().progress += 1;
                    }
                }
            }
            if futs.iter().all(Option::is_none) {
                break;
            }
            let mut inner = self.inner.borrow_mut();
            inner.tick += 1;
            if inner.progress == before {
                let tick = inner.tick;
                let waiting = inner.in_flight.iter().any(|m| m.ready_at > tick);
                if !waiting {
                    // Nothing can ever arrive: pending receives now time out.
                    inner.stalled = true;
                }
            }
        }
        outs.into_iter().map(|o| o.expect("every future finished")).collect()
    }
}

/// One participant's end of a [`Net`].
pub struct MemTransport {
    me: PartyId,
    inner: Rc<RefCell<Inner>>,
}

impl Transport for MemTransport {
    fn send(&mut self, to: PartyId, frame: Vec<u8>) -> Result<(), TransportError> {
        let mut inner = self.inner.borrow_mut();
        let n = inner.n;
        if to.index() >= n {
            return Err(TransportError::Io(format!("no participant {to}")));
        }
        let link = self.me.index() * n + to.index();
        let index = inner.link_counts[link];
        inner.link_counts[link] += 1;
        inner.progress += 1;
        let mut env = Envelope { from: self.me, to, index, bytes: frame };
        let action = match inner.hook.as_mut() {
            Some(h) => h(&mut env),
            None => Action::Deliver,
        };
        let ready_at = match action {
            Action::Drop => return Ok(()),
            Action::Deliver => inner.tick,
            Action::Delay(t) => inner.tick + t,
        };
        inner.log.push(env.clone());
        inner.in_flight.push(InFlight { from: self.me, to, ready_at, bytes: env.bytes });
        Ok(())
    }

    fn recv(&mut self, from: PartyId) -> impl Future<Output = Result<Vec<u8>, TransportError>> {
        let me = self.me;
        let inner = self.inner.clone();
        poll_fn(move |_| {
            let mut inner = inner.borrow_mut();
            let tick = inner.tick;
            let pos = inner
                .in_flight
                .iter()
                .position(|m| m.from == from && m.to == me && m.ready_at <= tick);
            if let Some(pos) = pos {
                inner.progress += 1;
                return Poll::Ready(Ok(inner.in_flight.remove(pos).bytes));
            }
            if inner.stalled {
                return Poll::Ready(Err(TransportError::Timeout(tick)));
            }
            Poll::Pending
        })
    }
}

/// Seeds for the three parties of a test, derived from `seed` (pairwise keys agree).
pub fn rep3_seeds(seed: u64) -> [Rep3Seeds; 3] {
    let master = Seed::from_bytes({
        let mut b = [0u8; 32];
        b[..8].copy_from_slice(&seed.to_le_bytes());
        b
    });
    // pair[i] is the key shared by P_i and P_{i+1}.
    let pair: [Seed; 3] = core::array::from_fn(|i| master.derive(i as u32));
    let ring = Roster::THREE;
    core::array::from_fn(|i| Rep3Seeds {
        prev: pair[ring.prev(PartyId(i as u8)).index()].clone(),
        next: pair[i].clone(),
        own: master.derive(100 + i as u32),
    })
}

/// Runs `f` as each of the three parties of a fresh `rep3` session on an in-memory network.
pub fn run_rep3<O, F, Fut>(seed: u64, f: F) -> Vec<O>
where
    F: Fn(Rep3<MemTransport>) -> Fut,
    Fut: Future<Output = Result<O, Error>>,
    O: core::fmt::Debug,
{
    let net = Net::new(Roster::THREE.n());
    run_rep3_on(&net, Roster::THREE.participants(0), seed, f)
        .into_iter()
        .map(|r| r.expect("party failed"))
        .collect()
}

/// Like [`run_rep3`] on a given network of `participants` (3 parties plus clients), returning
/// each party's result instead of panicking.
pub fn run_rep3_on<O, F, Fut>(
    net: &Net,
    participants: usize,
    seed: u64,
    f: F,
) -> Vec<Result<O, Error>>
where
    F: Fn(Rep3<MemTransport>) -> Fut,
    Fut: Future<Output = Result<O, Error>>,
{
    let seeds = rep3_seeds(seed);
    let f = &f;
    let futs: Vec<PartyFuture<'_, Result<O, Error>>> = seeds
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let ctx = Ctx::new(
                PartyId(i as u8),
                participants,
                SessionId([1; 16]),
                net.transport(PartyId(i as u8)),
            );
            Box::pin(async move {
                let p = Rep3::setup(ctx, s).await?;
                f(p).await
            }) as Pin<Box<dyn Future<Output = _>>>
        })
        .collect();
    net.run(futs)
}

/// Runs `f` as each compute party of a fresh session of `roster` on base session `B` (a
/// [`conformance::TestBase`]: rep3's, rss's) on `net`, with `participants` ids (the parties,
/// then clients the caller drives), keyed from `seed`. Returns each party's result.
///
/// ```
/// use ringfence_core::{net::Roster, rss::Rss, ring::Z64, testing::{self, MemTransport, Net}};
/// let roster = Roster::new(7, 3)?;
/// let outs = testing::run_base(&Net::new(roster.n()), roster, roster.n(), 1,
///     |_, mut p: Rss<MemTransport>| async move { p.open(p.constant(&[Z64(5)])).await });
/// assert!(outs.iter().all(|o| o.as_deref() == Ok(&[Z64(5)][..])));
/// # Ok::<(), ringfence_core::Error>(())
/// ```
pub fn run_base<B, O, F, Fut>(
    net: &Net,
    roster: Roster,
    participants: usize,
    seed: u64,
    f: F,
) -> Vec<Result<O, Error>>
where
    B: conformance::TestBase,
    F: Fn(PartyId, B) -> Fut,
    Fut: Future<Output = Result<O, Error>>,
{
    let f = &f;
    let futs: Vec<PartyFuture<'_, Result<O, Error>>> = roster
        .parties()
        .map(|me| {
            let ctx = Ctx::new(me, participants, SessionId([1; 16]), net.transport(me));
            Box::pin(async move { f(me, B::setup(ctx, roster, seed).await?).await })
                as PartyFuture<'_, _>
        })
        .collect();
    net.run(futs)
}

/// Deterministic test data: `n` pseudo-random words from `seed`.
pub fn random_words(seed: u64, n: usize) -> Vec<u64> {
    let mut prg = Prg::new(&Seed::from_bytes([0x5a; 32]), seed, 0);
    (0..n).map(|_| prg.next_u64()).collect()
}
