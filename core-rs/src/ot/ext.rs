//! Correlated OT extension: IKNP (Ishai, Kilian, Nissim, Petrank, CRYPTO 2003) from 128 base
//! OTs per direction of a link, with the consistency check of Keller, Orsini and Scholl
//! (CRYPTO 2015) against a receiver that uses different choice bits in different columns.
//!
//! After one extension of `m` OTs with choice bits `r`, the sender (who holds the correlation
//! `Δ ∈ {0,1}^128`) has rows `q_j` and the receiver rows `t_j = q_j ⊕ r_j·Δ`. Hashing them
//! with a correlation-robust hash ([`Tccr`]) gives random OTs: the sender's
//! `H(j, q_j)`, `H(j, q_j ⊕ Δ)`, the receiver's `H(j, t_j)`, the one of its choice.
//!
//! The check: the receiver extends `m + 192` OTs (the extra ones with random choices, which
//! mask it), the sender then sends a seed for `χ_j ∈ GF(2^128)`, the receiver answers
//! `x = Σ χ_j·r_j` and `t = Σ χ_j·t_j`, and the sender checks `Σ χ_j·q_j = t + x·Δ`. A receiver
//! whose columns disagree passes with probability about `2^−κ` for every bit of `Δ` it does not
//! guess (the extract of KOS: at most a few bits of `Δ` leak, with a matching chance of
//! abort). Three rounds per extension, for every peer at once.

use aes::cipher::{BlockEncrypt, KeyInit};
use aes::Aes128;

use super::{gf128, BaseOts};
use crate::net::{Ctx, PartyId, Transport};
use crate::prg::{Prg, Seed};
use crate::ring::Z64;
use crate::Error;

/// Base OTs per direction of a link (the computational security parameter).
pub const KAPPA: usize = 128;

/// Extra OTs that mask the consistency check (κ + 64 statistical bits).
const CHECK_EXTRA: usize = KAPPA + 64;

/// The correlation-robust hash `H(i, x) = π(π(x) ⊕ i) ⊕ π(x)` with `π` AES-128 under a fixed
/// public key (Guo, Katz, Wang, Yu: "Efficient and Secure Multiparty Computation from
/// Fixed-Key Block Ciphers", S&P 2020, the TCCR construction).
pub struct Tccr(Aes128);

impl Default for Tccr {
    fn default() -> Self {
        Self(Aes128::new(&(*b"ringfence tccr k").into()))
    }
}

impl Tccr {
    fn pi(&self, x: u128) -> u128 {
        let mut b = x.to_le_bytes().into();
        self.0.encrypt_block(&mut b);
        u128::from_le_bytes(b.into())
    }

    /// `H(i, x)`.
    pub fn hash(&self, i: u128, x: u128) -> u128 {
        let p = self.pi(x);
        self.pi(p ^ i) ^ p
    }

    /// `H(tweak(j), xs[j] ⊕ flip)` for every `j`, in order, to `emit` (a sender's two messages
    /// are the hashes of `q_j` and `q_j ⊕ Δ`), the block cipher run over many blocks at once
    /// (AES instructions pipeline several blocks) in a buffer on the stack.
    pub fn hash_each(
        &self,
        tweak: impl Fn(usize) -> u128,
        xs: &[u128],
        flip: u128,
        mut emit: impl FnMut(u128),
    ) {
        use aes::Block;
        const N: usize = 64;
        let (mut blocks, mut pis) = ([Block::default(); N], [0u128; N]);
        for (c, chunk) in xs.chunks(N).enumerate() {
            let blocks = &mut blocks[..chunk.len()];
            for (b, x) in blocks.iter_mut().zip(chunk) {
                *b = Block::from((x ^ flip).to_le_bytes());
            }
            self.0.encrypt_blocks(blocks);
            for (j, (b, p)) in blocks.iter_mut().zip(&mut pis).enumerate() {
                *p = u128::from_le_bytes((*b).into());
                *b = Block::from((*p ^ tweak(c * N + j)).to_le_bytes());
            }
            self.0.encrypt_blocks(blocks);
            for (b, p) in blocks.iter().zip(&pis) {
                emit(u128::from_le_bytes((*b).into()) ^ p);
            }
        }
    }

