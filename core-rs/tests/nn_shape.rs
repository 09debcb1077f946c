//! Shape files (`nn::shape`): every shipped model's shape survives the round trip, matches the
//! owner's plan digest and holds no weight; damaged, forged and foreign bytes are clear errors.

use crate::common;
use common::RESNET_EXPORTS;

use ringfence_core::nn::shape::{is_shape_file, SHAPE_MAGIC};
use ringfence_core::nn::{
    import_onnx, ClassLabels, FixedPlan, Layer, ModelFile, ModelShape, NnError,
};
use ringfence_core::ring::Z64;
use sha2::{Digest, Sha256};

const MODELS: [(&str, &[u8]); 11] = [
    ("nn-a", common::NN_A),
    ("nn-b", common::NN_B),
    ("nn-c", common::NN_C),
    ("lenet", common::LENET),
    ("minionn", common::MINIONN),
    ("logreg", common::LOGREG),
    ("svm", common::SVM),
    ("tree", common::TREE),
    ("minionn-q", common::MINIONN_Q),
    ("lenet-qdq", common::LENET_QDQ),
    ("mobilenet-q", common::MOBILENET_Q),
];

fn owner(onnx: &[u8]) -> (ModelShape, FixedPlan<Z64>) {
    match ModelFile::parse(onnx).unwrap() {
        ModelFile::Weights { shape, plan } => (shape, plan),
        ModelFile::Shape(_) => panic!("an ONNX file parsed as a shape file"),
    }
}

/// The committed shape files (`models/NAME.rfshape`, what the demo's P1 and P2 serve) are those
/// of the committed ONNX files.
#[test]
fn the_committed_shape_files_are_the_shipped_models_shapes() {
    let committed: [(&str, &[u8]); 11] = [
        ("nn-a", include_bytes!("../../models/nn-a.rfshape")),
        ("nn-b", include_bytes!("../../models/nn-b.rfshape")),
        ("nn-c", include_bytes!("../../models/nn-c.rfshape")),
        ("lenet", include_bytes!("../../models/lenet.rfshape")),
        ("minionn", include_bytes!("../../models/minionn.rfshape")),
        ("logreg", include_bytes!("../../models/logreg.rfshape")),
        ("svm", include_bytes!("../../models/svm.rfshape")),
        ("tree", include_bytes!("../../models/tree.rfshape")),
        ("minionn-q", include_bytes!("../../models/minionn-q.rfshape")),
        ("lenet-qdq", include_bytes!("../../models/lenet-qdq.rfshape")),
        ("mobilenet-q", include_bytes!("../../models/mobilenet-q.rfshape")),
    ];
    for ((name, onnx), (file, bytes)) in MODELS.iter().zip(committed) {
        assert_eq!(*name, file);
        assert_eq!(
            bytes,
            &owner(onnx).0.encode()[..],
            "models/{name}.rfshape is stale: regenerate it with ringfence model shape"
        );
    }
}

#[test]
fn every_shipped_model_s_shape_round_trips_and_matches_the_owner_s_digest() {
    let residual = RESNET_EXPORTS.map(|(name, onnx, _)| (name, onnx));
    for (name, onnx) in MODELS.into_iter().chain(residual) {
        let (shape, plan) = owner(onnx);
        let bytes = shape.encode();
        assert!(is_shape_file(&bytes) && !is_shape_file(onnx), "{name}");
        let back = ModelShape::decode(&bytes).unwrap();
        assert_eq!(back, shape, "{name}");
        assert_eq!(back.plan, plan.shape(), "{name}");
        assert_eq!(back.plan.digest(), plan.shape().digest(), "{name}");
        let model = import_onnx(onnx).unwrap();
        assert_eq!(back.input_shape, model.input_shape, "{name}");
        assert_eq!(back.class_labels, model.class_labels, "{name}");
        match ModelFile::parse(&bytes).unwrap() {
            ModelFile::Shape(s) => assert_eq!(s, shape, "{name}"),
            ModelFile::Weights { .. } => panic!("{name}: a shape file parsed as weights"),
        }
    }
}

/// Two plans share a digest exactly when their shapes are equal (logreg and svm are both one
/// 64 → 10 dense layer; their weights differ, which the digest leaves out).
#[test]
fn digests_are_equal_exactly_for_equal_shapes() {
    let shapes: Vec<_> = MODELS.iter().map(|(_, m)| owner(m).1.shape()).collect();
    for a in &shapes {
        for b in &shapes {
            assert_eq!(a == b, a.digest() == b.digest(), "{a:?} / {b:?}");
        }
    }
    assert!(shapes[5] == shapes[6], "logreg and svm have one shape");
    let model = import_onnx(common::NN_A).unwrap();
    let f12 = FixedPlan::<Z64>::new(&model, 12).unwrap().shape();
    assert_ne!(f12.digest(), owner(common::NN_A).1.shape().digest());
}

