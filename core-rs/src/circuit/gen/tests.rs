//! Sizes and depths against the paper's tables; values against plain arithmetic.

use super::*;
use crate::circuit::{pack, passes, unpack, Circuit};
use crate::prg::{Prg, Seed};

const BITS: [usize; 4] = [16, 32, 64, 128];

fn rng(stream: u32) -> Prg {
    Prg::new(&Seed::from_bytes([7; 32]), 0x0c12c017, stream)
}

fn random(prg: &mut Prg, n: usize) -> u128 {
    let v = u128::from(prg.next_u64()) | u128::from(prg.next_u64()) << 64;
    v & mask(n)
}

fn mask(n: usize) -> u128 {
    if n == 128 {
        u128::MAX
    } else {
        (1 << n) - 1
    }
}

/// Edge values of `n` bits, and random ones, as 64 pairs (a, b) with some ties.
fn pairs(n: usize, stream: u32) -> Vec<(u128, u128)> {
    let max = mask(n);
    let alt = 0x5555_5555_5555_5555_5555_5555_5555_5555 & max;
    let mut v = vec![
        (0, 0),
        (0, 1),
        (1, 0),
        (max, 1),
        (1, max),
        (max, max),
        (max, 0),
        (0, max),
        (alt, !alt & max),
        (alt, alt),
        (!alt & max, alt),
        (1 << (n - 1), 1 << (n - 1)),
        (1 << (n - 1), (1 << (n - 1)) - 1),
    ];
    let mut prg = rng(stream);
    while v.len() < 64 {
        let a = random(&mut prg, n);
        // Every fourth pair a tie in the top half, so the comparator's low bits decide.
        let b = if v.len() % 4 == 0 {
            a ^ (random(&mut prg, n) & (max >> (n / 2)))
        } else {
            random(&mut prg, n)
        };
        v.push((a, b));
    }
    v
}

/// Runs `c` (two input groups of `n` bits) on 64 pairs at once.
fn run(c: &Circuit, n: usize, p: &[(u128, u128)]) -> Vec<Vec<u128>> {
    let a: Vec<u128> = p.iter().map(|x| x.0).collect();
    let b: Vec<u128> = p.iter().map(|x| x.1).collect();
    let out = c.eval(&[pack(&a, n).unwrap(), pack(&b, n).unwrap()]).unwrap();
    out.iter().map(|o| unpack(o, p.len())).collect()
}

#[test]
fn radices_are_the_papers() {
    for (n, l, want) in [
        (16, 4, vec![4, 4]),
        (32, 4, vec![4, 4, 2]),
        (64, 4, vec![4, 4, 4]),
        (128, 4, vec![4, 4, 4, 2]),
        (16, 8, vec![8, 2]),
        (32, 8, vec![8, 4]),
        (64, 8, vec![8, 8]),
        (128, 8, vec![8, 8, 2]),
        (16, 2, vec![2; 4]),
    ] {
        assert_eq!(radices(n, l), want, "{n} bits, fan-in {l}");
    }
}

#[test]
fn and_tree_is_ragged_with_log_depth() {
    let c = and_tree(1 << 10, 8).unwrap();
    let s = c.stats();
    assert_eq!((s.ands[8], s.ands[2], s.and_count(), s.and_depth), (146, 1, 147, 4));
    for (n, l) in [(1, 2), (2, 2), (7, 3), (100, 4), (1000, 5), (64, 8), (65, 8)] {
        let c = and_tree(n, l).unwrap();
        let depth = (0..).find(|&d| l.pow(d) >= n).unwrap() as usize;
        assert_eq!(c.stats().and_depth, depth, "{n} inputs, fan-in {l}");
        let ones = mask(n.min(128));
        if n <= 128 {
            assert_eq!(c.eval_u128(&[ones]).unwrap(), vec![1]);
            assert_eq!(c.eval_u128(&[ones ^ 1 << (n / 2)]).unwrap(), vec![0]);
        }
    }
    assert!(and_tree(0, 2).is_err() && and_tree(4, 9).is_err() && and_tree(4, 1).is_err());
}