    /// [`Tccr::hash_each`] collected.
    pub fn hash_all(&self, tweak: impl Fn(usize) -> u128, xs: &[u128], flip: u128) -> Vec<u128> {
        let mut out = Vec::with_capacity(xs.len());
        self.hash_each(tweak, xs, flip, |h| out.push(h));
        out
    }
}

/// One party's correlated-OT state with every peer: its `Δ` as the sender, and the base OTs'
/// keys in both roles.
pub struct Cot {
    delta: u128,
    /// Per peer (by party index; `None` for itself): as the sender, the keys of its choices `Δ`.
    as_sender: Vec<Option<Vec<Seed>>>,
    /// Per peer: as the receiver, both keys of each of the peer's base OTs.
    as_receiver: Vec<Option<Vec<[Seed; 2]>>>,
    batches: u64,
}

impl core::fmt::Debug for Cot {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Cot({} batches)", self.batches)
    }
}

/// One extension's rows, per peer (by party index; empty for this party).
#[derive(Debug)]
pub struct Extended {
    /// As the receiver: `t_j = q_j ⊕ r_j·Δ_peer`.
    pub received: Vec<Vec<u128>>,
    /// As the sender: `q_j`.
    pub sent: Vec<Vec<u128>>,
}

/// `m` bits of choice as 64-bit words.
fn words_of(bits: &[bool], words: usize) -> Vec<u64> {
    let mut w = vec![0u64; words];
    for (j, &b) in bits.iter().enumerate() {
        w[j / 64] |= u64::from(b) << (j % 64);
    }
    w
}

/// Fills `out` with the PRG expansion of a base-OT key for this batch.
fn expand(seed: &Seed, batch: u64, out: &mut [u64]) {
    Prg::new(seed, batch, 0x1c).fill_bytes(bytemuck::cast_slice_mut(out));
}

/// Transposes 128 columns of `64·w` bits (column `l` at `cols[l·w..(l + 1)·w]`) into `64·w`
/// rows of 128 bits.
fn transpose(cols: &[u64], w: usize) -> Vec<u128> {
    let mut rows = Vec::with_capacity(64 * w);
    // A cache line of every column at a time: the columns lie a multiple of 4 KiB apart
    // (w·8 bytes), so reading them a word at a time would evict each other's lines from L1.
    let mut lines = [[0u64; 8]; KAPPA];
    let mut block = [[0u64; 2]; 64];
    for w0 in (0..w).step_by(8) {
        let ws = (w - w0).min(8);
        for (l, line) in lines.iter_mut().enumerate() {
            let at = l * w + w0;
            // A whole line as one fixed-size copy (two vector loads, no call to memcpy).
            match cols.get(at..at + 8) {
                Some(full) if ws == 8 => *line = full.try_into().expect("eight words"),
                _ => line[..ws].copy_from_slice(&cols[at..at + ws]),
            }
        }
        for dw in 0..ws {
            let (lo, hi) = lines.split_at(64);
            for (b, (lo, hi)) in block.iter_mut().zip(lo.iter().zip(hi)) {
                *b = [lo[dw], hi[dw]];
            }
            transpose64x2(&mut block);
            rows.extend(block.iter().map(|&[lo, hi]| u128::from(lo) | u128::from(hi) << 64));
        }
    }
    rows
}

/// Two 64×64 bit transposes in lockstep (the compiler runs the lanes as one vector), in
/// place: bit `c` of `a[r][h]` becomes bit `r` of `a[c][h]`.
fn transpose64x2(a: &mut [[u64; 2]; 64]) {
    let mut j = 32;
    let mut m: u64 = 0x0000_0000_FFFF_FFFF;
    while j != 0 {
        let mut k = 0;
        while k < 64 {
            let (x, y) = (a[k], a[k + j]);
            let t = [(x[0] >> j ^ y[0]) & m, (x[1] >> j ^ y[1]) & m];
            a[k] = [x[0] ^ t[0] << j, x[1] ^ t[1] << j];
            a[k + j] = [y[0] ^ t[0], y[1] ^ t[1]];
            k = (k + j + 1) & !j;
        }
        j >>= 1;
        m ^= m << j;
    }
}

