//! `ringfence bench --ops and,aes --gates SCHEME`: boolean circuits on rep3, mal3 or bin3.
//!
//! `and` is `n` AND gates (bitsliced, one batched layer) followed by the opening of one bit,
//! which makes mal3 verify every AND before anything is released: its figure includes the
//! cut-and-bucket validation of the triples it used. `aes` is `n` AES-128 blocks
//! ([`ringfence_core::circuit::gen::aes`], the Boyar–Peralta S-box, key schedule outside the circuit as the
//! papers count it): P1 inputs the plaintexts, P0 the round keys, and every party opens the
//! ciphertexts and checks them against the plaintext evaluation of the same circuit. Both
//! are timed end to end (inputs, layers, verification, opening) from a barrier. `circuit` is
//! the same for any Bristol Fashion file (`--circuit FILE`, ℓ-input ANDs allowed), input group
//! `g` from party `g mod 3`, on deterministic inputs every party can recompute for the check,
//! or on the values of `--circuit-inputs` (`ringfence circuit run`): then P0 reports the
//! opened outputs of the first instance and the parent checks them if asked.

use clap::ValueEnum;
use ringfence_core::bin3::Bin3;
use ringfence_core::circuit::gen::{aes, AesKey, Sbox};
use ringfence_core::circuit::shared::Input;
use ringfence_core::circuit::{Circuit, MAX_FAN_IN};
use ringfence_core::mal3::triples::OnDemand;
use ringfence_core::mal3::Mal3;
use ringfence_core::net::PartyId;
use ringfence_core::prg::{Prg, Seed};
use ringfence_core::sharing::{self, Bitwise, Gates, Session as _};
use ringfence_relay::TcpTransport;

use crate::bench::{Meter, Op, Sizes};
use crate::msgs::OpReport;
use crate::party::Session;

/// The scheme that evaluates boolean circuits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Engine {
    /// Replicated sharing, two-input ANDs (semi-honest).
    Rep3,
    /// rep3 with every AND verified against a cut-and-bucket triple (malicious, abort).
    Mal3,
    /// mal3 with Protocol 3.9's on-demand checks: buckets of 2 (7 bits per AND instead of
    /// 10), two arrays of 2^20 validated triples kept per ring.
    Mal3OnDemand,
    /// mal3 with the paper's baseline runs (Protocol A.1/A.2: each checking array shuffled
    /// whole instead of in subarrays; the same bound and bytes).
    Mal3Baseline,
    /// π₂³ sharing, ANDs of up to eight inputs in one round (semi-honest).
    Bin3,
}

impl Engine {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Rep3 => "rep3",
            Self::Mal3 => "mal3",
            Self::Mal3OnDemand => "mal3-on-demand",
            Self::Mal3Baseline => "mal3-baseline",
            Self::Bin3 => "bin3",
        }
    }
}

/// The S-box circuit of the `aes` op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum SboxArg {
    /// Boyar–Peralta: 34 two-input ANDs, depth 4 (40 AND layers for AES-128).
    Bp,
    /// Two- and three-input ANDs, depth 3 (30 layers).
    Depth3,
    /// Two- to four-input ANDs, depth 2 (20 layers): fewest rounds, most bits.
    Depth2,
}

impl SboxArg {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Bp => "bp",
            Self::Depth3 => "depth3",
            Self::Depth2 => "depth2",
        }
    }

    pub(crate) fn sbox(self) -> Sbox {
        match self {
            Self::Bp => Sbox::BoyarPeralta,
            Self::Depth3 => Sbox::Depth3,
            Self::Depth2 => Sbox::Depth2,
        }
    }
}

/// Who inputs the plaintexts and who the round keys.
const DATA_OWNER: PartyId = PartyId(1);
const KEY_OWNER: PartyId = PartyId(0);

/// The `circuit` op's file and, if given, its inputs: one value per input group (bit `i` of
/// a value is wire `i` of its group), the same in every instance.
pub(crate) struct CircuitJob {
    pub(crate) circuit: Circuit,
    pub(crate) inputs: Option<Vec<Vec<bool>>>,
}

impl CircuitJob {
    /// The circuit at `path`, with the inputs of `--circuit-inputs` if given (comma-separated
    /// values, one per group: `0x` hex, `0b` binary or decimal).
    pub(crate) fn load(path: &std::path::Path, inputs: Option<&str>) -> Result<Self, String> {
        let circuit = crate::bench::load_circuit(path)?;
        let inputs = inputs.map(|t| parse_inputs(t, circuit.input_widths())).transpose()?;
        // (The error names no flag: `bench --circuit-inputs` and `circuit run --input` share it.)
        Ok(Self { circuit, inputs })
    }
}

/// One value per input group, each as its group's bits, least significant first.
pub(crate) fn parse_inputs(text: &str, widths: &[usize]) -> Result<Vec<Vec<bool>>, String> {
    let values: Vec<&str> = text.split(',').map(str::trim).collect();
    if values.len() != widths.len() {
        return Err(format!(
            "{} values for a circuit of {} input groups ({widths:?} bits)",
            values.len(),
            widths.len()
        ));
    }
    values
        .iter()
        .zip(widths)
        .enumerate()
        .map(|(g, (v, &w))| {
            parse_value(v, w).map_err(|e| format!("input {g} ({v:?}, {w} bits): {e}"))
        })
        .collect()
}

