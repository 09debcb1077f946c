//! Bristol Fashion, the circuit format of SCALE-MAMBA and MP-SPDZ, read and written.
//!
//! A file is a header `ngates nwires`, a line `niv w1 … wniv` (input groups and their
//! widths), a line `nov w1 … wnov` (output groups), then one line per gate:
//! `nin nout in… out… NAME`, with NAME one of
//!
//! | line | meaning |
//! |---|---|
//! | `2 1 a b o XOR` | `o = a ⊕ b` |
//! | `2 1 a b o AND` | `o = a ∧ b` |
//! | `1 1 a o INV` | `o = ¬a` |
//! | `1 1 v o EQ` | `o = v`, a constant 0 or 1 |
//! | `1 1 a o EQW` | `o = a` |
//! | `2k k a1…ak b1…bk o1…ok MAND` | `oj = aj ∧ bj` for each j (read as k ANDs) |
//!
//! Inputs are the first wires, group after group, and outputs the last ones. Blank lines are
//! ignored.
//!
//! **Extension:** an `AND` line may have 3 to 8 inputs, `ℓ 1 w1 … wℓ o AND`, for an ℓ-input
//! AND gate. A file with such lines is not standard Bristol Fashion; [`passes::lower_ands`]
//! turns every ℓ-input AND into 2-input ones, after which [`write()`] gives a standard file.
//!
//! [`read`] refuses a malformed file with [`Error::Malformed`], naming the 1-based line.
//!
//! ```
//! use ringfence_core::circuit::bristol;
//! let text = "1 5\n1 4\n1 1\n\n4 1 0 1 2 3 4 AND\n";
//! let c = bristol::read(text)?;
//! assert_eq!(c.stats().ands[4], 1);
//! assert_eq!(c.eval_u128(&[0b1111])?, vec![1]);
//! assert_eq!(bristol::write(&c), text);
//! # Ok::<(), ringfence_core::Error>(())
//! ```
//!
//! [`passes::lower_ands`]: super::passes::lower_ands

use core::fmt::Write as _;

use super::{AndGate, Checker, Circuit, Gate, MAX_FAN_IN};
use crate::Error;

/// The most wires a file may declare: the reader allocates per wire, and a header is not
/// trusted with more (the largest published Bristol circuits have a few million).
pub const MAX_WIRES: usize = 1 << 26;

/// Parses a Bristol Fashion file (with the ℓ-input AND extension).
pub fn read(text: &str) -> Result<Circuit, Error> {
    let mut lines =
        text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim().is_empty());
    let last = text.lines().count();
    let mut next_line = |what: &str| {
        lines.next().ok_or_else(|| bad(last + 1, format!("the file ends before the {what}")))
    };

    let (n, header) = next_line("header")?;
    let header = numbers(n, header)?;
    let [gates, wires] = header[..] else {
        return Err(bad(
            n,
            format!("the header has {} numbers, not 2 (gates, wires)", header.len()),
        ));
    };
    if wires > MAX_WIRES {
        return Err(bad(n, format!("{wires} wires (this reader takes at most {MAX_WIRES})")));
    }
    let inputs = groups(next_line("input groups")?, "input")?;
    let (out_line, text_out) = next_line("output groups")?;
    let outputs = groups((out_line, text_out), "output")?;
    let mut check = Checker::new(wires, &inputs, &outputs).map_err(|e| bad(out_line, e))?;

    let mut out = Vec::new();
    let mut seen = 0;
    for (n, line) in lines {
        seen += 1;
        if seen > gates {
            return Err(bad(n, format!("more gate lines than the header's {gates}")));
        }
        for g in gate(n, line)? {
            check.gate(&g).map_err(|e| bad(n, e))?;
            out.push(g);
        }
    }
    if seen < gates {
        return Err(bad(last + 1, format!("the file ends after {seen} of {gates} gates")));
    }
    check.finish().map_err(|e| bad(out_line, e))?;
    Circuit::new(wires, inputs, outputs, out)
}