impl Cot {
    /// The state from base OTs with each peer: this party received (at least) [`KAPPA`] OTs
    /// choosing the bits of `delta`, first in `received`, and sent [`KAPPA`], first in `sent`.
    pub fn new(
        delta: u128,
        me: PartyId,
        bases: &[(PartyId, &BaseOts)],
        n: usize,
    ) -> Result<Self, Error> {
        let mut as_sender = vec![None; n];
        let mut as_receiver = vec![None; n];
        for &(peer, ots) in bases {
            if peer == me
                || peer.index() >= n
                || ots.received.len() < KAPPA
                || ots.sent.len() < KAPPA
            {
                return Err(Error::ApiMisuse(format!(
                    "OT extension: base OTs with {peer} ({ots:?}) for {me} among {n}"
                )));
            }
            as_sender[peer.index()] = Some(ots.received[..KAPPA].to_vec());
            as_receiver[peer.index()] = Some(ots.sent[..KAPPA].to_vec());
        }
        Ok(Self { delta, as_sender, as_receiver, batches: 0 })
    }

    /// This party's correlation as the sender.
    pub fn delta(&self) -> u128 {
        self.delta
    }

    /// Extends `choices.len()` correlated OTs with every peer in both roles: this party
    /// receives with `choices` (the same with every peer) and sends with its `Δ`. Three rounds.
    /// A receiver that fails the consistency check is blamed in an [`Error::Abort`].
    pub async fn extend<T: Transport>(
        &mut self,
        ctx: &mut Ctx<T>,
        own: &mut Prg,
        choices: &[bool],
    ) -> Result<Extended, Error> {
        let me = ctx.me();
        let n = self.as_sender.len();
        let peers: Vec<PartyId> = (0..n).map(|i| PartyId(i as u8)).filter(|&p| p != me).collect();
        self.batches += 1;
        let batch = self.batches;
        let total = choices.len() + CHECK_EXTRA;
        let w = total.div_ceil(64);
        let mut mine = choices.to_vec();
        mine.extend(own.bits(w * 64 - choices.len()));
        let r = words_of(&mine, w);

        // Round 1: u^l = t^l ⊕ g^l ⊕ r to every peer (as the receiver).
        ctx.round();
        let mut t_cols: Vec<Vec<u64>> = vec![Vec::new(); n];
        let mut g = vec![0u64; w];
        for &peer in &peers {
            let keys = self.as_receiver[peer.index()].as_ref().ok_or_else(|| missing(peer))?;
            let t = &mut t_cols[peer.index()];
            t.resize(KAPPA * w, 0);
            let mut u = Vec::with_capacity(KAPPA * w);
            for ([k0, k1], t) in keys.iter().zip(t.chunks_exact_mut(w)) {
                expand(k0, batch, t);
                expand(k1, batch, &mut g);
                u.extend(t.iter().zip(&g).zip(&r).map(|((t, g), r)| Z64(t ^ g ^ r)));
            }
            ctx.send(peer, &u)?;
        }
        let mut q_rows: Vec<Vec<u128>> = vec![Vec::new(); n];
        let mut q = vec![0u64; KAPPA * w];
        for &peer in &peers {
            let u = ctx.recv::<Z64>(peer, KAPPA * w).await?;
            let keys = self.as_sender[peer.index()].as_ref().ok_or_else(|| missing(peer))?;
            for (l, ((k, q), u)) in
                keys.iter().zip(q.chunks_exact_mut(w)).zip(u.chunks_exact(w)).enumerate()
            {
                expand(k, batch, q);
                if self.delta >> l & 1 == 1 {
                    q.iter_mut().zip(u).for_each(|(q, u)| *q ^= u.0);
                }
            }
            q_rows[peer.index()] = transpose(&q, w);
        }
        let t_rows: Vec<Vec<u128>> = t_cols
            .iter()
            .map(|c| if c.is_empty() { Vec::new() } else { transpose(c, w) })
            .collect();
        drop(t_cols);

        // Round 2: the sender's challenge seed.
        ctx.round();
        let mut challenges = vec![[0u8; 32]; n];
        for &peer in &peers {
            own.fill_bytes(&mut challenges[peer.index()]);
            ctx.send(peer, &crate::net::digest_words(&challenges[peer.index()]))?;
        }
        let mut answers = Vec::with_capacity(peers.len());
        for &peer in &peers {
            let seed = Seed::from_bytes(crate::net::words_digest(&ctx.recv::<Z64>(peer, 4).await?));
            let (mut x, mut t) = (0u128, 0u128);
            challenge(&seed, batch, &t_rows[peer.index()][..total], |at, chi, rows| {
                x = chi
                    .iter()
                    .zip(&mine[at..])
                    .fold(x, |x, (&c, &b)| x ^ (c & 0u128.wrapping_sub(u128::from(b))));
                t ^= gf128::dot(chi, rows);
            });
            answers.push((peer, x, t));
        }

        // Round 3: the receiver's answer; the sender checks it.
        ctx.round();
        for &(peer, x, t) in &answers {
            ctx.send(peer, &[x, t].map(|v| [Z64(v as u64), Z64((v >> 64) as u64)]).concat())?;
        }
        for &peer in &peers {
            let a = ctx.recv::<Z64>(peer, 4).await?;
            let x = u128::from(a[0].0) | u128::from(a[1].0) << 64;
            let t = u128::from(a[2].0) | u128::from(a[3].0) << 64;
            let seed = Seed::from_bytes(challenges[peer.index()]);
            let mut q = 0u128;
            challenge(&seed, batch, &q_rows[peer.index()][..total], |_, chi, rows| {
                q ^= gf128::dot(chi, rows);
            });
            if q != t ^ gf128::mul(x, self.delta) {
                return Err(Error::Abort {
                    blame: Some(peer),
                    reason: format!("{peer} failed the OT extension's consistency check"),
                });
            }
        }
        let cut = |rows: Vec<Vec<u128>>| -> Vec<Vec<u128>> {
            rows.into_iter()
                .map(|mut r| {
                    r.truncate(choices.len());
                    r
                })
                .collect()
        };
        Ok(Extended { received: cut(t_rows), sent: cut(q_rows) })
    }
}

