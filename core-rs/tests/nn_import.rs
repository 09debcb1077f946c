//! ONNX import: the committed models, float agreement with onnxruntime, and errors on malformed
//! or unsupported input (truncated and garbage bytes never panic).

use ringfence_core::nn::{
    import_onnx, import_onnx_report, ClassLabels, InputRange, Label, Layer, Model, NnError,
    INPUT_RANGE_KEY,
};
use ringfence_core::testing::random_words;

use crate::common;
use common::*;

#[test]
fn nn_a_imports_as_three_dense_layers() {
    let m = import_onnx(NN_A).unwrap();
    assert_eq!(m.input_shape, vec![784]);
    assert_eq!(
        m.summary(),
        ["Dense 784->128", "Relu", "Dense 128->128", "Relu", "Dense 128->10", "Relu"]
    );
    assert_eq!(m.output_len(), 10);
    assert_eq!(m.class_labels, None);
    assert!(m.dropped_transforms.is_empty());
}

#[test]
fn the_committed_models_say_what_input_range_they_were_trained_on() {
    for m in [NN_A, NN_B, NN_C, LENET] {
        assert_eq!(import_onnx(m).unwrap().input_range, InputRange::new(0.0, 1.0));
    }
    for m in [LOGREG, SVM, TREE] {
        assert_eq!(import_onnx(m).unwrap().input_range, InputRange::new(0.0, 16.0));
    }
}

/// `model` with one more `metadata_props` entry (ModelProto field 14) appended.
fn with_metadata(model: &[u8], key: &str, value: &str) -> Vec<u8> {
    let mut entry = vec![0x0a, key.len() as u8];
    entry.extend(key.as_bytes());
    entry.extend([0x12, value.len() as u8]);
    entry.extend(value.as_bytes());
    let mut out = model.to_vec();
    out.extend([14 << 3 | 2, entry.len() as u8]);
    out.extend(entry);
    out
}

#[test]
fn an_input_range_is_read_from_metadata_and_a_malformed_one_is_an_error() {
    // NN-A's file ends with its range entry (30 bytes for "0,1"): without it, no range.
    let plain = &NN_A[..NN_A.len() - 30];
    assert_eq!(import_onnx(plain).unwrap().input_range, None);
    let m = import_onnx(&with_metadata(plain, INPUT_RANGE_KEY, " -0.5, 2.75")).unwrap();
    assert_eq!(m.input_range, InputRange::new(-0.5, 2.75));
    assert_eq!(import_onnx(&with_metadata(plain, "other", "x")).unwrap().input_range, None);
    for bad in ["1", "1,0", "0,inf", "a,b", ""] {
        let e = import_onnx(&with_metadata(plain, INPUT_RANGE_KEY, bad)).unwrap_err();
        assert!(matches!(e, NnError::Malformed(_)), "{bad:?}: {e}");
        assert!(e.to_string().contains("expected \"MIN,MAX\""), "{e}");
    }
    let r = InputRange::new(-1.0, 255.0).unwrap();
    assert_eq!(InputRange::from_bits(r.to_bits()), Some(r));
    assert_eq!(InputRange::from_bits(f32::NAN.to_bits().into()), None);
}

#[test]
fn conv_nets_import_with_the_paper_layers() {
    let b = import_onnx(NN_B).unwrap();
    assert_eq!(b.input_shape, vec![1, 28, 28]);
    assert_eq!(
        b.summary(),
        ["Conv 1x28x28->5x14x14 k5x5 s2 p2", "Relu", "Dense 980->100", "Relu", "Dense 100->10"]
    );
    let c = import_onnx(NN_C).unwrap();
    assert_eq!(
        c.summary(),
        [
            "Conv 1x28x28->16x24x24 k5x5 s1 p0",
            "MaxPool 2x2 s2 -> 16x12x12",
            "Relu",
            "Conv 16x12x12->16x8x8 k5x5 s1 p0",
            "MaxPool 2x2 s2 -> 16x4x4",
            "Relu",
            "Dense 256->100",
            "Relu",
            "Dense 100->10",
            "Relu"
        ]
    );
    let l = import_onnx(LENET).unwrap();
    assert_eq!(
        l.summary(),
        [
            "Conv 1x28x28->20x24x24 k5x5 s1 p0",
            "MaxPool 2x2 s2 -> 20x12x12",
            "Relu",
            "Conv 20x12x12->50x8x8 k5x5 s1 p0",
            "MaxPool 2x2 s2 -> 50x4x4",
            "Relu",
            "Dense 800->500",
            "Relu",
            "Dense 500->10",
            "Relu"
        ]
    );
}