/// Table 5 (KB per party for one AND tree) is the gates' bits in bin3 plus about 10 bytes of
/// fixed overhead (the extract's §4.3): our trees' bits per seat reproduce every entry so.
#[test]
fn and_tree_bits_per_seat_are_table_5() {
    let pair = [
        (2, [0.013, 0.018, 0.042, 0.138, 0.522]),
        (4, [0.017, 0.039, 0.127, 0.479, 1.887]),
        (8, [0.072, 0.288, 1.123, 4.518, 18.072]),
    ];
    let third = [
        (2, [0.011, 0.017, 0.041, 0.137, 0.521]),
        (4, [0.011, 0.015, 0.031, 0.095, 0.351]),
        (8, [0.010, 0.012, 0.019, 0.046, 0.156]),
    ];
    for (seat, table) in [(0, pair), (2, third)] {
        for (l, kb) in table {
            for (i, log) in [4, 6, 8, 10, 12].into_iter().enumerate() {
                let bits = and_tree(1 << log, l).unwrap().stats().bin3_bits()[seat];
                let overhead = kb[i] - bits as f64 / 8000.0;
                assert!(
                    (0.008..0.0125).contains(&overhead),
                    "tree 2^{log}, fan-in {l}, seat {seat}: {bits} bits, paper {} KB",
                    kb[i]
                );
            }
        }
    }
}

#[test]
fn adder_sizes_and_depths_are_table_2() {
    // (fan-in, sizes at 16/32/64/128 bits, depths) — ℓ ≤ 4 depths corrected as in the errata.
    for (l, sizes, depths) in [
        (2, [65, 161, 385, 897], [5, 6, 7, 8]),
        (4, [73, 177, 433, 993], [3, 4, 4, 5]),
        (8, [87, 213, 561, 1249], [3, 3, 3, 4]),
    ] {
        for (i, n) in BITS.into_iter().enumerate() {
            let s = adder(n, l).unwrap().stats();
            assert_eq!((s.and_count(), s.and_depth), (sizes[i], depths[i]), "{n} bits, fan-in {l}");
            assert_eq!(s.ands.iter().skip(l + 1).sum::<usize>(), 0);
        }
    }
    // Table 10's columns: fan-in 2 / 3–4 / 5–8.
    let s = adder(16, 4).unwrap().stats();
    assert_eq!((s.ands[2], s.ands[3], s.ands[4]), (43, 19, 11));
    for (n, l, want) in [
        (32, 4, [107, 70, 0]),
        (64, 4, [235, 198, 0]),
        (16, 8, [39, 24, 24]),
        (32, 8, [87, 74, 52]),
        (64, 8, [183, 190, 188]),
    ] {
        let s = adder(n, l).unwrap().stats();
        assert_eq!([s.ands[2], s.ands_in(3..5), s.ands_in(5..9)], want, "{n} bits, fan-in {l}");
    }
}

#[test]
fn adder_adds() {
    for n in BITS {
        for l in 2..=8 {
            let c = adder(n, l).unwrap();
            let p = pairs(n, n as u32);
            let out = run(&c, n, &p);
            for (t, &(a, b)) in p.iter().enumerate() {
                let (sum, carry) = if n == 128 {
                    a.overflowing_add(b)
                } else {
                    ((a + b) & mask(n), (a + b) >> n == 1)
                };
                assert_eq!(
                    (out[0][t], out[1][t]),
                    (sum, u128::from(carry)),
                    "{a:#x} + {b:#x}, {n} bits, fan-in {l}"
                );
            }
        }
    }
    // Odd widths take a partial last radix.
    for (n, l) in [(1, 2), (5, 3), (13, 4), (100, 7)] {
        let c = adder(n, l).unwrap();
        let depth = 1 + radices(n, l).len();
        assert_eq!(c.stats().and_depth, depth);
        let p = pairs(n.max(2), 99);
        let p: Vec<_> = p.iter().map(|&(a, b)| (a & mask(n), b & mask(n))).collect();
        let out = run(&c, n, &p);
        for (t, &(a, b)) in p.iter().enumerate() {
            assert_eq!(out[0][t] | out[1][t] << n, a + b);
        }
    }
}

