//! The AES S-box as a circuit: Boyar and Peralta's low-depth circuit (ePrint 2011/332,
//! "A depth-16 circuit for the AES S-box"): 34 two-input ANDs in 4 layers, around a GF(2^4)
//! inversion in a tower field. Its gate list is a published fact, written here as data; the
//! tests check it, and the lower-depth variants built from it, against the S-box computed from
//! its definition on all 256 inputs.

use std::collections::HashMap;

use crate::circuit::{Builder, Wire};

/// Which S-box circuit [`sbox`] (and [`aes`](super::aes)) builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Sbox {
    /// Boyar–Peralta: 34 two-input ANDs, AND depth 4.
    BoyarPeralta,
    /// AND depth 3: Boyar–Peralta with its GF(2^4) inversion (two AND layers) computed in one
    /// layer from its algebraic normal form, each monomial (degree 2 or 3) one AND: 31
    /// two-input and 4 three-input ANDs (the paper's depth-3 S-box has 34 in all).
    Depth3,
    /// AND depth 2: as [`Sbox::Depth3`], with the inversion's monomials also multiplied into the
    /// last layer's products (a monomial of degree k times a wire: one AND of k + 1 inputs).
    /// 41 two-, 32 three- and 32 four-input ANDs: more than the paper's 22 + 22 + 22, whose
    /// construction is not published.
    Depth2,
}