#[test]
fn conv_float_evaluation_matches_onnxruntime() {
    let m = import_onnx(NN_B).unwrap();
    let n = 50;
    let x: Vec<f64> = MNIST[..n * 784].iter().map(|&p| f64::from(p) / 255.0).collect();
    let ours = m.eval_f64(&x, n).unwrap();
    let theirs = json_numbers(NN_B_REF, "scores");
    let worst = ours.iter().zip(&theirs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(worst < 1e-3, "float scores differ from onnxruntime by {worst}");
}

#[test]
fn logreg_imports_as_one_dense_layer_with_labels() {
    let m = import_onnx(LOGREG).unwrap();
    assert_eq!(m.input_shape, vec![64]);
    assert_eq!(m.summary(), ["Dense 64->10"]);
    assert_eq!(m.class_labels, Some(ClassLabels::Ints((0..10).collect())));
    assert_eq!(m.dropped_transforms, ["LinearClassifier.post_transform=SOFTMAX", "Normalizer(L1)"]);
    assert!(matches!(m.layers[0], Layer::Dense(_)));
}

#[test]
fn float_evaluation_matches_onnxruntime_logits() {
    let m = import_onnx(NN_A).unwrap();
    let n = 200;
    let x: Vec<f64> = MNIST[..n * 784].iter().map(|&p| f64::from(p) / 255.0).collect();
    let ours = m.eval_f64(&x, n).unwrap();
    let theirs = json_numbers(NN_A_REF, "scores");
    assert_eq!(theirs.len(), 1000 * 10);
    let worst = ours.iter().zip(&theirs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(worst < 1e-3, "float logits differ from onnxruntime by {worst}");
}

#[test]
fn truncated_models_are_errors_not_panics() {
    // A prefix is an error, unless the cut falls between top-level fields after everything
    // the importer needs (logreg.onnx ends with two opset_import entries after the graph, and
    // every model with its optional input-range metadata): then it is the same model, perhaps
    // without the range.
    for bytes in [LOGREG, NN_A] {
        let full = import_onnx(bytes).unwrap();
        let step = (bytes.len() / 3000).max(1);
        let mut accepted = 0;
        for cut in (0..bytes.len()).step_by(step) {
            if let Ok(m) = import_onnx(&bytes[..cut]) {
                assert!(m.input_range.is_none(), "prefix of {cut} bytes has the range entry, cut");
                let m = Model { input_range: full.input_range, ..m };
                assert_eq!(m, full, "prefix of {cut} bytes gives another model");
                accepted += 1;
            }
        }
        assert!(accepted <= 3, "{accepted} prefixes accepted");
    }
}

#[test]
fn garbage_and_bit_flips_never_panic() {
    for seed in 0..300u64 {
        let w = random_words(seed, 1 + (seed as usize % 64));
        let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        let _ = import_onnx(&bytes);
    }
    // Flip bytes of a valid model: errors or a (different) model, never a panic.
    let flips = random_words(99, 2000);
    for f in flips {
        let mut m = LOGREG.to_vec();
        let at = (f as usize) % m.len();
        m[at] ^= (f >> 32) as u8 | 1;
        let _ = import_onnx(&m);
    }
}

#[test]
fn wire_format_faults_are_named() {
    let cases: [(&[u8], &str); 5] = [
        (b"\x3a\x05\x0a", "runs past the end"),
        (b"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", "varint"),
        (b"\x0b", "wire type 3"),
        (b"\x00\x01", "field number 0"),
        (b"\x08\x07\x42\x04\x0a\x00\x10\x0d", "no graph"),
    ];
    for (bytes, want) in cases {
        let e = import_onnx(bytes).unwrap_err().to_string();
        assert!(e.contains(want), "{e:?} should mention {want}");
    }
    assert!(matches!(import_onnx(b""), Err(NnError::Malformed(_))));
}

// --- A tiny protobuf writer for hand-made models. ---

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn fv(field: u32, v: u64) -> Vec<u8> {
    let mut o = Vec::new();
    varint(u64::from(field) << 3, &mut o);
    varint(v, &mut o);
    o
}

fn fb(field: u32, bytes: &[u8]) -> Vec<u8> {
    let mut o = Vec::new();
    varint(u64::from(field) << 3 | 2, &mut o);
    varint(bytes.len() as u64, &mut o);
    o.extend_from_slice(bytes);
    o
}

fn value_info(name: &str, dims: &[Option<u64>]) -> Vec<u8> {
    let mut shape = Vec::new();
    for d in dims {
        shape.extend(fb(1, &d.map_or_else(|| fb(2, b"N"), |v| fv(1, v))));
    }
    let tensor = [fv(1, 1), fb(2, &shape)].concat();
    [fb(1, name.as_bytes()), fb(2, &fb(1, &tensor))].concat()
}

fn tensor(name: &str, dims: &[u64], vals: &[f32]) -> Vec<u8> {
    let mut t = Vec::new();
    for &d in dims {
        t.extend(fv(1, d));
    }
    t.extend(fv(2, 1));
    let packed: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    t.extend(fb(4, &packed));
    t.extend(fb(8, name.as_bytes()));
    t
}

fn node(op: &str, ins: &[&str], outs: &[&str], attrs: &[Vec<u8>]) -> Vec<u8> {
    let mut n = Vec::new();
    for i in ins {
        n.extend(fb(1, i.as_bytes()));
    }
    for o in outs {
        n.extend(fb(2, o.as_bytes()));
    }
    n.extend(fb(4, op.as_bytes()));
    for a in attrs {
        n.extend(fb(5, a));
    }
    n
}

fn int_attr(name: &str, v: u64) -> Vec<u8> {
    [fb(1, name.as_bytes()), fv(3, v), fv(20, 2)].concat()
}

/// A model `input[N,4] -> nodes -> output`, with a 4×3 weight `W` and bias `B` available.
fn model(nodes: &[Vec<u8>], output: &str) -> Vec<u8> {
    model_with(nodes, output, &[])
}

/// [`model`] with more initializers (serialized `TensorProto`s).
fn model_with(nodes: &[Vec<u8>], output: &str, inits: &[Vec<u8>]) -> Vec<u8> {
    let w: Vec<f32> = (0..12).map(|i| i as f32 / 10.0 - 0.5).collect();
    let mut g = Vec::new();
    for n in nodes {
        g.extend(fb(1, n));
    }
    g.extend(fb(5, &tensor("W", &[4, 3], &w)));
    g.extend(fb(5, &tensor("B", &[3], &[0.25, -0.5, 1.0])));
    for t in inits {
        g.extend(fb(5, t));
    }
    g.extend(fb(11, &value_info("x", &[None, Some(4)])));
    g.extend(fb(12, &value_info(output, &[None, Some(3)])));
    let opset = [fb(1, b""), fv(2, 13)].concat();
    [fv(1, 8), fb(8, &opset), fb(7, &g)].concat()
}

#[test]
fn hand_made_matmul_add_relu_imports_and_evaluates() {
    let m = model(
        &[
            node("MatMul", &["x", "W"], &["h"], &[]),
            node("Add", &["h", "B"], &["z"], &[]),
            node("Relu", &["z"], &["y"], &[]),
        ],
        "y",
    );
    let m = import_onnx(&m).unwrap();
    assert_eq!(m.summary(), ["Dense 4->3", "Relu"]);
    let y = m.eval_f64(&[1.0, 0.0, 0.0, 2.0], 1).unwrap();
    // Row 0 of W is (-0.5, -0.4, -0.3), row 3 is (0.4, 0.5, 0.6); plus B, then ReLU.
    let want = [(-0.5 + 0.8 + 0.25f64).max(0.0), (-0.4 + 1.0 - 0.5f64).max(0.0), -0.3 + 1.2 + 1.0];
    for (a, b) in y.iter().zip(want) {
        assert!((a - b).abs() < 1e-6, "{y:?} vs {want:?}");
    }
    assert!(matches!(m.eval_f64(&[1.0; 3], 1), Err(NnError::Shape(_))));
}

#[test]
fn unsupported_ops_attributes_and_shapes_are_named() {
    let cases: Vec<(Vec<Vec<u8>>, &str)> = vec![
        (vec![node("Conv", &["x", "W"], &["y"], &[])], "channels x height x width"),
        (vec![node("AveragePool", &["x"], &["y"], &[])], "channels x height x width"),
        (vec![node("Erf", &["x"], &["y"], &[])], "op Erf"),
        (vec![node("Gemm", &["x", "W", "B"], &["y"], &[int_attr("transA", 1)])], "transA"),
        (vec![node("Gemm", &["x", "W", "B"], &["y"], &[int_attr("bogus", 1)])], "\"bogus\""),
        (vec![node("Gemm", &["x", "W", "B"], &["y"], &[int_attr("transB", 1)])], "rows"),
        (vec![node("MatMul", &["W", "x"], &["y"], &[])], "running activation"),
        (vec![node("MatMul", &["x", "x"], &["y"], &[])], "constant"),
        (vec![node("Relu", &["x"], &["r"], &[]), node("Add", &["r", "B"], &["y"], &[])], "Add"),
        (vec![node("Relu", &["x"], &["y"], &[])], "graph output"),
        (
            vec![
                node("Gemm", &["x", "W", "B"], &["s"], &[]),
                node("Softmax", &["s"], &["p"], &[]),
                node("Relu", &["p"], &["y"], &[]),
            ],
            "after an output transform",
        ),
        (
            vec![
                node("Gemm", &["x", "W", "B"], &["s"], &[]),
                node("HardSigmoid", &["s"], &["y"], &[float_attr("alpha", -1.0)]),
            ],
            "HardSigmoid: alpha -1 (must be positive)",
        ),
        (
            vec![
                node("Gemm", &["x", "W", "B"], &["s"], &[]),
                node("Clip", &["s"], &["y"], &[float_attr("min", 2.0), float_attr("max", 1.0)]),
            ],
            "bounds [2, 1]",
        ),
    ];
    for (nodes, want) in cases {
        let out = if want == "graph output" { "nope" } else { "y" };
        let e = import_onnx(&model(&nodes, out)).unwrap_err().to_string();
        assert!(e.contains(want), "{e:?} should mention {want:?}");
    }
}

fn ints_attr(name: &str, v: &[u64]) -> Vec<u8> {
    let mut a = fb(1, name.as_bytes());
    for &x in v {
        a.extend(fv(8, x));
    }
    a.extend(fv(20, 7));
    a
}

fn str_attr(name: &str, v: &str) -> Vec<u8> {
    [fb(1, name.as_bytes()), fb(4, v.as_bytes()), fv(20, 3)].concat()
}

/// A model `x[N,1,4,4] -> nodes -> y` with a 2×1×2×2 kernel `K`.
fn conv_model(nodes: &[Vec<u8>]) -> Vec<u8> {
    let mut g = Vec::new();
    for n in nodes {
        g.extend(fb(1, n));
    }
    g.extend(fb(5, &tensor("K", &[2, 1, 2, 2], &[1.0, 0.0, 0.0, -1.0, 0.5, 0.5, 0.5, 0.5])));
    g.extend(fb(5, &tensor("W", &[2, 3], &[1.0; 6])));
    g.extend(fb(11, &value_info("x", &[None, Some(1), Some(4), Some(4)])));
    g.extend(fb(12, &value_info("y", &[None, Some(2)])));
    let opset = [fb(1, b""), fv(2, 13)].concat();
    [fv(1, 8), fb(8, &opset), fb(7, &g)].concat()
}

#[test]
fn hand_made_conv_and_pool_import_and_evaluate() {
    let m = conv_model(&[
        node("Conv", &["x", "K"], &["c"], &[ints_attr("strides", &[1, 1])]),
        node("MaxPool", &["c"], &["p"], &[ints_attr("kernel_shape", &[3, 3])]),
        node("Flatten", &["p"], &["y"], &[]),
    ]);
    let m = import_onnx(&m).unwrap();
    assert_eq!(m.summary(), ["Conv 1x4x4->2x3x3 k2x2 s1 p0", "MaxPool 3x3 s1 -> 2x1x1"]);
    let x: Vec<f64> = (0..16).map(f64::from).collect();
    // Channel 0: x[y][x] − x[y+1][x+1] = −5 everywhere; channel 1: mean-like sum, max at the
    // bottom right patch: 0.5·(10 + 11 + 14 + 15) = 25.
    assert_eq!(m.eval_f64(&x, 1).unwrap(), [-5.0, 25.0]);
}

#[test]
fn unsupported_conv_and_pool_attributes_are_named() {
    let conv = |attrs: &[Vec<u8>]| node("Conv", &["x", "K"], &["c"], attrs);
    let cases: Vec<(Vec<Vec<u8>>, &str)> = vec![
        (vec![conv(&[ints_attr("dilations", &[2, 2])])], "dilations"),
        (vec![conv(&[str_attr("auto_pad", "SAME_UPPER")])], "auto_pad SAME_UPPER"),
        (vec![conv(&[]), node("Gemm", &["c", "W"], &["y"], &[])], "flatten it first"),
        (
            vec![
                conv(&[]),
                node(
                    "MaxPool",
                    &["c"],
                    &["y"],
                    &[ints_attr("kernel_shape", &[2, 2]), ints_attr("pads", &[1, 1, 1, 1])],
                ),
            ],
            "padding",
        ),
        (
            vec![
                conv(&[]),
                node(
                    "MaxPool",
                    &["c"],
                    &["y"],
                    &[ints_attr("kernel_shape", &[2, 2]), int_attr("ceil_mode", 1)],
                ),
            ],
            "ceil_mode",
        ),
        (vec![conv(&[ints_attr("kernel_shape", &[3, 3])])], "kernel_shape"),
        (vec![conv(&[ints_attr("strides", &[1])])], "strides"),
    ];
    for (nodes, want) in cases {
        let e = import_onnx(&conv_model(&nodes)).unwrap_err().to_string();
        assert!(e.contains(want), "{e:?} should mention {want:?}");
    }
}

fn int64_tensor(name: &str, vals: &[i64]) -> Vec<u8> {
    let raw: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    [fv(1, vals.len() as u64), fv(2, 7), fb(8, name.as_bytes()), fb(9, &raw)].concat()
}

#[test]
fn reshape_softmax_and_argmax_at_the_output() {
    // x[N,4] -> Reshape[0,4] (int64 raw_data) -> Gemm -> Softmax -> ArgMax.
    let m = model_with(
        &[
            node("Reshape", &["x", "S"], &["r"], &[]),
            node("Gemm", &["r", "W", "B"], &["s"], &[]),
            node("Softmax", &["s"], &["p"], &[int_attr("axis", 1)]),
            node("ArgMax", &["p"], &["y"], &[int_attr("axis", 1)]),
        ],
        "y",
        &[int64_tensor("S", &[0, 4])],
    );
    let model = import_onnx(&m).unwrap();
    assert_eq!(model.summary(), ["Dense 4->3"]);
    assert_eq!(model.dropped_transforms, ["Softmax"]);
    // A reshape that merges the batch axis is refused.
    let m = model_with(
        &[node("Reshape", &["x", "S"], &["y"], &[])],
        "y",
        &[int64_tensor("S", &[1, -1])],
    );
    assert!(import_onnx(&m).unwrap_err().to_string().contains("batch axis"));
}

fn float_attr(name: &str, v: f32) -> Vec<u8> {
    let mut a = fb(1, name.as_bytes());
    a.extend(fv_fixed32(2, v.to_bits()));
    a.extend(fv(20, 1));
    a
}

fn fv_fixed32(field: u32, v: u32) -> Vec<u8> {
    let mut o = Vec::new();
    varint(u64::from(field) << 3 | 5, &mut o);
    o.extend(v.to_le_bytes());
    o
}

/// A model `x[N, c, h, w] -> nodes -> y` with the given initializers.
fn chw_model(chw: [u64; 3], nodes: &[Vec<u8>], inits: &[Vec<u8>]) -> Vec<u8> {
    let mut g = Vec::new();
    for n in nodes {
        g.extend(fb(1, n));
    }
    for t in inits {
        g.extend(fb(5, t));
    }
    let [c, h, w] = chw;
    g.extend(fb(11, &value_info("x", &[None, Some(c), Some(h), Some(w)])));
    g.extend(fb(12, &value_info("y", &[None])));
    let opset = [fb(1, b""), fv(2, 13)].concat();
    [fv(1, 8), fb(8, &opset), fb(7, &g)].concat()
}

/// BatchNormalization parameters for `c` channels: scale, B, mean, var.
fn bn_inits(c: usize) -> Vec<Vec<u8>> {
    let v = |f: &dyn Fn(usize) -> f32| (0..c).map(f).collect::<Vec<f32>>();
    vec![
        tensor("g", &[c as u64], &v(&|i| 0.5 + i as f32)),
        tensor("b", &[c as u64], &v(&|i| 0.25 - i as f32 / 4.0)),
        tensor("mu", &[c as u64], &v(&|i| i as f32 - 0.5)),
        tensor("var", &[c as u64], &v(&|i| 1.0 + i as f32 * 3.0)),
    ]
}

fn close(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() < 1e-5, "{a:?} vs {b:?}");
    }
}

#[test]
fn average_pools_import_and_evaluate() {
    let m = chw_model(
        [1, 4, 4],
        &[
            node(
                "AveragePool",
                &["x"],
                &["a"],
                &[ints_attr("kernel_shape", &[2, 2]), ints_attr("strides", &[2, 2])],
            ),
            node("GlobalAveragePool", &["a"], &["g"], &[]),
            node("Flatten", &["g"], &["y"], &[]),
        ],
        &[],
    );
    let m = import_onnx(&m).unwrap();
    assert_eq!(m.summary(), ["AvgPool 2x2 s2 -> 1x2x2", "AvgPool 2x2 s1 -> 1x1x1"]);
    let x: Vec<f64> = (0..16).map(f64::from).collect();
    assert_eq!(m.eval_f64(&x, 1).unwrap(), [7.5]);
}