/// `text` as `width` bits, least significant first.
fn parse_value(text: &str, width: usize) -> Result<Vec<bool>, String> {
    let digits = text.replace('_', "");
    let (radix, body) = match digits.get(..2) {
        Some("0x" | "0X") => (16u32, &digits[2..]),
        Some("0b" | "0B") => (2, &digits[2..]),
        _ => (10, &digits[..]),
    };
    if body.is_empty() {
        return Err("no digits".into());
    }
    // Little-endian 32-bit limbs, multiplied by the radix per digit: any width.
    let mut limbs: Vec<u64> = vec![0];
    for ch in body.chars() {
        let d = ch.to_digit(radix).ok_or_else(|| format!("{ch:?} is not a base-{radix} digit"))?;
        let mut carry = u64::from(d);
        for l in &mut limbs {
            let x = *l * u64::from(radix) + carry;
            *l = x & 0xffff_ffff;
            carry = x >> 32;
        }
        if carry > 0 {
            limbs.push(carry);
        }
    }
    let bits: Vec<bool> =
        (0..limbs.len() * 32).map(|i| limbs[i / 32] >> (i % 32) & 1 == 1).collect();
    if bits[width.min(bits.len())..].iter().any(|&b| b) {
        return Err(format!("more than {width} bits"));
    }
    Ok((0..width).map(|i| bits.get(i).copied().unwrap_or(false)).collect())
}

/// `bits` (least significant first) as `0x` and the hex digits of their width.
pub(crate) fn hex(bits: &[bool]) -> String {
    let digits: String = bits
        .chunks(4)
        .rev()
        .map(|c| {
            let d = c.iter().enumerate().fold(0u32, |a, (i, &b)| a | u32::from(b) << i);
            char::from_digit(d, 16).unwrap_or('?')
        })
        .collect();
    format!("0x{digits}")
}

/// Runs a boolean-circuit op on the engine of `sizes` and gives the session back.
pub(crate) async fn bench_circuit_op(
    p: Session,
    op: Op,
    sizes: Sizes,
    circuit: Option<&CircuitJob>,
) -> Result<(Session, OpReport), String> {
    match sizes.engine {
        Engine::Rep3 => run(p, op, sizes, circuit).await,
        Engine::Mal3 => run(Mal3::start(p), op, sizes, circuit).await,
        Engine::Mal3OnDemand => {
            let mut s = Mal3::start(p);
            s.check_on_demand(OnDemand::PAPER).map_err(|e| e.to_string())?;
            run(s, op, sizes, circuit).await
        }
        Engine::Mal3Baseline => {
            let mut s = Mal3::start(p);
            s.use_baseline_runs().map_err(|e| e.to_string())?;
            run(s, op, sizes, circuit).await
        }
        Engine::Bin3 => run(Bin3::<TcpTransport>::start(p), op, sizes, circuit).await,
    }
}

/// Deterministic benchmark bits (every party can recompute what the owners input).
fn bench_bits(stream: u32, n: usize) -> Vec<bool> {
    let mut prg = Prg::new(&Seed::from_bytes([0x42; 32]), 0, stream);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let w = prg.next_u64();
        out.extend((0..64).map(|i| (w >> i) & 1 == 1).take(n - out.len()));
    }
    out
}

