//! External input providers (clients): a participant outside P0..P2 that secret-shares its
//! input to the three parties and is the only one able to reconstruct its outputs.
//!
//! The client draws components `x0, x1` from its private seed, sets `x2 = x − x0 − x1`, and
//! sends P_i the pair `(x_i, x_{i+1})` (2 elements per value to each party; the client has no
//! keys with the parties, so both components travel). For outputs, each P_i sends the client its
//! first component `x_i`; no party sees another's, so only the client learns `x`.
//!
//! **The client is not trusted to send consistent shares.** Each component travels to two
//! parties, and a client that sent them different values (with one server colluding) could learn
//! from the first opening after a linear layer the weights times its difference. So before
//! returning the input, [`Rep3::input_from_client`] has the parties compare digests of what they
//! received (`check_client_input`, one round of 32-byte digests), and fails naming the
//! client on any difference. The check lives in the receiving function, not in its callers, so
//! no caller (the service, a test, a future SDK path) can use a client's input unchecked.
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

use sha2::{Digest as _, Sha256};

use super::{next, prev, purpose, Rep3, Rep3Vec};
use crate::net::{digest_words, words_digest, Ctx, FrameError, PartyId, Transport};
use crate::prg::{Prg, Seed};
use crate::ring::{kernels, Ring, Z64};
use crate::Error;

/// Domain of the digests in [`Rep3::check_client_input`]: they name nothing else.
const INPUT_DIGEST_DOMAIN: &[u8] = b"ringfence/client-input-consistency/v1";
/// Words of one digest on the wire (32 bytes as [`Z64`]s).
const DIGEST_WORDS: usize = 4;

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

    /// The context, to send and receive on (mal3's client reconstructs on it).
    pub(crate) fn ctx_mut(&mut self) -> &mut Ctx<T> {
        &mut self.ctx
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
        // P_i holds components i and i + 1: each is checked against its other holder.
        let held = |j: PartyId| vec![j.0, next(j).0];
        // Component i is held with P_{i−1} (the `prev` key), component i + 1 with P_{i+1}.
        let op = self.ctx.next_op();
        let keys = [self.prg_prev(op, purpose::DIGEST_KEY), self.prg_next(op, purpose::DIGEST_KEY)];
        self.check_client_input(client, &held, &[&pair, &b], keys, |c| {
            format!("copies of component {c} of its input")
        })
        .await?;
        Ok(Rep3Vec::from_parts(self.me(), pair, b))
    }

    /// Checks that the parties received the same pieces of a client's input wherever the
    /// protocol sends a piece to more than one of them (1 round): `held(P_j)` lists the pieces
    /// P_j received, in the order of `mine` for this party; `what(piece)` names a piece in the
    /// error. Each party sends both others a domain-separated SHA-256 digest of each of its
    /// pieces, bound to the session, this operation's number, the client and the piece, and
    /// keyed with 32 bytes from `keys` (one stream per piece, from a key only the piece's
    /// holders know): all three then hold every digest, so all three reach the same verdict and
    /// none waits for a party that stopped, and the party that lacks a piece cannot test
    /// guesses of a low-entropy input against its digest. A difference is [`Error::PeerMisbehaved`] naming the client, with
    /// the two parties that received different values, and poisons the context.
    pub(crate) async fn check_client_input<R: Ring>(
        &mut self,
        client: PartyId,
        held: &dyn Fn(PartyId) -> Vec<u8>,
        mine: &[&[R]],
        keys: impl IntoIterator<Item = Prg>,
        what: impl Fn(u8) -> String,
    ) -> Result<(), Error> {
        let me = self.me();
        let op = self.ctx.next_op();
        let session = self.ctx.session();
        let digest = |piece: u8, values: &[R], mut key: Prg| -> [u8; 32] {
            let mut scratch = Vec::new();
            let mut k = [0u8; 32];
            key.fill_bytes(&mut k);
            Sha256::new()
                .chain_update(INPUT_DIGEST_DOMAIN)
                .chain_update(k)
                .chain_update(session.0)
                .chain_update(op.to_le_bytes())
                .chain_update([client.0, piece])
                .chain_update((values.len() as u64).to_le_bytes())
                .chain_update(R::wire_bytes(values, &mut scratch))
                .finalize()
                .into()
        };
        let own: Vec<[u8; 32]> = held(me)
            .into_iter()
            .zip(mine)
            .zip(keys)
            .map(|((piece, v), key)| digest(piece, v, key))
            .collect();
        let words: Vec<Z64> = own.iter().flat_map(digest_words).collect();
        self.ctx.round();
        let others = [next(me), prev(me)];
        for j in others {
            self.ctx.send(j, &words)?;
        }
        // (holder, piece, digest) for every piece every party received.
        let mut table: Vec<(PartyId, u8, [u8; 32])> =
            held(me).into_iter().zip(own).map(|(piece, d)| (me, piece, d)).collect();
        for j in others {
            let pieces = held(j);
            let theirs = self.ctx.recv::<Z64>(j, DIGEST_WORDS * pieces.len()).await?;
            for (piece, w) in pieces.into_iter().zip(theirs.chunks(DIGEST_WORDS)) {
                table.push((j, piece, words_digest(w)));
            }
        }
        table.sort_by_key(|&(j, piece, _)| (piece, j));
        for (a, b) in table.iter().zip(&table[1..]) {
            if a.1 == b.1 && a.2 != b.2 {
                let reason = format!("the client sent {} and {} different {}", a.0, b.0, what(a.1));
                return Err(self.ctx.poison(Error::PeerMisbehaved {
                    peer: client,
                    reason: FrameError::Inconsistent(reason),
                }));
            }
        }
        Ok(())
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