#[test]
fn batch_norm_folds_into_a_preceding_conv_or_gemm_and_stands_alone_elsewhere() {
    let k = tensor("K", &[2, 1, 2, 2], &[1.0, 0.0, 0.0, -1.0, 0.5, 0.5, 0.5, 0.5]);
    let eps = float_attr("epsilon", 0.01);
    let bn = |i: &str, o: &str| {
        node("BatchNormalization", &[i, "g", "b", "mu", "var"], &[o], std::slice::from_ref(&eps))
    };
    let x: Vec<f64> = (0..16).map(|i| f64::from(i) / 4.0 - 2.0).collect();
    // Reference: the conv alone, then BN by hand (channel c: (v − μ)/√(var + ε)·γ + β).
    let plain = import_onnx(&chw_model(
        [1, 4, 4],
        &[node("Conv", &["x", "K"], &["c"], &[]), node("Flatten", &["c"], &["y"], &[])],
        std::slice::from_ref(&k),
    ))
    .unwrap();
    let conv_out = plain.eval_f64(&x, 1).unwrap();
    let bn_ref = |v: &[f64], inner: usize, relu: bool| -> Vec<f64> {
        v.iter()
            .enumerate()
            .map(|(i, &v)| {
                let c = (i / inner) as f64;
                let v = if relu { v.max(0.0) } else { v };
                (v - (c - 0.5)) / (1.0 + 3.0 * c + 0.01f64).sqrt() * (0.5 + c) + 0.25 - c / 4.0
            })
            .collect()
    };
    let inits = [vec![k.clone()], bn_inits(2)].concat();
    let folded = import_onnx(&chw_model(
        [1, 4, 4],
        &[
            node("Conv", &["x", "K"], &["c"], &[]),
            bn("c", "n"),
            node("Flatten", &["n"], &["y"], &[]),
        ],
        &inits,
    ))
    .unwrap();
    assert_eq!(folded.summary(), ["Conv 1x4x4->2x3x3 k2x2 s1 p0"], "folded into the conv");
    close(&folded.eval_f64(&x, 1).unwrap(), &bn_ref(&conv_out, 9, false));
    let alone = import_onnx(&chw_model(
        [1, 4, 4],
        &[
            node("Conv", &["x", "K"], &["c"], &[]),
            node("Relu", &["c"], &["r"], &[]),
            bn("r", "n"),
            node("Flatten", &["n"], &["y"], &[]),
        ],
        &inits,
    ))
    .unwrap();
    assert_eq!(alone.summary(), ["Conv 1x4x4->2x3x3 k2x2 s1 p0", "Relu", "Affine 2x9"]);
    close(&alone.eval_f64(&x, 1).unwrap(), &bn_ref(&conv_out, 9, true));
    // After a Gemm (features as channels), through a folded Add: folded as well.
    let gemm = model_with(
        &[
            node("MatMul", &["x", "W"], &["h"], &[]),
            node("Add", &["h", "B"], &["z"], &[]),
            node("BatchNormalization", &["z", "g", "b", "mu", "var"], &["y"], &[]),
        ],
        "y",
        &bn_inits(3),
    );
    let gemm = import_onnx(&gemm).unwrap();
    assert_eq!(gemm.summary(), ["Dense 4->3"]);
}

#[test]
fn grouped_and_depthwise_convolutions_import_and_evaluate() {
    // Two input channels, four outputs in two groups: outputs 0, 1 read channel 0 only.
    let w: Vec<f32> = (0..16).map(|i| i as f32 / 8.0 - 1.0).collect();
    let m = chw_model(
        [2, 3, 3],
        &[
            node("Conv", &["x", "K"], &["c"], &[int_attr("group", 2)]),
            node(
                "Conv",
                &["c", "D"],
                &["d"],
                &[int_attr("group", 4), ints_attr("pads", &[1, 1, 1, 1])],
            ),
            node("Flatten", &["d"], &["y"], &[]),
        ],
        &[tensor("K", &[4, 1, 2, 2], &w), tensor("D", &[4, 1, 3, 3], &[0.5; 36])],
    );
    let m = import_onnx(&m).unwrap();
    assert_eq!(m.summary(), ["Conv 2x3x3->4x2x2 k2x2 s1 p0 g2", "Conv 4x2x2->4x2x2 k3x3 s1 p1 g4"]);
    let x: Vec<f64> = (0..18).map(f64::from).collect();
    let y = m.eval_f64(&x, 1).unwrap();
    // By hand: grouped output o at (0,0) reads channel o/2's top-left 2x2 patch.
    let patch = |c: usize, oy: usize, ox: usize| -> [f64; 4] {
        let at = |y: usize, x: usize| (c * 9 + y * 3 + x) as f64;
        [at(oy, ox), at(oy, ox + 1), at(oy + 1, ox), at(oy + 1, ox + 1)]
    };
    let conv = |o: usize, oy: usize, ox: usize| -> f64 {
        patch(o / 2, oy, ox).iter().zip(&w[o * 4..o * 4 + 4]).map(|(a, b)| a * f64::from(*b)).sum()
    };
    // Depthwise 3x3 of 0.5 with padding 1 over a 2x2 plane: every output is half the sum.
    for o in 0..4 {
        let s: f64 = (0..4).map(|q| conv(o, q / 2, q % 2)).sum();
        for q in 0..4 {
            assert!((y[o * 4 + q] - 0.5 * s).abs() < 1e-4, "{o} {q}: {y:?}");
        }
    }
}

#[test]
fn unsupported_pool_norm_and_group_attributes_are_named() {
    let k = tensor("K", &[2, 1, 2, 2], &[1.0; 8]);
    let pool = |attrs: &[Vec<u8>]| {
        let mut a = vec![ints_attr("kernel_shape", &[2, 2])];
        a.extend_from_slice(attrs);
        chw_model([1, 4, 4], &[node("AveragePool", &["x"], &["y"], &a)], &[])
    };
    let bn = |attrs: &[Vec<u8>], outs: &[&str]| {
        chw_model(
            [2, 2, 2],
            &[node("BatchNormalization", &["x", "g", "b", "mu", "var"], outs, attrs)],
            &bn_inits(2),
        )
    };
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (pool(&[ints_attr("pads", &[1, 1, 1, 1])]), "AveragePool: attribute pads"),
        (pool(&[int_attr("ceil_mode", 1)]), "AveragePool: attribute ceil_mode"),
        (pool(&[ints_attr("dilations", &[2, 2])]), "dilations"),
        (pool(&[int_attr("bogus", 1)]), "AveragePool: attribute \"bogus\""),
        (
            chw_model(
                [1, 4, 4],
                &[node("GlobalAveragePool", &["x"], &["y"], &[int_attr("p", 2)])],
                &[],
            ),
            "GlobalAveragePool: attribute \"p\"",
        ),
        (
            bn(&[int_attr("training_mode", 1)], &["y"]),
            "BatchNormalization: attribute training_mode",
        ),
        (bn(&[int_attr("spatial", 0)], &["y"]), "BatchNormalization: attribute spatial"),
        (bn(&[], &["y", "m", "v"]), "training mode"),
        (
            chw_model(
                [3, 2, 2],
                &[node("BatchNormalization", &["x", "g", "b", "mu", "var"], &["y"], &[])],
                &bn_inits(2),
            ),
            "2 values for 3 channels",
        ),
        (
            chw_model(
                [1, 4, 4],
                &[node("Conv", &["x", "K"], &["y"], &[int_attr("group", 2)])],
                std::slice::from_ref(&k),
            ),
            "Conv: attribute group = 2",
        ),
        (
            chw_model(
                [4, 4, 4],
                &[node("Conv", &["x", "K"], &["y"], &[int_attr("group", 3)])],
                std::slice::from_ref(&k),
            ),
            "Conv: attribute group = 3",
        ),
        (
            chw_model(
                [4, 4, 4],
                &[node("Conv", &["x", "K"], &["y"], &[int_attr("group", 2)])],
                &[k],
            ),
            "per group",
        ),
    ];
    for (bytes, want) in cases {
        let e = import_onnx(&bytes).unwrap_err().to_string();
        assert!(e.contains(want), "{e:?} should mention {want:?}");
    }
    // A negative variance below −epsilon is an error, not a NaN weight.
    let mut inits = bn_inits(2);
    inits[3] = tensor("var", &[2], &[1.0, -1.0]);
    let e = import_onnx(&chw_model(
        [2, 2, 2],
        &[node("BatchNormalization", &["x", "g", "b", "mu", "var"], &["y"], &[])],
        &inits,
    ))
    .unwrap_err();
    assert!(e.to_string().contains("must be positive"), "{e}");
}

// --- ONNX-ML: LinearRegressor, SVMClassifier, TreeEnsembleClassifier. ---

fn floats_attr(name: &str, v: &[f32]) -> Vec<u8> {
    let packed: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    [fb(1, name.as_bytes()), fb(7, &packed), fv(20, 6)].concat()
}

fn i64s_attr(name: &str, v: &[i64]) -> Vec<u8> {
    let mut a = fb(1, name.as_bytes());
    for &x in v {
        a.extend(fv(8, x as u64));
    }
    a.extend(fv(20, 7));
    a
}

fn strs_attr(name: &str, v: &[&str]) -> Vec<u8> {
    let mut a = fb(1, name.as_bytes());
    for s in v {
        a.extend(fb(9, s.as_bytes()));
    }
    a.extend(fv(20, 8));
    a
}

fn ml_node(op: &str, outs: &[&str], attrs: &[Vec<u8>]) -> Vec<u8> {
    let mut n = node(op, &["x"], outs, attrs);
    n.extend(fb(7, b"ai.onnx.ml"));
    n
}

/// A model `x[N, 4] -> one ONNX-ML node`, with both opsets declared.
fn ml_model(node: Vec<u8>, outputs: &[&str]) -> Vec<u8> {
    let mut g = fb(1, &node);
    g.extend(fb(11, &value_info("x", &[None, Some(4)])));
    for o in outputs {
        g.extend(fb(12, &value_info(o, &[None])));
    }
    let opsets = [
        fb(8, &[fb(1, b""), fv(2, 13)].concat()),
        fb(8, &[fb(1, b"ai.onnx.ml"), fv(2, 1)].concat()),
    ]
    .concat();
    [fv(1, 8), opsets, fb(7, &g)].concat()
}

