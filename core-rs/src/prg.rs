//! The one PRG of ringfence: ChaCha with a reduced round count, keyed by a 256-bit [`Seed`].
//!
//! Correlated randomness must be bit-identical between a browser party (wasm32) and a native
//! party, so this is the only generator used for shared randomness on every target. ChaCha was
//! chosen by benchmark over AES-128-CTR and BLAKE3-XOF: wasm has no AES instructions, and ChaCha's
//! add-rotate-xor rounds map directly onto `simd128` (figures in `BENCHMARKS.md`).
//!
//! # Streams and draw order
//! A stream is addressed by `(seed, domain, stream)`: the 96-bit ChaCha nonce is
//! `domain (u64 LE) ‖ stream (u32 LE)` and the block counter starts at 0. Protocols take `domain`
//! from the context's operation counter (every party runs the same sequence of operations, so
//! they agree on it) and `stream` from a fixed per-purpose constant. A party that does not need a
//! stream simply does not open it; nothing can drift out of step. Within a stream, elements are
//! drawn in index order, each taking its width in bytes from the keystream, little-endian.

use core::fmt;

/// ChaCha double-round count: ChaCha12 (6 double rounds).
const DOUBLE_ROUNDS: usize = 6;
/// Blocks computed per refill; 4 parallel blocks let the compiler use 128-bit lanes (SSE, simd128).
const LANES: usize = 4;
const BUF_BYTES: usize = 64 * LANES;

/// A 256-bit PRG key. `Debug` never prints the key.
#[derive(Clone, PartialEq, Eq)]
pub struct Seed(pub(crate) [u8; 32]);

impl Seed {
    /// Wraps 32 bytes of key material (from a key agreement or an OS RNG at the edge).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// Derives an independent seed for a labelled purpose.
    pub fn derive(&self, label: u32) -> Self {
        let mut out = [0u8; 32];
        Prg::new(self, u64::MAX, label).fill_bytes(&mut out);
        Self(out)
    }

    /// Combines seeds contributed by several parties into one (order matters).
    pub fn combine(parts: &[Self]) -> Self {
        let mut acc = [0u8; 32];
        for (i, p) in parts.iter().enumerate() {
            let mut d = [0u8; 32];
            Prg::new(p, u64::MAX - 1, i as u32).fill_bytes(&mut d);
            for (a, b) in acc.iter_mut().zip(d) {
                *a ^= b;
            }
        }
        Self(acc)
    }
}

impl fmt::Debug for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Seed(<redacted>)")
    }
}

/// A ChaCha12 keystream positioned at `(seed, domain, stream)`. `Debug` is redacted.
#[derive(Clone)]
pub struct Prg {
    key: [u32; 8],
    nonce: [u32; 3],
    counter: u32,
    buf: [u8; BUF_BYTES],
    pos: usize,
}

impl fmt::Debug for Prg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Prg(<redacted>)")
    }
}

impl Prg {
    /// Opens the stream `(seed, domain, stream)` at its start.
    pub fn new(seed: &Seed, domain: u64, stream: u32) -> Self {
        let mut key = [0u32; 8];
        for (k, c) in key.iter_mut().zip(seed.0.chunks_exact(4)) {
            *k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        let nonce = [domain as u32, (domain >> 32) as u32, stream];
        Self { key, nonce, counter: 0, buf: [0; BUF_BYTES], pos: BUF_BYTES }
    }

    /// Fills `out` with the next `out.len()` keystream bytes.
    pub fn fill_bytes(&mut self, mut out: &mut [u8]) {
        if self.pos < BUF_BYTES {
            let n = out.len().min(BUF_BYTES - self.pos);
            out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
            self.pos += n;
            out = &mut out[n..];
        }
        while out.len() >= BUF_BYTES {
            let (head, rest) = out.split_at_mut(BUF_BYTES);
            self.blocks(head.try_into().expect("split at BUF_BYTES"));
            out = rest;
        }
        if !out.is_empty() {
            let mut buf = [0u8; BUF_BYTES];
            self.blocks(&mut buf);
            self.buf = buf;
            out.copy_from_slice(&self.buf[..out.len()]);
            self.pos = out.len();
        }
    }

    /// The next 8 keystream bytes as a little-endian u64.
    pub fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        u64::from_le_bytes(b)
    }

    /// The next 4 keystream bytes as a little-endian u32.
    pub fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.fill_bytes(&mut b);
        u32::from_le_bytes(b)
    }

    /// Computes `LANES` consecutive blocks into `out` and advances the counter.
    fn blocks(&mut self, out: &mut [u8; BUF_BYTES]) {
        chacha_blocks::<DOUBLE_ROUNDS>(&self.key, self.counter, &self.nonce, out);
        // 2^32 blocks (256 GiB) per stream is far beyond any single operation's draw.
        self.counter = self.counter.wrapping_add(LANES as u32);
    }
}