/// No weight of the model appears in its shape file, as the float the ONNX file stores or as
/// the fixed-point word the plan encodes (checked on the dense layers of NN-A: 100k weights).
#[test]
fn a_shape_file_holds_no_weight() {
    let model = import_onnx(common::NN_A).unwrap();
    let (shape, _) = owner(common::NN_A);
    let bytes = shape.encode();
    let mut checked = 0;
    for l in &model.layers {
        if let Layer::Dense(d) = l {
            for &w in d.weights.iter().chain(&d.bias).filter(|w| w.abs() > 1e-3) {
                let as_f32 = (w as f32).to_le_bytes();
                assert!(!bytes.windows(4).any(|b| b == as_f32), "weight {w} in the shape file");
                checked += 1;
            }
        }
    }
    assert!(checked > 10_000, "only {checked} weights checked");
}

/// A quantized model's shape file holds no scale either: its requantizations' multipliers
/// (as reals and as the plan's integers `⌊m·2^M⌉`) and clamp bounds are the owner's secret
/// weights; the file says the sizes and the shift `M`.
#[test]
fn a_quantized_shape_file_holds_no_scale() {
    let model = import_onnx(common::MINIONN_Q).unwrap();
    let (shape, plan) = owner(common::MINIONN_Q);
    let bytes = shape.encode();
    let shift = plan.shape().product_bits();
    let mut checked = 0;
    // The first requantization is the input's (its multiplier is in the input's fixed point).
    for l in model.layers.iter().filter(|l| matches!(l, Layer::Requant(_))).skip(1) {
        let Layer::Requant(q) = l else { continue };
        for &m in &q.scale {
            let mult = (m * 2f64.powi(shift as i32)).round() as u64;
            let hi = (q.max as f64 * 2f64.powi(shift as i32) / mult as f64).floor() as u64;
            for needle in [
                &m.to_le_bytes()[..],
                &(m as f32).to_le_bytes(),
                &mult.to_le_bytes(),
                &hi.to_le_bytes(),
            ] {
                assert!(
                    !bytes.windows(needle.len()).any(|b| b == needle),
                    "scale {m} in the shape file"
                );
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 4, "minionn-q has four requantizations after its input's");
}

/// Re-seals a damaged file with a valid checksum, so the decoder's other checks are reached.
fn sealed(mut b: Vec<u8>) -> Vec<u8> {
    let n = b.len() - 32;
    b.truncate(n);
    let sum = Sha256::digest(&b);
    b.extend_from_slice(&sum);
    b
}

fn shape_error(bytes: &[u8]) -> String {
    match ModelShape::decode(bytes) {
        Err(e @ NnError::ShapeFile(_)) => e.to_string(),
        other => panic!("expected a shape file error, got {other:?}"),
    }
}

#[test]
fn damaged_forged_and_foreign_bytes_are_clear_errors() {
    let good = owner(common::LENET).0.encode();
    assert!(shape_error(common::LENET).contains("no RFSHAPE magic"));
    assert!(shape_error(b"").contains("no RFSHAPE magic"));
    // Every truncation, and trailing data.
    for n in 0..good.len() {
        shape_error(&good[..n]);
    }
    let mut long = good.clone();
    long.push(0);
    assert!(shape_error(&long).contains("trailing data"));
    // Every flipped bit past the magic is caught (by the checksum or the header checks).
    for i in SHAPE_MAGIC.len()..good.len() {
        for bit in [0, 7] {
            let mut b = good.clone();
            b[i] ^= 1 << bit;
            shape_error(&b);
        }
    }
    let mut b = good.clone();
    b[8] = 2;
    assert!(shape_error(&b).contains("version 2"));
    let mut b = good.clone();
    b[40] ^= 1;
    assert!(shape_error(&b).contains("checksum mismatch"));
    // Forged bodies with a valid checksum: a huge count, an unknown step tag, a broken chain.
    let body = 14;
    let mut b = good.clone();
    b[body + 4..body + 8].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(shape_error(&sealed(b)).contains("input name length"));
    let (range_at, steps_at) = {
        let s = owner(common::LENET).0;
        assert!(s.plan.input_range.is_some(), "LeNet declares its input range");
        let range_at = body + 4 + 4 + s.input_name.len() + 4 + 8 * s.input_shape.len() + 1;
        (range_at, range_at + 1 + 8)
    };
    // A range whose minimum is above its maximum (min's bits are the high half).
    let mut b = good.clone();
    let (min, max) = (2f32.to_bits() as u64, 1f32.to_bits() as u64);
    b[range_at + 1..range_at + 9].copy_from_slice(&(min << 32 | max).to_le_bytes());
    assert!(shape_error(&sealed(b)).contains("input range"));
    let mut b = good.clone();
    b[steps_at..steps_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(shape_error(&sealed(b)).contains("steps"));
    let mut b = good.clone();
    b[steps_at + 4] = 99;
    assert!(shape_error(&sealed(b)).contains("unknown step tag 99"));
    // The first step's first size (a convolution's input channels) no longer fits the input.
    let mut b = good.clone();
    b[steps_at + 5] ^= 2;
    assert!(shape_error(&sealed(b)).contains("does not fit"));
    // A size beyond the per-layer cap.
    let mut b = good.clone();
    b[steps_at + 5..steps_at + 13].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(shape_error(&sealed(b)).contains("at most"));
    // Random bytes behind a valid header and checksum.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for len in [0usize, 1, 7, 64, 1000] {
        let mut b = good[..14].to_vec();
        b[10..14].copy_from_slice(&(len as u32).to_le_bytes());
        for _ in 0..len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b.push(x as u8);
        }
        b.extend_from_slice(&[0; 32]);
        shape_error(&sealed(b));
    }
}

/// A model fitted on names keeps them through its shape file (flag 2: length-prefixed UTF-8),
/// and forged ones are clear errors: an empty label, one past the length cap, bytes that are
/// not UTF-8.
#[test]
fn text_class_labels_round_trip_and_forged_ones_are_clear_errors() {
    let (_, onnx, _) =
        common::CLASSICAL_EXPORTS.into_iter().find(|e| e.0 == "iris-names-logreg").unwrap();
    let shape = owner(onnx).0;
    let species = ["setosa", "versicolor", "virginica"].map(String::from).to_vec();
    assert_eq!(shape.class_labels, Some(ClassLabels::Strings(species)));
    let good = shape.encode();
    assert_eq!(ModelShape::decode(&good).unwrap(), shape);
    let flag = 14 + 4 + 4 + shape.input_name.len() + 4 + 8 * shape.input_shape.len();
    assert_eq!(good[flag], 2);
    let first = flag + 1 + 4; // the first label's length, then "setosa"
    for (at, value, want) in [
        (first, 0u32.to_le_bytes().to_vec(), "class label length: 0"),
        (first, 257u32.to_le_bytes().to_vec(), "class label length: 257"),
        (first + 4, vec![0xff], "a class label is not UTF-8"),
        (flag, vec![3], "labels flag 3 (0, 1 or 2)"),
    ] {
        let mut b = good.clone();
        b[at..at + value.len()].copy_from_slice(&value);
        let e = shape_error(&sealed(b));
        assert!(e.contains(want), "{e}");
    }
}

/// A spline's encoded knots and slopes travel in the shape file (P1 and P2 compute it from
/// them); a forged knot count, or knots out of order, are clear errors.
#[test]
fn a_spline_s_knots_round_trip_and_forged_ones_are_clear_errors() {
    use ringfence_core::nn::{Dense, Model, Spline};
    let dense = |i: usize, o: usize| {
        Layer::Dense(Dense { inputs: i, outputs: o, weights: vec![0.5; i * o], bias: vec![0.0; o] })
    };
    let model = Model {
        input_name: "x".into(),
        input_shape: vec![2],
        layers: vec![dense(2, 3), Layer::Spline(Spline::sigmoid()), dense(3, 2)],
        class_labels: None,
        dropped_transforms: vec![],
        input_range: None,
    };
    let plan = FixedPlan::<Z64>::new(&model, 13).unwrap();
    let shape = ModelShape::new(&model, plan.shape());
    let good = shape.encode();
    assert_eq!(ModelShape::decode(&good).unwrap(), shape);
    // The first knot, −8 in 13 fractional bits; the knot count before it.
    let first = good.windows(8).position(|w| w == (-8i64 << 13).to_le_bytes()).unwrap();
    let count = first - 4;
    assert_eq!(good[count..first], 65u32.to_le_bytes());
    let second = (-8i64 << 13) + (1 << 11);
    assert_eq!(good[first + 8..first + 16], second.to_le_bytes());
    for (at, value, want) in [
        (count, 0u32.to_le_bytes().to_vec(), "spline knots: 0"),
        (count, 1025u32.to_le_bytes().to_vec(), "spline knots: 1025 (at most 1024"),
        (first, second.to_le_bytes().to_vec(), "does not fit"),
    ] {
        let mut b = good.clone();
        b[at..at + value.len()].copy_from_slice(&value);
        let e = shape_error(&sealed(b));
        assert!(e.contains(want), "{want}: {e}");
    }
}