/// `SVMClassifier` in its SVC mode (libsvm's one-vs-one), by onnxruntime's rule written out
/// here: pair `(i, j)`'s decision is class i's vectors' kernels weighted by coefficient row
/// `j − 1`, class j's by row `i`, plus `rho[p]`; `> 0` votes for i, else for j; the class is the
/// first with the most votes. The import's scores are those votes, its class the same; a
/// decision of exactly 0 votes for j. Malformed attributes and other kernels are named.
#[test]
fn one_vs_one_svc_votes_like_onnxruntime() {
    let per_class = [1i64, 2, 1];
    let sv: Vec<f32> = (0..16).map(|i| ((i * 7) % 11) as f32 / 4.0 - 1.0).collect();
    let coef: Vec<f32> = (0..8).map(|i| ((i * 5) % 9) as f32 / 3.0 - 1.5).collect();
    let rho = [0.5f32, -0.25, 1.0];
    let svc = |extra: &[(&str, Vec<u8>)]| {
        let mut a: Vec<(&str, Vec<u8>)> = vec![
            ("coefficients", floats_attr("coefficients", &coef)),
            ("rho", floats_attr("rho", &rho)),
            ("support_vectors", floats_attr("support_vectors", &sv)),
            ("vectors_per_class", i64s_attr("vectors_per_class", &per_class)),
            ("classlabels_ints", i64s_attr("classlabels_ints", &[10, 20, 30])),
            ("kernel_type", str_attr("kernel_type", "LINEAR")),
        ];
        a.retain(|(n, _)| !extra.iter().any(|(e, _)| e == n));
        a.extend_from_slice(extra);
        let a: Vec<Vec<u8>> = a.into_iter().map(|(_, v)| v).collect();
        ml_model(ml_node("SVMClassifier", &["label", "scores"], &a), &["label", "scores"])
    };
    // onnxruntime's loop, in f64.
    let votes_of = |x: &[f64]| {
        let start = [0usize, 1, 3];
        let kern: Vec<f64> =
            sv.chunks(4).map(|s| s.iter().zip(x).map(|(a, b)| f64::from(*a) * b).sum()).collect();
        let mut votes = [0.0; 3];
        let mut p = 0;
        for i in 0..3 {
            for j in i + 1..3 {
                let mut d = f64::from(rho[p]);
                for (class, row) in [(i, j - 1), (j, i)] {
                    for s in start[class]..start[class] + per_class[class] as usize {
                        d += f64::from(coef[row * 4 + s]) * kern[s];
                    }
                }
                votes[if d > 0.0 { i } else { j }] += 1.0;
                p += 1;
            }
        }
        votes
    };
    let m = import_onnx(&svc(&[])).unwrap();
    assert_eq!(m.summary()[0], "Dense 4->3");
    assert!(matches!(m.layers[1], Layer::Trees(_)), "{:?}", m.layers);
    assert_eq!(m.class_labels, Some(ClassLabels::Ints(vec![10, 20, 30])));
    let mut rng = 7u64;
    let mut classes = [0; 3];
    for _ in 0..200 {
        let x: Vec<f64> = (0..4)
            .map(|_| {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((rng >> 40) % 41) as f64 / 10.0 - 2.0
            })
            .collect();
        let want = votes_of(&x);
        assert_eq!(m.eval_f64(&x, 1).unwrap(), want, "x = {x:?}");
        classes[(0..3).fold(0, |b, c| if want[c] > want[b] { c } else { b })] += 1;
    }
    assert!(classes.iter().all(|&c| c > 0), "every class is chosen somewhere: {classes:?}");
    // A decision of exactly 0 votes for the second class of its pair: x = 0 leaves rho, so
    // with rho = (0, 0, 0) class 0 loses both its pairs and class 1 wins (1,2).
    let zero = import_onnx(&svc(&[("rho", floats_attr("rho", &[0.0; 3]))])).unwrap();
    assert_eq!(zero.eval_f64(&[0.0; 4], 1).unwrap(), [0.0, 1.0, 2.0]);
    // Platt's parameters change onnxruntime's scores, not its label: accepted.
    let platt = [
        ("prob_a", floats_attr("prob_a", &[1.0; 3])),
        ("prob_b", floats_attr("prob_b", &[0.5; 3])),
    ];
    assert_eq!(import_onnx(&svc(&platt)).unwrap().summary(), m.summary());
    // Two classes: one pair, one stump.
    let two = svc(&[
        ("vectors_per_class", i64s_attr("vectors_per_class", &[2, 2])),
        ("coefficients", floats_attr("coefficients", &coef[..4])),
        ("rho", floats_attr("rho", &[0.5])),
        ("classlabels_ints", i64s_attr("classlabels_ints", &[0, 1])),
    ]);
    assert_eq!(import_onnx(&two).unwrap().summary()[0], "Dense 4->1");

    let cases: Vec<(Vec<u8>, &str)> = vec![
        (svc(&[("kernel_type", str_attr("kernel_type", "RBF"))]), "kernel_type RBF (only LINEAR"),
        (svc(&[("kernel_type", str_attr("kernel_type", "POLY"))]), "the poly kernel"),
        (svc(&[("vectors_per_class", i64s_attr("vectors_per_class", &[1, -2, 1]))]), "[1, -2, 1]"),
        (svc(&[("vectors_per_class", i64s_attr("vectors_per_class", &[1, 2]))]), "3 labels"),
        (svc(&[("vectors_per_class", i64s_attr("vectors_per_class", &[2, 2, 1]))]), "16 support"),
        (svc(&[("coefficients", floats_attr("coefficients", &coef[..6]))]), "6 coefficients"),
        (svc(&[("rho", floats_attr("rho", &[0.5]))]), "1 rho"),
        (svc(&[("prob_a", floats_attr("prob_a", &[1.0; 3]))]), "3 prob_a and 0 prob_b"),
        (
            svc(&[("prob_a", floats_attr("prob_a", &[1.0; 2])), platt[1].clone()]),
            "for 3 class pairs",
        ),
    ];
    for (bytes, want) in cases {
        let e = import_onnx(&bytes).unwrap_err().to_string();
        assert!(e.contains(want), "{e:?} should mention {want:?}");
    }
}

#[test]
fn linear_regressor_and_linear_svm_import_as_dense_layers() {
    let coef: Vec<f32> = (0..8).map(|i| i as f32 - 3.5).collect();
    let reg = ml_node(
        "LinearRegressor",
        &["y"],
        &[
            floats_attr("coefficients", &coef),
            floats_attr("intercepts", &[0.5, -1.0]),
            int_attr("targets", 2),
        ],
    );
    let m = import_onnx(&ml_model(reg, &["y"])).unwrap();
    assert_eq!(m.summary(), ["Dense 4->2"]);
    close(&m.eval_f64(&[1.0, 0.0, 2.0, 0.0], 1).unwrap(), &[-3.5 - 3.0 + 0.5, 0.5 + 5.0 - 1.0]);

    // SVMClassifier, linear mode: score_c = w_c·x + rho[0] (onnxruntime's rule), label = argmax.
    let coef: Vec<f32> = (0..12).map(|i| (i % 5) as f32 - 2.0).collect();
    // `extra` replaces the default attribute of the same name.
    let svm = |extra: &[(&str, Vec<u8>)]| {
        let mut a: Vec<(&str, Vec<u8>)> = vec![
            ("coefficients", floats_attr("coefficients", &coef)),
            ("rho", floats_attr("rho", &[0.25])),
            ("classlabels_ints", i64s_attr("classlabels_ints", &[3, 5, 7])),
            ("kernel_type", str_attr("kernel_type", "LINEAR")),
        ];
        a.retain(|(n, _)| !extra.iter().any(|(e, _)| e == n));
        a.extend_from_slice(extra);
        let a: Vec<Vec<u8>> = a.into_iter().map(|(_, v)| v).collect();
        ml_model(ml_node("SVMClassifier", &["label", "scores"], &a), &["label", "scores"])
    };
    let m = import_onnx(&svm(&[])).unwrap();
    assert_eq!(m.summary(), ["Dense 4->3"]);
    assert_eq!(m.class_labels, Some(ClassLabels::Ints(vec![3, 5, 7])));
    let x = [1.0, 2.0, 0.0, -1.0];
    let want: Vec<f64> = coef
        .chunks(4)
        .map(|w| w.iter().zip(&x).map(|(w, x)| f64::from(*w) * x).sum::<f64>() + 0.25)
        .collect();
    close(&m.eval_f64(&x, 1).unwrap(), &want);

    let cases: Vec<(Vec<u8>, &str)> = vec![
        (svm(&[("kernel_type", str_attr("kernel_type", "RBF"))]), "SVMClassifier: kernel_type RBF"),
        (svm(&[("v", i64s_attr("vectors_per_class", &[1, 1, 1]))]), "0 support vector values"),
        (svm(&[("p", floats_attr("prob_a", &[1.0]))]), "prob_a"),
        (svm(&[("rho", floats_attr("rho", &[0.25, 0.5, 0.75]))]), "attribute rho"),
        (svm(&[("t", str_attr("post_transform", "PROBIT"))]), "post_transform PROBIT"),
        (svm(&[("x", str_attr("kernel_type", "RBF"))]), "attribute \"kernel_type\" twice"),
        (
            ml_model(
                ml_node(
                    "LinearRegressor",
                    &["y"],
                    &[
                        floats_attr("coefficients", &[1.0; 4]),
                        str_attr("post_transform", "SOFTMAX"),
                    ],
                ),
                &["y"],
            ),
            "LinearRegressor: post_transform SOFTMAX",
        ),
        (
            ml_model(
                ml_node("LinearRegressor", &["y"], &[floats_attr("coefficients", &[1.0; 5])]),
                &["y"],
            ),
            "5 coefficients",
        ),
    ];
    for (bytes, want) in cases {
        let e = import_onnx(&bytes).unwrap_err().to_string();
        assert!(e.contains(want), "{e:?} should mention {want:?}");
    }
}

/// One tree over 4 features and 3 classes: node 0 `x1 <= 0.5`, true -> node 1 `x3 < 2`
/// (true -> leaf 3: class 0, false -> leaf 4: class 1), false -> leaf 2: class 2.
fn tree_model(mode0: &str, extra: &[Vec<u8>]) -> Vec<u8> {
    let mut a = vec![
        i64s_attr("nodes_treeids", &[0, 0, 0, 0, 0]),
        i64s_attr("nodes_nodeids", &[0, 1, 2, 3, 4]),
        i64s_attr("nodes_featureids", &[1, 3, 0, 0, 0]),
        floats_attr("nodes_values", &[0.5, 2.0, 0.0, 0.0, 0.0]),
        strs_attr("nodes_modes", &[mode0, "BRANCH_LT", "LEAF", "LEAF", "LEAF"]),
        i64s_attr("nodes_truenodeids", &[1, 3, 0, 0, 0]),
        i64s_attr("nodes_falsenodeids", &[2, 4, 0, 0, 0]),
        i64s_attr("class_treeids", &[0, 0, 0, 0]),
        i64s_attr("class_nodeids", &[3, 4, 2, 2]),
        i64s_attr("class_ids", &[0, 1, 2, 0]),
        floats_attr("class_weights", &[1.0, 1.0, 0.75, 0.25]),
        i64s_attr("classlabels_int64s", &[10, 20, 30]),
    ];
    a.extend_from_slice(extra);
    ml_model(
        ml_node("TreeEnsembleClassifier", &["label", "probabilities"], &a),
        &["label", "probabilities"],
    )
}

#[test]
fn tree_ensembles_import_with_their_node_modes() {
    let m = import_onnx(&tree_model("BRANCH_LEQ", &[])).unwrap();
    assert_eq!(m.summary(), ["Trees 2 nodes 3 leaves -> 3"]);
    assert_eq!(m.class_labels, Some(ClassLabels::Ints(vec![10, 20, 30])));
    // x1 = 0.5 takes the true branch under LEQ, the false one under LT.
    let rows = [[0.0, 0.5, 0.0, 1.0], [0.0, 0.5, 0.0, 2.0], [0.0, 0.75, 0.0, 1.0]];
    let x: Vec<f64> = rows.iter().flatten().copied().collect();
    let leq = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.25, 0.0, 0.75];
    close(&m.eval_f64(&x, 3).unwrap(), &leq);
    let lt = import_onnx(&tree_model("BRANCH_LT", &[])).unwrap();
    close(&lt.eval_f64(&x, 3).unwrap(), &[0.25, 0.0, 0.75, 0.25, 0.0, 0.75, 0.25, 0.0, 0.75]);
    let gt = import_onnx(&tree_model("BRANCH_GT", &[])).unwrap();
    close(&gt.eval_f64(&x[..4], 1).unwrap(), &[0.25, 0.0, 0.75]);
    let gte =
        import_onnx(&tree_model("BRANCH_GTE", &[floats_attr("base_values", &[1.0, 2.0, 3.0])]))
            .unwrap();
    close(&gte.eval_f64(&x[..4], 1).unwrap(), &[2.0, 2.0, 3.0]);

    let cases: Vec<(Vec<u8>, &str)> = vec![
        (tree_model("BRANCH_EQ", &[]), "node mode BRANCH_EQ"),
        (tree_model("BRANCH_NEQ", &[]), "node mode BRANCH_NEQ"),
        (
            tree_model("BRANCH_LEQ", &[str_attr("post_transform", "PROBIT")]),
            "post_transform PROBIT",
        ),
        (
            tree_model("BRANCH_LEQ", &[int_attr("aggregate_function", 1)]),
            "attribute \"aggregate_function\"",
        ),
    ];
    for (bytes, want) in cases {
        let e = import_onnx(&bytes).unwrap_err().to_string();
        assert!(e.contains(want), "{e:?} should mention {want:?}");
    }
}

