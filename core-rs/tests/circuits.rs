//! Generated circuits evaluated securely (`Circuit::eval_shared`) on every scheme with `Gates`
//! — rep3, mal3, bin3 — against their plaintext evaluation, with inputs from several parties
//! and many instances; the rounds each scheme takes per circuit.

use ringfence_core::bin3::Bin3;
use ringfence_core::circuit::gen::{adder, aes, and_tree, greater_than, AesKey, Sbox};
use ringfence_core::circuit::shared::Input;
use ringfence_core::circuit::{passes, Circuit, Step};
use ringfence_core::mal3::Mal3;
use ringfence_core::net::{PartyId, Roster};
use ringfence_core::rep3::Rep3;
use ringfence_core::sharing::{Gates, Session};
use ringfence_core::testing::{self, MemTransport, Net};

/// `n` pseudo-random values of `width` bits (edge values first: 0, all ones, one bit).
fn values(seed: u64, width: usize, n: usize) -> Vec<u128> {
    let mask = if width == 128 { u128::MAX } else { (1u128 << width) - 1 };
    let words = testing::random_words(seed, 2 * n);
    let mut v: Vec<u128> = (0..n)
        .map(|t| ((u128::from(words[2 * t]) << 64) | u128::from(words[2 * t + 1])) & mask)
        .collect();
    for (t, e) in [0, mask, 1, mask >> 1].into_iter().enumerate().take(n) {
        v[t] = e;
    }
    v
}

/// Wire-major bits of one group: wire `i`, instance `t` at `i·n + t`.
fn wire_major(vals: &[u128], width: usize) -> Vec<bool> {
    (0..width).flat_map(|i| vals.iter().map(move |v| (v >> i) & 1 == 1)).collect()
}

fn from_wire_major(bits: &[bool], width: usize, n: usize) -> Vec<u128> {
    (0..n).map(|t| (0..width).fold(0u128, |v, i| v | (u128::from(bits[i * n + t]) << i))).collect()
}

/// Runs `c` on scheme `S` for `n` instances, input group `g` from party `g mod 3`, every output
/// opened to all; checks every party's outputs against the plaintext evaluation and returns
/// the rounds of the run (inputs and openings included).
fn agrees<S: Gates + Session<Rep3<MemTransport>>>(c: &Circuit, n: usize, seed: u64) -> u64 {
    run_checked::<S>(c, n, seed).0
}

/// [`agrees`], also returning the most payload bytes any party sent.
fn run_checked<S: Gates + Session<Rep3<MemTransport>>>(
    c: &Circuit,
    n: usize,
    seed: u64,
) -> (u64, u64) {
    let widths = c.input_widths().to_vec();
    let groups: Vec<Vec<u128>> =
        widths.iter().enumerate().map(|(g, &w)| values(seed + g as u64, w, n)).collect();
    let expected: Vec<Vec<u128>> = (0..n)
        .map(|t| c.eval_u128(&groups.iter().map(|g| g[t]).collect::<Vec<_>>()).expect("plain"))
        .collect();
    let bits: Vec<Vec<bool>> = groups.iter().zip(&widths).map(|(g, &w)| wire_major(g, w)).collect();
    let owner = |g: usize| PartyId((g % Roster::THREE.n()) as u8);
    let net = Net::new(Roster::THREE.n());
    let outs = testing::run_rep3_on(&net, Roster::THREE.n(), seed, |base| {
        let (c, bits) = (c.clone(), bits.clone());
        async move {
            let mut s = S::start(base);
            let me = s.base().me();
            let inputs: Vec<Input<'_>> = (0..bits.len())
                .map(|g| Input { owner: owner(g), bits: (me == owner(g)).then_some(&bits[g][..]) })
                .collect();
            let out = c.eval_shared(&mut s, &inputs, n).await?;
            let mut opened = Vec::new();
            for o in out {
                opened.push(s.open_bits(o).await?);
            }
            let stats = s.base().ctx().stats();
            Ok((opened, stats.rounds, stats.payload_bytes_sent))
        }
    });
    let (mut rounds, mut bytes) = (0, 0);
    for (i, o) in outs.into_iter().enumerate() {
        let (opened, r, b) = o.unwrap_or_else(|e| panic!("P{i}: {e}"));
        rounds = r;
        bytes = bytes.max(b);
        for (g, &w) in c.output_widths().iter().enumerate() {
            let got = from_wire_major(&opened[g], w, n);
            let want: Vec<u128> = expected.iter().map(|e| e[g]).collect();
            assert_eq!(got, want, "P{i}, output group {g}");
        }
    }
    (rounds, bytes)
}

