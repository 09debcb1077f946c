//! The conformance suites of `ringfence_core::testing::conformance`, for every scheme at both
//! ring widths: each suite is its own test, in a module per scheme and ring (`rep3_z64::costs`).
//!
//! A scheme's description holds its online cost model as data: elements per value (per output
//! for products) and messages each party sends, and rounds. The figures are those its
//! documentation states: `rep3::arith` and `rep3::trunc` for rep3, the table of `meteor` for
//! METEOR, the table of `rss` (the paper's Table 2) for rss at 3, 5 and 7 parties.

use std::marker::PhantomData;

use ringfence_core::bin3::Bin3;
use ringfence_core::mal3::Mal3;
use ringfence_core::meteor::Meteor;
use ringfence_core::net::Roster;
use ringfence_core::rep3::Rep3;
use ringfence_core::ring::{Z32, Z64};
use ringfence_core::rss::Rss;
use ringfence_core::spdz2k::{Mesh, Spdz2k};
use ringfence_core::testing::conformance::{
    self, BitCost, BitCostModel, CostModel, PartyCost, Scheme,
};
use ringfence_core::testing::MemTransport;

/// One element per value in one message, in one round.
const ONE: PartyCost = PartyCost { elems: 1, msgs: 1, rounds: 1 };
/// Nothing sent, in a round every party opens.
const IDLE: PartyCost = PartyCost { elems: 0, msgs: 0, rounds: 1 };

fn rep3() -> Scheme<Rep3<MemTransport>> {
    // A truncated product's components go to the two holders of component 0 (P0 and P2): P1
    // sends one to each, they send one to each other.
    let p1_truncating = PartyCost { elems: 2, msgs: 2, rounds: 1 };
    Scheme {
        party: PhantomData,
        roster: Roster::THREE,
        binds_operands: false,
        cost: Some(CostModel {
            // The owner sends its next party the component that is not from a shared key.
            input: vec![ONE, IDLE, IDLE],
            open: vec![ONE; 3],
            // The receiver lacks one component, which its previous party holds.
            open_to: vec![IDLE, IDLE, ONE],
            mul: vec![ONE; 3],
            mul_fixed: vec![ONE, p1_truncating, ONE],
            matmul: vec![ONE; 3],
            matmul_fixed: vec![ONE, p1_truncating, ONE],
        }),
        boolean: Some(rep3_bits()),
    }
}

/// rep3's boolean costs for k-bit rings, in bits per value (`rep3::compare`): an AND is one
/// bit; an MSB is P1's sharing of `x1 + x2` (k bits) and 3k − 5 − ⌈log₂(k−1)⌉ AND bits in
/// 2 + ⌈log₂(k−1)⌉ rounds; equality is P1's sharing and an AND tree of k − 1 ANDs in
/// 1 + log₂k rounds; a bit injection opens the masked bit (1 bit) and a bit product also
/// reshares one element (k bits), in one round.
fn rep3_bits() -> BitCostModel {
    fn log2_ceil(x: u32) -> u64 {
        u64::from(u32::BITS - (x - 1).leading_zeros())
    }
    BitCostModel {
        and: |_| BitCost { bits: vec![1; 3], rounds: 1 },
        msb: |k| {
            let (k, l) = (u64::from(k), log2_ceil(k - 1));
            let ands = 3 * k - 5 - l;
            BitCost { bits: vec![ands, ands + k, ands], rounds: 2 + l }
        },
        eq: |k| {
            let k64 = u64::from(k);
            BitCost { bits: vec![k64 - 1, 2 * k64 - 1, k64 - 1], rounds: 1 + log2_ceil(k) }
        },
        b2a: |_| BitCost { bits: vec![1; 3], rounds: 1 },
        bit_mul: |k| BitCost { bits: vec![u64::from(k) + 1; 3], rounds: 1 },
    }
}