#[test]
fn comparator_sizes_and_depths_are_table_4() {
    for (l, sizes, depths) in [
        // The standard row counts the product of all n equality bits, which nothing reads.
        (2, [63, 143, 319, 703], [5, 6, 7, 8]),
        (4, [39, 95, 207, 479], [3, 4, 4, 5]),
        (8, [37, 83, 175, 415], [3, 3, 3, 4]),
    ] {
        for (i, n) in BITS.into_iter().enumerate() {
            let c = greater_than(n, l).unwrap();
            let s = c.stats();
            assert_eq!(s.and_depth, depths[i], "{n} bits, fan-in {l}");
            // Exact for the standard row, one 2-input AND above the paper for ℓ ≤ 4 and ℓ ≤ 8.
            assert_eq!(s.and_count(), sizes[i] + usize::from(l > 2), "{n} bits, fan-in {l}");
            // The top prefix position's chain is dead; pruning it keeps depth and function.
            let pruned = passes::prune(&c).unwrap();
            assert!(pruned.stats().and_count() < s.and_count());
            assert_eq!(pruned.stats().and_depth, s.and_depth);
            let p = pairs(n, 7);
            assert_eq!(run(&c, n, &p), run(&pruned, n, &p));
            let log = (0..).find(|&d| l.pow(d) >= n - 1).unwrap() as usize;
            assert_eq!(s.and_depth, 1 + log);
        }
    }
    // Table 10's fan-in columns (2 / 3–4 / 5–8): the paper's 8 / 31 / 0 and 16 / 95 / 64, with
    // the one extra 2-input AND.
    for (n, l, want) in [(16, 4, [9, 31, 0]), (64, 8, [17, 95, 64])] {
        let s = greater_than(n, l).unwrap().stats();
        assert_eq!([s.ands[2], s.ands_in(3..5), s.ands_in(5..9)], want);
    }
}

#[test]
fn comparator_compares() {
    for n in BITS {
        for l in 2..=8 {
            let c = greater_than(n, l).unwrap();
            let p = pairs(n, 1000 + n as u32);
            let out = run(&c, n, &p);
            for (t, &(a, b)) in p.iter().enumerate() {
                assert_eq!(out[0][t], u128::from(a > b), "{a:#x} > {b:#x}, {n} bits, fan-in {l}");
            }
        }
    }
    for (n, l) in [(1, 2), (2, 8), (7, 3)] {
        let c = greater_than(n, l).unwrap();
        for a in 0..1u128 << n {
            for b in 0..1u128 << n {
                assert_eq!(c.eval_u128(&[a, b]).unwrap(), vec![u128::from(a > b)]);
            }
        }
    }
}

#[test]
fn lowered_generators_keep_their_function() {
    for c in [adder(32, 8).unwrap(), greater_than(32, 4).unwrap()] {
        let low = passes::lower_ands(&c).unwrap();
        let s = low.stats();
        assert_eq!(s.and_count(), s.ands[2]);
        let p = pairs(32, 5);
        assert_eq!(run(&c, 32, &p), run(&low, 32, &p));
    }
}

fn sbox_circuit(kind: Sbox) -> Circuit {
    let (mut b, ins) = Builder::new(&[8]);
    let x: [Wire; 8] = core::array::from_fn(|j| ins[0][j]);
    let y = sbox(&mut b, x, kind);
    b.finish(&[y.to_vec()]).unwrap()
}

