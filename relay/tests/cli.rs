//! The `ringfence` binary end to end: the demo's private classification checks itself, `classify` runs a user's model on
//! the user's JSON, `.npy` and CSV samples, `bench --json` prints the
//! documented keys and sums a batch run in sub-batches, runs a Bristol Fashion circuit (and refuses a malformed one), `circuit gen` writes circuits it runs, runs rss among five
//! parties at the protocols' costs (and refuses counts and ops a backend does not run), a party process exits when its parent goes away
//! and runs without transparent huge pages unless asked.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_ringfence");

#[test]
fn demo_classifies_privately_and_matches_the_plaintext_model() {
    // The debug build is slow on LeNet (the default): NN-A keeps this test short.
    for backend in ["meteor", "rep3"] {
        let out = Command::new(EXE)
            .args(["demo", "--model", "nn-a", "--sample", "3", "--backend", backend])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("OK: the private answer equals the plaintext model's"), "{text}");
        assert!(text.contains("what each party received"), "{text}");
        for p in ["P0: setup", "P1: setup", "P2: setup"] {
            assert!(text.contains(p), "{text}");
        }
        // The setup runs in the parties' mesh before the client arrives, on either backend.
        let ahead = text.matches("(run made ahead)").count();
        assert_eq!(ahead, 3, "{text}");
        assert!(text.contains("made ahead of demand by the parties among themselves"), "{text}");
    }
}