/// `LANES` ChaCha blocks with counters `ctr..ctr+LANES`, state held lane-major so each quarter
/// round is a 4-wide vector operation.
#[inline(always)]
fn chacha_blocks<const DR: usize>(
    key: &[u32; 8],
    ctr: u32,
    nonce: &[u32; 3],
    out: &mut [u8; BUF_BYTES],
) {
    const C: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];
    let mut init = [[0u32; LANES]; 16];
    for l in 0..LANES {
        init[0][l] = C[0];
        init[1][l] = C[1];
        init[2][l] = C[2];
        init[3][l] = C[3];
        for k in 0..8 {
            init[4 + k][l] = key[k];
        }
        init[12][l] = ctr.wrapping_add(l as u32);
        init[13][l] = nonce[0];
        init[14][l] = nonce[1];
        init[15][l] = nonce[2];
    }
    let mut x = init;
    for _ in 0..DR {
        qr(&mut x, 0, 4, 8, 12);
        qr(&mut x, 1, 5, 9, 13);
        qr(&mut x, 2, 6, 10, 14);
        qr(&mut x, 3, 7, 11, 15);
        qr(&mut x, 0, 5, 10, 15);
        qr(&mut x, 1, 6, 11, 12);
        qr(&mut x, 2, 7, 8, 13);
        qr(&mut x, 3, 4, 9, 14);
    }
    for l in 0..LANES {
        for w in 0..16 {
            let v = x[w][l].wrapping_add(init[w][l]);
            out[l * 64 + w * 4..l * 64 + w * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
}

#[inline(always)]
fn qr(x: &mut [[u32; LANES]; 16], a: usize, b: usize, c: usize, d: usize) {
    for l in 0..LANES {
        x[a][l] = x[a][l].wrapping_add(x[b][l]);
        x[d][l] = (x[d][l] ^ x[a][l]).rotate_left(16);
        x[c][l] = x[c][l].wrapping_add(x[d][l]);
        x[b][l] = (x[b][l] ^ x[c][l]).rotate_left(12);
        x[a][l] = x[a][l].wrapping_add(x[b][l]);
        x[d][l] = (x[d][l] ^ x[a][l]).rotate_left(8);
        x[c][l] = x[c][l].wrapping_add(x[d][l]);
        x[b][l] = (x[b][l] ^ x[c][l]).rotate_left(7);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8439 §2.3.2 block function test vector (20 rounds), checking our core against the
    /// standard before we use it with fewer rounds.
    #[test]
    fn chacha20_rfc8439_block() {
        let key: [u32; 8] = core::array::from_fn(|i| {
            let b = (4 * i) as u32;
            u32::from_le_bytes([b as u8, (b + 1) as u8, (b + 2) as u8, (b + 3) as u8])
        });
        let nonce = [0x0900_0000, 0x4a00_0000, 0];
        let mut out = [0u8; BUF_BYTES];
        chacha_blocks::<10>(&key, 1, &nonce, &mut out);
        let expect_first_words = [0xe4e7_f110u32, 0x1559_3bd1, 0x1fdd_0f50, 0xc471_20a3];
        for (i, w) in expect_first_words.iter().enumerate() {
            assert_eq!(u32::from_le_bytes(out[4 * i..4 * i + 4].try_into().unwrap()), *w);
        }
        let last = u32::from_le_bytes(out[60..64].try_into().unwrap());
        assert_eq!(last, 0x4e3c_50a2);
    }

    #[test]
    fn streams_are_reproducible_and_split_independent() {
        let s = Seed::from_bytes([7; 32]);
        let mut a = Prg::new(&s, 3, 1);
        let mut whole = vec![0u8; 1000];
        a.fill_bytes(&mut whole);
        let mut b = Prg::new(&s, 3, 1);
        let mut parts = vec![0u8; 1000];
        let (x, y) = parts.split_at_mut(37);
        b.fill_bytes(x);
        let (y1, y2) = y.split_at_mut(300);
        b.fill_bytes(y1);
        b.fill_bytes(y2);
        assert_eq!(whole, parts);
        let mut c = Prg::new(&s, 3, 2);
        assert_ne!(c.next_u64(), Prg::new(&s, 3, 1).next_u64());
    }

    #[test]
    fn seed_debug_is_redacted() {
        let s = Seed::from_bytes([0xab; 32]);
        let text = format!("{s:?} {:?}", Prg::new(&s, 0, 0));
        assert!(!text.contains("ab") && !text.contains("171"), "{text}");
    }
}