/// One line of the listing: `out = a OP b`, OP XOR (`^`), XNOR (`#`) or AND (`&`). Inputs
/// `U0` (the byte's top bit) … `U7`; outputs `S0` (top bit) … `S7`.
type Line = (&'static str, &'static str, char, &'static str);

/// The top linear layer (forward direction).
const TOP: [Line; 27] = [
    ("T1", "U0", '^', "U3"),
    ("T2", "U0", '^', "U5"),
    ("T3", "U0", '^', "U6"),
    ("T4", "U3", '^', "U5"),
    ("T5", "U4", '^', "U6"),
    ("T6", "T1", '^', "T5"),
    ("T7", "U1", '^', "U2"),
    ("T8", "U7", '^', "T6"),
    ("T9", "U7", '^', "T7"),
    ("T10", "T6", '^', "T7"),
    ("T11", "U1", '^', "U5"),
    ("T12", "U2", '^', "U5"),
    ("T13", "T3", '^', "T4"),
    ("T14", "T6", '^', "T11"),
    ("T15", "T5", '^', "T11"),
    ("T16", "T5", '^', "T12"),
    ("T17", "T9", '^', "T16"),
    ("T18", "U3", '^', "U7"),
    ("T19", "T7", '^', "T18"),
    ("T20", "T1", '^', "T19"),
    ("T21", "U6", '^', "U7"),
    ("T22", "T7", '^', "T21"),
    ("T23", "T2", '^', "T22"),
    ("T24", "T2", '^', "T10"),
    ("T25", "T20", '^', "T17"),
    ("T26", "T3", '^', "T16"),
    ("T27", "T1", '^', "T12"),
];

/// The first multiplication layer and the linear map into the GF(2^4) inversion (D = U7).
const MUL_IN: [Line; 24] = [
    ("M1", "T13", '&', "T6"),
    ("M2", "T23", '&', "T8"),
    ("M3", "T14", '^', "M1"),
    ("M4", "T19", '&', "U7"),
    ("M5", "M4", '^', "M1"),
    ("M6", "T3", '&', "T16"),
    ("M7", "T22", '&', "T9"),
    ("M8", "T26", '^', "M6"),
    ("M9", "T20", '&', "T17"),
    ("M10", "M9", '^', "M6"),
    ("M11", "T1", '&', "T15"),
    ("M12", "T4", '&', "T27"),
    ("M13", "M12", '^', "M11"),
    ("M14", "T2", '&', "T10"),
    ("M15", "M14", '^', "M11"),
    ("M16", "M3", '^', "M2"),
    ("M17", "M5", '^', "T24"),
    ("M18", "M8", '^', "M7"),
    ("M19", "M10", '^', "M15"),
    ("M20", "M16", '^', "M13"),
    ("M21", "M17", '^', "M15"),
    ("M22", "M18", '^', "M13"),
    ("M23", "M19", '^', "T25"),
    ("M24", "M22", '^', "M23"),
];

/// The GF(2^4) inversion: from M20…M23 to M37…M40 (AND layers 2 and 3), and the sums M41…M45
/// the last layer multiplies.
const INVERT: [Line; 21] = [
    ("M25", "M22", '&', "M20"),
    ("M26", "M21", '^', "M25"),
    ("M27", "M20", '^', "M21"),
    ("M28", "M23", '^', "M25"),
    ("M29", "M28", '&', "M27"),
    ("M30", "M26", '&', "M24"),
    ("M31", "M20", '&', "M23"),
    ("M32", "M27", '&', "M31"),
    ("M33", "M27", '^', "M25"),
    ("M34", "M21", '&', "M22"),
    ("M35", "M24", '&', "M34"),
    ("M36", "M24", '^', "M25"),
    ("M37", "M21", '^', "M29"),
    ("M38", "M32", '^', "M33"),
    ("M39", "M23", '^', "M30"),
    ("M40", "M35", '^', "M36"),
    ("M41", "M38", '^', "M40"),
    ("M42", "M37", '^', "M39"),
    ("M43", "M37", '^', "M38"),
    ("M44", "M39", '^', "M40"),
    ("M45", "M42", '^', "M41"),
];

/// The last multiplication layer (AND layer 4).
const MUL_OUT: [Line; 18] = [
    ("M46", "M44", '&', "T6"),
    ("M47", "M40", '&', "T8"),
    ("M48", "M39", '&', "U7"),
    ("M49", "M43", '&', "T16"),
    ("M50", "M38", '&', "T9"),
    ("M51", "M37", '&', "T17"),
    ("M52", "M42", '&', "T15"),
    ("M53", "M45", '&', "T27"),
    ("M54", "M41", '&', "T10"),
    ("M55", "M44", '&', "T13"),
    ("M56", "M40", '&', "T23"),
    ("M57", "M39", '&', "T19"),
    ("M58", "M43", '&', "T3"),
    ("M59", "M38", '&', "T22"),
    ("M60", "M37", '&', "T20"),
    ("M61", "M42", '&', "T1"),
    ("M62", "M45", '&', "T4"),
    ("M63", "M41", '&', "T2"),
];

/// The bottom linear layer (forward direction), with the affine constant in its XNORs.
const BOTTOM: [Line; 38] = [
    ("L0", "M61", '^', "M62"),
    ("L1", "M50", '^', "M56"),
    ("L2", "M46", '^', "M48"),
    ("L3", "M47", '^', "M55"),
    ("L4", "M54", '^', "M58"),
    ("L5", "M49", '^', "M61"),
    ("L6", "M62", '^', "L5"),
    ("L7", "M46", '^', "L3"),
    ("L8", "M51", '^', "M59"),
    ("L9", "M52", '^', "M53"),
    ("L10", "M53", '^', "L4"),
    ("L11", "M60", '^', "L2"),
    ("L12", "M48", '^', "M51"),
    ("L13", "M50", '^', "L0"),
    ("L14", "M52", '^', "M61"),
    ("L15", "M55", '^', "L1"),
    ("L16", "M56", '^', "L0"),
    ("L17", "M57", '^', "L1"),
    ("L18", "M58", '^', "L8"),
    ("L19", "M63", '^', "L4"),
    ("L20", "L0", '^', "L1"),
    ("L21", "L1", '^', "L7"),
    ("L22", "L3", '^', "L12"),
    ("L23", "L18", '^', "L2"),
    ("L24", "L15", '^', "L9"),
    ("L25", "L6", '^', "L10"),
    ("L26", "L7", '^', "L9"),
    ("L27", "L8", '^', "L10"),
    ("L28", "L11", '^', "L14"),
    ("L29", "L11", '^', "L17"),
    ("S0", "L6", '^', "L24"),
    ("S1", "L16", '#', "L26"),
    ("S2", "L19", '#', "L28"),
    ("S3", "L6", '^', "L21"),
    ("S4", "L20", '^', "L22"),
    ("S5", "L25", '^', "L29"),
    ("S6", "L13", '#', "L27"),
    ("S7", "L6", '#', "L23"),
];

/// The S-box of `x` (bit 0 first), as gates appended to `b`; returns its bits, bit 0 first.
pub fn sbox(b: &mut Builder, x: [Wire; 8], kind: Sbox) -> [Wire; 8] {
    let mut env: HashMap<&'static str, Wire> = HashMap::new();
    for (i, name) in ["U7", "U6", "U5", "U4", "U3", "U2", "U1", "U0"].into_iter().enumerate() {
        env.insert(name, x[i]);
    }
    run(b, &mut env, &TOP);
    run(b, &mut env, &MUL_IN);
    match kind {
        Sbox::BoyarPeralta => {
            run(b, &mut env, &INVERT);
            run(b, &mut env, &MUL_OUT);
        }
        Sbox::Depth3 => {
            let d = INVERSION_IN.map(|n| env[n]);
            let mut monomials = HashMap::new();
            for (name, anf) in inversion_anf() {
                let mut terms = Vec::new();
                for m in (1..16).filter(|&m| anf >> m & 1 == 1) {
                    let w = *monomials.entry(m).or_insert_with(|| b.and(&vars(&d, m)));
                    terms.push(w);
                }
                let sum = b.xor_all(&terms);
                env.insert(name, if anf & 1 == 1 { b.not(sum) } else { sum });
            }
            run(b, &mut env, &MUL_OUT);
        }
        Sbox::Depth2 => {
            let d = INVERSION_IN.map(|n| env[n]);
            let anf: HashMap<&str, u16> = inversion_anf().into_iter().collect();
            for &(out, m, _, t) in &MUL_OUT {
                let (f, t) = (anf[m], env[t]);
                let mut terms = Vec::new();
                for m in (0..16).filter(|&m| f >> m & 1 == 1) {
                    let mut ws = vars(&d, m);
                    ws.push(t);
                    terms.push(b.and(&ws));
                }
                let w = b.xor_all(&terms);
                env.insert(out, w);
            }
        }
    }
    run(b, &mut env, &BOTTOM);
    ["S7", "S6", "S5", "S4", "S3", "S2", "S1", "S0"].map(|name| env[name])
}

/// The inversion's inputs, bit `i` of a monomial mask standing for `INVERSION_IN[i]`.
const INVERSION_IN: [&str; 4] = ["M20", "M21", "M22", "M23"];

/// The wires of monomial `m`.
fn vars(d: &[Wire; 4], m: usize) -> Vec<Wire> {
    (0..4).filter(|i| m >> i & 1 == 1).map(|i| d[i]).collect()
}

/// The algebraic normal form of each value the last layer multiplies (M37 … M45), as functions
/// of the inversion's inputs: bit `m` set when monomial `m` is a term (bit 0: the constant 1).
/// Computed from the listing, by evaluating [`INVERT`] on all 16 inputs and a Möbius transform.
fn inversion_anf() -> Vec<(&'static str, u16)> {
    let names = ["M37", "M38", "M39", "M40", "M41", "M42", "M43", "M44", "M45"];
    let mut truth = [0u16; 9];
    for v in 0..16 {
        let mut env: HashMap<&str, bool> =
            INVERSION_IN.iter().enumerate().map(|(i, &n)| (n, v >> i & 1 == 1)).collect();
        // The one other name the inversion reads, itself a sum of two inputs.
        env.insert("M24", env["M22"] ^ env["M23"]);
        for &(out, l, op, r) in &INVERT {
            let (l, r) = (env[l], env[r]);
            env.insert(out, if op == '&' { l & r } else { l ^ r });
        }
        for (t, n) in truth.iter_mut().zip(names) {
            *t |= u16::from(env[n]) << v;
        }
    }
    for t in &mut truth {
        // After the transform, bit m is the XOR of the truth table over the subsets of m.
        for i in 0..4 {
            for m in 0..16 {
                if m >> i & 1 == 1 {
                    *t ^= (*t >> (m ^ 1 << i) & 1) << m;
                }
            }
        }
    }
    names.into_iter().zip(truth).collect()
}

fn run(b: &mut Builder, env: &mut HashMap<&'static str, Wire>, lines: &[Line]) {
    for &(out, l, op, r) in lines {
        // The listing is in topological order: every name it reads is defined above it.
        let (l, r) = (env[l], env[r]);
        let w = match op {
            '&' => b.and(&[l, r]),
            '#' => {
                let x = b.xor(l, r);
                b.not(x)
            }
            _ => b.xor(l, r),
        };
        env.insert(out, w);
    }
}

/// The AES S-box computed from its definition: the inverse in GF(2^8) modulo
/// x^8 + x^4 + x^3 + x + 1 (0 for 0), then the affine map `b ⊕ b⋘1 ⊕ b⋘2 ⊕ b⋘3 ⊕ b⋘4 ⊕ 0x63`.
#[cfg(test)]
pub(crate) fn reference(x: u8) -> u8 {
    fn mul(mut a: u8, mut b: u8) -> u8 {
        let mut p = 0;
        while b != 0 {
            if b & 1 != 0 {
                p ^= a;
            }
            a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
            b >>= 1;
        }
        p
    }
    // x^254 = x^-1 (and 0 for 0), by square-and-multiply over the bits of 254.
    let mut inv = 1u8;
    for bit in (0..8).rev() {
        inv = mul(inv, inv);
        if (254 >> bit) & 1 != 0 {
            inv = mul(inv, x);
        }
    }
    inv ^ inv.rotate_left(1) ^ inv.rotate_left(2) ^ inv.rotate_left(3) ^ inv.rotate_left(4) ^ 0x63
}
