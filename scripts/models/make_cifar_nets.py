#!/usr/bin/env python3
"""Writes the METEOR paper's CIFAR-10 networks (extract section 7.2: Falcon's AlexNet and VGG16
variants) as ONNX files with random weights (opset 13, IR 8, like train_mnist.py):

  models/alexnet.onnx  input [N, 3, 33, 33]: Conv 11x11 s4 p9, MaxPool 3x3 s2, Relu,
                       BatchNormalization, Conv 5x5 p1, MaxPool 3x3 s2, Relu, BatchNormalization,
                       3 x (Conv 3x3 p1, Relu), Flatten, 3 x (Gemm, Relu); about 15.5 MB
  models/vgg16.onnx    input [N, 3, 32, 32]: 13 Conv 3x3 p1 in 5 blocks, each block ending in
                       MaxPool 2x2 s2 then Relu, Flatten, Gemm 512->4096->4096->1000 with Relu;
                       about 151 MB

Neither file is committed (models/.gitignore): the Rust side builds the same architectures in
memory (ringfence_core::nn::zoo), and `cargo test -p ringfence-core --test nn_layers --
--ignored` checks that these files import as the zoo's networks. The paper benchmarks
communication and time only, so the weights are random: He-uniform (seed 20260521), biases in
[-0.05, 0.05]; BatchNormalization gamma in [0.5, 1.5], beta and mean in [-0.1, 0.1], var in
[0.5, 1.5], epsilon 1e-5. With --check the script runs each file with onnxruntime on one random
input and prints the scores.

Usage: .venv/bin/python scripts/models/make_cifar_nets.py [--net alexnet|vgg16] [--out DIR] [--check]
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SEED = 20260521

# (kind, args): conv (in_c, out_c, k, stride, pad), pool (k, stride), relu, bn (c), flatten,
# fc (inputs, outputs).
ALEXNET = (
    [3, 33, 33],
    [
        ("conv", (3, 96, 11, 4, 9)), ("pool", (3, 2)), ("relu", ()), ("bn", (96,)),
        ("conv", (96, 256, 5, 1, 1)), ("pool", (3, 2)), ("relu", ()), ("bn", (256,)),
        ("conv", (256, 384, 3, 1, 1)), ("relu", ()),
        ("conv", (384, 384, 3, 1, 1)), ("relu", ()),
        ("conv", (384, 256, 3, 1, 1)), ("relu", ()),
        ("flatten", ()),
        ("fc", (256, 256)), ("relu", ()),
        ("fc", (256, 256)), ("relu", ()),
        ("fc", (256, 10)), ("relu", ()),
    ],
)


def vgg16():
    layers, c = [], 3
    for block in ([64, 64], [128, 128], [256, 256, 256], [512, 512, 512], [512, 512, 512]):
        for i, out_c in enumerate(block):
            layers.append(("conv", (c, out_c, 3, 1, 1)))
            c = out_c
            if i + 1 < len(block):
                layers.append(("relu", ()))
        layers += [("pool", (2, 2)), ("relu", ())]
    layers.append(("flatten", ()))
    for i, o in ((512, 4096), (4096, 4096), (4096, 1000)):
        layers += [("fc", (i, o)), ("relu", ())]
    return [3, 32, 32], layers


NETS = {"alexnet": ALEXNET, "vgg16": vgg16()}


def build(name, rng):
    in_shape, layers = NETS[name]
    nodes, inits, cur = [], [], "input"
    counts = {}

    def f32(a):
        return np.asarray(a, dtype=np.float32)

    for kind, args in layers:
        counts[kind] = counts.get(kind, 0) + 1
        nm = f"{kind}{counts[kind]}"
        if kind == "conv":
            ci, co, k, s, p = args
            a = np.sqrt(6.0 / (ci * k * k))
            inits += [numpy_helper.from_array(f32(rng.uniform(-a, a, (co, ci, k, k))), nm + ".weight"),
                      numpy_helper.from_array(f32(rng.uniform(-0.05, 0.05, co)), nm + ".bias")]
            nodes.append(helper.make_node("Conv", [cur, nm + ".weight", nm + ".bias"], [nm], name=nm,
                                          kernel_shape=[k, k], strides=[s, s], pads=[p] * 4))
        elif kind == "pool":
            k, s = args
            nodes.append(helper.make_node("MaxPool", [cur], [nm], name=nm, kernel_shape=[k, k], strides=[s, s]))
        elif kind == "relu":
            nodes.append(helper.make_node("Relu", [cur], [nm], name=nm))
        elif kind == "bn":
            (c,) = args
            params = [("scale", 0.5, 1.5), ("bias", -0.1, 0.1), ("mean", -0.1, 0.1), ("var", 0.5, 1.5)]
            names = []
            for pn, lo, hi in params:
                inits.append(numpy_helper.from_array(f32(rng.uniform(lo, hi, c)), f"{nm}.{pn}"))
                names.append(f"{nm}.{pn}")
            nodes.append(helper.make_node("BatchNormalization", [cur] + names, [nm], name=nm, epsilon=1e-5))
        elif kind == "flatten":
            nodes.append(helper.make_node("Flatten", [cur], [nm], name=nm, axis=1))
        elif kind == "fc":
            i, o = args
            a = np.sqrt(6.0 / i)
            inits += [numpy_helper.from_array(f32(rng.uniform(-a, a, (o, i))), nm + ".weight"),
                      numpy_helper.from_array(f32(rng.uniform(-0.05, 0.05, o)), nm + ".bias")]
            nodes.append(helper.make_node("Gemm", [cur, nm + ".weight", nm + ".bias"], [nm], name=nm, transB=1))
        cur = nm
    nodes[-1].output[0] = "scores"
    classes = layers[-2][1][1]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N"] + in_shape)],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["N", classes])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="ringfence-make_cifar_nets")
    model.ir_version = 8
    return model, in_shape


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--net", action="append", choices=list(NETS), help="default: both")
    ap.add_argument("--out", default=os.path.join(ROOT, "models"), help="output directory (default models/)")
    ap.add_argument("--check", action="store_true", help="run each file with onnxruntime once")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.net or list(NETS):
        rng = np.random.default_rng(SEED)
        model, in_shape = build(name, rng)
        onnx.checker.check_model(model)
        path = os.path.join(args.out, f"{name}.onnx")
        onnx.save(model, path)
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")
        if args.check:
            import onnxruntime as ort
            sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            x = rng.uniform(0, 1, [1] + in_shape).astype(np.float32)
            scores = sess.run(None, {"input": x})[0]
            print(f"  onnxruntime: scores[:10] {np.round(scores[0][:10], 4).tolist()}")


if __name__ == "__main__":
    main()
