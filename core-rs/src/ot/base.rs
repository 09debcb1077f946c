//! Base OTs: the 1-out-of-2 OT of Masny and Rindal ("Endemic Oblivious Transfer", CCS 2019)
//! on the Ristretto group of Curve25519, many at once and in both directions of a link in one
//! round.
//!
//! For a choice `b`, the receiver draws `r_{1−b}` uniformly from the group and a scalar `y`,
//! and sends `(r_0, r_1)` with `r_b = y·G − H(r_{1−b})`; the sender sends `X = x·G` once per
//! batch. The sender's keys are `KDF(x·(r_i + H(r_{1−i})))` for `i = 0, 1`, the receiver's
//! `KDF(y·X)`, which equals the sender's key `b` because `r_b + H(r_{1−b}) = y·G`. The pair
//! `(r_0, r_1)` is a uniform pair whatever `b` is, so the sender learns nothing of `b`; the
//! receiver knows the discrete log of at most one of `r_i + H(r_{1−i})` (H is a random oracle
//! onto the group), so it learns at most one key. The KDF binds the batch's tag, both parties'
//! ids, the index and every point of the OT.

use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use sha2::{Digest as _, Sha256, Sha512};

use crate::net::{Ctx, PartyId, Transport};
use crate::prg::{Prg, Seed};
use crate::ring::Z64;
use crate::Error;

/// Words of a compressed point on the wire.
const POINT_WORDS: usize = 4;

/// The result of base OTs with one peer.
pub struct BaseOts {
    /// As the sender: both keys of each OT the peer received.
    pub sent: Vec<[Seed; 2]>,
    /// As the receiver: the chosen key of each OT this party received.
    pub received: Vec<Seed>,
}

impl core::fmt::Debug for BaseOts {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "BaseOts({} sent, {} received)", self.sent.len(), self.received.len())
    }
}

/// Hash onto the group (the random oracle `H`).
fn hash_to_group(p: &CompressedRistretto) -> RistrettoPoint {
    let mut h = Sha512::new();
    h.update(b"ringfence mr19 H\0");
    h.update(p.as_bytes());
    RistrettoPoint::from_uniform_bytes(&h.finalize().into())
}

/// The key of OT `index` of batch `tag` from `sender` to `receiver` with points `r`, `x` and
/// the shared point `k`.
fn kdf(
    tag: u64,
    (sender, receiver): (PartyId, PartyId),
    index: usize,
    r: &[CompressedRistretto; 2],
    x: &CompressedRistretto,
    k: &RistrettoPoint,
) -> Seed {
    let mut h = Sha256::new();
    h.update(b"ringfence mr19 kdf\0");
    h.update(tag.to_le_bytes());
    h.update([sender.0, receiver.0]);
    h.update((index as u64).to_le_bytes());
    h.update(r[0].as_bytes());
    h.update(r[1].as_bytes());
    h.update(x.as_bytes());
    h.update(k.compress().as_bytes());
    Seed::from_bytes(h.finalize().into())
}

fn scalar(own: &mut Prg) -> Scalar {
    let mut b = [0u8; 64];
    own.fill_bytes(&mut b);
    Scalar::from_bytes_mod_order_wide(&b)
}

fn point_words(p: &CompressedRistretto, out: &mut Vec<Z64>) {
    out.extend(
        p.as_bytes()
            .chunks_exact(8)
            .map(|c| Z64(u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))),
    );
}

fn words_point(w: &[Z64]) -> CompressedRistretto {
    let mut b = [0u8; 32];
    for (chunk, word) in b.chunks_exact_mut(8).zip(w) {
        chunk.copy_from_slice(&word.0.to_le_bytes());
    }
    CompressedRistretto(b)
}

/// Runs base OTs with every peer at once, in one round: this party receives one OT per
/// element of `choices` from each peer (choosing the same bits with every peer) and sends
/// `count(peer)` OTs to each. `tag` names the batch (every party passes the same). `own` is
/// this party's private randomness.
///
/// A point that is not a valid encoding of a group element is a deviation:
/// [`Error::Abort`] blaming its sender.
pub async fn exchange<T: Transport>(
    ctx: &mut Ctx<T>,
    own: &mut Prg,
    peers: &[PartyId],
    choices: &[bool],
    count: impl Fn(PartyId) -> usize,
    tag: u64,
) -> Result<Vec<BaseOts>, Error> {
    let me = ctx.me();
    let x = scalar(own);
    let big_x = RistrettoPoint::mul_base(&x).compress();
    // One receiver message per peer: fresh points for every OT.
    let mut receiving = Vec::with_capacity(peers.len());
    ctx.round();
    for &peer in peers {
        let mut words = Vec::with_capacity(POINT_WORDS * (1 + 2 * choices.len()));
        point_words(&big_x, &mut words);
        let mut mine = Vec::with_capacity(choices.len());
        for &b in choices {
            let mut bytes = [0u8; 64];
            own.fill_bytes(&mut bytes);
            let other = RistrettoPoint::from_uniform_bytes(&bytes).compress();
            let y = scalar(own);
            let chosen = (RistrettoPoint::mul_base(&y) - hash_to_group(&other)).compress();
            let r = if b { [other, chosen] } else { [chosen, other] };
            point_words(&r[0], &mut words);
            point_words(&r[1], &mut words);
            mine.push((r, y));
        }
        ctx.send(peer, &words)?;
        receiving.push(mine);
    }
    let mut out = Vec::with_capacity(peers.len());
    for (&peer, mine) in peers.iter().zip(receiving) {
        let n = count(peer);
        let words = ctx.recv::<Z64>(peer, POINT_WORDS * (1 + 2 * n)).await?;
        let bad = || Error::Abort {
            blame: Some(peer),
            reason: format!("{peer} sent a base-OT point that is not a group element"),
        };
        let their_x_c = words_point(&words[..POINT_WORDS]);
        let their_x = their_x_c.decompress().ok_or_else(bad)?;
        let mut sent = Vec::with_capacity(n);
        for (i, pair) in words[POINT_WORDS..].chunks_exact(2 * POINT_WORDS).enumerate() {
            let r = [words_point(&pair[..POINT_WORDS]), words_point(&pair[POINT_WORDS..])];
            let p0 = r[0].decompress().ok_or_else(bad)?;
            let p1 = r[1].decompress().ok_or_else(bad)?;
            let k0 = x * (p0 + hash_to_group(&r[1]));
            let k1 = x * (p1 + hash_to_group(&r[0]));
            sent.push([
                kdf(tag, (me, peer), i, &r, &big_x, &k0),
                kdf(tag, (me, peer), i, &r, &big_x, &k1),
            ]);
        }
        let received = mine
            .iter()
            .enumerate()
            .map(|(i, (r, y))| kdf(tag, (peer, me), i, r, &their_x_c, &(y * their_x)))
            .collect();
        out.push(BaseOts { sent, received });
    }
    Ok(out)
}