#[test]
fn sbox_circuits_are_the_aes_sbox() {
    // (kind, ANDs by fan-in 2/3/4, depth)
    for (kind, ands, depth) in [
        (Sbox::BoyarPeralta, [34, 0, 0], 4),
        // The paper's depth-3 S-box (ABY2.0's) has 34 ANDs; this one 35.
        (Sbox::Depth3, [31, 4, 0], 3),
        // The paper's depth-2 S-box has 22 + 22 + 22; this plain expansion has 105.
        (Sbox::Depth2, [41, 32, 32], 2),
    ] {
        let c = sbox_circuit(kind);
        let s = c.stats();
        assert_eq!(
            ([s.ands[2], s.ands[3], s.ands[4]], s.and_count(), s.and_depth),
            (ands, ands.iter().sum(), depth),
            "{kind:?}"
        );
        // All 256 inputs in four bitsliced runs.
        for chunk in (0..=255u8).collect::<Vec<_>>().chunks(64) {
            let v: Vec<u128> = chunk.iter().map(|&x| u128::from(x)).collect();
            let out = unpack(&c.eval(&[pack(&v, 8).unwrap()]).unwrap()[0], v.len());
            for (&x, &y) in chunk.iter().zip(&out) {
                assert_eq!(y, u128::from(sbox::reference(x)), "{kind:?}: S({x:#04x})");
            }
        }
    }
    // Spot checks of the reference against FIPS-197's table.
    assert_eq!([sbox::reference(0), sbox::reference(1), sbox::reference(0x53)], [0x63, 0x7c, 0xed]);
}

/// FIPS-197 §5.2 key expansion, in plain Rust: the round keys as blocks.
fn expand(key: &[u8]) -> Vec<u128> {
    let nk = key.len() / 4;
    let rounds = nk + 6;
    let mut w: Vec<[u8; 4]> = key.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
    let mut rcon = 1u8;
    for i in nk..4 * (rounds + 1) {
        let mut t = w[i - 1];
        if i % nk == 0 {
            t = [t[1], t[2], t[3], t[0]].map(sbox::reference);
            t[0] ^= rcon;
            rcon = (rcon << 1) ^ if rcon & 0x80 != 0 { 0x1b } else { 0 };
        } else if nk > 6 && i % nk == 4 {
            t = t.map(sbox::reference);
        }
        w.push(core::array::from_fn(|j| w[i - nk][j] ^ t[j]));
    }
    w.chunks(4).map(|c| u128::from_be_bytes(core::array::from_fn(|j| c[j / 4][j % 4]))).collect()
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn block(s: &str) -> u128 {
    u128::from_str_radix(s, 16).unwrap()
}

#[test]
fn aes_matches_fips_197() {
    let plain = "00112233445566778899aabbccddeeff";
    for (size, key, cipher) in [
        (AesKey::Aes128, "000102030405060708090a0b0c0d0e0f", "69c4e0d86a7b0430d8cdb78070b4c55a"),
        (
            AesKey::Aes192,
            "000102030405060708090a0b0c0d0e0f1011121314151617",
            "dda97ca4864cdfe06eaf70a0ec0d7191",
        ),
        (
            AesKey::Aes256,
            "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
            "8ea2b7ca516745bfeafc49904b496089",
        ),
    ] {
        let c = aes(size, Sbox::BoyarPeralta).unwrap();
        let s = c.stats();
        let sboxes = 16 * size.rounds();
        assert_eq!(
            (s.and_count(), s.ands[2], s.and_depth),
            (sboxes * 34, sboxes * 34, 4 * size.rounds())
        );
        let mut ins = vec![block(plain)];
        ins.extend(expand(&hex(key)));
        assert_eq!(c.eval_u128(&ins).unwrap(), vec![block(cipher)], "{size:?}");
    }
    // C.1 again with the lower-depth S-boxes: depth 3 and 2 per round.
    for (kind, depth) in [(Sbox::Depth3, 30), (Sbox::Depth2, 20)] {
        let c = aes(AesKey::Aes128, kind).unwrap();
        assert_eq!(c.stats().and_depth, depth);
        let mut ins = vec![block(plain)];
        ins.extend(expand(&hex("000102030405060708090a0b0c0d0e0f")));
        assert_eq!(c.eval_u128(&ins).unwrap(), vec![block("69c4e0d86a7b0430d8cdb78070b4c55a")]);
    }
    // FIPS-197 Appendix B, on the 2-input circuit (the same here) and through Bristol Fashion.
    let c = aes(AesKey::Aes128, Sbox::BoyarPeralta).unwrap();
    let mut ins = vec![block("3243f6a8885a308d313198a2e0370734")];
    ins.extend(expand(&hex("2b7e151628aed2a6abf7158809cf4f3c")));
    let low = passes::lower_ands(&c).unwrap();
    let back = crate::circuit::bristol::read(&crate::circuit::bristol::write(&low)).unwrap();
    assert_eq!(back.eval_u128(&ins).unwrap(), vec![block("3925841d02dc09fbdc118597196a0b32")]);
}

/// `a · b` as (low, high) 128-bit halves.
fn wide_mul(a: u128, b: u128) -> (u128, u128) {
    let (a0, a1, b0, b1) = (a as u64 as u128, a >> 64, b as u64 as u128, b >> 64);
    let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
    let mid = (p00 >> 64) + (p01 as u64 as u128) + (p10 as u64 as u128);
    (p00 as u64 as u128 | mid << 64, p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64))
}

