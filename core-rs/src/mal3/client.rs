//! The client side of mal3: it shares its input as a rep3 client does (the parties check the
//! copies' consistency, [`super::Mal3`]'s `input`), and reconstructs its output from every
//! component received from both parties that hold it, aborting on any difference: one cheating
//! server cannot change the answer the client accepts.

use crate::net::{Ctx, PartyId, Transport};
use crate::prg::Seed;
use crate::rep3::client::Rep3Client;
use crate::ring::{kernels, Ring};
use crate::sharing::InputClient;
use crate::Error;

/// The client side of a mal3 session.
#[derive(Debug)]
pub struct Mal3Client<T>(Rep3Client<T>);

impl<T: Transport> Mal3Client<T> {
    /// A client with context `ctx` (its id is ≥ 3) and private randomness `own`.
    pub fn new(ctx: Ctx<T>, own: Seed) -> Self {
        Self(Rep3Client::new(ctx, own))
    }

    /// Secret-shares `values` to the three parties, as a rep3 client does (1 round).
    pub fn share<R: Ring>(&mut self, values: &[R]) -> Result<[Vec<R>; 3], Error> {
        self.0.share(values)
    }

    /// Receives both components of `n` values from each party (one round), compares the two
    /// copies of every component, and reconstructs: [`Error::Abort`] when a copy differs.
    pub async fn reconstruct<R: Ring>(&mut self, n: usize) -> Result<Vec<R>, Error> {
        let ctx = self.0.ctx_mut();
        ctx.round();
        let mut parts = Vec::with_capacity(3);
        for i in 0..3 {
            parts.push(ctx.recv::<R>(PartyId(i), 2 * n).await?);
        }
        // P_i sends components i and i + 1: component i + 1 also comes first from P_{i+1}.
        let mut out = vec![R::ZERO; n];
        for i in 0..3 {
            let (first, second) = (&parts[(i + 1) % 3][..n], &parts[i][n..]);
            if first != second {
                return Err(Error::Abort {
                    blame: None,
                    reason: format!(
                        "the output's component {} differs between {} and {}",
                        (i + 1) % 3,
                        PartyId(i as u8),
                        PartyId(((i + 1) % 3) as u8)
                    ),
                });
            }
            kernels::add_assign(&mut out, first);
        }
        Ok(out)
    }
}

/// A mal3 client draws its own additive sharing, as a rep3 one: its input needs no setup.
impl<T: Transport, R: Ring> InputClient<T, R> for Mal3Client<T> {
    type Prep = ();

    fn new(ctx: Ctx<T>, own: Seed) -> Self {
        Self::new(ctx, own)
    }
    fn into_ctx(self) -> Ctx<T> {
        self.0.into_ctx()
    }
    async fn receive_prep(&mut self, _: usize) -> Result<(), Error> {
        Ok(())
    }
    fn share(&mut self, values: &[R], (): ()) -> Result<Vec<Vec<R>>, Error> {
        Ok(Self::share(self, values)?.into())
    }
    async fn reconstruct(&mut self, n: usize) -> Result<Vec<R>, Error> {
        Self::reconstruct(self, n).await
    }
}