fn meteor() -> Scheme<Meteor<MemTransport>> {
    Scheme {
        party: PhantomData,
        roster: Roster::THREE,
        binds_operands: true,
        cost: Some(CostModel {
            // The masked value goes to both other parties.
            input: vec![PartyCost { elems: 2, msgs: 2, rounds: 1 }, IDLE, IDLE],
            open: vec![ONE; 3],
            open_to: vec![IDLE, IDLE, ONE],
            // Truncation is folded into the one reveal of a product.
            mul: vec![ONE; 3],
            mul_fixed: vec![ONE; 3],
            matmul: vec![ONE; 3],
            matmul_fixed: vec![ONE; 3],
        }),
        // METEOR's comparisons run inside its inference (their setup depends on the masks);
        // it has no `Boolean` yet.
        boolean: None,
    }
}

/// mal3 checks every product at the next opening and refills its triple pool when it runs
/// low, so its operations have no fixed cost per value (`tests/mal3.rs` states its costs), and
/// two openings of the same kind do not send the same messages (the first carries the
/// pending checks), which `fresh_randomness` compares; it runs every other suite.
fn mal3() -> Scheme<Mal3<MemTransport>> {
    Scheme {
        party: PhantomData,
        roster: Roster::THREE,
        binds_operands: false,
        cost: None,
        boolean: None,
    }
}

/// rss among `n = 2t + 1` parties, on its own session (its boolean costs are asserted in
/// `tests/rss.rs`, per roster): an input costs its owner `t` elements
/// (one share to each of its `t` other holders); opening to all, `t` sums per party; opening to
/// one party, one sum from each of the `t` parties before it; a product resharing `t` elements
/// per party; a fixed-point product one multiply-and-open of the truncation-masked product,
/// `n − 1` elements per party (`rss::trunc`).
fn rss(n: usize, t: usize) -> Scheme<Rss<MemTransport>, Rss<MemTransport>> {
    let t64 = t as u64;
    let each = PartyCost { elems: t64, msgs: t64, rounds: 1 };
    let broadcast = PartyCost { elems: n as u64 - 1, msgs: n as u64 - 1, rounds: 1 };
    // By role (me − about mod n): the owner sends, the receiver's t predecessors send.
    let mut input = vec![IDLE; n];
    input[0] = each;
    let open_to: Vec<PartyCost> =
        (0..n).map(|role| if role >= n - t { ONE } else { IDLE }).collect();
    Scheme {
        party: PhantomData,
        roster: Roster::new(n, t).expect("a supported roster"),
        binds_operands: false,
        cost: Some(CostModel {
            input,
            open: vec![each; n],
            open_to,
            mul: vec![each; n],
            mul_fixed: vec![broadcast; n],
            matmul: vec![each; n],
            matmul_fixed: vec![broadcast; n],
        }),
        boolean: None,
    }
}

/// spdz2k among `n` parties (any `n − 1` corrupt), with the test dealer's material: every
/// opening ends in a MAC check of fixed cost, so its operations have no fixed cost per value
/// (`tests/spdz2k.rs` counts them), and an opening's last message is its verdict, the same
/// every time, which `fresh_randomness` would flag.
fn spdz2k(n: usize) -> Scheme<Spdz2k<MemTransport>, Mesh<MemTransport>> {
    Scheme {
        party: PhantomData,
        roster: Roster::new(n, n - 1).expect("a dishonest-majority roster"),
        binds_operands: false,
        cost: None,
        boolean: None,
    }
}

fn spdz2k3() -> Scheme<Spdz2k<MemTransport>, Mesh<MemTransport>> {
    spdz2k(3)
}

fn spdz2k4() -> Scheme<Spdz2k<MemTransport>, Mesh<MemTransport>> {
    spdz2k(4)
}

fn rss3() -> Scheme<Rss<MemTransport>, Rss<MemTransport>> {
    rss(3, 1)
}

fn rss5() -> Scheme<Rss<MemTransport>, Rss<MemTransport>> {
    rss(5, 2)
}

fn rss7() -> Scheme<Rss<MemTransport>, Rss<MemTransport>> {
    rss(7, 3)
}