/// The circuit as a Bristol Fashion file (ℓ-input ANDs written with the extension).
pub fn write(c: &Circuit) -> String {
    let mut s = String::new();
    let list = |v: &[usize]| v.iter().map(|w| format!(" {w}")).collect::<String>();
    // Writing to a `String` cannot fail.
    let _ = writeln!(s, "{} {}", c.gates.len(), c.wires);
    let _ = writeln!(s, "{}{}", c.inputs.len(), list(&c.inputs));
    let _ = writeln!(s, "{}{}", c.outputs.len(), list(&c.outputs));
    s.push('\n');
    for g in &c.gates {
        let _ = match g {
            Gate::Xor { a, b, out } => writeln!(s, "2 1 {a} {b} {out} XOR"),
            Gate::Not { a, out } => writeln!(s, "1 1 {a} {out} INV"),
            Gate::Copy { a, out } => writeln!(s, "1 1 {a} {out} EQW"),
            Gate::Const { value, out } => writeln!(s, "1 1 {} {out} EQ", u8::from(*value)),
            Gate::And(g) => writeln!(s, "{} 1{} {} AND", g.inputs.len(), list(&g.inputs), g.out),
        };
    }
    s
}

fn bad(line: usize, reason: String) -> Error {
    Error::Malformed { line, reason }
}

fn numbers(n: usize, line: &str) -> Result<Vec<usize>, Error> {
    line.split_whitespace().map(|t| number(n, t)).collect()
}

/// A count or index. Parsed as `u64` first so that a number too large for this platform's
/// `usize` (wasm32) is reported as too large, not as "not a number"; anything above
/// [`MAX_WIRES`] is refused by the checks that follow.
fn number(n: usize, token: &str) -> Result<usize, Error> {
    let v: u64 =
        token.parse().map_err(|_| bad(n, format!("'{token}' is not a wire count or index")))?;
    Ok(usize::try_from(v).unwrap_or(usize::MAX))
}

/// A line `count w1 … wcount`.
fn groups((n, line): (usize, &str), what: &str) -> Result<Vec<usize>, Error> {
    let v = numbers(n, line)?;
    match v.split_first() {
        Some((&count, widths)) if widths.len() == count => Ok(widths.to_vec()),
        Some((&count, widths)) => {
            Err(bad(n, format!("{count} {what} groups announced, {} widths given", widths.len())))
        }
        None => Err(bad(n, format!("no {what} groups line"))),
    }
}

