//! [`InputClient`]: an external client's side of a scheme.

use crate::net::{Ctx, Transport};
use crate::prg::Seed;
use crate::ring::Ring;
use crate::Error;

/// The side of a scheme that an external client (an input provider outside the compute
/// parties: a browser tab, a CLI) runs: it shares its input with the compute parties and
/// reconstructs what they open to it (the parties' side is [`Arith::input`] and
/// [`Arith::open_to`] with the client as owner and receiver).
///
/// [`Arith::input`]: super::Arith::input
/// [`Arith::open_to`]: super::Arith::open_to
#[allow(async_fn_in_trait)] // driven by one task, like the parties
pub trait InputClient<T: Transport, R: Ring>: Sized {
    /// What setup hands the client for one input (METEOR: its mask); `()` where nothing.
    type Prep: Send + 'static;

    /// The client on `ctx`, with private randomness `own` (for schemes where the client
    /// draws shares itself).
    fn new(ctx: Ctx<T>, own: Seed) -> Self;

    /// Gives the context back.
    fn into_ctx(self) -> Ctx<T>;

    /// Setup: receives the material of an input of `n` values (the parties'
    /// [`Arith::deliver_input_prep`](super::Arith::deliver_input_prep)).
    async fn receive_prep(&mut self, n: usize) -> Result<Self::Prep, Error>;

    /// Online: shares `values` and sends each compute party its part (one round). Returns, per
    /// party, the first component of what it received (random to anyone but the client; for
    /// display).
    fn share(&mut self, values: &[R], prep: Self::Prep) -> Result<Vec<Vec<R>>, Error>;

    /// Receives the parties' parts of `n` opened values and reconstructs them.
    async fn reconstruct(&mut self, n: usize) -> Result<Vec<R>, Error>;
}
