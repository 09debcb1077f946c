//! An external input provider (a browser, a form) for METEOR: outside P0..P2, it receives its
//! input's mask during setup, sends the masked input online, and alone reconstructs the result.
//!
//! Setup: each party sends the client its first mask component (`ψ_0, ψ_1, ψ_2` arrive from
//! P0, P1, P2), so the client learns `ψ` and nothing else. Online: the client sends `m = x − ψ`
//! to each party (1 round, one element per value to each; the parties then check among
//! themselves that they received the same `m`, see [`Meteor::share`](super::Meteor::share)), and
//! for the result each party sends its first component of the output mask and P0 the public
//! `m_out`.
//!
//! ```
//! use std::pin::Pin;
//! use ringfence_core::{meteor::{client::MeteorClient, Meteor}, net::{Ctx, PartyId, SessionId}, rep3::Rep3, ring::Z64, testing};
//! let net = testing::Net::new(4);
//! let client = PartyId(3);
//! type Fut = Pin<Box<dyn std::future::Future<Output = Result<Option<Vec<Z64>>, ringfence_core::Error>>>>;
//! let mut futs: Vec<Fut> = Vec::new();
//! for (i, seeds) in testing::rep3_seeds(1).into_iter().enumerate() {
//!     let ctx = Ctx::new(PartyId(i as u8), 4, SessionId([1; 16]), net.transport(PartyId(i as u8)));
//!     futs.push(Box::pin(async move {
//!         let mut p = Meteor::new(Rep3::setup(ctx, seeds).await?);
//!         let mask = p.input_mask::<Z64>(client, 2);
//!         let prep = p.mult_setup(mask.mask(), mask.mask()).await?;
//!         p.deliver_mask(&mask).await?;
//!         let x = p.share(client, None, mask).await?;
//!         let y = p.mult(&x, &x, prep).await?;
//!         p.reveal_to_client(client, y).await?;
//!         Ok(None)
//!     }));
//! }
//! let ctx = Ctx::new(client, 4, SessionId([1; 16]), net.transport(client));
//! futs.push(Box::pin(async move {
//!     let mut c = MeteorClient::new(ctx);
//!     let mask = c.receive_mask::<Z64>(2).await?;
//!     c.share(&[Z64(3), Z64(5)], mask)?;
//!     Ok(Some(c.reconstruct::<Z64>(2).await?))
//! }));
//! let outs = net.run(futs);
//! assert_eq!(outs[3].as_ref().unwrap().as_deref(), Some(&[Z64(9), Z64(25)][..]));
//! ```

use crate::net::{Ctx, PartyId, Transport};
use crate::ring::{kernels, Ring};
use crate::Error;

/// The client side of a METEOR session. `Debug` is redacted.
pub struct MeteorClient<T> {
    ctx: Ctx<T>,
}

impl<T> core::fmt::Debug for MeteorClient<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("MeteorClient").field("ctx", &self.ctx).finish_non_exhaustive()
    }
}

/// The mask of the client's next input (from setup); consumed by [`MeteorClient::share`].
/// `Debug` is redacted.
pub struct ClientMask<R>(Vec<R>);

impl<R> core::fmt::Debug for ClientMask<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "ClientMask({} values, <redacted>)", self.0.len())
    }
}

impl<T: Transport> MeteorClient<T> {
    /// A client with context `ctx` (its id is ≥ 3).
    pub fn new(ctx: Ctx<T>) -> Self {
        Self { ctx }
    }

    /// The context (counters).
    pub fn ctx(&self) -> &Ctx<T> {
        &self.ctx
    }

    /// Gives the context back (e.g. for the next step of a session, or to close it).
    pub fn into_ctx(self) -> Ctx<T> {
        self.ctx
    }

    /// Setup: receives the mask of an input of `n` values (one component from each party).
    pub async fn receive_mask<R: Ring>(&mut self, n: usize) -> Result<ClientMask<R>, Error> {
        self.ctx.round();
        let mut psi = vec![R::ZERO; n];
        for i in 0..3 {
            let part = self.ctx.recv::<R>(PartyId(i), n).await?;
            kernels::add_assign(&mut psi, &part);
        }
        Ok(ClientMask(psi))
    }

    /// Online: sends `m = x − ψ` to the three parties (1 round, one element per value to each).
    /// Returns `m`, what every party received (uniformly random to anyone without ψ).
    pub fn share<R: Ring>(&mut self, values: &[R], mask: ClientMask<R>) -> Result<Vec<R>, Error> {
        if values.len() != mask.0.len() {
            return Err(Error::ApiMisuse(format!(
                "share: {} values for a mask of {}",
                values.len(),
                mask.0.len()
            )));
        }
        let mut m = values.to_vec();
        kernels::sub_assign(&mut m, &mask.0);
        self.ctx.round();
        for i in 0..3 {
            self.ctx.send(PartyId(i), &m)?;
        }
        Ok(m)
    }

    /// Receives `n` output values: `m` from P0 and one mask component from each party.
    pub async fn reconstruct<R: Ring>(&mut self, n: usize) -> Result<Vec<R>, Error> {
        self.ctx.round();
        let mut out = self.ctx.recv::<R>(PartyId(0), n).await?;
        for i in 0..3 {
            let part = self.ctx.recv::<R>(PartyId(i), n).await?;
            kernels::add_assign(&mut out, &part);
        }
        Ok(out)
    }
}
