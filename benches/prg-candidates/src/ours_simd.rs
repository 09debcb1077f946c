//! ChaCha with explicit wasm32 `simd128` intrinsics: 4 blocks, state held lane-major in 16
//! `v128`s (one word of 4 blocks each), rotations by 16/8 as byte shuffles, output transposed
//! with 32/64-bit shuffles. No `unsafe`.
#![forbid(unsafe_code)]
use core::arch::wasm32::*;

#[inline(always)]
fn rotl16(v: v128) -> v128 {
    i8x16_shuffle::<2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13>(v, v)
}
#[inline(always)]
fn rotl8(v: v128) -> v128 {
    i8x16_shuffle::<3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14>(v, v)
}
#[inline(always)]
fn rotl<const L: u32, const R: u32>(v: v128) -> v128 {
    v128_or(u32x4_shl(v, L), u32x4_shr(v, R))
}

#[inline(always)]
fn qr(x: &mut [v128; 16], a: usize, b: usize, c: usize, d: usize) {
    qr_g::<true>(x, a, b, c, d)
}
#[inline(always)]
fn qr_g<const SHUF: bool>(x: &mut [v128; 16], a: usize, b: usize, c: usize, d: usize) {
    x[a] = u32x4_add(x[a], x[b]);
    x[d] = if SHUF { rotl16(v128_xor(x[d], x[a])) } else { rotl::<16, 16>(v128_xor(x[d], x[a])) };
    x[c] = u32x4_add(x[c], x[d]);
    x[b] = rotl::<12, 20>(v128_xor(x[b], x[c]));
    x[a] = u32x4_add(x[a], x[b]);
    x[d] = if SHUF { rotl8(v128_xor(x[d], x[a])) } else { rotl::<8, 24>(v128_xor(x[d], x[a])) };
    x[c] = u32x4_add(x[c], x[d]);
    x[b] = rotl::<7, 25>(v128_xor(x[b], x[c]));
}

#[inline(always)]
pub fn chacha_blocks<const DR: usize>(
    key: &[u32; 8],
    ctr: u32,
    nonce: &[u32; 3],
    out: &mut [u8; 256],
) {
    chacha_blocks_g::<DR, true>(key, ctr, nonce, out)
}

#[inline(always)]
pub fn chacha_blocks_g<const DR: usize, const SHUF: bool>(
    key: &[u32; 8],
    ctr: u32,
    nonce: &[u32; 3],
    out: &mut [u8; 256],
) {
    const C: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];
    let words: [u32; 16] = [
        C[0], C[1], C[2], C[3], key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7], 0,
        nonce[0], nonce[1], nonce[2],
    ];
    let mut init: [v128; 16] = core::array::from_fn(|w| u32x4_splat(words[w]));
    init[12] = u32x4_add(u32x4_splat(ctr), u32x4(0, 1, 2, 3));
    let mut x = init;
    for _ in 0..DR {
        qr_g::<SHUF>(&mut x, 0, 4, 8, 12);
        qr_g::<SHUF>(&mut x, 1, 5, 9, 13);
        qr_g::<SHUF>(&mut x, 2, 6, 10, 14);
        qr_g::<SHUF>(&mut x, 3, 7, 11, 15);
        qr_g::<SHUF>(&mut x, 0, 5, 10, 15);
        qr_g::<SHUF>(&mut x, 1, 6, 11, 12);
        qr_g::<SHUF>(&mut x, 2, 7, 8, 13);
        qr_g::<SHUF>(&mut x, 3, 4, 9, 14);
    }
    store(&x, &init, out);
}

