//! Who takes part in a session: its [`Roster`].
//!
//! A session has `n` compute parties, with ids `P0 … P(n−1)`, of which at most `t` may be
//! corrupted, and after them its clients (input providers), with ids `n, n+1, …`. Code outside
//! a scheme's own folder asks the roster for the parties, a party's ring neighbours or the
//! client's id rather than writing the count out, so the count lives in one place.
//!
//! ```
//! use ringfence_core::net::{PartyId, Roster};
//! let r = Roster::THREE;
//! assert_eq!((r.n(), r.t()), (3, 1));
//! assert_eq!(r.parties().collect::<Vec<_>>(), [PartyId(0), PartyId(1), PartyId(2)]);
//! assert_eq!(r.others(PartyId(1)).collect::<Vec<_>>(), [PartyId(0), PartyId(2)]);
//! assert_eq!((r.next(PartyId(2)), r.prev(PartyId(0))), (PartyId(0), PartyId(2)));
//! // One client: four participants, the client's id right after the parties'.
//! assert_eq!((r.first_client(), r.participants(1)), (PartyId(3), 4));
//! assert!(r.is_party(PartyId(2)) && !r.is_party(r.first_client()));
//!
//! let five = Roster::new(5, 2)?;
//! assert_eq!(five.client(1), Some(PartyId(6)));
//! assert!(Roster::new(3, 3).is_err());
//! # Ok::<(), ringfence_core::Error>(())
//! ```

use super::PartyId;
use crate::Error;

/// A session's participants: `n` compute parties (`P0 … P(n−1)`), of which at most `t` may be
/// corrupted, then the clients (ids from `n` on). Ids are `u8`s, so a roster leaves room for
/// `256 − n` clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Roster {
    n: u8,
    t: u8,
}

impl Roster {
    /// Three compute parties, at most one corrupted (honest majority): the roster of the
    /// 3-party schemes (rep3, METEOR) and so of every session today.
    pub const THREE: Self = Self { n: 3, t: 1 };

    /// `n` compute parties of which at most `t` may be corrupted; `1 ≤ t < n ≤ 255` (at least
    /// one party is honest, and id 255 is left for a client). Whether a scheme accepts this `t`
    /// (an honest majority, `n = 2t + 1`, …) is the scheme's check.
    pub fn new(n: usize, t: usize) -> Result<Self, Error> {
        match (u8::try_from(n), u8::try_from(t)) {
            (Ok(n), Ok(t)) if 1 <= t && t < n => Ok(Self { n, t }),
            _ => Err(Error::ApiMisuse(format!(
                "roster of {n} compute parties with threshold {t}: need 1 ≤ t < n ≤ 255"
            ))),
        }
    }

    /// `n` compute parties with an honest majority: the largest threshold, `t = (n − 1) / 2`
    /// (3 → 1, 5 → 2, 7 → 3); errors as [`Roster::new`].
    pub fn honest_majority(n: usize) -> Result<Self, Error> {
        Self::new(n, n.saturating_sub(1) / 2)
    }

    /// [`Self::THREE`], where a function reads better than a constant.
    pub const fn three() -> Self {
        Self::THREE
    }

    /// The number of compute parties.
    pub const fn n(self) -> usize {
        self.n as usize
    }

    /// The most compute parties that may be corrupted.
    pub const fn t(self) -> usize {
        self.t as usize
    }

    /// The compute parties, `P0` first.
    pub fn parties(self) -> impl ExactSizeIterator<Item = PartyId> + DoubleEndedIterator + Clone {
        (0..self.n).map(PartyId)
    }

    /// The compute parties other than `me`, in id order.
    pub fn others(self, me: PartyId) -> impl Iterator<Item = PartyId> + Clone {
        self.parties().filter(move |&j| j != me)
    }

    /// Whether `id` is a compute party's.
    pub const fn is_party(self, id: PartyId) -> bool {
        id.0 < self.n
    }

    /// Whether `id` is a client's (every id after the compute parties').
    pub const fn is_client(self, id: PartyId) -> bool {
        !self.is_party(id)
    }

    /// The first client's id (`n`): the client of a session with one.
    pub const fn first_client(self) -> PartyId {
        PartyId(self.n)
    }

    /// Client `k`'s id (`n + k`, from 0), or `None` beyond the last id.
    pub fn client(self, k: usize) -> Option<PartyId> {
        u8::try_from(self.n() + k).ok().map(PartyId)
    }

    /// How many participants a session with `clients` clients has: what [`super::Ctx::new`]
    /// takes.
    pub const fn participants(self, clients: usize) -> usize {
        self.n() + clients
    }

    /// The compute party after `me` in ring order (`P(n−1)` is followed by `P0`), for schemes
    /// that order their parties in a ring. `me` must be a compute party.
    pub fn next(self, me: PartyId) -> PartyId {
        debug_assert!(self.is_party(me), "{me} is not a compute party of {self:?}");
        PartyId(((u16::from(me.0) + 1) % u16::from(self.n)) as u8)
    }

    /// The compute party before `me` in ring order (`P0` is preceded by `P(n−1)`). `me` must
    /// be a compute party.
    pub fn prev(self, me: PartyId) -> PartyId {
        debug_assert!(self.is_party(me), "{me} is not a compute party of {self:?}");
        PartyId(((u16::from(me.0) + u16::from(self.n) - 1) % u16::from(self.n)) as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_roster_needs_an_honest_party_and_room_for_a_client() {
        for (n, t) in [(3, 0), (3, 3), (2, 5), (256, 1), (300, 1)] {
            assert!(Roster::new(n, t).is_err(), "n = {n}, t = {t}");
        }
        assert_eq!(Roster::new(3, 1).unwrap(), Roster::THREE);
        let r = Roster::new(254, 100).unwrap();
        assert_eq!(r.first_client(), PartyId(254));
        assert_eq!(r.client(1), Some(PartyId(255)));
        assert_eq!(r.client(2), None);
        assert_eq!(Roster::new(255, 1).unwrap().first_client(), PartyId(255));
    }

    #[test]
    fn next_and_prev_walk_the_ring_of_parties_both_ways() {
        for n in [2, 3, 5, 7] {
            let r = Roster::new(n, 1).unwrap();
            assert_eq!(r.parties().len(), n);
            for me in r.parties() {
                assert_eq!(r.prev(r.next(me)), me);
                assert!(r.is_party(r.next(me)) && r.next(me) != me);
                assert_eq!(r.others(me).count(), n - 1);
            }
            assert_eq!(r.next(PartyId(n as u8 - 1)), PartyId(0));
            assert_eq!(r.prev(PartyId(0)), PartyId(n as u8 - 1));
        }
    }

    #[test]
    fn the_three_party_roster_agrees_with_rep3_s_ring() {
        for me in Roster::THREE.parties() {
            assert_eq!(Roster::THREE.next(me), crate::rep3::next(me));
            assert_eq!(Roster::THREE.prev(me), crate::rep3::prev(me));
        }
    }

    #[test]
    fn clients_come_after_the_parties() {
        let r = Roster::THREE;
        assert_eq!(r.first_client(), PartyId(3));
        assert_eq!(r.client(0), Some(r.first_client()));
        assert!(r.is_client(PartyId(3)) && r.is_client(PartyId(200)));
        assert_eq!(r.participants(0), 3);
    }
}
