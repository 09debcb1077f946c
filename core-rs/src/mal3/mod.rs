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
//! secret-dependent amount: every comparison of views is a MAC tag (`Tag`, Poly1305 under a
//! key P_i and P_{i+1} share) sent around the ring (P_i to P_{i+1}), values that were opened
//! are compared before any zero test uses them, and
//! every check ends with a verdict that all three parties exchange, so that the honest ones
//! stop together ([`Error::Abort`]) and release nothing. The one exception is inherent: a
//! cheater that lies only in its last verdict to one party makes that party abort while the
//! other keeps its (correct) output. This is security with abort; unanimous abort would need
//! agreement, which three parties with one cheater cannot reach without a broadcast channel.
//!
//! What is here: the validated triples over Z_2^32, Z_2^64 and bits, by Protocol 3.1 or on
//! demand by Protocol 3.9 ([`triples`]), the paper's bounds for their parameters
//! ([`bounds`]), the check of computed products against them and openings received from both
//! holders ([`check`]), the check of matrix products by Freivalds's test over a Galois ring
//! ([`matrix`]), the scheme's party [`Mal3`] with [`crate::sharing::Arith`]
//! ([`scheme`]), truncation pairs for fixed-point products ([`trunc`]),
//! [`crate::sharing::Boolean`] (checked ANDs, A2B and MSB without single-party inputs, checked
//! daBits: [`boolean`]), clients ([`client`]), and private inference through the uniform walk
//! ([`nn`]).

pub mod boolean;
pub mod bounds;
pub mod check;
pub mod client;
pub mod matrix;
pub mod nn;
pub mod scheme;
pub mod triples;
pub mod trunc;

pub use scheme::Mal3;

use crate::net::{PartyId, Transport};
use crate::rep3::Rep3;
use crate::ring::{Ring, Z64};
use crate::Error;

/// What a party saw in one check, as a Poly1305 tag under a one-time key it shares with the
/// party it compares with (the paper's §III-D: a MAC under pairwise keys instead of a
/// collision-resistant hash). A cheater that makes two honest parties' views differ chooses
/// the difference without knowing their key, so the tags agree with probability at most
/// `8⌈ℓ/16⌉ / 2^106` for views of ℓ bytes; the tags travel only between those two, on their
/// encrypted link. Poly1305 rather than the paper's GMAC: wasm has no carry-less multiply,
/// and a browser party must compute the same tags as a native one.
pub(crate) struct Tag {
    mac: poly1305::Poly1305,
    /// Bytes not yet a whole 16-byte block.
    tail: Vec<u8>,
}

impl Tag {
    /// A view of the check `label` of operation `op`, keyed from `key`'s stream (the pairwise
    /// seed both compared parties hold).
    fn new(label: &str, op: u64, key: impl FnOnce(u64, u32) -> crate::prg::Prg) -> Self {
        use poly1305::universal_hash::KeyInit;
        let mut k = [0u8; 32];
        key(op, Self::stream(label)).fill_bytes(&mut k);
        Self { mac: poly1305::Poly1305::new(&k.into()), tail: Vec::with_capacity(16) }
    }

