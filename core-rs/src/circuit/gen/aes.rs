//! AES encryption under expanded round keys.

use super::sbox::{sbox, Sbox};
use crate::circuit::{Builder, Circuit, Wire};
use crate::Error;

/// The AES key size, which fixes the number of rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AesKey {
    /// 10 rounds, 11 round keys.
    Aes128,
    /// 12 rounds, 13 round keys.
    Aes192,
    /// 14 rounds, 15 round keys.
    Aes256,
}

impl AesKey {
    /// The number of rounds.
    pub fn rounds(self) -> usize {
        match self {
            Self::Aes128 => 10,
            Self::Aes192 => 12,
            Self::Aes256 => 14,
        }
    }
}

/// A byte of the state: its bits, bit 0 first.
type Byte = [Wire; 8];

/// AES encryption of one block, with the key schedule left out (as the paper counts it): the
/// inputs are the plaintext block and then each round key, `rounds + 1` groups of 128 bits;
/// the output is the ciphertext block. A block is the number whose big-endian bytes are the
/// AES bytes (`u128::from_be_bytes`), bit 0 of the group being bit 0 of that number.
///
/// Only SubBytes has ANDs: 16 S-boxes per round (160 for AES-128, 5 440 two-input ANDs with
/// the Boyar–Peralta S-box), AND depth 4 per round.
///
/// ```
/// use ringfence_core::circuit::gen::{aes, AesKey, Sbox};
/// let c = aes(AesKey::Aes128, Sbox::BoyarPeralta)?;
/// assert_eq!(c.input_widths(), &[128; 12]);
/// assert_eq!((c.stats().and_count(), c.stats().and_depth), (160 * 34, 40));
/// # Ok::<(), ringfence_core::Error>(())
/// ```
pub fn aes(key: AesKey, kind: Sbox) -> Result<Circuit, Error> {
    let rounds = key.rounds();
    let (mut b, ins) = Builder::new(&vec![128; rounds + 2]);
    let mut state = add_key(&mut b, &bytes(&ins[0]), &bytes(&ins[1]));
    for r in 1..=rounds {
        let subbed: Vec<Byte> = state.iter().map(|&x| sbox(&mut b, x, kind)).collect();
        let shifted = shift_rows(&subbed);
        let mixed = if r < rounds { mix_columns(&mut b, &shifted) } else { shifted };
        state = add_key(&mut b, &mixed, &bytes(&ins[r + 1]));
    }
    let out: Vec<Wire> = state.iter().rev().flatten().copied().collect();
    b.finish(&[out])
}

/// The 16 bytes of a 128-wire group, AES byte 0 (the number's top byte) first.
fn bytes(group: &[Wire]) -> Vec<Byte> {
    (0..16).map(|k| core::array::from_fn(|j| group[8 * (15 - k) + j])).collect()
}

fn add_key(b: &mut Builder, state: &[Byte], key: &[Byte]) -> Vec<Byte> {
    state.iter().zip(key).map(|(s, k)| core::array::from_fn(|j| b.xor(s[j], k[j]))).collect()
}

/// Byte `r + 4c` is row `r`, column `c`; row `r` turns left by `r`.
fn shift_rows(s: &[Byte]) -> Vec<Byte> {
    (0..16).map(|k| s[(k + 4 * (k & 3)) & 15]).collect()
}

/// Each column (a0, a1, a2, a3) becomes `ai ⊕ t ⊕ 2·(ai ⊕ a(i+1))` with `t` the XOR of all four
/// — the usual (2, 3, 1, 1) rows, written so that only one doubling is needed per byte.
fn mix_columns(b: &mut Builder, s: &[Byte]) -> Vec<Byte> {
    let mut out = Vec::with_capacity(16);
    for col in s.chunks(4) {
        let t: Byte =
            core::array::from_fn(|j| b.xor_all(&[col[0][j], col[1][j], col[2][j], col[3][j]]));
        for i in 0..4 {
            let (x, y) = (col[i], col[(i + 1) & 3]);
            let sum: Byte = core::array::from_fn(|j| b.xor(x[j], y[j]));
            let twice = xtime(b, sum);
            out.push(core::array::from_fn(|j| b.xor_all(&[x[j], t[j], twice[j]])));
        }
    }
    out
}

/// Multiplication by x in GF(2^8): a shift, with the top bit folded back as 0x1b.
fn xtime(b: &mut Builder, a: Byte) -> Byte {
    let top = a[7];
    [top, b.xor(a[0], top), a[1], b.xor(a[2], top), b.xor(a[3], top), a[4], a[5], a[6]]
}