async fn run<S: Gates + sharing::Session<Session>>(
    mut s: S,
    op: Op,
    sizes: Sizes,
    circuit: Option<&CircuitJob>,
) -> Result<(Session, OpReport), String> {
    let e = |e: ringfence_core::Error| e.to_string();
    let me = s.base().me();
    let n = sizes.n;
    let mut m = Meter::new(op, n);
    match op {
        Op::And => {
            m.shape = Some(format!("on {}; n counts AND gates", sizes.engine.name()));
            let (x, y) = (bench_bits(1, n), bench_bits(2, n));
            let mine = |v: &[bool]| (me == KEY_OWNER).then_some(v.to_vec());
            let x = s.input_bits(KEY_OWNER, mine(&x).as_deref(), n).await.map_err(e)?;
            let y = s.input_bits(KEY_OWNER, mine(&y).as_deref(), n).await.map_err(e)?;
            for run in 0..=sizes.repeat {
                m.start(s.base_mut()).await?;
                let z = s.and(&x, &y).await.map_err(e)?;
                s.open_bits(z.slice(0..n.min(1))).await.map_err(e)?;
                m.stop(s.base_mut(), run == 0).await?;
            }
        }
        Op::Aes => {
            let c = aes(AesKey::Aes128, sizes.sbox.sbox()).map_err(e)?;
            m.shape = Some(format!(
                "AES-128 on {}, S-box {} ({} ANDs, {} layers); n counts blocks",
                sizes.engine.name(),
                sizes.sbox.name(),
                c.stats().and_count(),
                c.stats().and_depth
            ));
            let owner = |g: usize| if g == 0 { DATA_OWNER } else { KEY_OWNER };
            let groups = bench_groups(&c, n);
            let expected = plain_outputs(&c, &groups, n)?;
            timed_circuit(&mut s, &c, owner, &groups, Some(&expected), n, sizes.repeat, &mut m)
                .await?;
        }
        Op::Circuit => {
            let job = circuit.ok_or("the circuit op needs --circuit FILE")?;
            let c = &job.circuit;
            let st = c.stats();
            m.shape = Some(format!(
                "circuit on {}: {} ANDs ({} of 3+ inputs), {} layers; n counts instances",
                sizes.engine.name(),
                st.and_count(),
                st.ands_in(3..MAX_FAN_IN + 1),
                st.and_depth
            ));
            let parties = crate::ROSTER.n();
            let owner = |g: usize| PartyId((g % parties) as u8);
            match &job.inputs {
                None => {
                    let groups = bench_groups(c, n);
                    let expected = plain_outputs(c, &groups, n)?;
                    let expected = Some(&expected[..]);
                    timed_circuit(&mut s, c, owner, &groups, expected, n, sizes.repeat, &mut m)
                        .await?;
                }
                Some(values) => {
                    // Every instance gets the given values: wire i of instance t at i·n + t.
                    let groups: Vec<Vec<bool>> = values
                        .iter()
                        .map(|v| v.iter().flat_map(|&b| std::iter::repeat_n(b, n)).collect())
                        .collect();
                    let out =
                        timed_circuit(&mut s, c, owner, &groups, None, n, sizes.repeat, &mut m)
                            .await?;
                    if me == PartyId(0) {
                        // Instance 0 of each output group: its wires are at i·n.
                        let first =
                            |o: &Vec<bool>| -> Vec<bool> { o.iter().step_by(n).copied().collect() };
                        m.outputs = Some(out.iter().map(|o| hex(&first(o))).collect());
                    }
                }
            }
        }
        other => return Err(format!("{} is not a boolean-circuit op", other.name())),
    }
    Ok((s.finish(), m.finish(sizes.repeat)))
}

/// Deterministic inputs for `n` instances of `c` (wire-major), every party can recompute.
fn bench_groups(c: &Circuit, n: usize) -> Vec<Vec<bool>> {
    c.input_widths().iter().enumerate().map(|(g, &w)| bench_bits(10 + g as u32, w * n)).collect()
}

/// `repeat + 1` timed runs of `c` on `n` instances of `groups` (wire-major; group `g` from
/// `owner(g)`, the only party that reads it), every output opened to all and compared with
/// `expected` if given; the last run's opened outputs.
#[allow(clippy::too_many_arguments)]
async fn timed_circuit<S: Gates + sharing::Session<Session>>(
    s: &mut S,
    c: &Circuit,
    owner: impl Fn(usize) -> PartyId,
    groups: &[Vec<bool>],
    expected: Option<&[Vec<bool>]>,
    n: usize,
    repeat: usize,
    m: &mut Meter,
) -> Result<Vec<Vec<bool>>, String> {
    let e = |e: ringfence_core::Error| e.to_string();
    let me = s.base().me();
    let mut opened = Vec::new();
    for run in 0..=repeat {
        let inputs: Vec<Input<'_>> = groups
            .iter()
            .enumerate()
            .map(|(g, bits)| Input { owner: owner(g), bits: (me == owner(g)).then_some(&bits[..]) })
            .collect();
        m.start(s.base_mut()).await?;
        let out = c.eval_shared(s, &inputs, n).await.map_err(e)?;
        opened.clear();
        for o in out {
            opened.push(s.open_bits(o).await.map_err(e)?);
        }
        m.stop(s.base_mut(), run == 0).await?;
        if expected.is_some_and(|x| x != opened) {
            return Err(
                "the opened outputs differ from the plaintext evaluation of the circuit".into()
            );
        }
    }
    Ok(opened)
}

/// The circuit's outputs on `groups` (wire-major bits of `n` instances) by its plaintext
/// evaluation, 64 instances at a time, in the same layout.
pub(crate) fn plain_outputs(
    c: &Circuit,
    groups: &[Vec<bool>],
    n: usize,
) -> Result<Vec<Vec<bool>>, String> {
    let widths = c.input_widths();
    let outs = c.output_widths();
    let mut result: Vec<Vec<bool>> = outs.iter().map(|&w| vec![false; w * n]).collect();
    for chunk in (0..n).step_by(64) {
        let lanes = (n - chunk).min(64);
        let words: Vec<Vec<u64>> = groups
            .iter()
            .zip(widths)
            .map(|(bits, &w)| {
                (0..w)
                    .map(|i| {
                        (0..lanes)
                            .fold(0u64, |acc, t| acc | (u64::from(bits[i * n + chunk + t]) << t))
                    })
                    .collect()
            })
            .collect();
        let got = c.eval(&words).map_err(|e| e.to_string())?;
        for (g, wires) in got.iter().enumerate() {
            for (i, word) in wires.iter().enumerate() {
                for t in 0..lanes {
                    result[g][i * n + chunk + t] = (word >> t) & 1 == 1;
                }
            }
        }
    }
    Ok(result)
}
