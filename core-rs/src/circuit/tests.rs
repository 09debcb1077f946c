//! Tests of the representation, the schedule and plaintext evaluation.

use super::*;

/// (a ∧ b ∧ c) ⊕ d, then ¬ of it ANDed with a: depth 2, one 3-input and one 2-input AND.
fn small() -> Circuit {
    let (mut b, ins) = Builder::new(&[3, 1]);
    let t = b.and(&ins[0]);
    let u = b.xor(t, ins[1][0]);
    let v = b.not(u);
    let r = b.and(&[v, ins[0][0]]);
    b.finish(&[vec![u, r]]).unwrap()
}

#[test]
fn builder_puts_outputs_last_and_counts() {
    let c = small();
    assert_eq!(c.input_widths(), &[3, 1]);
    assert_eq!(c.output_wires(0), Some(c.wires() - 2..c.wires()));
    assert_eq!(c.input_wires(1), Some(3..4));
    assert_eq!(c.input_wires(2), None);
    let s = c.stats();
    assert_eq!(
        (s.ands[2], s.ands[3], s.and_count(), s.xor, s.not, s.and_depth),
        (1, 1, 2, 1, 1, 2)
    );
    for a in 0..8u128 {
        for d in 0..2u128 {
            let t = u128::from(a == 7) ^ d;
            assert_eq!(c.eval_u128(&[a, d]).unwrap(), vec![t | ((1 - t) & a & 1) << 1]);
        }
    }
}

#[test]
fn builder_copies_input_and_repeated_outputs() {
    let (mut b, ins) = Builder::new(&[2]);
    let x = b.xor(ins[0][0], ins[0][1]);
    let c = b.finish(&[vec![ins[0][1], x, x]]).unwrap();
    assert_eq!(c.stats().other, 2);
    assert_eq!(c.eval_u128(&[0b10]).unwrap(), vec![0b111]);
    assert_eq!(c.eval_u128(&[0b11]).unwrap(), vec![0b001]);
}

#[test]
fn builder_reports_misuse_at_finish() {
    let (mut b, ins) = Builder::new(&[9]);
    b.and(&ins[0]);
    assert!(matches!(b.finish(&[]), Err(Error::ApiMisuse(_))));
    let (mut b, _) = Builder::new(&[1]);
    let x = b.not(5);
    assert!(matches!(b.finish(&[vec![x]]), Err(Error::ApiMisuse(_))));
}

#[test]
fn new_checks_topological_order_and_layout() {
    let and = |inputs: Vec<Wire>, out| Gate::And(AndGate { inputs, out });
    let ok = Circuit::new(
        4,
        vec![2],
        vec![1],
        vec![Gate::Xor { a: 0, b: 1, out: 2 }, and(vec![0, 2], 3)],
    );
    assert!(ok.is_ok());
    for (gates, outs) in [
        (vec![and(vec![0, 3], 2), Gate::Not { a: 0, out: 3 }], 1), // read before assigned
        (vec![Gate::Not { a: 0, out: 3 }, Gate::Not { a: 1, out: 3 }], 1), // assigned twice
        (vec![Gate::Not { a: 0, out: 1 }, Gate::Not { a: 1, out: 3 }], 1), // assigns an input
        (vec![Gate::Not { a: 9, out: 3 }], 1),                     // out of range
        (vec![and(vec![0], 3)], 1),                                // fan-in 1
        (vec![and(vec![0; 9], 3)], 1),                             // fan-in 9
        (vec![Gate::Not { a: 0, out: 2 }], 1),                     // output wire 3 never assigned
        (vec![], 3),                                               // inputs and outputs overlap
    ] {
        assert!(matches!(Circuit::new(4, vec![2], vec![outs], gates), Err(Error::ApiMisuse(_))));
    }
}

#[test]
fn schedule_alternates_and_runs_each_layer_once() {
    let c = small();
    let steps = c.schedule();
    let kinds: Vec<_> = steps.iter().map(|s| matches!(s, Step::Ands(_))).collect();
    // No local gate before the first layer; XOR and NOT after it; the last AND alone.
    assert_eq!(kinds, vec![true, false, true]);
    let gates: usize = steps
        .iter()
        .map(|s| match s {
            Step::Local(g) => g.len(),
            Step::Ands(g) => g.len(),
        })
        .sum();
    assert_eq!(gates, c.gates().len());
    // Every gate reads only wires made by earlier steps (or by earlier local gates of its step).
    let mut ready = vec![false; c.wires()];
    ready[..4].fill(true);
    for s in &steps {
        match s {
            Step::Local(gs) => {
                for g in gs {
                    assert!(g.inputs().all(|w| ready[w]));
                    ready[g.out()] = true;
                }
            }
            Step::Ands(gs) => {
                assert!(gs.iter().all(|g| g.inputs.iter().all(|&w| ready[w])));
                gs.iter().for_each(|g| ready[g.out] = true);
            }
        }
    }
}

#[test]
fn eval_is_bitsliced_over_64_instances() {
    let c = small();
    let a: Vec<u128> = (0..64).map(|t| t % 8).collect();
    let d: Vec<u128> = (0..64).map(|t| (t / 8) & 1).collect();
    let out = c.eval(&[pack(&a, 3).unwrap(), pack(&d, 1).unwrap()]).unwrap();
    let got = unpack(&out[0], 64);
    for t in 0..64 {
        assert_eq!(got[t], c.eval_u128(&[a[t], d[t]]).unwrap()[0]);
    }
    assert!(matches!(c.eval(&[vec![0; 3]]), Err(Error::ApiMisuse(_))));
    assert!(matches!(c.eval_u128(&[1]), Err(Error::ApiMisuse(_))));
    assert!(pack(&[0; 65], 1).is_err());
}