#[inline(always)]
fn store(x: &[v128; 16], init: &[v128; 16], out: &mut [u8]) {
    for g in 0..4 {
        let [a, b, c, d] = [0, 1, 2, 3].map(|i| u32x4_add(x[4 * g + i], init[4 * g + i]));
        // 4x4 transpose: row l = words 4g..4g+4 of block l.
        let t0 = u32x4_shuffle::<0, 4, 1, 5>(a, b);
        let t1 = u32x4_shuffle::<0, 4, 1, 5>(c, d);
        let t2 = u32x4_shuffle::<2, 6, 3, 7>(a, b);
        let t3 = u32x4_shuffle::<2, 6, 3, 7>(c, d);
        let rows = [
            u64x2_shuffle::<0, 2>(t0, t1),
            u64x2_shuffle::<1, 3>(t0, t1),
            u64x2_shuffle::<0, 2>(t2, t3),
            u64x2_shuffle::<1, 3>(t2, t3),
        ];
        for (l, r) in rows.into_iter().enumerate() {
            let o = l * 64 + g * 16;
            out[o..o + 8].copy_from_slice(&u64x2_extract_lane::<0>(r).to_le_bytes());
            out[o + 8..o + 16].copy_from_slice(&u64x2_extract_lane::<1>(r).to_le_bytes());
        }
    }
}

/// 8 blocks: two independent 4-block states interleaved round by round (more ILP, more spills).
#[inline(always)]
pub fn chacha_blocks8<const DR: usize>(
    key: &[u32; 8],
    ctr: u32,
    nonce: &[u32; 3],
    out: &mut [u8; 512],
) {
    const C: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];
    let words: [u32; 16] = [
        C[0], C[1], C[2], C[3], key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7], 0,
        nonce[0], nonce[1], nonce[2],
    ];
    let mut i0: [v128; 16] = core::array::from_fn(|w| u32x4_splat(words[w]));
    i0[12] = u32x4_add(u32x4_splat(ctr), u32x4(0, 1, 2, 3));
    let mut i1 = i0;
    i1[12] = u32x4_add(u32x4_splat(ctr), u32x4(4, 5, 6, 7));
    let mut x = i0;
    let mut y = i1;
    for _ in 0..DR {
        for (a, b, c, d) in [
            (0, 4, 8, 12),
            (1, 5, 9, 13),
            (2, 6, 10, 14),
            (3, 7, 11, 15),
            (0, 5, 10, 15),
            (1, 6, 11, 12),
            (2, 7, 8, 13),
            (3, 4, 9, 14),
        ] {
            qr(&mut x, a, b, c, d);
            qr(&mut y, a, b, c, d);
        }
    }
    store(&x, &i0, &mut out[..256]);
    store(&y, &i1, &mut out[256..]);
}

/// Four quarter rounds (on columns or diagonals) interleaved step by step.
#[inline(always)]
fn qr4(x: &mut [v128; 16], q: [[usize; 4]; 4]) {
    for [a, b, _, _] in q {
        x[a] = u32x4_add(x[a], x[b]);
    }
    for [a, _, _, d] in q {
        x[d] = rotl16(v128_xor(x[d], x[a]));
    }
    for [_, _, c, d] in q {
        x[c] = u32x4_add(x[c], x[d]);
    }
    for [_, b, c, _] in q {
        x[b] = rotl::<12, 20>(v128_xor(x[b], x[c]));
    }
    for [a, b, _, _] in q {
        x[a] = u32x4_add(x[a], x[b]);
    }
    for [a, _, _, d] in q {
        x[d] = rotl8(v128_xor(x[d], x[a]));
    }
    for [_, _, c, d] in q {
        x[c] = u32x4_add(x[c], x[d]);
    }
    for [_, b, c, _] in q {
        x[b] = rotl::<7, 25>(v128_xor(x[b], x[c]));
    }
}

#[inline(always)]
pub fn chacha_blocks_il<const DR: usize>(
    key: &[u32; 8],
    ctr: u32,
    nonce: &[u32; 3],
    out: &mut [u8; 256],
) {
    const C: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];
    let words: [u32; 16] = [
        C[0], C[1], C[2], C[3], key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7], 0,
        nonce[0], nonce[1], nonce[2],
    ];
    let mut init: [v128; 16] = core::array::from_fn(|w| u32x4_splat(words[w]));
    init[12] = u32x4_add(u32x4_splat(ctr), u32x4(0, 1, 2, 3));
    let mut x = init;
    for _ in 0..DR {
        qr4(&mut x, [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]]);
        qr4(&mut x, [[0, 5, 10, 15], [1, 6, 11, 12], [2, 7, 8, 13], [3, 4, 9, 14]]);
    }
    store(&x, &init, out);
}
