//! `mal3`: three parties, one of them possibly malicious, security with abort, on rep3's
//! replicated sharing over Z_2^k (Araki, Barak, Furukawa, Lichter, Lindell, Nof, Ohara,
//! Watzman, Weinstein, "Optimized Honest-Majority MPC for Malicious Adversaries", IEEE S&P
//! 2017; the ring form of its checks is the implementation extract's section 9).
//!
//! Products are computed with rep3's semi-honest protocol, which a cheating party can only
//! make wrong by an additive error of its choice (the sharing stays valid). Each product is
//! then checked against a multiplication triple that was itself validated by cut-and-bucket
//! ([`triples`]): a check opens `ρ = x − a` and `σ = y − b` and tests
//! `z − c − σ·a − ρ·b − ρσ = e_z − e_c` for zero, so a bad product passes only against a bad
//! triple with the same error, which the bucketing makes unlikely (at most `N^−(B−1)`).
//!
//! Checks never send values in the clear that a cheating party could have shifted by a
//! secret-dependent amount: every comparison of views is a SHA-256 digest sent around the ring
//! (P_i to P_{i+1}), values that were opened are compared before any zero test uses them, and
//! every check ends with a verdict that all three parties exchange, so that the honest ones
//! stop together ([`Error::Abort`]) and release nothing. The one exception is inherent: a
//! cheater that lies only in its last verdict to one party makes that party abort while the
//! other keeps its (correct) output. This is security with abort; unanimous abort would need
//! agreement, which three parties with one cheater cannot reach without a broadcast channel.
//!
//! What is here: the validated triples over Z_2^32, Z_2^64 and bits, by Protocol 3.1 or on
//! demand by Protocol 3.9 ([`triples`]), the paper's bounds for their parameters
//! ([`bounds`]), the check of computed products against them and openings received from both
//! holders ([`check`]), the scheme's party [`Mal3`] with [`crate::sharing::Arith`]
//! ([`scheme`]), truncation pairs for fixed-point products ([`trunc`]),
//! [`crate::sharing::Boolean`] (checked ANDs, A2B and MSB without single-party inputs, checked
//! daBits: [`boolean`]), clients ([`client`]), and private inference through the uniform walk
//! ([`nn`]).

pub mod boolean;
pub mod bounds;
pub mod check;
pub mod client;
pub mod nn;
pub mod scheme;
pub mod triples;
pub mod trunc;

pub use scheme::Mal3;

use crate::net::{PartyId, Transport};
use crate::rep3::Rep3;
use crate::ring::{Ring, Z64};
pub(crate) use crate::sharing::View;
use crate::Error;

/// P_i sends its digest `mine` to P_{i+1}, which compares it with `expected` (its own digest
/// of what P_i's should be); then every party learns every verdict. Two rounds.
pub(crate) async fn compare<T: Transport>(
    p: &mut Rep3<T>,
    mine: View,
    expected: View,
    what: &str,
) -> Result<(), Error> {
    compare_and_rule(p, mine, expected, what, Ok(())).await
}

/// Compares values every party opened (labelled `what`, operation `op`) around the ring
/// before anything uses them: a party that sent one holder a wrong component leaves the
/// honest parties with different openings. Two rounds.
pub(crate) async fn compare_opened<R: Ring, T: Transport>(
    p: &mut Rep3<T>,
    what: &str,
    op: u64,
    opened: &[R],
) -> Result<(), Error> {
    let (mut mine, mut expected) = (View::new(what, op), View::new(what, op));
    mine.absorb(opened);
    expected.absorb(opened);
    compare(p, mine, expected, what).await
}

/// [`compare`], with this party's own `ruling` on another check joined to the verdict.
pub(crate) async fn compare_and_rule<T: Transport>(
    p: &mut Rep3<T>,
    mine: View,
    expected: View,
    what: &str,
    ruling: Result<(), Error>,
) -> Result<(), Error> {
    let me = p.me();
    let ctx = p.ctx_mut();
    ctx.round();
    ctx.send(crate::rep3::next(me), &mine.words())?;
    let got = ctx.recv::<Z64>(crate::rep3::prev(me), 4).await?;
    let verdict = ruling.and_then(|()| {
        if got == expected.words() {
            Ok(())
        } else {
            Err(Error::Abort {
                blame: None,
                reason: format!("{what}: {me}'s view differs from {}'s", crate::rep3::prev(me)),
            })
        }
    });
    settle(p, verdict).await
}

/// Every party sends its verdict on a check to both others (one round, one word each); a
/// party aborts if its own check failed or if another party's did.
pub(crate) async fn settle<T: Transport>(
    p: &mut Rep3<T>,
    mine: Result<(), Error>,
) -> Result<(), Error> {
    let me = p.me();
    let (next, prev) = (crate::rep3::next(me), crate::rep3::prev(me));
    let ctx = p.ctx_mut();
    ctx.round();
    let flag = [Z64(u64::from(mine.is_err()))];
    ctx.send(next, &flag)?;
    ctx.send(prev, &flag)?;
    let from_next = ctx.recv::<Z64>(next, 1).await?;
    let from_prev = ctx.recv::<Z64>(prev, 1).await?;
    mine?;
    let other: Option<PartyId> = match (from_next[0].0, from_prev[0].0) {
        (0, 0) => None,
        (0, _) => Some(prev),
        _ => Some(next),
    };
    match other {
        None => Ok(()),
        Some(who) => {
            Err(Error::Abort { blame: None, reason: format!("{who} reported a failed check") })
        }
    }
}