    /// The key's PRG stream for `label`: one per label (its FNV-1a hash mixed in), so two
    /// checks of one operation never share a key.
    fn stream(label: &str) -> u32 {
        let fnv = |h: u32, b: u8| (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
        crate::rep3::purpose::VIEW_MAC ^ (label.bytes().fold(0x811c_9dc5, fnv) << 8)
    }

    /// The tag P_i sends P_{i+1} (the key of their pair).
    pub(crate) fn to_next<T: Transport>(p: &Rep3<T>, label: &str, op: u64) -> Self {
        Self::new(label, op, |op, s| p.prg_next(op, s))
    }

    /// The tag P_{i+1} expects from P_i.
    pub(crate) fn from_prev<T: Transport>(p: &Rep3<T>, label: &str, op: u64) -> Self {
        Self::new(label, op, |op, s| p.prg_prev(op, s))
    }

    /// Absorbs `v`, length first, in its wire form.
    pub(crate) fn absorb<R: Ring>(&mut self, v: &[R]) {
        use poly1305::universal_hash::UniversalHash;
        let mut scratch = Vec::new();
        let len = (v.len() as u64).to_le_bytes();
        for bytes in [&len[..], R::wire_bytes(v, &mut scratch)] {
            let mut rest = bytes;
            if !self.tail.is_empty() {
                let take = rest.len().min(16 - self.tail.len());
                self.tail.extend_from_slice(&rest[..take]);
                rest = &rest[take..];
                if self.tail.len() == 16 {
                    self.mac.update(&[poly1305::Block::clone_from_slice(&self.tail)]);
                    self.tail.clear();
                }
            }
            let whole = rest.len() / 16 * 16;
            // A kilobyte of blocks at a time from the stack (the backend takes four at once).
            let mut blocks = [poly1305::Block::default(); 64];
            for chunk in rest[..whole].chunks(16 * 64) {
                let k = chunk.len() / 16;
                for (b, c) in blocks.iter_mut().zip(chunk.chunks_exact(16)) {
                    b.copy_from_slice(c);
                }
                self.mac.update(&blocks[..k]);
            }
            self.tail.extend_from_slice(&rest[whole..]);
        }
    }

    /// The tag as two ring words, to travel in a frame.
    pub(crate) fn words(self) -> Vec<Z64> {
        use poly1305::universal_hash::UniversalHash;
        let mut mac = self.mac;
        mac.update_padded(&self.tail);
        let t = mac.finalize();
        t.chunks_exact(8).map(|c| Z64(u64::from_le_bytes(c.try_into().expect("8 bytes")))).collect()
    }
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
    let verdict = exchange_opened(p, what, op, opened).await?;
    settle(p, verdict).await
}

/// [`compare_opened`] without its verdicts: the tags are exchanged and this party's own
/// verdict on its opening is returned, for the caller to join to the next comparison's
/// (`ruling` of [`compare_and_rule`]), one round instead of two. Sound because a party sends
/// its next tag only after it has confirmed its opening with its previous neighbour's tag
/// ([`compare_and_rule`] sends no tag on a failed ruling): when the next neighbour cheats, the
/// previous one is honest, and an honest pair that agrees holds the true values (each received
/// its missing component from a different party, one of them honest), so nothing computed from
/// a wrong opening reaches the cheater.
pub(crate) async fn exchange_opened<R: Ring, T: Transport>(
    p: &mut Rep3<T>,
    what: &str,
    op: u64,
    opened: &[R],
) -> Result<Result<(), Error>, Error> {
    let (mut mine, mut expected) = (Tag::to_next(p, what, op), Tag::from_prev(p, what, op));
    mine.absorb(opened);
    expected.absorb(opened);
    exchange_tags(p, &mine.words(), expected, what).await
}

/// Sends `sent` (a tag, or zeros) to the next party and returns this party's verdict on the
/// previous party's tag against `expected`. One round.
async fn exchange_tags<T: Transport>(
    p: &mut Rep3<T>,
    sent: &[Z64],
    expected: Tag,
    what: &str,
) -> Result<Result<(), Error>, Error> {
    let me = p.me();
    let ctx = p.ctx_mut();
    ctx.round();
    ctx.send(crate::rep3::next(me), sent)?;
    let got = ctx.recv::<Z64>(crate::rep3::prev(me), 2).await?;
    Ok(if got == expected.words() {
        Ok(())
    } else {
        Err(Error::Abort {
            blame: None,
            reason: format!("{what}: {me}'s view differs from {}'s", crate::rep3::prev(me)),
        })
    })
}

/// P_i sends its tag `mine` to P_{i+1}, which compares it with `expected` (its own tag of what
/// P_i's view should be), with this party's own `ruling` on another check joined to the
/// verdict; then every party learns every verdict. Two rounds. A party
/// whose ruling already failed sends zeros in place of its tag: its view may rest on an opening
/// it could not confirm, and a tag of it is not for a possibly cheating neighbour.
pub(crate) async fn compare_and_rule<T: Transport>(
    p: &mut Rep3<T>,
    mine: Tag,
    expected: Tag,
    what: &str,
    ruling: Result<(), Error>,
) -> Result<(), Error> {
    let sent = match ruling {
        Ok(()) => mine.words(),
        Err(_) => vec![Z64(0); 2],
    };
    let verdict = exchange_tags(p, &sent, expected, what).await?;
    settle(p, ruling.and(verdict)).await
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

#[cfg(test)]
mod tests {
    use super::Tag;
    use crate::prg::{Prg, Seed};
    use crate::ring::{Z32, Z64};
    use poly1305::universal_hash::{KeyInit, UniversalHash};

    fn key(op: u64, stream: u32) -> Prg {
        Prg::new(&Seed::from_bytes([3; 32]), op, stream)
    }

    /// The tag of absorbed vectors is Poly1305 over their length-prefixed wire bytes in one
    /// stream (the final partial block zero-padded), whatever the vectors' lengths do to the
    /// block boundaries; and any changed byte of any vector changes it.
    #[test]
    fn tags_are_poly1305_of_the_length_prefixed_stream_and_see_every_byte() {
        let mut prg = key(0, 0);
        for lens in [&[0usize][..], &[1], &[3, 5], &[2, 0, 7, 1], &[300, 1, 9], &[129, 64, 3]] {
            let vecs: Vec<Vec<Z32>> =
                lens.iter().map(|&n| (0..n).map(|_| Z32(prg.next_u32())).collect()).collect();
            let tag = |vecs: &[Vec<Z32>]| {
                let mut t = Tag::new("test", 7, key);
                vecs.iter().for_each(|v| t.absorb(v));
                t.words()
            };
            let mut stream = Vec::new();
            for v in &vecs {
                stream.extend((v.len() as u64).to_le_bytes());
                v.iter().for_each(|w| stream.extend(w.0.to_le_bytes()));
            }
            let mut k = [0u8; 32];
            key(7, Tag::stream("test")).fill_bytes(&mut k);
            let mut reference = poly1305::Poly1305::new(&k.into());
            reference.update_padded(&stream);
            let want: Vec<Z64> = reference
                .finalize()
                .chunks_exact(8)
                .map(|c| Z64(u64::from_le_bytes(c.try_into().unwrap())))
                .collect();
            assert_eq!(tag(&vecs), want, "{lens:?}");
            for (i, v) in vecs.iter().enumerate() {
                for j in 0..v.len() {
                    let mut changed = vecs.clone();
                    changed[i][j] = Z32(changed[i][j].0 ^ (1 << (j % 32)));
                    assert_ne!(tag(&changed), want, "{lens:?}: vector {i}, word {j}");
                }
            }
        }
    }

    /// Each check label and operation has its own key.
    #[test]
    fn labels_and_operations_key_their_own_tags() {
        let tag = |label: &str, op: u64| {
            let mut t = Tag::new(label, op, key);
            t.absorb(&[Z64(1), Z64(2)]);
            t.words()
        };
        assert_eq!(tag("zero", 1), tag("zero", 1));
        assert_ne!(tag("zero", 1), tag("opened values", 1));
        assert_ne!(tag("zero", 1), tag("zero", 2));
    }
}