/// Two classes with every weight voting for one (LightGBM's and XGBoost's binary exports):
/// one score `s` (the trees' sum, plus `base_values[0]` for class 0), class 1 exactly when
/// `s > t` — `t` = 0 for signed weights, 0.5 when all are non-negative, ties to class 0 —
/// as the two scores `(t − s, s − t)`. Weights for both classes, or two base values with
/// the votes for class 1 (onnxruntime then drops the votes), are refused with the reason.
#[test]
fn binary_tree_ensembles_follow_onnxruntime_s_one_score_rule() {
    // The tree of `tree_model`, its three leaves (3, 4, 2) weighted `w` for class `class`.
    let binary = |class: i64, w: [f32; 3], extra: &[Vec<u8>]| {
        let mut a = vec![
            i64s_attr("nodes_treeids", &[0, 0, 0, 0, 0]),
            i64s_attr("nodes_nodeids", &[0, 1, 2, 3, 4]),
            i64s_attr("nodes_featureids", &[1, 3, 0, 0, 0]),
            floats_attr("nodes_values", &[0.5, 2.0, 0.0, 0.0, 0.0]),
            strs_attr("nodes_modes", &["BRANCH_LEQ", "BRANCH_LT", "LEAF", "LEAF", "LEAF"]),
            i64s_attr("nodes_truenodeids", &[1, 3, 0, 0, 0]),
            i64s_attr("nodes_falsenodeids", &[2, 4, 0, 0, 0]),
            i64s_attr("class_treeids", &[0, 0, 0]),
            i64s_attr("class_nodeids", &[3, 4, 2]),
            i64s_attr("class_ids", &[class, class, if class < 0 { 1 } else { class }]),
            floats_attr("class_weights", &w),
            i64s_attr("classlabels_int64s", &[7, 9]),
        ];
        a.extend_from_slice(extra);
        let node = ml_node("TreeEnsembleClassifier", &["label", "probabilities"], &a);
        import_onnx(&ml_model(node, &["label", "probabilities"]))
    };
    // Rows reaching leaf 3, leaf 4 and leaf 2.
    let x = [0.0, 0.5, 0.0, 1.0, 0.0, 0.5, 0.0, 2.0, 0.0, 0.75, 0.0, 1.0];
    let m = binary(0, [-1.0, 2.0, 0.25], &[]).unwrap();
    assert_eq!(m.summary(), ["Trees 2 nodes 3 leaves -> 1", "Dense 1->2"]);
    assert_eq!(m.class_labels, Some(ClassLabels::Ints(vec![7, 9])));
    close(&m.eval_f64(&x, 3).unwrap(), &[1.0, -1.0, -2.0, 2.0, -0.25, 0.25]);
    let based = binary(0, [-1.0, 2.0, 0.25], &[floats_attr("base_values", &[-0.5])]).unwrap();
    close(&based.eval_f64(&x[8..], 1).unwrap(), &[0.25, -0.25]);
    // Votes for class 1: onnxruntime adds no single base value to them.
    let one = binary(1, [-1.0, 2.0, 0.25], &[floats_attr("base_values", &[-0.5])]).unwrap();
    close(&one.eval_f64(&x[8..], 1).unwrap(), &[-0.25, 0.25]);
    // Non-negative weights: t = 0.5, and s = 0.5 is a tie, class 0.
    let probs = binary(0, [0.2, 0.9, 0.5], &[]).unwrap();
    close(&probs.eval_f64(&x, 3).unwrap(), &[0.3, -0.3, -0.4, 0.4, 0.0, 0.0]);
    for (e, want) in [
        (binary(-1, [1.0; 3], &[]).unwrap_err(), "2 classes with weights for 2 of them"),
        (
            binary(1, [1.0; 3], &[floats_attr("base_values", &[0.0, 1.0])]).unwrap_err(),
            "2 base values with the weights for class 1",
        ),
    ] {
        assert!(e.to_string().contains(want), "{e}");
    }
}

#[test]
fn the_shipped_svm_and_tree_import_and_match_onnxruntime_in_float() {
    let svm = import_onnx(SVM).unwrap();
    assert_eq!(svm.summary(), ["Dense 64->10"]);
    let tree = import_onnx(TREE).unwrap();
    assert_eq!(tree.class_labels, Some(ClassLabels::Ints((0..10).collect())));
    let x = digits8();
    let n = x.len() / 64;
    for (name, m, reference) in [("svm", &svm, SVM_REF), ("tree", &tree, TREE_REF)] {
        let ours = m.eval_f64(&x, n).unwrap();
        let theirs = json_numbers(reference, "probabilities");
        let worst = ours.iter().zip(&theirs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        eprintln!("{name}: float scores within {worst} of onnxruntime's");
        assert!(worst < 1e-3, "{name}: {worst}");
    }
}

/// Crafted window geometries (the review's case: pads, strides and inputs near the importer's
/// attribute limit of 2^20) are refused by name, without overflow, panic or a huge allocation;
/// a pool whose windows would hold 2^36 values is refused before any is built.
#[test]
fn crafted_window_geometry_is_refused_not_allocated() {
    let big = (1 << 20) - 1;
    let conv = |attrs: &[Vec<u8>]| vec![node("Conv", &["x", "K"], &["c"], attrs)];
    // 1x4x4 input, 2x2 kernel, padding 2^20 − 1 on every side: 2^21 × 2^21 output positions.
    let padded = conv(&[ints_attr("pads", &[big, big, big, big])]);
    let e = import_onnx(&conv_model(&padded)).unwrap_err().to_string();
    assert!(e.contains("Conv: geometry") && e.contains("at most 268435456"), "{e}");
    // The same with a huge stride is small again, and imports.
    let mut strided =
        conv(&[ints_attr("pads", &[big, big, big, big]), ints_attr("strides", &[big, big])]);
    strided.push(node("MaxPool", &["c"], &["p"], &[ints_attr("kernel_shape", &[3, 3])]));
    strided.push(node("Flatten", &["p"], &["y"], &[]));
    let m = import_onnx(&conv_model(&strided)).unwrap();
    assert_eq!(m.summary()[0], format!("Conv 1x4x4->2x3x3 k2x2 s{big} p{big}"));
    // An input of 2^18 × 2^18 values per channel: refused at the graph input.
    let wide = chw_model(
        [1, 1 << 18, 1 << 18],
        &[node("MaxPool", &["x"], &["y"], &[ints_attr("kernel_shape", &[1, 1])])],
        &[],
    );
    let e = import_onnx(&wide).unwrap_err().to_string();
    assert!(e.contains("more than 268435456 values per sample"), "{e}");
    // 2^14 × 2^14 input (2^28 values, at the cap) pooled by a 2^4 × 2^4 window with stride 1:
    // 2^36 window entries.
    let windows = chw_model(
        [1, 1 << 14, 1 << 14],
        &[node("MaxPool", &["x"], &["y"], &[ints_attr("kernel_shape", &[16, 16])])],
        &[],
    );
    let e = import_onnx(&windows).unwrap_err().to_string();
    assert!(e.contains("MaxPool: geometry"), "{e}");
}

/// The output scale an integer model's import notes (its scores are the quantized ones).
fn output_scale(m: &Model) -> f64 {
    let note = m.dropped_transforms.last().expect("a quantized model notes its output scale");
    note.split("scale ").nth(1).and_then(|s| s.trim_end_matches(')').parse().ok()).expect(note)
}

/// The int8 models of both ONNX forms (QOperator with `com.microsoft` ops, QDQ) import as
/// integer models whose evaluation is onnxruntime's: every score of every held-out sample
/// within one quantization step (float32 against float64 rounding of the multipliers), the
/// same class for all of them.
#[test]
fn quantized_models_evaluate_as_onnxruntime_does() {
    for (name, bytes, reference, x, n) in [
        ("minionn-q", MINIONN_Q, MINIONN_Q_REF, mnist(1000), 1000),
        ("lenet-qdq", LENET_QDQ, LENET_QDQ_REF, mnist(1000), 1000),
        (
            "mobilenet-q",
            MOBILENET_Q,
            MOBILENET_Q_REF,
            MOBILENET_Q_INPUTS.iter().map(|&p| f64::from(p) / 255.0).collect(),
            8,
        ),
    ] {
        let m = import_onnx(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(m.layers.iter().any(|l| matches!(l, Layer::Requant(_))), "{name}");
        let y = m.eval_f64(&x, n).unwrap();
        let s = output_scale(&m);
        let ort = json_numbers(reference, "scores");
        assert_eq!(y.len(), ort.len(), "{name}");
        let worst = y.iter().zip(&ort).map(|(a, b)| (a * s - b).abs() / s).fold(0.0, f64::max);
        eprintln!("{name}: {:?}; scores within {worst:.3} steps of onnxruntime", m.summary());
        assert!(worst <= 1.001, "{name}: {worst} steps");
        let classes = m.output_len();
        let ours = ringfence_core::nn::argmax_rows(&y, classes);
        let theirs: Vec<usize> =
            json_numbers(reference, "argmax").iter().map(|&v| v as usize).collect();
        // A one-step difference may break a tie the other way; there is none in these files.
        assert_eq!(ours, theirs, "{name}");
    }
}

/// A tensor of `dtype` from raw little-endian bytes (`dims` empty: a scalar).
fn raw_tensor(name: &str, dims: &[u64], dtype: u64, raw: &[u8]) -> Vec<u8> {
    let mut t = Vec::new();
    for &d in dims {
        t.extend(fv(1, d));
    }
    t.extend(fv(2, dtype));
    t.extend(fb(8, name.as_bytes()));
    t.extend(fb(9, raw));
    t
}

/// A QDQ model `x[N,4] → Q → DQ → MatMul(DQ(Wq)) → Q → DQ → y[N,3]`: input scale 1/10 and
/// uint8 zero point 0, int8 weights `Wq` (4×3) with scale `ws`, output scale 1/2, zero point
/// 128; `bad` replaces one initializer.
fn qdq_model(ws: &[f32], bad: Option<Vec<u8>>) -> Vec<u8> {
    qdq_model_with(ws, bad, &[])
}

/// [`qdq_model`] with attributes on the weights' `DequantizeLinear`.
fn qdq_model_with(ws: &[f32], bad: Option<Vec<u8>>, w_attrs: &[Vec<u8>]) -> Vec<u8> {
    let wq: Vec<u8> =
        [1i8, -2, 3, 4, 5, -6, -7, 8, 9, 10, -11, 12].iter().map(|&v| v as u8).collect();
    let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let mut inits = vec![
        raw_tensor("xs", &[], 1, &f(&[0.1])),
        raw_tensor("xz", &[], 2, &[0]),
        raw_tensor("Wq", &[4, 3], 3, &wq),
        raw_tensor("ws", if ws.len() == 1 { &[] } else { &[4] }, 1, &f(ws)),
        raw_tensor("ys", &[], 1, &f(&[0.5])),
        raw_tensor("yz", &[], 2, &[128]),
    ];
    if let Some(b) = bad {
        inits.push(b);
    }
    model_with(
        &[
            node("QuantizeLinear", &["x", "xs", "xz"], &["xq"], &[]),
            node("DequantizeLinear", &["xq", "xs", "xz"], &["xd"], &[]),
            node("DequantizeLinear", &["Wq", "ws"], &["Wd"], w_attrs),
            node("MatMul", &["xd", "Wd"], &["h"], &[]),
            node("QuantizeLinear", &["h", "ys", "yz"], &["hq"], &[]),
            node("DequantizeLinear", &["hq", "ys", "yz"], &["y"], &[]),
        ],
        "y",
        &inits,
    )
}

/// A hand-made QDQ model imports as an integer model that computes as onnxruntime does
/// (quantize, integer product, requantize with saturation), and every way of breaking its
/// quantization parameters is refused naming what is wrong.
#[test]
fn a_hand_made_qdq_model_imports_and_bad_quantization_parameters_are_named() {
    let m = import_onnx(&qdq_model(&[0.25], None)).unwrap();
    assert_eq!(m.summary(), ["Requant 1x4 [0, 255]", "Dense 4->3", "Requant 1x3 [-128, 127]"]);
    // x = (1.0, 0.26, 0.0, 25.6): quantized to (10, 3, 0, 255) (256 saturates, 2.6 rounds up).
    let y = m.eval_f64(&[1.0, 0.26, 0.0, 25.6], 1).unwrap();
    let q = [10.0, 3.0, 0.0, 255.0];
    let w = [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0], [-7.0, 8.0, 9.0], [10.0, -11.0, 12.0]];
    for (o, got) in y.iter().enumerate() {
        let acc: f64 = (0..4).map(|i| q[i] * w[i][o]).sum();
        // Real acc·0.1·0.25, quantized with scale 0.5, centred, saturated to [-128, 127].
        let want = (acc * 0.1 * 0.25 / 0.5).round().clamp(-128.0, 127.0);
        assert_eq!(*got, want, "output {o}");
    }
    let cases: [(Vec<u8>, &str); 3] = [
        (raw_tensor("xs", &[], 1, &0f32.to_le_bytes()), "scale [0.0]"),
        (raw_tensor("yz", &[], 5, &[0, 0]), "\"yz\": data type 5"),
        (raw_tensor("ys", &[2], 1, &[0; 8]), "per-tensor activations only"),
    ];
    for (bad, want) in cases {
        // A later initializer of the same name replaces the first.
        let e = import_onnx(&qdq_model(&[0.25], Some(bad))).unwrap_err().to_string();
        assert!(e.contains(want), "{e:?} should mention {want}");
    }
    // Four scales: per row of MatMul's B, i.e. per input, not per output.
    let four = [0.25, 0.5, 0.25, 0.5];
    let e = import_onnx(&qdq_model(&four, None)).unwrap_err().to_string();
    assert!(e.contains("per channel along axis 0"), "{e}");
    let axis0 = [int_attr("axis", 0)];
    let e = import_onnx(&qdq_model_with(&four, None, &axis0)).unwrap_err().to_string();
    assert!(e.contains("per-channel weight scales on a MatMul"), "{e}");
}

/// A QDQ MatMul whose bias is a separate `Add` of a dequantized int32 constant (as exporters
/// write a MatMul + Add) adds the integer bias in the sum's units, and a BatchNormalization in a
/// quantized model is refused (it must be folded before quantizing).
#[test]
fn a_qdq_matmul_with_an_add_bias_takes_it_in_the_sum_s_units() {
    let wq: Vec<u8> =
        [1i8, -2, 3, 4, 5, -6, -7, 8, 9, 10, -11, 12].iter().map(|&v| v as u8).collect();
    let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let bq: Vec<u8> = [100i32, -40, 7].iter().flat_map(|v| v.to_le_bytes()).collect();
    let inits = [
        raw_tensor("xs", &[], 1, &f(&[0.1])),
        raw_tensor("xz", &[], 2, &[0]),
        raw_tensor("Wq", &[4, 3], 3, &wq),
        raw_tensor("ws", &[], 1, &f(&[0.25])),
        raw_tensor("Bq", &[3], 6, &bq),
        raw_tensor("bs", &[], 1, &f(&[0.025])),
        raw_tensor("ys", &[], 1, &f(&[0.5])),
        raw_tensor("yz", &[], 2, &[128]),
    ];
    let bytes = model_with(
        &[
            node("QuantizeLinear", &["x", "xs", "xz"], &["xq"], &[]),
            node("DequantizeLinear", &["xq", "xs", "xz"], &["xd"], &[]),
            node("DequantizeLinear", &["Wq", "ws"], &["Wd"], &[]),
            node("DequantizeLinear", &["Bq", "bs"], &["Bd"], &[]),
            node("MatMul", &["xd", "Wd"], &["h"], &[]),
            node("Add", &["h", "Bd"], &["hb"], &[]),
            node("QuantizeLinear", &["hb", "ys", "yz"], &["hq"], &[]),
            node("DequantizeLinear", &["hq", "ys", "yz"], &["y"], &[]),
        ],
        "y",
        &inits,
    );
    let m = import_onnx(&bytes).unwrap();
    let y = m.eval_f64(&[1.0, 0.26, 0.0, 25.6], 1).unwrap();
    let q = [10.0, 3.0, 0.0, 255.0];
    let w = [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0], [-7.0, 8.0, 9.0], [10.0, -11.0, 12.0]];
    let b = [100.0, -40.0, 7.0];
    for (o, got) in y.iter().enumerate() {
        let acc: f64 = (0..4).map(|i| q[i] * w[i][o]).sum::<f64>() + b[o];
        let want = (acc * 0.1 * 0.25 / 0.5).round().clamp(-128.0, 127.0);
        assert_eq!(*got, want, "output {o}");
    }
    let mut bn_inits = inits.to_vec();
    for name in ["g", "beta", "mu", "var"] {
        bn_inits.push(tensor(name, &[3], &[1.0, 0.5, 2.0]));
    }
    let bytes = model_with(
        &[
            node("QuantizeLinear", &["x", "xs", "xz"], &["xq"], &[]),
            node("DequantizeLinear", &["xq", "xs", "xz"], &["xd"], &[]),
            node("DequantizeLinear", &["Wq", "ws"], &["Wd"], &[]),
            node("MatMul", &["xd", "Wd"], &["h"], &[]),
            node("BatchNormalization", &["h", "g", "beta", "mu", "var"], &["y"], &[]),
        ],
        "y",
        &bn_inits,
    );
    let e = import_onnx(&bytes).unwrap_err().to_string();
    assert!(e.contains("BatchNormalization in a quantized model"), "{e}");
}

