//! Portable ChaCha, `L` blocks in parallel, written as whole-array operations so LLVM's SLP
//! vectoriser sees `L`-wide adds/xors/rotates. Generic over double rounds `DR`.

#[inline(always)]
fn add<const L: usize>(a: [u32; L], b: [u32; L]) -> [u32; L] {
    core::array::from_fn(|i| a[i].wrapping_add(b[i]))
}
#[inline(always)]
fn xor_rot<const L: usize, const R: u32>(a: [u32; L], b: [u32; L]) -> [u32; L] {
    core::array::from_fn(|i| (a[i] ^ b[i]).rotate_left(R))
}

#[inline(always)]
fn qr<const L: usize>(x: &mut [[u32; L]; 16], a: usize, b: usize, c: usize, d: usize) {
    x[a] = add(x[a], x[b]);
    x[d] = xor_rot::<L, 16>(x[d], x[a]);
    x[c] = add(x[c], x[d]);
    x[b] = xor_rot::<L, 12>(x[b], x[c]);
    x[a] = add(x[a], x[b]);
    x[d] = xor_rot::<L, 8>(x[d], x[a]);
    x[c] = add(x[c], x[d]);
    x[b] = xor_rot::<L, 7>(x[b], x[c]);
}

/// `L` blocks with counters `ctr..ctr+L` into `out` (`64 * L` bytes).
#[inline(always)]
pub fn chacha_blocks<const L: usize, const DR: usize>(
    key: &[u32; 8],
    ctr: u32,
    nonce: &[u32; 3],
    out: &mut [u8],
) {
    const C: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];
    let words: [u32; 16] = [
        C[0], C[1], C[2], C[3], key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7], 0,
        nonce[0], nonce[1], nonce[2],
    ];
    let mut init = [[0u32; L]; 16];
    for w in 0..16 {
        init[w] = [words[w]; L];
    }
    init[12] = core::array::from_fn(|l| ctr.wrapping_add(l as u32));
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
    for w in 0..16 {
        x[w] = add(x[w], init[w]);
    }
    let out = &mut out[..64 * L];
    for (l, blk) in out.chunks_exact_mut(64).enumerate() {
        for (w, o) in blk.chunks_exact_mut(4).enumerate() {
            o.copy_from_slice(&x[w][l].to_le_bytes());
        }
    }
}