/// The check's coefficients `χ_j` for `rows`, drawn a chunk at a time (in cache, never a
/// batch-sized vector): `f(at, χ[at..at + c], rows[at..at + c])` per chunk, in order.
fn challenge(seed: &Seed, batch: u64, rows: &[u128], mut f: impl FnMut(usize, &[u128], &[u128])) {
    const CHUNK: usize = 1024;
    let mut prg = Prg::new(seed, batch, 0x1d);
    let mut chi = [0u128; CHUNK];
    for (i, rows) in rows.chunks(CHUNK).enumerate() {
        let chi = &mut chi[..rows.len()];
        prg.fill_bytes(bytemuck::cast_slice_mut(chi));
        f(i * CHUNK, chi, rows);
    }
}

fn missing(peer: PartyId) -> Error {
    Error::ApiMisuse(format!("OT extension with {peer}: no base OTs with it"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_swaps_rows_and_columns() {
        let mut prg = Prg::new(&Seed::from_bytes([3; 32]), 0, 0);
        // 11 words: one full line of 8 and a partial one.
        let w = 11;
        let cols: Vec<u64> = (0..KAPPA * w).map(|_| prg.next_u64()).collect();
        let rows = transpose(&cols, w);
        assert_eq!(rows.len(), 64 * w);
        for (j, row) in rows.iter().enumerate() {
            for l in 0..KAPPA {
                assert_eq!(
                    row >> l & 1,
                    u128::from(cols[l * w + j / 64] >> (j % 64) & 1),
                    "({j}, {l})"
                );
            }
        }
    }
}
