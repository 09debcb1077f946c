//! Verbatim copy of the block function of `core-rs/src/prg.rs` as it was before tuning
//! (4 lanes, portable), generic over the double-round count. Used as the "before" baseline and
//! for ChaCha8/20 at the same code quality.

pub const LANES: usize = 4;
pub const BUF_BYTES: usize = 64 * LANES;

#[inline(always)]
pub fn chacha_blocks<const DR: usize>(
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

/// The pre-tuning `Prg` (same buffering logic as prg.rs), generic over double rounds.
#[derive(Clone)]
pub struct Prg<const DR: usize> {
    key: [u32; 8],
    nonce: [u32; 3],
    counter: u32,
    buf: [u8; BUF_BYTES],
    pos: usize,
}

impl<const DR: usize> Prg<DR> {
    pub fn new(seed: &[u8; 32], domain: u64, stream: u32) -> Self {
        let mut key = [0u32; 8];
        for (k, c) in key.iter_mut().zip(seed.chunks_exact(4)) {
            *k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        let nonce = [domain as u32, (domain >> 32) as u32, stream];
        Self { key, nonce, counter: 0, buf: [0; BUF_BYTES], pos: BUF_BYTES }
    }

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

    fn blocks(&mut self, out: &mut [u8; BUF_BYTES]) {
        chacha_blocks::<DR>(&self.key, self.counter, &self.nonce, out);
        self.counter = self.counter.wrapping_add(LANES as u32);
    }
}