/// The gates of one gate line (several for MAND).
fn gate(n: usize, line: &str) -> Result<Vec<Gate>, Error> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let (Some(nin), Some(nout)) = (tokens.first(), tokens.get(1)) else {
        return Err(bad(n, "a gate line needs its input and output counts".into()));
    };
    let (nin, nout) = (number(n, nin)?, number(n, nout)?);
    let want = nin.checked_add(nout).and_then(|k| k.checked_add(3));
    if want != Some(tokens.len()) {
        return Err(bad(
            n,
            format!(
                "{nin} inputs and {nout} outputs need {} tokens, the line has {}",
                want.map_or_else(|| "too many".into(), |k| k.to_string()),
                tokens.len()
            ),
        ));
    }
    let name = tokens[tokens.len() - 1];
    let ws =
        tokens[2..tokens.len() - 1].iter().map(|t| number(n, t)).collect::<Result<Vec<_>, _>>()?;
    let (ins, outs) = ws.split_at(nin);
    let arity = |want_in: usize, want_out: usize| {
        if (nin, nout) == (want_in, want_out) {
            Ok(())
        } else {
            Err(bad(
                n,
                format!(
                    "{name} takes {want_in} inputs and {want_out} outputs, not {nin} and {nout}"
                ),
            ))
        }
    };
    Ok(match name {
        "XOR" => {
            arity(2, 1)?;
            vec![Gate::Xor { a: ins[0], b: ins[1], out: outs[0] }]
        }
        "INV" => {
            arity(1, 1)?;
            vec![Gate::Not { a: ins[0], out: outs[0] }]
        }
        "EQW" => {
            arity(1, 1)?;
            vec![Gate::Copy { a: ins[0], out: outs[0] }]
        }
        "EQ" => {
            arity(1, 1)?;
            let value = match ins[0] {
                0 => false,
                1 => true,
                v => return Err(bad(n, format!("EQ assigns a constant 0 or 1, not {v}"))),
            };
            vec![Gate::Const { value, out: outs[0] }]
        }
        "AND" => {
            if nout != 1 || !(2..=MAX_FAN_IN).contains(&nin) {
                return Err(bad(
                    n,
                    format!(
                        "AND takes 2 to {MAX_FAN_IN} inputs and 1 output, not {nin} and {nout}"
                    ),
                ));
            }
            vec![Gate::And(AndGate { inputs: ins.to_vec(), out: outs[0] })]
        }
        "MAND" => {
            if nout == 0 || nin != 2 * nout {
                return Err(bad(
                    n,
                    format!("MAND takes 2k inputs and k outputs, not {nin} and {nout}"),
                ));
            }
            // The k ANDs of a MAND run side by side: none may read another's output.
            if let Some(w) = ins.iter().find(|w| outs.contains(w)) {
                return Err(bad(n, format!("MAND reads its own output wire {w}")));
            }
            let (a, b) = ins.split_at(nout);
            (0..nout)
                .map(|j| Gate::And(AndGate { inputs: vec![a[j], b[j]], out: outs[j] }))
                .collect()
        }
        other => return Err(bad(n, format!("unknown gate '{other}'"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuit::Builder;

    #[test]
    fn round_trip_keeps_every_gate_kind() {
        let (mut b, ins) = Builder::new(&[6, 2]);
        let x = b.and(&ins[0][..5]);
        let y = b.xor(x, ins[1][0]);
        let z = b.not(y);
        let k = b.constant(true);
        let w = b.and(&[z, k, ins[1][1]]);
        let c = b.finish(&[vec![w, ins[0][5]], vec![y]]).unwrap();
        let text = write(&c);
        assert_eq!(read(&text).unwrap(), c);
        assert!(
            text.lines().any(|l| l.ends_with(" EQW")) && text.lines().any(|l| l.ends_with(" EQ"))
        );
    }

    #[test]
    fn reads_mand_as_two_input_ands() {
        let c = read("1 6\n1 4\n1 2\n4 2 0 2 1 3 4 5 MAND\n").unwrap();
        assert_eq!(c.stats().ands[2], 2);
        for v in 0..16u128 {
            let want = (v & 1 & (v >> 1)) | ((v >> 2) & (v >> 3) & 1) << 1;
            assert_eq!(c.eval_u128(&[v]).unwrap(), vec![want]);
        }
    }

    /// The line and the reason of a refused file.
    fn refused(text: &str) -> (usize, String) {
        match read(text) {
            Err(Error::Malformed { line, reason }) => (line, reason),
            other => panic!("{text:?} gave {other:?}"),
        }
    }

    #[test]
    fn refuses_malformed_files_with_line_and_reason() {
        let ok = "2 4\n1 2\n1 1\n\n2 1 0 1 2 XOR\n1 1 2 3 INV\n";
        assert!(read(ok).is_ok());
        for (text, line, why) in [
            ("2 4\n1 2\n1 1\n2 1 0 1 2 XOR\n", 5, "ends after 1 of 2"),
            ("1 4\n1 2\n1 1\n2 1 0 1 2 XOR\n1 1 2 3 INV\n", 5, "more gate lines"),
            ("2 4\n1 2\n1 1\n2 1 0 1 2 XOR\n2 1 2 1 3 INV\n", 5, "INV takes 1 inputs"),
            ("2 4\n1 2\n1 1\n1 1 0 2 XOR\n1 1 2 3 INV\n", 4, "XOR takes 2 inputs"),
            ("2 4\n1 2\n1 1\n2 1 0 1 2 XOR\n1 1 2 3\n", 5, "need 5 tokens, the line has 4"),
            ("2 4\n1 2\n1 1\n2 1 0 1 2 XOR\n1 1 2 3 INV extra\n", 5, "need 5 tokens"),
            ("2 4\n1 2\n1 1\n2 1 0 3 2 XOR\n1 1 2 3 INV\n", 4, "wire 3 read before"),
            ("2 4\n1 2\n1 1\n1 1 3 2 INV\n1 1 2 3 INV\n", 4, "wire 3 read before"),
            ("2 4\n1 2\n1 1\n2 1 0 1 2 XOR\n1 1 0 2 INV\n", 5, "assigned twice"),
            ("2 4\n1 2\n1 1\n2 1 0 1 1 XOR\n1 1 1 3 INV\n", 4, "assigned twice"),
            ("2 4\n1 2\n1 1\n2 1 0 9 2 XOR\n1 1 2 3 INV\n", 4, "wire 9 out of range"),
            ("2 4\n1 2\n1 1\n2 1 0 1 2 XOR\n1 1 2 4 INV\n", 5, "wire 4 out of range"),
            ("1 11\n1 9\n1 1\n9 1 0 1 2 3 4 5 6 7 8 10 AND\n", 4, "AND takes 2 to 8"),
            ("1 3\n1 2\n1 1\n1 1 0 2 AND\n", 4, "AND takes 2 to 8"),
            ("2 4\n1 2\n1 1\n2 1 0 1 2 OR\n1 1 2 3 INV\n", 4, "unknown gate 'OR'"),
            ("2 4\n1 2\n1 1\n2 1 0 x 2 XOR\n1 1 2 3 INV\n", 4, "'x' is not"),
            ("2 4\n1 2\n1 1\n2 1 0 -1 2 XOR\n1 1 2 3 INV\n", 4, "'-1' is not"),
            ("2 4 5\n1 2\n1 1\n", 1, "3 numbers"),
            ("2 4\n2 2\n1 1\n", 2, "2 input groups announced, 1 widths"),
            ("2 4\n1 2\n", 3, "ends before the output groups"),
            ("", 1, "ends before the header"),
            ("2 4\n1 3\n1 2\n", 3, "do not fit in 4 wires"),
            ("1 4\n1 2\n1 1\n2 1 0 1 2 XOR\n", 3, "output wire 3 is never assigned"),
            ("1 4\n1 2\n1 1\n1 1 2 3 EQ\n", 4, "constant 0 or 1, not 2"),
            ("1 6\n1 2\n1 2\n4 2 0 1 1 5 4 5 MAND\n", 4, "MAND reads its own output wire 5"),
            ("1 6\n1 2\n1 2\n4 2 0 1 1 3 4 5 MAND\n", 4, "wire 3 read before"),
            ("1 5\n1 2\n1 1\n3 1 0 1 1 4 MAND\n", 4, "MAND takes 2k inputs"),
            ("1 99999999999\n1 2\n1 1\n", 1, "at most"),
        ] {
            let (l, reason) = refused(text);
            assert_eq!(l, line, "{text:?}: {reason}");
            assert!(reason.contains(why), "{text:?}: {reason}");
        }
    }

    #[test]
    fn a_cycle_is_a_wire_read_before_assignment() {
        // 2 = 0 ⊕ 3, 3 = ¬2: each gate reads the other's output.
        let (line, reason) = refused("2 4\n1 2\n1 1\n2 1 0 3 2 XOR\n1 1 2 3 INV\n");
        assert_eq!((line, reason.contains("read before")), (4, true));
    }
}
