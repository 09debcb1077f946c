//! The suite of [`Gates`] schemes: inputs of bits from every party, public bits, local XOR and
//! NOT, and layers of ANDs of mixed fan-in (one operand up to twenty) against plaintext, on
//! lengths around the 64-bit word; the rounds of a layer; misuse refused before sending.

use super::{run, run_as, stats_of, Scheme, TestBase};
use crate::net::Stats;
use crate::sharing::{Bitwise, Gates, Session};
use crate::testing::random_words;
use crate::Error;

/// The fewest wires input by the parties (each party inputs at least one).
const MIN_INPUTS: usize = 6;

/// Fan-ins of the gates of the test layer, widest last.
const FAN_INS: [usize; 12] = [1, 2, 3, 4, 5, 6, 7, 8, 2, 9, 17, 20];

/// `n` pseudo-random bits from `seed`.
fn bits(seed: u64, n: usize) -> Vec<bool> {
    random_words(seed, n).into_iter().map(|w| w & 1 == 1).collect()
}

/// The operands of gate `g`'s input `j`: wires chosen to repeat across gates and within wide
/// ones (the identity holds for any inputs), every fourth one negated.
fn operand(g: usize, j: usize, wires: usize) -> (usize, bool) {
    ((g * 7 + j * 3) % wires, (g + j) % 4 == 1)
}

/// Every gate of `FAN_INS` over wires of `n` bits input by each party in turn (six wires, or
/// one per party if there are more parties) plus one public wire, in one [`Gates::and_layer`],
/// and an `and_many` and `and` beside it; every party opens and compares with plaintext.
/// `layer_rounds(ℓ)`, when the scheme has a fixed cost, is the rounds of a layer whose widest
/// gate has `ℓ` inputs.
pub fn gates<S: Gates + Session<B>, B: TestBase>(
    sc: &Scheme<S, B>,
    layer_rounds: Option<fn(usize) -> u64>,
) {
    let parties = &sc.parties();
    let count = MIN_INPUTS.max(parties.len());
    // The public wire comes right after the inputs.
    let pub_wire = count;
    for n in [1usize, 63, 64, 65, 200] {
        let inputs: Vec<Vec<bool>> =
            (0..count as u64).map(|k| bits(100 * n as u64 + k, n)).collect();
        let public = bits(7, n);
        let mut wires = inputs.clone();
        wires.push(public.clone());
        let xored: Vec<bool> = wires[0].iter().zip(&wires[1]).map(|(a, b)| a ^ b).collect();
        wires.push(xored);
        let w = wires.len();
        let expected: Vec<Vec<bool>> = FAN_INS
            .iter()
            .enumerate()
            .map(|(g, &l)| {
                (0..n)
                    .map(|i| {
                        (0..l).all(|j| {
                            let (k, neg) = operand(g, j, w);
                            wires[k][i] ^ neg
                        })
                    })
                    .collect()
            })
            .collect();
        let many: Vec<bool> =
            (0..n).map(|i| wires[2][i] && !wires[3][i] && wires[pub_wire][i]).collect();
        let two: Vec<bool> = (0..n).map(|i| wires[4][i] && wires[5][i]).collect();
        let widest = *FAN_INS.iter().max().unwrap_or(&1);
        let outs = run_as(sc, "gates", 31, |me, mut s| {
            let inputs = inputs.clone();
            let public = public.clone();
            async move {
                let mut x = Vec::new();
                for (k, v) in inputs.iter().enumerate() {
                    let owner = parties[k % parties.len()];
                    let mine = (me == owner).then_some(&v[..]);
                    x.push(s.input_bits(owner, mine, n).await?);
                }
                x.push(s.constant_bits(&public));
                x.push(x[0].xor(&x[1])?);
                let ops: Vec<Vec<S::Bits>> = FAN_INS
                    .iter()
                    .enumerate()
                    .map(|(g, &l)| {
                        (0..l)
                            .map(|j| match operand(g, j, x.len()) {
                                (k, true) => x[k].not(),
                                (k, false) => x[k].clone(),
                            })
                            .collect()
                    })
                    .collect();
                let refs: Vec<Vec<&S::Bits>> = ops.iter().map(|g| g.iter().collect()).collect();
                let gates: Vec<&[&S::Bits]> = refs.iter().map(|g| &g[..]).collect();
                let before: Stats = stats_of::<B, S>(&s);
                let layer = s.and_layer(&gates).await?;
                let rounds = (stats_of::<B, S>(&s) - before).rounds;
                let m = s.and_many(&[&x[2], &x[3].not(), &x[pub_wire]]).await?;
                let t = s.and(&x[4], &x[5]).await?;
                let mut opened = Vec::new();
                for v in layer.into_iter().chain([m, t]) {
                    opened.push(s.open_bits(v).await?);
                }
                Ok((opened, rounds))
            }
        });
        for (i, (opened, rounds)) in outs.into_iter().enumerate() {
            assert_eq!(opened.len(), FAN_INS.len() + 2, "P{i}, {n} bits");
            for (g, want) in expected.iter().enumerate() {
                assert_eq!(&opened[g], want, "P{i}: gate {g} of {} inputs, {n} bits", FAN_INS[g]);
            }
            assert_eq!(opened[FAN_INS.len()], many, "P{i}: and_many, {n} bits");
            assert_eq!(opened[FAN_INS.len() + 1], two, "P{i}: and, {n} bits");
            if let Some(f) = layer_rounds {
                assert_eq!(rounds, f(widest), "P{i}: rounds of a layer up to {widest} inputs");
            }
        }
    }
    gate_misuse(sc);
}

/// A gate without operands, and operands of different lengths, are refused with
/// [`Error::ApiMisuse`] before anything is sent.
fn gate_misuse<S: Gates + Session<B>, B: TestBase>(sc: &Scheme<S, B>) {
    let outs = run(sc, "gate misuse", 5, |mut s| async move {
        let a = s.constant_bits(&[true, false, true]);
        let b = s.constant_bits(&[true]);
        let before = stats_of::<B, S>(&s);
        let empty = s.and_layer(&[&[&a, &a], &[]]).await;
        let uneven = s.and_layer(&[&[&a, &b]]).await;
        let pair = s.and(&a, &b).await;
        Ok((vec![empty.err(), uneven.err(), pair.err()], stats_of::<B, S>(&s) - before))
    });
    for (i, (errs, sent)) in outs.into_iter().enumerate() {
        for e in errs {
            assert!(matches!(e, Some(Error::ApiMisuse(_))), "P{i}: {e:?}");
        }
        assert_eq!(sent.frames_sent, 0, "P{i} sent before refusing");
    }
}
