//! One corrupt party's fault on one of its frames, for seeded tamper trials: a changed byte, a
//! replayed earlier payload, or a lost frame, on the `target`-th frame the party sends.
//!
//! A trial runs a protocol honestly once to count the cheater's frames, then once per seeded
//! fault; the scheme's tests judge the outcomes (an actively secure scheme: every honest party
//! aborts or holds the honest run's outputs, never another value, and none hangs).
//!
//! ```
//! use ringfence_core::{net::{PartyId, Roster}, rep3::Rep3, ring::Z64, testing::{self, Net}};
//! use ringfence_core::testing::faults::{inject, Fault};
//! let three = Roster::THREE;
//! let net = Net::new(three.n());
//! let faults = inject(&net, PartyId(1), 0, Fault::Drop);
//! let outs = testing::run_rep3_on(&net, three.n(), 1, |mut p: Rep3<_>| async move {
//!     let x = p.random::<Z64>(1);
//!     p.reveal(x).await
//! });
//! // P1's first frame is lost: its receiver times out (rep3 alone does not detect changes).
//! assert!(faults.hit().met && outs.iter().any(|o| o.is_err()));
//! ```

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::{Action, Envelope, Net};
use crate::net::{frame, PartyId};
use crate::prg::Prg;

/// A corrupt party's fault on one of its frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// XOR `mask` (non-zero) into payload byte `at` (modulo the payload's length).
    Flip {
        /// Payload byte (modulo the length).
        at: usize,
        /// Bits to flip.
        mask: u8,
    },
    /// The payload of an earlier frame on the same link of the same length; a flip of the
    /// first bit where there is none that differs.
    Replay,
    /// The frame is lost.
    Drop,
}

impl Fault {
    /// A seeded fault: a replay or a drop a quarter of the time each, otherwise a flip of
    /// random bits of a random byte.
    pub fn draw(prg: &mut Prg) -> Self {
        match prg.next_u32() % 4 {
            0 => Self::Replay,
            1 => Self::Drop,
            _ => Self::Flip { at: prg.next_u32() as usize, mask: (prg.next_u32() % 255 + 1) as u8 },
        }
    }
}

/// What the hook did to the target frame.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// The target frame was sent and had a payload to change.
    pub met: bool,
    /// The frame was a verdict ("my check passed", one zero word): the last message of a
    /// check.
    pub verdict: bool,
    /// Its payload bytes.
    pub len: usize,
    /// The fault changed bytes in place (a flip, or a replay with nothing to replay).
    pub flipped: bool,
}

/// The hook's record, shared with the caller.
#[derive(Debug, Default)]
struct Record {
    sent: u64,
    hit: Hit,
    /// Payloads the cheater sent, by receiver and length, for replays.
    earlier: HashMap<(u8, usize), Vec<Vec<u8>>>,
}

/// A handle on an installed fault: what the cheater sent and what the hook did.
#[derive(Debug, Clone)]
pub struct Injection(Rc<RefCell<Record>>);

impl Injection {
    /// Frames the cheater has sent (over all its links).
    pub fn sent(&self) -> u64 {
        self.0.borrow().sent
    }

    /// What the fault met.
    pub fn hit(&self) -> Hit {
        self.0.borrow().hit
    }
}

/// Installs on `net` a hook that applies `fault` to the `target`-th frame `cheater` sends,
/// counted over all its links in the order they are sent (`u64::MAX`: none, to count them).
/// Frames without a payload are left alone (the hit is then not `met`).
pub fn inject(net: &Net, cheater: PartyId, target: u64, fault: Fault) -> Injection {
    let record = Rc::new(RefCell::new(Record::default()));
    let r = record.clone();
    net.set_hook(move |e: &mut Envelope| {
        if e.from != cheater {
            return Action::Deliver;
        }
        let mut r = r.borrow_mut();
        let i = r.sent;
        r.sent += 1;
        let len = e.bytes.len() - frame::HEADER_LEN;
        let payload = e.bytes[frame::HEADER_LEN..].to_vec();
        let mut action = Action::Deliver;
        if i == target && len > 0 {
            let verdict = len == 8 && payload.iter().all(|&b| b == 0);
            let mut hit = Hit { met: true, verdict, len, flipped: true };
            let flip = |e: &mut Envelope, at: usize, mask: u8| {
                e.bytes[frame::HEADER_LEN + at % len] ^= mask;
            };
            match fault {
                Fault::Flip { at, mask } => flip(e, at, mask),
                Fault::Replay => {
                    let earlier = r.earlier.get(&(e.to.0, len));
                    match earlier.and_then(|v| v.iter().find(|p| **p != payload)) {
                        Some(old) => {
                            e.bytes[frame::HEADER_LEN..].copy_from_slice(old);
                            hit.flipped = false;
                        }
                        None => flip(e, 0, 1),
                    }
                }
                Fault::Drop => {
                    action = Action::Drop;
                    hit.flipped = false;
                }
            }
            r.hit = hit;
        }
        r.earlier.entry((e.to.0, len)).or_default().push(payload);
        action
    });
    Injection(record)
}