#[test]
fn multiplier_multiplies() {
    for n in [1, 2, 3, 5, 8, 13, 16, 32, 64, 128] {
        for l in 2..=8 {
            if n == 128 && ![2, 4, 8].contains(&l) {
                continue;
            }
            let c = multiplier(n, l).unwrap();
            let s = c.stats();
            assert_eq!(s.ands.iter().skip(l + 1).sum::<usize>(), 0, "{n} bits, fan-in {l}");
            let p: Vec<(u128, u128)> =
                pairs(n, n as u32 + 5).iter().map(|&(a, b)| (a & mask(n), b & mask(n))).collect();
            let a: Vec<u128> = p.iter().map(|x| x.0).collect();
            let b: Vec<u128> = p.iter().map(|x| x.1).collect();
            let out = c.eval(&[pack(&a, n).unwrap(), pack(&b, n).unwrap()]).unwrap();
            let planes = &out[0];
            assert_eq!(planes.len(), 2 * n);
            let lo = unpack(&planes[..planes.len().min(128)], p.len());
            let hi = (2 * n > 128).then(|| unpack(&planes[128..], p.len()));
            for (t, &(x, y)) in p.iter().enumerate() {
                let (wlo, whi) = wide_mul(x, y);
                assert_eq!(lo[t], wlo, "{x:#x} · {y:#x}, {n} bits, fan-in {l}");
                if let Some(hi) = &hi {
                    assert_eq!(hi[t], whi, "{x:#x} · {y:#x}, {n} bits, fan-in {l}");
                }
            }
        }
    }
    assert!(multiplier(0, 2).is_err() && multiplier(8, 9).is_err());
}

#[test]
fn multiplier_sizes_and_depths() {
    // (fan-in, sizes at 16/32/64/128 bits, depths): ours, recorded beside the paper's Table 3
    // in BENCHMARKS.md (Wallace 13/15/18/21, ℓ ≤ 4 7/9/9/11, ℓ ≤ 8 6/6/8/11).
    for (l, sizes, depths) in [
        (2, [609, 2317, 8873, 34405], [12, 15, 18, 20]),
        (4, [1476, 6824, 27888, 113866], [8, 9, 11, 12]),
        (8, [1508, 6944, 28136, 114370], [8, 8, 10, 11]),
    ] {
        for (i, n) in BITS.into_iter().enumerate() {
            let s = multiplier(n, l).unwrap().stats();
            assert_eq!((s.and_count(), s.and_depth), (sizes[i], depths[i]), "{n} bits, fan-in {l}");
        }
    }
}
