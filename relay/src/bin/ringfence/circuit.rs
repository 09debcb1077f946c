//! `ringfence circuit gen KIND`: the circuits of the multi-fan-in paper's evaluation as
//! Bristol Fashion files (with the ℓ-input AND extension where the fan-in allows), for
//! `ringfence bench --ops circuit --circuit FILE` or any other tool.
//!
//! `ringfence circuit stats FILE`: what a circuit file costs: ANDs by fan-in, AND depth, and
//! the bits each seat sends per instance on bin3 (multi-fan-in ANDs) and on rep3 or bin3 after
//! lowering every AND to two inputs.
//!
//! `ringfence circuit run FILE --input V …`: evaluates a circuit file between three local
//! party processes on the given inputs (the bench's `circuit` op with `--circuit-inputs`, so
//! the same links, scheme choice and counters), prints the outputs, rounds, bits per party and
//! time, and with `--check` compares the outputs with the plaintext evaluation.

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
    /// Evaluate a circuit file between three local party processes on given inputs (input
    /// group g from party g mod 3) and print the outputs, rounds, bits per party and time.
    Run(RunArgs),
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

/// Options of `ringfence circuit run`.
#[derive(Args, Clone)]
pub(crate) struct RunArgs {
    /// A Bristol Fashion file (AND lines of 3 to 8 inputs allowed).
    file: PathBuf,
    /// One value per input group, in order (repeat the flag, or separate by commas): 0x hex,
    /// 0b binary or decimal, bit i of the value being wire i of the group.
    #[arg(long = "input", value_name = "VALUE", required = true, value_delimiter = ',')]
    inputs: Vec<String>,
    /// The scheme: bin3 (ANDs of up to eight inputs in one round), rep3, mal3 or
    /// mal3-on-demand (two-input ANDs; wider ones are evaluated as trees).
    #[arg(long, value_enum, default_value = "bin3")]
    gates: crate::bench_gates::Engine,
    /// Compare the outputs with the plaintext evaluation of the circuit (exit 1 if they
    /// differ).
    #[arg(long)]
    check: bool,
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
        CircuitCmd::Run(a) => run_circuit(a),
    }
}

fn run_circuit(a: &RunArgs) -> Result<(), String> {
    let values = a.inputs.join(",");
    // Refused here, with the reason, before any process starts.
    let job = crate::bench_gates::CircuitJob::load(&a.file, Some(&values))?;
    let exe = std::env::current_exe().map_err(|e| format!("this binary's path: {e}"))?;
    eprintln!(
        "ringfence circuit run: {} on {}, three party processes on 127.0.0.1",
        a.file.display(),
        a.gates.name()
    );
    let out = std::process::Command::new(exe)
        .args(["bench", "--json", "--ops", "circuit", "--n", "1", "--repeat", "1"])
        .args(["--gates", a.gates.name(), "--circuit"])
        .arg(&a.file)
        .args(["--circuit-inputs", &values])
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("starting the parties: {e}"))?;
    if !out.status.success() {
        return Err(format!("the parties failed ({})", out.status));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line: serde_json::Value = serde_json::from_str(text.trim())
        .map_err(|e| format!("the parties' report {text:?}: {e}"))?;
    let outputs: Vec<String> = line["outputs"]
        .as_array()
        .ok_or("the parties reported no outputs")?
        .iter()
        .map(|v| v.as_str().unwrap_or("?").to_string())
        .collect();
    for (g, (v, w)) in outputs.iter().zip(job.circuit.output_widths()).enumerate() {
        println!("output {g} ({w} bits): {v}");
    }
    let bytes: Vec<String> = line["payload_bytes_by_party"]
        .as_array()
        .map(|b| b.iter().map(|x| format!("{}", x.as_f64().unwrap_or(0.0))).collect())
        .unwrap_or_default();
    println!(
        "{:.0} rounds, {:.1} ms (inputs, AND layers, opening); payload bytes sent by P0, P1, P2: \
         {} (a layer's bits travel in 64-bit words; `circuit stats` counts the bits alone)",
        line["rounds"].as_f64().unwrap_or(0.0),
        line["seconds"].as_f64().unwrap_or(0.0) * 1e3,
        bytes.join(", "),
    );
    if a.check {
        let inputs = job.inputs.as_deref().unwrap_or_default();
        let plain: Vec<String> = crate::bench_gates::plain_outputs(&job.circuit, inputs, 1)?
            .iter()
            .map(|o| crate::bench_gates::hex(o))
            .collect();
        if plain != outputs {
            return Err(format!(
                "the outputs differ from the plaintext evaluation: expected {}",
                plain.join(", ")
            ));
        }
        println!("equal to the plaintext evaluation");
    }
    Ok(())
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