#[test]
fn demo_with_five_servers_classifies_on_rss() {
    let out = Command::new(EXE)
        .args(["demo", "--parties", "5", "--model", "nn-a", "--sample", "7"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("OK: the private answer equals the plaintext model's"), "{text}");
    assert!(text.contains("(rss backend, model nn-a)"), "{text}");
    assert!(text.contains("any 2 of them together learn nothing"), "{text}");
    for p in ["P0: setup", "P1: setup", "P2: setup", "P3: setup", "P4: setup"] {
        assert!(text.contains(p), "{text}");
    }
}

/// One server and the client computing as the second party (spdz2k): the preprocessing is
/// made by the two in the session, and the answer is onnxruntime's.
#[test]
fn demo_with_one_server_classifies_on_spdz2k() {
    let out = Command::new(EXE)
        .args(["demo", "--parties", "1", "--model", "logreg", "--sample", "4"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("OK: the private answer equals the plaintext model's"), "{text}");
    assert!(text.contains("computes as party P1 (spdz2k backend, model logreg)"), "{text}");
    assert!(text.contains("P0: setup") && !text.contains("P1: setup"), "{text}");
}

/// `ringfence load` against five servers: every client's class is onnxruntime's, on the int8
/// MiniONN (rss's default among five); a family that does not run among five is refused first.
#[test]
fn load_with_five_servers_answers_every_client() {
    let out = Command::new(EXE)
        .args(["load", "--clients", "2", "--parties", "5", "--model", "minionn-q", "--json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let line: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(line["correct"], 2, "{line}");
    assert_eq!(line["servers"], 5, "{line}");
    assert_eq!(line["backend"], "rss", "{line}");
    assert_eq!(line["server_links"], "relay", "{line}");
    assert_eq!(line["party_peak_rss_bytes"].as_array().map(Vec::len), Some(5), "{line}");
    let out = Command::new(EXE)
        .args(["load", "--clients", "1", "--parties", "5", "--backend", "rep3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("--backend rep3: it runs among 3 server parties, not 5"), "{err}");
}

#[test]
fn demo_refuses_a_server_count_or_family_it_cannot_run_before_starting() {
    for (args, want) in [
        (&["--parties", "4"][..], "--parties 4: a deployment has 1 or 2 server parties (spdz2k"),
        (
            &["--parties", "1", "--backend", "rep3"],
            "--backend rep3: it runs among 3 server parties, not 1",
        ),
        (
            &["--parties", "5", "--backend", "meteor"],
            "--backend meteor: it runs among 3 server parties, not 5",
        ),
        (&["--backend", "rss"], "--backend rss: it runs among 5 or 7 server parties, not 3"),
    ] {
        let out = Command::new(EXE).arg("demo").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn demo_rejects_a_sample_outside_the_test_set_before_starting() {
    let out =
        Command::new(EXE).args(["demo", "--model", "nn-a", "--sample", "1000"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("--sample 1000: the test set has 1000 samples (0 to 999)"), "{err}");
}

#[test]
fn bench_json_has_the_documented_keys() {
    let out = Command::new(EXE)
        .args(["bench", "--json", "--n", "1000", "--ops", "mul,xchg", "--repeat", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{text}");
    let mul = &lines[0];
    for key in [
        "op",
        "n",
        "ring_bits",
        "seconds",
        "ops_per_s",
        "bytes_per_party",
        "rounds",
        "backend",
        "transport",
        "setup_seconds",
        "setup_bytes_per_party",
    ] {
        assert!(mul.get(key).is_some(), "missing {key} in {mul}");
    }
    assert_eq!(mul["op"], "mul");
    assert_eq!(mul["backend"], "rep3");
    assert_eq!(mul["transport"], "noise-aesgcm");
    assert_eq!(mul["rounds"], 1.0);
    // One frame of 1000 Z64 elements (plus its 28-byte header) per party.
    assert_eq!(mul["bytes_per_party"], 8028.0);
}

#[test]
fn bench_runs_a_bristol_circuit_on_each_gates_scheme_and_refuses_a_malformed_one() {
    // (a ∧ b ∧ c) ⊕ d and ¬(a ∧ b ∧ c): a 3-input AND (the documented extension), a..c from
    // P0, d from P1.
    let good = "3 7\n2 3 1\n1 2\n\n3 1 0 1 2 4 AND\n2 1 4 3 5 XOR\n1 1 4 6 INV\n";
    let bad = good.replace("2 1 4 3 5 XOR", "2 1 4 9 5 XOR");
    let dir = std::env::temp_dir().join(format!("ringfence-cli-circuit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (good_path, bad_path) = (dir.join("good.txt"), dir.join("bad.txt"));
    std::fs::write(&good_path, good).unwrap();
    std::fs::write(&bad_path, bad).unwrap();
    // Two input rounds and the opening, plus the AND layer: one round on bin3, two on rep3
    // (a tree of two-input ANDs). Every party checks its outputs against the plaintext.
    for (gates, rounds) in [("bin3", 4.0), ("rep3", 5.0)] {
        let out = Command::new(EXE)
            .args(["bench", "--json", "--n", "100", "--repeat", "1", "--ops", "circuit"])
            .args(["--gates", gates, "--circuit"])
            .arg(&good_path)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
        let line: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!((line["op"].as_str(), line["rounds"].as_f64()), (Some("circuit"), Some(rounds)));
    }
    let out = Command::new(EXE)
        .args(["bench", "--ops", "circuit", "--n", "10", "--circuit"])
        .arg(&bad_path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("line 6: wire 9 out of range"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// mal3's on-demand checks (Protocol 3.9) from the CLI: the warm-up fills both arrays of 2^20
/// validated words, so the timed requests pay only the online phase: the AND (1 bit), its
/// check (2 bits) and fixed words: the coin (8), the check's two tags and the verdicts (6:
/// the openings' tag is settled with the zero test's verdicts) and the one opened bit (4).
#[test]
fn bench_runs_ands_with_on_demand_checks() {
    let n = 64 * 4096;
    let out = Command::new(EXE)
        .args(["bench", "--json", "--repeat", "2", "--ops", "and", "--gates", "mal3-on-demand"])
        .args(["--n", &n.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let line: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    let words = (n / 64) as f64;
    let fixed = (8 + 6 + 4) as f64;
    assert_eq!(
        line["payload_bytes_per_party"].as_f64(),
        Some(8.0 * (3.0 * words + fixed)),
        "{line}"
    );
}

/// mal3's operations are timed with their checks: a matrix product sends rep3's d² elements
/// and its check (two GR(2^64, 42) elements of triples, a coin, 3·42·d opened, two tags and
/// their verdicts), counted exactly; a product and a comparison each end checked, costing more
/// than rep3's for the same sizes; `--gates mal3-on-demand` checks products on demand (and is
/// refused with `--model`).
#[test]
fn bench_runs_mal3_operations_with_their_checks() {
    let (n, d) = (4096, 16);
    let run_on = |backend: &str, gates: &str, ops: &str| {
        let out = Command::new(EXE)
            .args(["bench", "--json", "--repeat", "1", "--ops", ops, "--gates", gates])
            .args(["--backend", backend, "--n", &n.to_string(), "--matmul-dim", &d.to_string()])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
        let lines: Vec<serde_json::Value> =
            text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        lines.iter().map(|l| l["payload_bytes_per_party"].as_f64().unwrap()).collect::<Vec<_>>()
    };
    let run = |backend: &str| run_on(backend, "rep3", "mul,lt-bounded,matmul");
    let (mal3, rep3) = (run("mal3"), run("rep3"));
    let gr = 42.0;
    let check = 2.0 * gr + (4.0 + 2.0 + 2.0) + 3.0 * gr * d as f64 + 2.0 + (2.0 + 2.0);
    assert_eq!(mal3[2], 8.0 * ((d * d) as f64 + check), "{mal3:?}");
    assert_eq!(rep3[2], 8.0 * (d * d) as f64, "{rep3:?}");
    for op in 0..2 {
        assert!(mal3[op] > 3.0 * rep3[op], "op {op}: {mal3:?} against {rep3:?}");
    }
    // On demand (Protocol 3.9), with the reservoir filled in the warm-up and holding the
    // refills: the product (1 word) and its check (2), plus the coin that picks the triples and
    // the fixed words of the comparisons.
    let on_demand = run_on("mal3", "mal3-on-demand", "mul")[0] / n as f64;
    assert!((24.0..24.1).contains(&on_demand), "{on_demand} bytes per product");
    // Model runs start their own sessions: the variant is refused there, not ignored.
    let out = Command::new(EXE)
        .args(["bench", "--backend", "mal3", "--model", "logreg", "--gates", "mal3-on-demand"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--model runs on mal3"), "{err}");
}

/// `circuit gen` writes the paper's circuits as files the bench (and any Bristol reader) takes:
/// a 16-bit multiplier of ≤ 4-input ANDs runs on bin3 in its AND depth plus the two input
/// rounds and the opening, every party checking the product against the plaintext circuit;
/// `circuit stats` prints the bits per seat; bad requests are refused with the reason.
#[test]
fn circuit_gen_writes_circuits_the_bench_runs_and_stats_prices_them() {
    let dir = std::env::temp_dir().join(format!("ringfence-cli-gen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mul16.txt");
    let out = Command::new(EXE)
        .args(["circuit", "gen", "multiplier", "--bits", "16", "--fan-in", "4", "--out"])
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("inputs [16, 16] bits, outputs [32] bits"), "{err}");
    assert!(err.contains("AND depth 8"), "{err}");
    let stats = Command::new(EXE).args(["circuit", "stats"]).arg(&path).output().unwrap();
    let text = String::from_utf8_lossy(&stats.stdout);
    assert!(stats.status.success());
    // The same summary from the file as from the generator.
    assert_eq!(text, err);
    assert!(text.contains("bin3, bits sent per instance: P1 9420, P2 9420, P3 2297 in 8 rounds"));
    let out = Command::new(EXE)
        .args(["bench", "--json", "--n", "70", "--repeat", "1", "--ops", "circuit"])
        .args(["--gates", "bin3", "--circuit"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let line: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(line["rounds"].as_f64(), Some(11.0), "{line}");
    for (args, why) in [
        (&["aes128", "--fan-in", "4"][..], "--sbox sets its fan-in"),
        (&["adder", "--fan-in", "9"][..], "fan-in 2 to 8"),
        (&["multiplier", "--bits", "0"][..], "at least 1 bit"),
    ] {
        let out = Command::new(EXE).args(["circuit", "gen"]).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(why), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `ringfence circuit run` evaluates a circuit file on the inputs given, between three party
/// processes: a generated adder and multiplier on bin3 and rep3, edge and random values, each
/// output equal to plain arithmetic and to the plaintext evaluation (`--check`); bad inputs
/// refused with the reason before any party starts.
#[test]
fn circuit_run_evaluates_given_inputs_and_checks_them() {
    let dir = std::env::temp_dir().join(format!("ringfence-cli-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let gen = |kind: &str, bits: &str, fan_in: &str| {
        let path = dir.join(format!("{kind}{bits}.txt"));
        let out = Command::new(EXE)
            .args(["circuit", "gen", kind, "--bits", bits, "--fan-in", fan_in, "--out"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        path
    };
    let run = |path: &std::path::Path, gates: &str, inputs: &[String]| {
        let out = Command::new(EXE)
            .args(["circuit", "run", "--check", "--gates", gates])
            .arg(path)
            .args(inputs.iter().flat_map(|v| ["--input", v.as_str()]))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("equal to the plaintext evaluation"), "{text}");
        text
    };
    let adder = gen("adder", "8", "4");
    let multiplier = gen("multiplier", "16", "4");
    let mut prg = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        prg ^= prg << 13;
        prg ^= prg >> 7;
        prg ^= prg << 17;
        prg
    };
    let mut pairs = vec![(0u64, 0u64), (255, 1), (255, 255), (1, 0), (0x80, 0x80)];
    pairs.extend((0..3).map(|_| (next() & 0xff, next() & 0xff)));
    for (gates, &(x, y)) in ["bin3", "rep3"].iter().cycle().zip(&pairs) {
        // Decimal and hex inputs; the sum's low 8 bits and the carry.
        let text = run(&adder, gates, &[x.to_string(), format!("0x{y:x}")]);
        let sum = x + y;
        assert!(text.contains(&format!("output 0 (8 bits): 0x{:02x}\n", sum & 0xff)), "{text}");
        assert!(text.contains(&format!("output 1 (1 bits): 0x{}\n", sum >> 8)), "{text}");
    }
    for (x, y) in [(0xffffu64, 0xffffu64), (0, 0xffff), (next() & 0xffff, next() & 0xffff)] {
        let text = run(&multiplier, "bin3", &[format!("0b{x:b}"), y.to_string()]);
        assert!(text.contains(&format!("output 0 (32 bits): 0x{:08x}\n", x * y)), "{text}");
        assert!(text.contains("rounds"), "{text}");
    }
    for (inputs, why) in [
        (&["300", "1"][..], "input 0 (\"300\", 8 bits): more than 8 bits"),
        (&["3"][..], "1 values for a circuit of 2 input groups"),
        (&["3", "0xzz"][..], "'z' is not a base-16 digit"),
    ] {
        let out = Command::new(EXE)
            .args(["circuit", "run"])
            .arg(&adder)
            .args(inputs.iter().flat_map(|v| ["--input", v]))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(why), "{inputs:?}: {err}");
        assert!(!err.contains("party processes"), "refused before starting: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `--comparisons fan-in` runs rep3's comparisons on bin3's gates: NN-A's argmax run takes 31
/// online rounds instead of 66 (plus the input and the opening), with onnxruntime's classes;
/// a family that compares its own way refuses the option.
#[test]
fn bench_runs_rep3_comparisons_on_multi_fan_in_gates() {
    let model = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/nn-a.onnx");
    for (cmp, rounds) in [("two-input", 68.0), ("fan-in", 33.0), ("fan-in:8,8", 26.0)] {
        let line =
            bench_line(&["--model", model, "--batch", "2", "--repeat", "1", "--comparisons", cmp]);
        assert_eq!(line["rounds"].as_f64(), Some(rounds), "{cmp}: {line}");
        assert_eq!(line["accuracy_agreement"], 1.0, "{cmp}: {line}");
    }
    let out = Command::new(EXE)
        .args(["bench", "--model", model, "--backend", "meteor", "--comparisons", "fan-in"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--comparisons applies to rep3"), "{err}");
    let out = Command::new(EXE).args(["bench", "--comparisons", "fan-in:9,4"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("1..=8"), "{err}");
}

#[test]
fn bench_model_runs_secure_inference_with_setup_reported() {
    let model = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/nn-a.onnx");
    let line = bench_line(&["--model", model, "--batch", "2", "--repeat", "1"]);
    assert_eq!(line["op"], "infer");
    assert_eq!(line["n"], 2);
    assert!(line["setup_seconds"].as_f64().is_some_and(|s| s > 0.0), "{line}");
    assert!(line["setup_bytes_per_party"].as_f64().is_some_and(|b| b > 0.0), "{line}");
    assert!(line["rounds"].as_f64().is_some_and(|r| r > 3.0), "{line}");
    // The samples are the first test digits; the reference classes come from onnxruntime.
    assert_eq!(line["accuracy_agreement"], 1.0, "{line}");
    // A missing model is a clear error from the parent, not three failing children.
    let out = Command::new(EXE).args(["bench", "--model", "no/such/model.onnx"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/model.onnx"));
}

/// A model whose reference file (`data/NAME.reference.json` beside it) cannot be used —
/// samples of another length, an input scale the bench does not know, a missing samples file —
/// stops the bench with the reason instead of running on other inputs.
#[test]
fn bench_model_refuses_a_reference_file_it_cannot_use() {
    let root = std::env::temp_dir().join(format!("rf-sidecar-{}", std::process::id()));
    let models = root.join("models");
    std::fs::create_dir_all(models.join("data")).unwrap();
    let logreg = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/logreg.onnx");
    std::fs::copy(logreg, models.join("m.onnx")).unwrap();
    // Two samples of 10 bytes: logreg takes 64 values.
    std::fs::write(models.join("data/m.u8"), [0u8; 20]).unwrap();
    let sidecar = |scale: &str, inputs: &str| {
        let doc = serde_json::json!({"inputs": inputs, "argmax": [1, 2], "input_scale": scale,
            "runtime": "onnxruntime"});
        std::fs::write(models.join("data/m.reference.json"), doc.to_string()).unwrap();
    };
    for (scale, inputs, want) in [
        ("1", "models/data/m.u8", "its test set's samples have 10 values, the model takes 64"),
        ("1/16", "models/data/m.u8", "input_scale"),
        ("1", "models/data/none.u8", "none.u8"),
    ] {
        sidecar(scale, inputs);
        let out = Command::new(EXE)
            .args(["bench", "--model"])
            .arg(models.join("m.onnx"))
            .args(["--repeat", "1"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(want), "{err}");
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// `--backend rss --parties 5` (t = 2): five processes, and each party sends per element what
/// the protocols say: t elements for a product, n − 1 for a product opened in one round and
/// n − 1 of the wider ring (Z_2^128) for a random bit, in one round each.
#[test]
fn bench_runs_rss_among_five_parties_with_the_protocols_costs() {
    let out = Command::new(EXE)
        .args(["bench", "--json", "--backend", "rss", "--parties", "5", "--n", "1000"])
        .args(["--repeat", "1", "--ops", "mul,mul-pub,rand-bit"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3, "{text}");
    for (line, (op, per_elem)) in
        lines.iter().zip([("mul", 16.0), ("mul-pub", 32.0), ("rand-bit", 64.0)])
    {
        assert_eq!(
            (line["op"].as_str(), line["backend"].as_str()),
            (Some(op), Some("rss")),
            "{line}"
        );
        assert_eq!(line["parties"], 5, "{line}");
        assert_eq!(line["rounds"], 1.0, "{line}");
        let payload = line["payload_bytes_per_party"].as_f64().unwrap();
        assert_eq!(payload / 1000.0, per_elem, "{op}: {line}");
        // One frame (28-byte header) to each receiver: t of them for mul, the other 4 else.
        let frames = if op == "mul" { 2.0 } else { 4.0 };
        assert_eq!(line["bytes_per_party"].as_f64(), Some(payload + 28.0 * frames), "{line}");
    }
    // edaBits (Table 7): the dealers' round, then ⌈log₂(t + 1)⌉ = 2 Sklansky adders of
    // 1 + log₂ 64 rounds each.
    let line = bench_line(&[
        "--backend",
        "rss",
        "--parties",
        "5",
        "--n",
        "1000",
        "--repeat",
        "1",
        "--ops",
        "eda-bit",
    ]);
    assert_eq!(
        (line["op"].as_str(), line["rounds"].as_f64()),
        (Some("eda-bit"), Some(15.0)),
        "{line}"
    );
}

#[test]
fn bench_refuses_party_counts_and_ops_that_the_backend_does_not_run() {
    for (args, why) in [
        (&["--parties", "5"][..], "--parties 5: rep3 runs among 3 parties; other counts need --backend rss"),
        (&["--backend", "rss", "--parties", "4"], "--parties 4: rss supports (N, t) = (3, 1), (5, 2), (7, 3) with threshold t = (N − 1) / 2, not (4, 1)"),
        (&["--backend", "rss", "--comparisons", "fan-in"], "--comparisons applies to rep3; rss computes"),
        (&["--backend", "rss", "--ops", "mul,and"], "--ops and: boolean circuits run on the --gates schemes"),
        (&["--ops", "mul-pub"], "--ops mul-pub: runs with --backend rss, not rep3"),
        (&["--ops", "eda-bit"], "--ops eda-bit: runs with --backend rss or spdz2k, not rep3"),
        (&["--backend", "meteor"], "--backend meteor benchmarks models (--model NAME)"),
        (&["--backend", "rss", "--relay", "ws://127.0.0.1:9", "--webrtc"], "--webrtc links three parties"),
        (&["--backend", "spdz2k", "--parties", "1"], "--parties 1: spdz2k runs among 2 or more parties"),
        (&["--backend", "spdz2k", "--parties", "2", "--ops", "and"], "--ops and: boolean circuits run on the --gates schemes (rep3, mal3, bin3) among 3 parties, not with --backend spdz2k"),
        (&["--backend", "spdz2k", "--parties", "2", "--ops", "rand-bit"], "--ops rand-bit: runs with --backend rss, not spdz2k"),
    ] {
        let out = Command::new(EXE).arg("bench").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} ran");
        assert!(err.contains(why), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?} started: {}", String::from_utf8_lossy(&out.stdout));
    }
}

/// `--backend spdz2k`: two processes making their own material (no dealer) as the operations
/// draw it, so a product's bytes include its triple's generation (about 18.8 kB per party at
/// k = 64, against 16 B online); three processes too; and a model classified as onnxruntime
/// does.
#[test]
fn bench_runs_spdz2k_end_to_end_among_two_and_three_processes() {
    let spdz2k = |parties: &str, n: &str, op: &str, ring: &str| {
        let l = bench_line(&[
            "--backend",
            "spdz2k",
            "--parties",
            parties,
            "--n",
            n,
            "--repeat",
            "1",
            "--ops",
            op,
            "--ring",
            ring,
        ]);
        assert_eq!((l["op"].as_str(), l["backend"].as_str()), (Some(op), Some("spdz2k")), "{l}");
        assert_eq!(l["parties"].as_u64().map(|p| p.to_string()).as_deref(), Some(parties), "{l}");
        let per = l["payload_bytes_per_party"].as_f64().unwrap() / n.parse::<f64>().unwrap();
        (l, per)
    };
    // A triple's generation (τ = 384 OT products of 128 bits, five values authenticated) is
    // ~18.8 kB per party at k = 64; the product online is 16 B of it.
    let (l, per) = spdz2k("2", "300", "mul", "64");
    assert!((15_000.0..25_000.0).contains(&per), "{l}");
    // A comparison at k = 32 draws an edaBit and 60 bit triples: about 130 kB, not the 23 B
    // online. (256 of them: bit triples are made in runs of at least 4,096, so a run of fewer
    // comparisons would draw what the warm-up left.)
    let (l, per) = spdz2k("2", "256", "lt-bounded", "32");
    assert!(per > 1e5, "{l}");
    // An edaBit at k = 32 in a run of 256 (buckets of 6): ~93 kB per party (78 kB in runs of
    // 2,048, against 32 random bits' ~212 kB).
    let (l, per) = spdz2k("2", "256", "eda-bit", "32");
    assert!((60_000.0..130_000.0).contains(&per), "{l}");
    spdz2k("3", "8", "eq", "32");
    let model = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/logreg.onnx");
    let run = bench_line(&[
        "--backend",
        "spdz2k",
        "--parties",
        "2",
        "--model",
        model,
        "--batch",
        "1",
        "--repeat",
        "1",
    ]);
    assert_eq!(run["accuracy_agreement"], 1.0, "{run}");
    assert!(run["setup_bytes_per_party"].as_f64().unwrap() > 1e6, "{run}");
}

/// `--ahead`: each timed run's material is made in its setup, so the op's figures are its
/// online phase alone: a product's 2k bits per party, a comparison's `6k − 8` bits and
/// `⌈log₂(k − 1)⌉ + 2` rounds (the paper's Table V: 46 B for two parties at k = 32), while the
/// setup carries the OT-based generation.
#[test]
fn bench_ahead_times_spdz2k_online_alone() {
    let run = |n: &str, op: &str, ring: &str| {
        let l = bench_line(&[
            "--backend",
            "spdz2k",
            "--parties",
            "2",
            "--ahead",
            "--n",
            n,
            "--repeat",
            "1",
            "--ops",
            op,
            "--ring",
            ring,
        ]);
        let n: f64 = n.parse().unwrap();
        let per = l["payload_bytes_per_party"].as_f64().unwrap() / n;
        let setup = l["setup_bytes_per_party"].as_f64().unwrap() / n;
        (l, per, setup)
    };
    let (l, per, setup) = run("300", "mul", "64");
    assert_eq!(per, 16.0, "{l}");
    assert_eq!(l["rounds"], 1.0, "{l}");
    assert!(setup > 15_000.0, "{l}");
    let (l, per, setup) = run("64", "lt-bounded", "32");
    assert!((23.0..24.5).contains(&per), "{l}");
    assert_eq!(l["rounds"], 7.0, "{l}");
    assert!(setup > 1e5, "{l}");
    let refused = Command::new(EXE)
        .args(["bench", "--backend", "rep3", "--ahead", "--ops", "mul", "--n", "10"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--ahead applies to spdz2k"));
}

/// The one JSON line of `ringfence bench --json ARGS` (a single operation or model).
fn bench_line(args: &[&str]) -> serde_json::Value {
    let out = Command::new(EXE).args(["bench", "--json"]).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(text.trim()).unwrap()
}

#[test]
fn bench_sub_batches_report_the_sums_over_the_whole_batch() {
    let model = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/logreg.onnx");
    let f = |line: &serde_json::Value, key: &str| {
        line[key].as_f64().unwrap_or_else(|| panic!("no {key} in {line}"))
    };
    for backend in ["meteor", "rep3"] {
        let run = ["--model", model, "--backend", backend, "--repeat", "1", "--batch"];
        let whole = bench_line(&[&run[..], &["2"]].concat());
        let split = bench_line(&[&run[..], &["4", "--sub-batch", "2"]].concat());
        assert_eq!(split["n"], 4, "{split}");
        assert_eq!(split["batch"], 4, "{split}");
        assert_eq!(split["sub_batch"], 2, "{split}");
        assert!(whole.get("sub_batch").is_none(), "{whole}");
        // Both sub-batches are test samples 0..4, each classified as onnxruntime does.
        assert_eq!(split["accuracy_agreement"], 1.0, "{split}");
        // Two passes of a batch of 2: the online figures are exactly twice one pass's.
        for key in ["online_bytes_per_party", "payload_bytes_per_party", "rounds"] {
            assert_eq!(f(&split, key), 2.0 * f(&whole, key), "{backend} {key}: {split}");
        }
        assert!(f(&whole, "rounds") >= 3.0, "{whole}");
        // Each pass makes its own setup (a little data-dependent in size on METEOR).
        let ratio = f(&split, "setup_bytes_per_party") / f(&whole, "setup_bytes_per_party");
        assert!((1.99..=2.01).contains(&ratio), "{backend} setup ratio {ratio}: {split}");
    }
    let text = Command::new(EXE)
        .args(["bench", "--model", model, "--batch", "4", "--sub-batch", "2", "--repeat", "1"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&text.stdout);
    assert!(text.status.success(), "{table}");
    assert!(table.contains("infer   4 (2 × 2)"), "{table}");
    assert!(table.contains("in 2 sub-batches of 2"), "{table}");
    // Progress per sub-batch on stderr: the warm-up is one sub-batch, a timed run all of them.
    let progress = String::from_utf8_lossy(&text.stderr);
    assert!(progress.contains("warm-up: sub-batch 1 of 1 done"), "{progress}");
    assert!(progress.contains("run 1: sub-batch 2 of 2 done"), "{progress}");
    // Sub-batches of unequal or no size are refused before any party starts.
    for (sub, why) in [("3", "--sub-batch 3 does not divide --batch 4"), ("0", "at least one")] {
        let out = Command::new(EXE)
            .args(["bench", "--model", model, "--batch", "4", "--sub-batch", sub])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(err.contains(why), "{err}");
    }
}

/// A `bench-party` process given its session setup, with `RINGFENCE_HUGE_PAGES` set to
/// `huge_pages` (or unset), once it has printed its port (so `main` has started): the child,
/// its stdin (its parent's lifeline) and its stdout.
fn started_party(huge_pages: Option<&str>) -> (Child, ChildStdin, BufReader<ChildStdout>) {
    let mut cmd = Command::new(EXE);
    cmd.args(["bench-party", "--id", "0", "--n", "10", "--ops", "mul", "--plain"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .env_remove("RINGFENCE_HUGE_PAGES");
    if let Some(v) = huge_pages {
        cmd.env("RINGFENCE_HUGE_PAGES", v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let setup = r#"{"type":"setup","private_key":null,"public_keys":[],"session":"000102030405060708090a0b0c0d0e0f","participants":3}"#;
    writeln!(stdin, "{setup}").unwrap();
    let mut port = String::new();
    stdout.read_line(&mut port).unwrap();
    assert!(port.contains("\"port\""), "{port}");
    (child, stdin, stdout)
}

/// The kernel's view (`THP_enabled` in `/proc/PID/status`) of a started party process.
#[cfg(target_os = "linux")]
fn party_thp_enabled(huge_pages: Option<&str>) -> String {
    let (mut child, _stdin, _stdout) = started_party(huge_pages);
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("THP_enabled:"))
        .expect("the kernel reports THP_enabled")
        .trim()
        .to_owned()
}

#[test]
#[cfg(target_os = "linux")]
fn parties_run_without_transparent_huge_pages_unless_asked() {
    assert_eq!(party_thp_enabled(None), "0");
    assert_eq!(party_thp_enabled(Some("0")), "0");
    assert_eq!(party_thp_enabled(Some("1")), "1");
}

#[test]
fn a_party_exits_when_its_parent_goes_away() {
    let (mut child, mut stdin, _stdout) = started_party(None);
    // Peers that never answer: the party keeps dialling until its parent disappears.
    let dead: Vec<String> = (0..3)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap())
        .map(|a| format!("\"{a}\""))
        .collect();
    writeln!(stdin, r#"{{"type":"peers","addrs":[{}]}}"#, dead.join(",")).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let start = Instant::now();
    drop(stdin);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(!status.success());
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(5), "party outlived its parent");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn model_inspect_describes_a_model_and_names_what_is_wrong_with_a_bad_file() {
    let out = Command::new(EXE).args(["model", "inspect", "nn-a"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("layer  0  Dense 784->128"), "{text}");
    // The paper's cost model for NN-A.
    assert!(text.contains("meteor  online 27398 B per party"), "{text}");
    // What the importer did with the nodes that built no layer: skl2onnx's MLP.
    let mlp = concat!(env!("CARGO_MANIFEST_DIR"), "/../core-rs/tests/data/exported/iris-mlp.onnx");
    let out = Command::new(EXE).args(["model", "inspect", mlp]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    for line in [
        "left out (monotone, argmax unchanged): Softmax, ZipMap",
        "labels  ArrayFeatureExtractor, Reshape, Cast ×2 (the class label's side branch",
        "views   Cast (renames and reshapes",
        "merged  Add ×2 (into the layer before)",
    ] {
        assert!(text.contains(line), "{line:?} in {text}");
    }
    // The classes an MLP fitted on names answers, from its label branch's constant.
    let names =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../core-rs/tests/data/exported/iris-names-mlp.onnx");
    let out = Command::new(EXE).args(["model", "inspect", names]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("classes setosa, versicolor, virginica\n"), "{text}");
    let dir = std::env::temp_dir().join(format!("rf-inspect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.onnx");
    std::fs::write(&bad, b"not a model").unwrap();
    let out = Command::new(EXE).args(["model", "inspect"]).arg(&bad).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("bad.onnx: malformed ONNX"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn keygen_writes_a_private_file_and_refuses_to_overwrite_it() {
    let dir = std::env::temp_dir().join(format!("rf-keygen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("p0.key");
    let out = Command::new(EXE).arg("keygen").arg("--out").arg(&key).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let private = std::fs::read_to_string(&key).unwrap();
    assert_eq!(private.trim().len(), 64);
    assert!(!text.contains(private.trim()), "the private key must not be printed");
    let public = text.lines().next().unwrap().strip_prefix("public key ").unwrap();
    assert_eq!(public.len(), 64);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "mode {mode:o}");
    }
    let again = Command::new(EXE).arg("keygen").arg("--out").arg(&key).output().unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("pass --force"));
    assert_eq!(std::fs::read_to_string(&key).unwrap(), private, "the old identity is kept");
    // --force over a world-readable file (the security review: the old mode was kept): the new
    // key is private again, replaces the old one, and no temporary file is left beside it.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        let forced = Command::new(EXE).arg("keygen").arg("--out").arg(&key).arg("--force").output();
        let forced = forced.unwrap();
        assert!(forced.status.success(), "{}", String::from_utf8_lossy(&forced.stderr));
        let mode = std::fs::metadata(&key).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "mode {mode:o} after --force");
        assert_ne!(std::fs::read_to_string(&key).unwrap(), private, "--force wrote a new key");
        let names: Vec<_> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["p0.key"], "only the key is left in the directory");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The numbers of a reference file's array `key` (the exported models' JSON: flat arrays).
fn numbers(doc: &serde_json::Value, key: &str) -> Vec<f64> {
    doc[key].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()
}

/// `classify` runs an exported model on the user's own samples as JSON, `.npy` and CSV, gives
/// onnxruntime's class for each (rep3 the class alone, METEOR with the scores), and names a
/// sample of the wrong length, a value that is not a number and an unknown file type before
/// starting anything.
#[test]
fn classify_runs_a_user_model_on_json_npy_and_csv_samples() {
    let exported =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../core-rs/tests/data/exported");
    let dir = std::env::temp_dir().join(format!("rf-classify-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let reference = |name: &str| -> serde_json::Value {
        serde_json::from_str(
            &std::fs::read_to_string(exported.join(format!("{name}.json"))).unwrap(),
        )
        .unwrap()
    };
    let run = |model: &str, input: &std::path::Path, extra: &[&str]| {
        let out = Command::new(EXE)
            .args(["classify", "--json", "--model"])
            .arg(exported.join(format!("{model}.onnx")))
            .arg("--input")
            .arg(input)
            .args(extra)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status.success(), text, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let classes = |text: &str| -> Vec<f64> {
        text.lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["class"].as_f64().unwrap()
            })
            .collect()
    };

    // The residual network, four digits as a JSON array of arrays.
    let r = reference("digits-resnet");
    let (x, want) = (numbers(&r, "inputs"), numbers(&r, "labels"));
    let rows: Vec<&[f64]> = x.chunks(64).take(4).collect();
    let json = dir.join("digits.json");
    std::fs::write(&json, serde_json::to_string(&rows).unwrap()).unwrap();
    let (ok, text, err) = run("digits-resnet", &json, &[]);
    assert!(ok, "{text}\n{err}");
    assert_eq!(classes(&text), want[..4], "{text}");
    assert!(err.contains("every private answer equals the plaintext model's"), "{err}");

    // Iris as .npy (float32, shape (20, 4)) on METEOR, which gives the scores too: two runs, as
    // the local parties take 16 samples per request.
    let r = reference("iris-logreg");
    let (x, want) = (numbers(&r, "inputs"), numbers(&r, "labels"));
    let mut header = "{'descr': '<f4', 'fortran_order': False, 'shape': (20, 4), }".to_string();
    while !(header.len() + 11).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    npy.extend((header.len() as u16).to_le_bytes());
    npy.extend(header.as_bytes());
    npy.extend(x[..80].iter().flat_map(|&v| (v as f32).to_le_bytes()));
    let npy_file = dir.join("iris.npy");
    std::fs::write(&npy_file, &npy).unwrap();
    let (ok, text, err) = run("iris-logreg", &npy_file, &["--backend", "meteor"]);
    assert!(ok, "{text}\n{err}");
    assert_eq!(classes(&text), want[..20], "{text}");
    assert!(err.contains("run 2 of 2"), "{err}");
    assert!(
        text.lines().all(|l| l.contains("\"scores\":[") && !l.contains("\"scores\":[]")),
        "{text}"
    );

    // The double-graph wine pipeline, CSV with a header row.
    let r = reference("wine-scaled-logreg-f64");
    let (x, want) = (numbers(&r, "inputs"), numbers(&r, "labels"));
    let mut csv = (0..13).map(|i| format!("f{i}")).collect::<Vec<_>>().join(",") + "\n";
    for row in x.chunks(13).take(5) {
        csv += &(row.iter().map(f64::to_string).collect::<Vec<_>>().join(",") + "\n");
    }
    let csv_file = dir.join("wine.csv");
    std::fs::write(&csv_file, csv).unwrap();
    let (ok, text, err) = run("wine-scaled-logreg-f64", &csv_file, &[]);
    assert!(ok, "{text}\n{err}");
    assert_eq!(classes(&text), want[..5], "{text}");

    // Text classes (an MLP fitted on the species' names): the label the model owner told the
    // client, as JSON text, and the same words without --json.
    let r = reference("iris-names-mlp");
    let x = numbers(&r, "inputs");
    let json = dir.join("iris.json");
    let rows: Vec<&[f64]> = x.chunks(4).take(6).collect();
    std::fs::write(&json, serde_json::to_string(&rows).unwrap()).unwrap();
    let (ok, text, err) = run("iris-names-mlp", &json, &[]);
    assert!(ok, "{text}\n{err}");
    let lines: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let got: Vec<&serde_json::Value> = lines.iter().map(|v| &v["class"]).collect();
    let want: Vec<&serde_json::Value> = r["labels"].as_array().unwrap()[..6].iter().collect();
    assert_eq!(got, want, "{text}");
    assert!(lines.iter().all(|v| v["class"].is_string() && v["plaintext_class"] == v["class"]));

    // Bad input: named, and nothing started.
    let bad = dir.join("bad.json");
    for (body, file, want) in [
        ("[1, 2, 3]", &bad, "sample 0 has 3 values; the model takes 4 per sample"),
        ("[1, 2, \"x\", 4]", &bad, "\"x\" is not a number"),
        ("1,2,3,4", &dir.join("bad.txt"), "must end in .json, .npy or .csv"),
    ] {
        std::fs::write(file, body).unwrap();
        let (ok, _, err) = run("iris-logreg", file, &[]);
        assert!(!ok && err.contains(want), "{err}");
        assert!(!err.contains("starting the relay"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