/// Every scheme on one circuit; returns (rep3, mal3, bin3) rounds.
fn on_every_scheme(c: &Circuit, n: usize) -> [u64; 3] {
    [
        agrees::<Rep3<MemTransport>>(c, n, 1),
        agrees::<Mal3<MemTransport>>(c, n, 2),
        agrees::<Bin3<MemTransport>>(c, n, 3),
    ]
}

/// Rounds of a run beyond the AND layers: the session's setup, one input round per owner,
/// one opening per output group.
fn overhead(c: &Circuit) -> u64 {
    let owners = c.input_widths().len().min(Roster::THREE.n()) as u64;
    1 + owners + c.output_widths().len() as u64
}

#[test]
fn adders_and_comparators_agree_with_plaintext_on_every_scheme() {
    for (c, n) in [
        (adder(64, 4).expect("adder"), 70),
        (adder(16, 8).expect("adder"), 5),
        (greater_than(64, 8).expect("comparator"), 70),
        (greater_than(32, 2).expect("comparator"), 3),
        (and_tree(100, 8).expect("tree"), 65),
    ] {
        let [rep3, _, bin3] = on_every_scheme(&c, n);
        let depth = c.stats().and_depth as u64;
        // bin3 opens each layer in one round; rep3 splits each layer's gates into trees of
        // two-input ANDs, ⌈log₂ ℓ⌉ rounds for the layer's widest gate.
        assert_eq!(bin3, overhead(&c) + depth);
        let tree_rounds: u64 = c
            .schedule()
            .iter()
            .filter_map(|s| match s {
                Step::Ands(g) => g.iter().map(|a| a.inputs.len()).max(),
                Step::Local(_) => None,
            })
            .map(|l| u64::from(usize::BITS - (l - 1).leading_zeros()))
            .sum();
        assert_eq!(rep3, overhead(&c) + tree_rounds);
        // At least the depth of the circuit lowered to two-input ANDs.
        let lowered = passes::lower_ands(&c).expect("lowered").stats().and_depth as u64;
        assert!(tree_rounds >= lowered);
    }
}

/// One instance: a layer's gates travel side by side, 64 to a word, not one word each. A
/// 128-input two-input AND tree has 127 ANDs in 7 layers (64, 32, …, 1): 7 words per party
/// for its layers, where a word per gate would be 127.
#[test]
fn one_instance_packs_a_layers_gates_into_words() {
    let c = and_tree(128, 2).expect("tree");
    for (bytes, scheme) in [
        (run_checked::<Bin3<MemTransport>>(&c, 1, 4).1, "bin3"),
        (run_checked::<Rep3<MemTransport>>(&c, 1, 5).1, "rep3"),
    ] {
        // The layers' 7 words, the input's (up to 8: bin3's P3 seat sends two words per 64
        // bits to each peer) and a few to open the output: 20 words at most, where a word
        // per gate would be 127 for the layers alone (1,112 bytes measured that way on bin3).
        assert!(bytes <= 8 * 20, "{scheme}: {bytes} bytes");
    }
    // Several instances, not a multiple of 64: the same ANDs, the plaintext's outputs.
    for n in [2, 63, 65] {
        let [_, _, bin3] = on_every_scheme(&c, n);
        assert_eq!(bin3, overhead(&c) + 7);
    }
}

#[test]
fn aes_128_agrees_with_plaintext_on_every_scheme() {
    let c = aes(AesKey::Aes128, Sbox::BoyarPeralta).expect("aes");
    let [rep3, _, bin3] = on_every_scheme(&c, 3);
    // The S-box's 2-input ANDs: depth 4 per round whatever the scheme.
    assert_eq!(rep3, overhead(&c) + 40);
    assert_eq!(bin3, rep3);
}