/// A module `$name` with one test per suite, for scheme `$scheme` over ring `$ring`; with
/// `+ boolean`, the suites of `Boolean` schemes too.
macro_rules! instance {
    ($name:ident: $scheme:ident, $ring:ty) => {
        instance!(@suites $name, $scheme, $ring: input_and_open, mul_exact, matmul_exact,
            fixed_point, linear, chaining, costs, misuse, misuse_of_input_values,
            fresh_randomness, observer_view);
    };
    ($name:ident: $scheme:ident + boolean, $ring:ty) => {
        instance!(@suites $name, $scheme, $ring: input_and_open, mul_exact, matmul_exact,
            fixed_point, linear, chaining, costs, misuse, misuse_of_input_values,
            fresh_randomness, observer_view, bits_and_conversions, comparisons, selections,
            bit_costs, bit_misuse);
    };
    ($name:ident: $scheme:ident + boolean with uncosted bits, $ring:ty) => {
        instance!(@suites $name, $scheme, $ring: input_and_open, mul_exact, matmul_exact,
            fixed_point, linear, chaining, costs, misuse, misuse_of_input_values,
            fresh_randomness, observer_view, bits_and_conversions, comparisons, selections,
            bit_misuse);
    };
    ($name:ident: $scheme:ident uncosted, $ring:ty) => {
        instance!(@suites $name, $scheme, $ring: input_and_open, mul_exact, matmul_exact,
            fixed_point, linear, chaining, misuse, misuse_of_input_values, observer_view);
    };
    ($name:ident: $scheme:ident uncosted + boolean, $ring:ty) => {
        instance!(@suites $name, $scheme, $ring: input_and_open, mul_exact, matmul_exact,
            fixed_point, linear, chaining, misuse, misuse_of_input_values, observer_view,
            bits_and_conversions, comparisons, selections, bit_misuse);
    };
    (@suites $name:ident, $scheme:ident, $ring:ty: $($suite:ident),*) => {
        mod $name {
            use super::*;
            $(
                #[test]
                fn $suite() {
                    conformance::$suite::<$ring, _, _>(&$scheme());
                }
            )*
        }
    };
}

instance!(rep3_z32: rep3 + boolean, Z32);
instance!(rep3_z64: rep3 + boolean, Z64);
instance!(meteor_z32: meteor, Z32);
instance!(meteor_z64: meteor, Z64);
instance!(mal3_z32: mal3 uncosted + boolean, Z32);
instance!(mal3_z64: mal3 uncosted + boolean, Z64);
instance!(spdz2k3_z32: spdz2k3 uncosted + boolean, Z32);
instance!(spdz2k3_z64: spdz2k3 uncosted + boolean, Z64);
instance!(spdz2k4_z32: spdz2k4 uncosted + boolean, Z32);
instance!(spdz2k4_z64: spdz2k4 uncosted + boolean, Z64);
instance!(rss3_z32: rss3 + boolean with uncosted bits, Z32);
instance!(rss3_z64: rss3 + boolean with uncosted bits, Z64);
instance!(rss5_z32: rss5 + boolean with uncosted bits, Z32);
instance!(rss5_z64: rss5 + boolean with uncosted bits, Z64);
instance!(rss7_z32: rss7 + boolean with uncosted bits, Z32);
instance!(rss7_z64: rss7 + boolean with uncosted bits, Z64);

/// The boolean-circuit suite, for every scheme with `Gates`: a layer costs rep3 one round per
/// level of a two-input AND tree, bin3 one round per level of a tree of gates of up to eight
/// inputs; mal3's rounds depend on its triple pool.
mod gates {
    use super::*;

    fn log_ceil(base: usize, x: usize) -> u64 {
        let (mut levels, mut reach) = (0, 1);
        while reach < x {
            reach *= base;
            levels += 1;
        }
        levels
    }

    #[test]
    fn rep3() {
        conformance::gates(&super::rep3(), Some(|l| log_ceil(2, l)));
    }

    #[test]
    fn mal3() {
        conformance::gates(&super::mal3(), None);
    }

    #[test]
    fn spdz2k() {
        for scheme in [super::spdz2k3(), super::spdz2k4()] {
            conformance::gates(&scheme, None);
        }
    }

    #[test]
    fn rss() {
        for scheme in [super::rss3(), super::rss5(), super::rss7()] {
            conformance::gates(&scheme, Some(|l| log_ceil(2, l)));
        }
    }

    #[test]
    fn bin3() {
        let scheme: Scheme<Bin3<MemTransport>> = Scheme {
            party: PhantomData,
            roster: Roster::THREE,
            binds_operands: false,
            cost: None,
            boolean: None,
        };
        conformance::gates(&scheme, Some(|l| log_ceil(8, l)));
    }
}
