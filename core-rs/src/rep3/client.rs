//! External input providers (clients): a participant outside P0..P2 that secret-shares its
//! input to the three parties and is the only one able to reconstruct its outputs.
//!
//! The client draws components `x0, x1` from its private seed, sets `x2 = x − x0 − x1`, and
//! sends P_i the pair `(x_i, x_{i+1})` (2 elements per value to each party; the client has no
//! keys with the parties, so both components travel). For outputs, each P_i sends the client its
//! first component `x_i`; no party sees another's, so only the client learns `x`.
//!
//! ```
//! use std::pin::Pin;
//! use ringfence_core::{net::{Ctx, PartyId, SessionId}, prg::Seed, rep3::{client::Rep3Client, Rep3}, ring::Z64, testing};
//! let net = testing::Net::new(4);
//! let client = PartyId(3);
//! let mut futs: Vec<Pin<Box<dyn std::future::Future<Output = Result<Option<Vec<Z64>>, ringfence_core::Error>>>>> = Vec::new();
//! for (i, seeds) in testing::rep3_seeds(1).into_iter().enumerate() {
//!     let ctx = Ctx::new(PartyId(i as u8), 4, SessionId([1; 16]), net.transport(PartyId(i as u8)));
//!     futs.push(Box::pin(async move {
//!         let mut p = Rep3::setup(ctx, seeds).await?;
//!         let x = p.input_from_client::<Z64>(client, 2).await?;
//!         let y = p.mul(&x, &x).await?;
//!         p.reveal_to_client(client, y).await?;
//!         Ok(None)
//!     }));
//! }
//! let ctx = Ctx::new(client, 4, SessionId([1; 16]), net.transport(client));
//! futs.push(Box::pin(async move {
//!     let mut c = Rep3Client::new(ctx, Seed::from_bytes([9; 32]));
//!     c.share(&[Z64(3), Z64(5)])?;
//!     Ok(Some(c.reconstruct::<Z64>(2).await?))
//! }));
//! let outs = net.run(futs);
//! assert_eq!(outs[3].as_ref().unwrap().as_deref(), Some(&[Z64(9), Z64(25)][..]));
//! ```

use super::{purpose, Rep3, Rep3Vec};
use crate::net::{Ctx, PartyId, Transport};
use crate::prg::{Prg, Seed};
use crate::ring::{kernels, Ring};
use crate::Error;

/// The client side of a `rep3` session. `Debug` is redacted.
pub struct Rep3Client<T> {
    ctx: Ctx<T>,
    own: Seed,
}

impl<T> core::fmt::Debug for Rep3Client<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Rep3Client").field("ctx", &self.ctx).finish_non_exhaustive()
    }
}

impl<T: Transport> Rep3Client<T> {
    /// A client with context `ctx` (its id is ≥ 3) and private randomness `own`.
    pub fn new(ctx: Ctx<T>, own: Seed) -> Self {
        Self { ctx, own }
    }

    /// The context (counters).
    pub fn ctx(&self) -> &Ctx<T> {
        &self.ctx
    }

    /// Gives the context back (e.g. for the next step of a session, or to close it).
    pub fn into_ctx(self) -> Ctx<T> {
        self.ctx
    }

    /// Secret-shares `values` to P0, P1, P2 (1 round, 2 elements per value to each). Returns
    /// the three additive components; party `i` received components `i` and `i + 1`.
    pub fn share<R: Ring>(&mut self, values: &[R]) -> Result<[Vec<R>; 3], Error> {
        let op = self.ctx.next_op();
        let n = values.len();
        let mut comp = [vec![R::ZERO; n], vec![R::ZERO; n], values.to_vec()];
        for (i, c) in comp.iter_mut().take(2).enumerate() {
            R::fill_random(&mut Prg::new(&self.own, op, purpose::INPUT + i as u32), c);
        }
        let (first, last) = comp.split_at_mut(2);
        kernels::sub_assign(&mut last[0], &first[0]);
        kernels::sub_assign(&mut last[0], &first[1]);
        self.ctx.round();
        for i in 0..3 {
            let mut pair = comp[i].clone();
            pair.extend_from_slice(&comp[(i + 1) % 3]);
            self.ctx.send(PartyId(i as u8), &pair)?;
        }
        Ok(comp)
    }

    /// Receives the output components from the three parties and reconstructs `n` values.
    pub async fn reconstruct<R: Ring>(&mut self, n: usize) -> Result<Vec<R>, Error> {
        self.ctx.round();
        let mut out = vec![R::ZERO; n];
        for i in 0..3 {
            let part = self.ctx.recv::<R>(PartyId(i), n).await?;
            kernels::add_assign(&mut out, &part);
        }
        Ok(out)
    }
}

impl<T: Transport> Rep3<T> {
    /// Receives `n` values secret-shared by the external `client` (1 round).
    pub async fn input_from_client<R: Ring>(
        &mut self,
        client: PartyId,
        n: usize,
    ) -> Result<Rep3Vec<R>, Error> {
        if client.0 < 3 {
            return Err(Error::ApiMisuse(format!("{client} is a compute party, not a client")));
        }
        self.ctx.round();
        let mut pair = self.ctx.recv::<R>(client, 2 * n).await?;
        let b = pair.split_off(n);
        Ok(Rep3Vec::from_parts(self.me(), pair, b))
    }

    /// Sends this party's component of `x` to the external `client`, which alone reconstructs
    /// it (1 round, one element per value).
    pub async fn reveal_to_client<R: Ring>(
        &mut self,
        client: PartyId,
        x: Rep3Vec<R>,
    ) -> Result<(), Error> {
        if client.0 < 3 {
            return Err(Error::ApiMisuse(format!("{client} is a compute party, not a client")));
        }
        self.ctx.round();
        self.ctx.send(client, &x.a)
    }
}