fn scalar_int64(name: &str, v: i64) -> Vec<u8> {
    [fv(2, 7), fb(8, name.as_bytes()), fb(9, &v.to_le_bytes())].concat()
}

fn tensor_attr(name: &str, t: &[u8]) -> Vec<u8> {
    [fb(1, name.as_bytes()), fb(5, t), fv(20, 4)].concat()
}

/// PyTorch's `x.view(x.size(0), -1)`: `Shape → Gather → Unsqueeze → Concat → Reshape` with
/// `Constant` nodes, folded so the `Reshape` keeps the batch axis; the same with the older
/// exporters' `Unsqueeze` attribute and a `Slice` of the shape.
#[test]
fn pytorch_flatten_chains_fold_into_a_reshape_that_keeps_the_batch() {
    let flatten = |unsqueeze: Vec<u8>| {
        vec![
            node("Constant", &[], &["zero"], &[tensor_attr("value", &scalar_int64("", 0))]),
            node("Constant", &[], &["minus1"], &[tensor_attr("value", &int64_tensor("", &[-1]))]),
            node("Shape", &["x"], &["s"], &[]),
            node("Gather", &["s", "zero"], &["n"], &[int_attr("axis", 0)]),
            unsqueeze,
            node("Concat", &["n1", "minus1"], &["target"], &[int_attr("axis", 0)]),
            node("Reshape", &["x", "target"], &["r"], &[]),
            node("Gemm", &["r", "W", "B"], &["y"], &[]),
        ]
    };
    let by_input = flatten(node("Unsqueeze", &["n", "axes"], &["n1"], &[]));
    let by_attr = flatten(node("Unsqueeze", &["n"], &["n1"], &[ints_attr("axes", &[0])]));
    for nodes in [by_input, by_attr] {
        let m = model_with(&nodes, "y", &[int64_tensor("axes", &[0])]);
        let model = import_onnx(&m).unwrap();
        assert_eq!(model.summary(), ["Dense 4->3"]);
        let plain =
            import_onnx(&model_with(&[node("Gemm", &["x", "W", "B"], &["y"], &[])], "y", &[]))
                .unwrap();
        let x = [0.5, -1.0, 2.0, 0.25, 1.0, 0.0, -0.5, 3.0];
        assert_eq!(model.eval_f64(&x, 2).unwrap(), plain.eval_f64(&x, 2).unwrap());
    }
    // Shape(x)[0:1] ++ [-1] by Slice.
    let m = model_with(
        &[
            node("Shape", &["x"], &["s"], &[]),
            node("Slice", &["s", "start", "end"], &["n1"], &[]),
            node("Concat", &["n1", "rest"], &["target"], &[int_attr("axis", 0)]),
            node("Reshape", &["x", "target"], &["r"], &[]),
            node("Gemm", &["r", "W", "B"], &["y"], &[]),
        ],
        "y",
        &[int64_tensor("start", &[0]), int64_tensor("end", &[1]), int64_tensor("rest", &[4])],
    );
    assert_eq!(import_onnx(&m).unwrap().summary(), ["Dense 4->3"]);
    // Arithmetic on the batch size, or the batch anywhere but first, is named.
    let cases = [
        (
            vec![
                node("Shape", &["x"], &["s"], &[]),
                node("Mul", &["s", "two"], &["target"], &[]),
                node("Reshape", &["x", "target"], &["y"], &[]),
            ],
            "batch size",
        ),
        (
            vec![
                node("Shape", &["x"], &["s"], &[]),
                node("Concat", &["rest", "s"], &["t"], &[int_attr("axis", 0)]),
                node("Reshape", &["x", "t"], &["y"], &[]),
            ],
            "position",
        ),
    ];
    for (nodes, want) in cases {
        let m = model_with(&nodes, "y", &[int64_tensor("two", &[2]), int64_tensor("rest", &[4])]);
        let e = import_onnx(&m).unwrap_err().to_string();
        assert!(e.contains(want), "{e:?} should mention {want:?}");
    }
}

/// Exporters that trace static shapes (PyTorch's dynamo exporter) write a reshape to a literal
/// batch of 1 for a graph whose input has a batch axis of 1: accepted there, and refused where
/// the batch is free.
#[test]
fn a_literal_batch_of_one_is_the_batch_when_the_input_has_one() {
    let with_batch = |batch: Option<u64>| {
        let mut g = Vec::new();
        g.extend(fb(1, &node("Reshape", &["x", "S"], &["r"], &[])));
        g.extend(fb(1, &node("Gemm", &["r", "W", "B"], &["y"], &[])));
        let w: Vec<f32> = (0..12).map(|i| i as f32 / 10.0).collect();
        g.extend(fb(5, &tensor("W", &[4, 3], &w)));
        g.extend(fb(5, &tensor("B", &[3], &[0.0, 0.0, 0.0])));
        g.extend(fb(5, &int64_tensor("S", &[1, 4])));
        g.extend(fb(11, &value_info("x", &[batch, Some(2), Some(2)])));
        g.extend(fb(12, &value_info("y", &[batch, Some(3)])));
        let opset = [fb(1, b""), fv(2, 18)].concat();
        [fv(1, 8), fb(8, &opset), fb(7, &g)].concat()
    };
    assert_eq!(import_onnx(&with_batch(Some(1))).unwrap().summary(), ["Dense 4->3"]);
    let e = import_onnx(&with_batch(None)).unwrap_err().to_string();
    assert!(e.contains("batch axis"), "{e}");
}

