//! Helpers shared by the integration tests (each test crate uses what it needs).

#![allow(dead_code)]

// The committed models, held-out data and onnxruntime reference outputs.
pub(crate) const NN_A: &[u8] = include_bytes!("../../../models/nn-a.onnx");
pub(crate) const NN_B: &[u8] = include_bytes!("../../../models/nn-b.onnx");
pub(crate) const NN_C: &[u8] = include_bytes!("../../../models/nn-c.onnx");
pub(crate) const LENET: &[u8] = include_bytes!("../../../models/lenet.onnx");
pub(crate) const LOGREG: &[u8] = include_bytes!("../../../models/logreg.onnx");
pub(crate) const MNIST: &[u8] = include_bytes!("../../../models/data/mnist-test-1000.u8");
pub(crate) const MNIST_LABELS: &[u8] =
    include_bytes!("../../../models/data/mnist-test-1000.labels.u8");
pub(crate) const DIGITS8: &[u8] = include_bytes!("../../../models/data/digits8-test.u8");
pub(crate) const NN_A_REF: &str = include_str!("../../../models/data/nn-a.reference.json");
pub(crate) const NN_B_REF: &str = include_str!("../../../models/data/nn-b.reference.json");
pub(crate) const NN_C_REF: &str = include_str!("../../../models/data/nn-c.reference.json");
pub(crate) const LENET_REF: &str = include_str!("../../../models/data/lenet.reference.json");
pub(crate) const LOGREG_REF: &str = include_str!("../../../models/data/logreg.reference.json");

/// The first `n` held-out MNIST digits, pixels scaled to [0, 1].
pub(crate) fn mnist(n: usize) -> Vec<f64> {
    MNIST[..n * 784].iter().map(|&p| f64::from(p) / 255.0).collect()
}

/// The fraction of positions where `a` and `b` agree.
pub(crate) fn agreement(a: &[usize], b: &[usize]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).filter(|(x, y)| x == y).count() as f64 / a.len() as f64
}

/// Digits a secure run checks: `debug` in debug builds, all 1000 in release builds
/// (`cargo test --release`).
pub(crate) fn digits(debug: usize) -> usize {
    if cfg!(debug_assertions) {
        debug
    } else {
        1000
    }
}

/// The numbers of the JSON array that follows `"key": [` in a reference file written by
/// `scripts/models/reference.py` (nested rows flattened), without a JSON dependency.
pub(crate) fn json_numbers(doc: &str, key: &str) -> Vec<f64> {
    let start = doc.find(&format!("\"{key}\": [")).expect("key") + key.len() + 5;
    let mut depth = 0;
    let mut end = start;
    for (i, c) in doc[start..].char_indices() {
        match c {
            '[' => depth += 1,
            ']' if depth == 0 => {
                end = start + i;
                break;
            }
            ']' => depth -= 1,
            _ => {}
        }
    }
    doc[start..end]
        .split(|c: char| c == ',' || c == '[' || c == ']' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().expect("number"))
        .collect()
}
