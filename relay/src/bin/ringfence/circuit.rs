//! `ringfence circuit gen KIND`: the circuits of the multi-fan-in paper's evaluation as
//! Bristol Fashion files (with the ℓ-input AND extension where the fan-in allows), for
//! `ringfence bench --ops circuit --circuit FILE` or any other tool.
//!
//! `ringfence circuit stats FILE`: what a circuit file costs: ANDs by fan-in, AND depth, and
//! the bits each seat sends per instance on bin3 (multi-fan-in ANDs) and on rep3 or bin3 after
//! lowering every AND to two inputs.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use ringfence_core::circuit::gen::{self, AesKey};
use ringfence_core::circuit::{bristol, passes, Circuit};

use crate::bench_gates::SboxArg;

/// `ringfence circuit ...`.
#[derive(Subcommand, Clone)]
pub(crate) enum CircuitCmd {
    /// Write a generated circuit as Bristol Fashion and print its summary to stderr.
    Gen(GenArgs),
    /// Print a circuit file's ANDs by fan-in, AND depth and bits per party per instance.
    Stats(StatsArgs),
}

/// What `ringfence circuit gen` makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Kind {
    /// The AND of --bits bits (one input group, one output bit), depth ⌈log_ℓ n⌉.
    AndTree,
    /// a + b of two --bits-bit numbers: the sum and the carry out (Sklansky, depth
    /// 1 + ⌈log_ℓ n⌉).
    Adder,
    /// a > b for unsigned --bits-bit a, b (Fischlin on a prefix-AND tree).
    Comparator,
    /// a · b of two --bits-bit numbers: the 2·bits-bit product (counters of one AND layer).
    Multiplier,
    /// AES-128 encryption: the plaintext, then 11 expanded round keys (--sbox picks the
    /// S-box, and with it the fan-in).
    Aes128,
    /// AES-192: the plaintext, then 13 round keys.
    Aes192,
    /// AES-256: the plaintext, then 15 round keys.
    Aes256,
}

/// Options of `ringfence circuit gen`.
#[derive(Args, Clone)]
pub(crate) struct GenArgs {
    /// The circuit.
    #[arg(value_enum)]
    kind: Kind,
    /// Operand width (default 64; not for AES).
    #[arg(long)]
    bits: Option<usize>,
    /// Largest AND fan-in, 2 to 8 (default 2: the standard two-input circuit; not for AES,
    /// whose S-box sets it).
    #[arg(long)]
    fan_in: Option<usize>,
    /// AES only: bp (Boyar–Peralta, two-input, depth 4), depth3 or depth2.
    #[arg(long, value_enum, default_value = "bp")]
    sbox: SboxArg,
    /// Lower every AND to two-input ones (standard Bristol Fashion).
    #[arg(long)]
    two_input: bool,
    /// Where to write the file (default: standard output).
    #[arg(long, short)]
    out: Option<PathBuf>,
}

/// Options of `ringfence circuit stats`.
#[derive(Args, Clone)]
pub(crate) struct StatsArgs {
    /// A Bristol Fashion file (AND lines of 3 to 8 inputs allowed).
    file: PathBuf,
}

pub(crate) fn run(cmd: &CircuitCmd) -> Result<(), String> {
    match cmd {
        CircuitCmd::Gen(a) => {
            let c = generate(a)?;
            let text = bristol::write(&c);
            match &a.out {
                Some(path) => {
                    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?
                }
                None => print!("{text}"),
            }
            eprint!("{}", summary(&c)?);
            Ok(())
        }
        CircuitCmd::Stats(a) => {
            print!("{}", summary(&crate::bench::load_circuit(&a.file)?)?);
            Ok(())
        }
    }
}

fn generate(a: &GenArgs) -> Result<Circuit, String> {
    let aes_key = match a.kind {
        Kind::Aes128 => Some(AesKey::Aes128),
        Kind::Aes192 => Some(AesKey::Aes192),
        Kind::Aes256 => Some(AesKey::Aes256),
        _ => None,
    };
    let e = |e: ringfence_core::Error| e.to_string();
    let c = match aes_key {
        Some(key) => {
            if a.fan_in.is_some() || a.bits.is_some() {
                return Err("AES takes neither --bits nor --fan-in: --sbox sets its fan-in".into());
            }
            gen::aes(key, a.sbox.sbox()).map_err(e)?
        }
        None => {
            let (n, l) = (a.bits.unwrap_or(64), a.fan_in.unwrap_or(2));
            match a.kind {
                Kind::AndTree => gen::and_tree(n, l),
                Kind::Adder => gen::adder(n, l),
                Kind::Comparator => gen::greater_than(n, l),
                _ => gen::multiplier(n, l),
            }
            .map_err(e)?
        }
    };
    if a.two_input {
        passes::lower_ands(&c).map_err(e)
    } else {
        Ok(c)
    }
}

/// The lines `circuit stats` prints (and `circuit gen` to stderr).
fn summary(c: &Circuit) -> Result<String, String> {
    let s = c.stats();
    let lowered = passes::lower_ands(c).map_err(|e| e.to_string())?.stats();
    let fan_ins: Vec<String> = (2..s.ands.len())
        .filter(|&l| s.ands[l] > 0)
        .map(|l| format!("{} of {l} inputs", s.ands[l]))
        .collect();
    let [p1, p2, p3] = s.bin3_bits();
    let two = lowered.ands[2];
    Ok(format!(
        "inputs {:?} bits, outputs {:?} bits, {} wires\n\
         ANDs: {} ({}), AND depth {}; {} XOR, {} NOT\n\
         bin3, bits sent per instance: P1 {p1}, P2 {p2}, P3 {p3} in {} rounds\n\
         two-input ANDs only (rep3, or bin3 on the lowered circuit): {two} ANDs, depth {}, \
         {two} bits per party per instance\n",
        c.input_widths(),
        c.output_widths(),
        c.wires(),
        s.and_count(),
        if fan_ins.is_empty() { "none".into() } else { fan_ins.join(", ") },
        s.and_depth,
        s.xor,
        s.not,
        s.and_depth,
        lowered.and_depth,
    ))
}