/// scikit-learn's models as skl2onnx writes them by default (`scripts/models/exporter_cases.py`):
/// the label side branch (`Cast`, `ArrayFeatureExtractor`, `Reshape` of the label), `ZipMap`,
/// the input `Cast` and a pipeline's `Scaler` import, and the class of every held-out sample
/// equals onnxruntime's label. An SVC's scores are its one-vs-one votes: what the graph computes
/// from its decisions builds nothing.
#[test]
fn scikit_learn_exports_at_their_defaults_classify_like_onnxruntime() {
    for (name, onnx, reference) in CLASSICAL_EXPORTS {
        let (model, report) = import_onnx_report(onnx).unwrap_or_else(|e| panic!("{name}: {e}"));
        // ZipMap at the defaults; the double graph (zipmap=False) ends in Softmax, the binary
        // LinearSVC in its positive class's column.
        let last = match name {
            n if n.contains("-svc-") => {
                let want: &[&str] = match n {
                    "iris-svc-linear-proba" => &["Cast", "ZipMap"],
                    "cancer-scaled-svc-linear" => &[],
                    _ => {
                        &["Cast", "Less", "Neg", "ArrayFeatureExtractor", "Sum", "Div", "Identity"]
                    }
                };
                let seen = &report.score_branch;
                assert!(want.iter().all(|w| seen.iter().any(|s| s == w)), "{name}: {seen:?}");
                assert!(model.dropped_transforms.is_empty(), "{name}: {model:?}");
                assert!(matches!(model.layers.last(), Some(Layer::Trees(_))), "{name}");
                None
            }
            n if n.ends_with("-f64") => Some("Softmax"),
            "cancer-linearsvc" => Some("ArrayFeatureExtractor(positive class)"),
            n if n.ends_with("xgboost") || n.ends_with("lightgbm") => {
                Some(if n.starts_with("cancer") {
                    "TreeEnsembleClassifier.post_transform=LOGISTIC"
                } else {
                    "TreeEnsembleClassifier.post_transform=SOFTMAX"
                })
            }
            _ => Some("ZipMap"),
        };
        if let Some(last) = last {
            assert!(model.dropped_transforms.iter().any(|t| t == last), "{name}: {model:?}");
        }
        let x = json_numbers(reference, "inputs");
        let labels = common::json_labels(reference, "labels");
        let scores = model.eval_f64(&x, labels.len()).unwrap();
        let classes = scores.len() / labels.len();
        for (i, (row, want)) in scores.chunks_exact(classes).zip(&labels).enumerate() {
            let best = (0..classes).fold(0, |b, j| if row[j] > row[b] { j } else { b });
            let label = Label::of(model.class_labels.as_ref(), best);
            assert_eq!(&label, want, "{name}: sample {i}, scores {row:?}");
        }
        if name.starts_with("iris-names") {
            let species = ["setosa", "versicolor", "virginica"].map(String::from).to_vec();
            assert_eq!(model.class_labels, Some(ClassLabels::Strings(species)), "{name}");
        }
    }
}

/// Input normalisation as PyTorch writes it, `(x − mean) / std` with per-channel constants of
/// dims `[C, 1, 1]`, then a scalar `Mul`: one affine layer (the three merged), evaluating like
/// the arithmetic; a constant divided by the activation and a zero divisor are named.
#[test]
fn elementwise_arithmetic_by_constants_is_one_affine_layer() {
    let nodes = [
        node("Sub", &["x", "mean"], &["a"], &[]),
        node("Div", &["a", "std"], &["b"], &[]),
        node("Mul", &["b", "two"], &["c"], &[]),
        node("Flatten", &["c"], &["f"], &[]),
        node("Gemm", &["f", "W", "B"], &["y"], &[]),
    ];
    let w: Vec<f32> = (0..12).map(|i| i as f32 / 10.0 - 0.5).collect();
    let dense = [tensor("W", &[4, 3], &w), tensor("B", &[3], &[0.25, -0.5, 1.0])];
    let inits = [
        dense[0].clone(),
        dense[1].clone(),
        tensor("mean", &[4, 1, 1], &[0.5, -1.0, 0.0, 2.0]),
        tensor("std", &[4, 1, 1], &[2.0, 0.5, 1.0, 4.0]),
        tensor("two", &[], &[2.0]),
    ];
    let m = chw_model([4, 1, 1], &nodes, &inits);
    let model = import_onnx(&m).unwrap();
    assert_eq!(model.summary().len(), 2, "{:?}", model.summary());
    let x = [1.0, 1.0, 1.0, 1.0];
    let scaled: Vec<f64> = [(1.0 - 0.5) / 2.0, (1.0 + 1.0) / 0.5, 1.0, (1.0 - 2.0) / 4.0]
        .iter()
        .map(|v| v * 2.0)
        .collect();
    let plain_nodes =
        [node("Flatten", &["x"], &["f"], &[]), node("Gemm", &["f", "W", "B"], &["y"], &[])];
    let plain = import_onnx(&chw_model([4, 1, 1], &plain_nodes, &dense)).unwrap();
    let want = plain.eval_f64(&scaled, 1).unwrap();
    let got = model.eval_f64(&x, 1).unwrap();
    close(&got, &want);
    let cases = [
        (node("Div", &["two", "x"], &["y"], &[]), "divided by the activation"),
        (node("Div", &["x", "zero"], &["y"], &[]), "divisor 0"),
    ];
    for (n, want) in cases {
        let m =
            chw_model([4, 1, 1], &[n], &[tensor("two", &[], &[2.0]), tensor("zero", &[], &[0.0])]);
        let e = import_onnx(&m).unwrap_err().to_string();
        assert!(e.contains(want), "{e:?} should mention {want:?}");
    }
}

/// Monotone transforms at the output are left out like Softmax; a binary classifier's single
/// score before `Sigmoid` (or `Tanh`) becomes two columns `(−z, z)`, so the argmax is the class
/// (`z > 0`); a single score that no linear layer computed right before is named.
#[test]
fn sigmoid_tanh_and_log_softmax_at_the_output() {
    let single = [tensor("W1", &[4, 1], &[0.5, -1.0, 0.25, 2.0]), tensor("B1", &[1], &[-0.5])];
    for t in ["Sigmoid", "Tanh"] {
        let m = model_with(
            &[node("Gemm", &["x", "W1", "B1"], &["z"], &[]), node(t, &["z"], &["y"], &[])],
            "y",
            &single,
        );
        let model = import_onnx(&m).unwrap();
        assert_eq!(model.summary(), ["Dense 4->2"], "{t}");
        assert_eq!(model.dropped_transforms, [t]);
        // z = 0.5·1 − 0.5 = 0 (a tie: class 0), then z = 2·1 − 0.5 > 0 (class 1), then z < 0.
        let x = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0];
        let s = model.eval_f64(&x, 3).unwrap();
        let class = |r: &[f64]| usize::from(r[1] > r[0]);
        let classes: Vec<usize> = s.chunks_exact(2).map(class).collect();
        assert_eq!(classes, [0, 1, 0], "{t}: {s:?}");
    }
    let m = model_with(
        &[
            node("Gemm", &["x", "W", "B"], &["z"], &[]),
            node("LogSoftmax", &["z"], &["y"], &[int_attr("axis", 1)]),
        ],
        "y",
        &[],
    );
    let model = import_onnx(&m).unwrap();
    assert_eq!(model.dropped_transforms, ["LogSoftmax"]);
    let m = model_with(
        &[
            node("Gemm", &["x", "W1", "B1"], &["z"], &[]),
            node("Relu", &["z"], &["r"], &[]),
            node("Sigmoid", &["r"], &["y"], &[]),
        ],
        "y",
        &single,
    );
    let e = import_onnx(&m).unwrap_err().to_string();
    assert!(e.contains("single score"), "{e}");
}

/// ResNet's basic blocks as PyTorch's two exporters write them (an identity shortcut; a
/// downsampling shortcut before or after the main branch; GlobalAveragePool + Flatten + Gemm,
/// or ReduceMean + a Reshape to a literal batch of 1 + MatMul + Add): the shortcuts become
/// register steps, and the float model gives onnxruntime's class on every held-out digit.
#[test]
fn residual_networks_as_pytorch_exports_them_classify_like_onnxruntime() {
    for (name, onnx, reference) in RESNET_EXPORTS {
        let model = import_onnx(onnx).unwrap_or_else(|e| panic!("{name}: {e}"));
        let regs: Vec<String> = model
            .summary()
            .into_iter()
            .filter(|l| l.starts_with("Keep") || l.starts_with("Recall") || l.starts_with("Add"))
            .collect();
        // Two blocks: each keeps its input; the downsampling one recalls it for the shortcut
        // after keeping the other branch's result; each ends with one Add.
        assert_eq!(regs.len(), 6, "{name}: {:?}", model.summary());
        assert_eq!(regs.iter().filter(|l| l.starts_with("Add")).count(), 2, "{name}");
        // Every BatchNormalization follows a convolution: merged into it.
        let (_, report) = ringfence_core::nn::import_onnx_report(onnx).unwrap();
        let bn = report.merged.iter().filter(|o| *o == "BatchNormalization").count();
        assert_eq!(bn, 6, "{name}: {report:?}");
        let x = json_numbers(reference, "inputs");
        let labels = json_numbers(reference, "labels");
        let scores = model.eval_f64(&x, labels.len()).unwrap();
        for (i, (row, &want)) in scores.chunks_exact(10).zip(&labels).enumerate() {
            let best = (0..10).fold(0, |b, j| if row[j] > row[b] { j } else { b });
            assert_eq!(best as f64, want, "{name}: sample {i}, scores {row:?}");
        }
    }
}

/// The register tests' input `x`, `a = xW + B` (`model_with`'s Gemm: W's rows i/10 − 0.5) and
/// `a·W2` (their `W2`).
fn two_branches() -> ([f64; 4], Vec<f64>, Vec<f64>) {
    let x = [1.0, -2.0, 0.5, 3.0];
    let a: Vec<f64> = (0..3)
        .map(|o| {
            let b = [0.25, -0.5, 1.0][o];
            b + (0..4).map(|i| x[i] * ((i * 3 + o) as f64 / 10.0 - 0.5)).sum::<f64>()
        })
        .collect();
    let w2 = [[1.0, 0.0, 2.0], [0.0, -1.0, 0.5], [0.25, 0.0, 1.0]];
    let aw2 = (0..3).map(|o| (0..3).map(|i| a[i] * w2[i][o]).sum()).collect();
    (x, a, aw2)
}

/// A value read three times (a dense layer, a second dense layer, the sum of the two), and
/// the refusals: an operand read again after the Add, an activation added to itself, operands
/// of different shapes.
#[test]
fn residual_adds_keep_and_recall_values_and_name_what_they_cannot_do() {
    let sq = |name: &str, v: [f32; 9]| tensor(name, &[3, 3], &v);
    let w2 = sq("W2", [1.0, 0.0, 2.0, 0.0, -1.0, 0.5, 0.25, 0.0, 1.0]);
    let nodes = [
        node("Gemm", &["x", "W", "B"], &["a"], &[]),
        node("Relu", &["a"], &["r"], &[]),
        node("MatMul", &["a", "W2"], &["c"], &[]),
        node("Add", &["r", "c"], &["s"], &[]),
        node("Add", &["s", "a"], &["y"], &[]),
    ];
    let m = import_onnx(&model_with(&nodes, "y", std::slice::from_ref(&w2))).unwrap();
    assert_eq!(
        m.summary(),
        [
            "Dense 4->3",
            "Keep -> r0",
            "Relu",
            "Keep -> r1",
            "Recall r0",
            "Keep -> r0",
            "Dense 3->3",
            "Add r1",
            "Add r0"
        ]
    );
    // relu(a) + a·W2 + a.
    let (x, a, aw2) = two_branches();
    let want: Vec<f64> = (0..3).map(|o| a[o].max(0.0) + aw2[o] + a[o]).collect();
    close(&m.eval_f64(&x, 1).unwrap(), &want);
    // The plan computes the same in fixed point.
    let plan = ringfence_core::nn::FixedPlan::<ringfence_core::ring::Z64>::new(&m, 13).unwrap();
    let fixed = plan.decode(&plan.eval_plain(&plan.encode_input(&x).unwrap(), 1).unwrap());
    for (f, w) in fixed.iter().zip(&want) {
        assert!((f - w).abs() < 1e-2, "{fixed:?} vs {want:?}");
    }

    let cases: Vec<(Vec<Vec<u8>>, &str)> = vec![
        (
            vec![
                node("Gemm", &["x", "W", "B"], &["a"], &[]),
                node("Relu", &["a"], &["r"], &[]),
                node("Add", &["r", "a"], &["s"], &[]),
                node("Add", &["s", "a"], &["y"], &[]),
            ],
            "is read again after the Add",
        ),
        (
            vec![
                node("Gemm", &["x", "W", "B"], &["a"], &[]),
                node("Add", &["a", "a"], &["y"], &[]),
            ],
            "added to itself",
        ),
        (
            vec![
                node("Gemm", &["x", "W", "B"], &["a"], &[]),
                node("Identity", &["a"], &["i"], &[]),
                node("Relu", &["a"], &["r"], &[]),
                node("Add", &["a", "i"], &["y"], &[]),
            ],
            "added to itself",
        ),
        (
            vec![
                node("Gemm", &["x", "W", "B"], &["a"], &[]),
                node("MatMul", &["a", "W3"], &["b"], &[]),
                node("Add", &["b", "a"], &["y"], &[]),
            ],
            "operands of shapes [3] and [2]",
        ),
        (
            vec![
                node("Gemm", &["x", "W", "B"], &["a"], &[]),
                node("Relu", &["a"], &["r"], &[]),
                node("Concat", &["r", "a"], &["y"], &[int_attr("axis", 1)]),
            ],
            "reads 2 activations",
        ),
    ];
    let w3 = tensor("W3", &[3, 2], &[1.0; 6]);
    for (nodes, want) in cases {
        let e = import_onnx(&model_with(&nodes, "y", std::slice::from_ref(&w3)))
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{e:?} should mention {want:?}");
    }
}

/// A `Sub` of two activations in either order (the kept operand first or second) is a
/// register subtraction: evaluated in float, in the fixed-point plan and securely on rep3,
/// METEOR and mal3 like the graph; an activation minus itself is refused by name.
#[test]
fn a_sub_of_two_activations_subtracts_in_the_node_s_order() {
    let w2 = tensor("W2", &[3, 3], &[1.0, 0.0, 2.0, 0.0, -1.0, 0.5, 0.25, 0.0, 1.0]);
    let nodes = [
        node("Gemm", &["x", "W", "B"], &["a"], &[]),
        node("Relu", &["a"], &["r"], &[]),
        node("MatMul", &["a", "W2"], &["c"], &[]),
        node("Sub", &["r", "c"], &["s"], &[]),
        node("Sub", &["s", "a"], &["y"], &[]),
    ];
    let m = import_onnx(&model_with(&nodes, "y", std::slice::from_ref(&w2))).unwrap();
    let summary = m.summary();
    assert_eq!(summary[summary.len() - 2..], ["Sub from r1", "Sub r0"], "{summary:?}");
    let (x, a, aw2) = two_branches();
    let want: Vec<f64> = (0..3).map(|o| a[o].max(0.0) - aw2[o] - a[o]).collect();
    close(&m.eval_f64(&x, 1).unwrap(), &want);
    let plan = ringfence_core::nn::FixedPlan::<ringfence_core::ring::Z64>::new(&m, 13).unwrap();
    let xe = plan.encode_input(&x).unwrap();
    let plain = plan.eval_plain(&xe, 1).unwrap();
    for (f, w) in plan.decode(&plain).iter().zip(&want) {
        assert!((f - w).abs() < 1e-2, "{f} vs {w}");
    }
    let secure = [
        common::secure_run::<common::Rep3P>(&plan, &xe, 1, ringfence_core::nn::Output::Logits)
            .scores,
        common::secure_run::<common::MeteorP>(&plan, &xe, 1, ringfence_core::nn::Output::Logits)
            .scores,
        common::secure_run::<common::Mal3P>(&plan, &xe, 1, ringfence_core::nn::Output::Logits)
            .scores,
    ];
    for (scheme, scores) in ["rep3", "meteor", "mal3"].iter().zip(secure) {
        for (s, p) in scores.iter().zip(&plain) {
            let d = s.0.wrapping_sub(p.0) as i64;
            assert!(d.abs() <= 8, "{scheme}: {scores:?} vs {plain:?}");
        }
    }
    let selfish =
        [node("Gemm", &["x", "W", "B"], &["a"], &[]), node("Sub", &["a", "a"], &["y"], &[])];
    let e = import_onnx(&model_with(&selfish, "y", &[])).unwrap_err().to_string();
    assert!(e.contains("an activation minus itself"), "{e}");
}

/// Activations inside a network are piecewise-linear layers: `LeakyRelu`, `HardSigmoid` and
/// `Clip` (two bounds, one, equal ones) exactly; `Sigmoid` and `Tanh` within their bounds. In
/// float, in the fixed-point plan and securely on rep3, METEOR and mal3 (within a few units of
/// the plan), on samples reaching both tails and the knots between; a `Sigmoid` that only the
/// output reads stays an output transform.
#[test]
fn activations_inside_a_network_are_piecewise_linear_layers() {
    use ringfence_core::nn::{FixedPlan, Output};
    use ringfence_core::ring::Z64;
    let w2 = tensor("W2", &[3, 3], &[1.0, 0.0, 2.0, 0.0, -1.0, 0.5, 0.25, 0.0, 1.0]);
    let bounds =
        [tensor("lo", &[], &[-0.5]), tensor("hi", &[], &[1.5]), tensor("one", &[], &[1.0])];
    type Act = fn(f64) -> f64;
    let cases: Vec<(&str, Vec<u8>, Act, f64)> = vec![
        ("Sigmoid", node("Sigmoid", &["a"], &["h"], &[]), |v| 1.0 / (1.0 + (-v).exp()), 7.6e-4),
        ("Tanh", node("Tanh", &["a"], &["h"], &[]), f64::tanh, 1.6e-3),
        (
            "LeakyRelu",
            node("LeakyRelu", &["a"], &["h"], &[float_attr("alpha", 0.125)]),
            |v| v.max(v / 8.0),
            0.0,
        ),
        (
            "HardSigmoid",
            node("HardSigmoid", &["a"], &["h"], &[]),
            |v| (0.2 * v + 0.5).clamp(0.0, 1.0),
            0.0,
        ),
        ("Clip", node("Clip", &["a", "lo", "hi"], &["h"], &[]), |v| v.clamp(-0.5, 1.5), 0.0),
        ("Clip max", node("Clip", &["a", "", "hi"], &["h"], &[]), |v| v.min(1.5), 0.0),
        ("Clip equal", node("Clip", &["a", "one", "one"], &["h"], &[]), |_| 1.0, 0.0),
    ];
    // Scaled copies of one input: the first layer's outputs run from about −12 to 12.
    let (x1, _, _) = two_branches();
    let scales = [-6.0, -2.0, -0.7, -0.2, 0.0, 0.3, 1.1, 2.5, 6.0];
    let x: Vec<f64> = scales.iter().flat_map(|s| x1.map(|v| v * s)).collect();
    let batch = scales.len();
    let w2v = [[1.0, 0.0, 2.0], [0.0, -1.0, 0.5], [0.25, 0.0, 1.0]];
    for (op, act, f, bound) in cases {
        let nodes = [
            node("Gemm", &["x", "W", "B"], &["a"], &[]),
            act,
            node("MatMul", &["h", "W2"], &["y"], &[]),
        ];
        let inits = [&[w2.clone()][..], &bounds].concat();
        let m = import_onnx(&model_with(&nodes, "y", &inits)).unwrap();
        assert!(matches!(m.layers[1], Layer::Spline(_)), "{op}: {:?}", m.summary());
        assert_eq!(m.layers.len(), 3, "{op}: {:?}", m.summary());
        // The float model: the first layer's outputs, the activation, then W2.
        let first = Model { layers: m.layers[..1].to_vec(), ..m.clone() };
        let a = first.eval_f64(&x, batch).unwrap();
        let want: Vec<f64> = a
            .chunks(3)
            .flat_map(|a| (0..3).map(move |o| (0..3).map(|i| f(a[i]) * w2v[i][o]).sum::<f64>()))
            .collect();
        let got = m.eval_f64(&x, batch).unwrap();
        let slack = bound * 3.25 + 1e-12; // |W2| column sums ≤ 3.25
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= slack, "{op}: {g} vs {w} (bound {slack})");
        }
        let plan = FixedPlan::<Z64>::new(&m, 13).unwrap();
        let xe = plan.encode_input(&x).unwrap();
        let plain = plan.eval_plain(&xe, batch).unwrap();
        for (p, g) in plan.decode(&plain).iter().zip(&got) {
            assert!((p - g).abs() < 2e-3, "{op}: plan {p} vs float {g}");
        }
        let secure = [
            common::secure_run::<common::Rep3P>(&plan, &xe, batch, Output::Logits).scores,
            common::secure_run::<common::MeteorP>(&plan, &xe, batch, Output::Logits).scores,
            common::secure_run::<common::Mal3P>(&plan, &xe, batch, Output::Logits).scores,
        ];
        for (scheme, scores) in ["rep3", "meteor", "mal3"].iter().zip(secure) {
            for (s, p) in scores.iter().zip(&plain) {
                let d = s.0.wrapping_sub(p.0) as i64;
                assert!(d.abs() <= 8, "{op} on {scheme}: {scores:?} vs {plain:?}");
            }
        }
    }
    // Read only by the output: an output transform, left out.
    let at_end =
        [node("Gemm", &["x", "W", "B"], &["a"], &[]), node("Sigmoid", &["a"], &["y"], &[])];
    let m = import_onnx(&model_with(&at_end, "y", &[])).unwrap();
    assert_eq!((m.layers.len(), m.dropped_transforms.clone()), (1, vec!["Sigmoid".to_string()]));
}

/// `ReduceMean` over the last axes is an average pool (attribute axes before opset 18, an
/// input from 18; keepdims either way); over channels or with no axes (the batch too) it is
/// refused by name.
#[test]
fn reduce_mean_over_the_plane_is_an_average_pool() {
    let x: Vec<f64> = (0..12).map(|i| i as f64 * 0.5 - 2.0).collect();
    let mean = |c: usize| x[c * 4..c * 4 + 4].iter().sum::<f64>() / 4.0;
    for (attrs, keep) in [
        (vec![ints_attr("axes", &[2, 3])], true),
        (vec![int_attr("keepdims", 0), ints_attr("axes", &[3, 2])], false),
    ] {
        let mut nodes = vec![node("ReduceMean", &["x"], &["m"], &attrs)];
        if keep {
            nodes.push(node("Flatten", &["m"], &["y"], &[]));
        } else {
            nodes[0] = node("ReduceMean", &["x"], &["y"], &attrs);
        }
        let m = import_onnx(&chw_model([3, 2, 2], &nodes, &[])).unwrap();
        assert_eq!(m.summary().len(), 1, "{:?}", m.summary());
        close(&m.eval_f64(&x, 1).unwrap(), &[mean(0), mean(1), mean(2)]);
    }
    // The last axis alone: a mean over each row of every channel.
    let m = import_onnx(&chw_model(
        [3, 2, 2],
        &[
            node("ReduceMean", &["x"], &["m"], &[ints_attr("axes", &[3])]),
            node("Flatten", &["m"], &["y"], &[]),
        ],
        &[],
    ))
    .unwrap();
    let rows: Vec<f64> = x.chunks(2).map(|r| (r[0] + r[1]) / 2.0).collect();
    close(&m.eval_f64(&x, 1).unwrap(), &rows);
    for (attrs, want) in [
        (vec![ints_attr("axes", &[1])], "only the last axes"),
        (vec![], "a mean over the batch too"),
        (vec![ints_attr("axes", &[7])], "axis 7"),
    ] {
        let m = chw_model([3, 2, 2], &[node("ReduceMean", &["x"], &["y"], &attrs)], &[]);
        let e = import_onnx(&m).unwrap_err().to_string();
        assert!(e.contains(want), "{e:?} should mention {want:?}");
    }
}
