"""Models as exporters write them, for the importer's tests (core-rs/tests/nn_import.rs):

- scikit-learn's, by skl2onnx's `to_onnx` with no options, so the label side branch, ZipMap,
  the input Cast and the pipeline's Scaler are all in the graphs (one with a float64 sample,
  which makes a double graph and needs `zipmap=False`: onnxruntime refuses a ZipMap of
  doubles; two fitted on the iris species' names, so their classes are text:
  `classlabels_strings`; SVCs with a linear kernel, whose class is a one-vs-one vote; MLPs
  with tanh and logistic hidden layers);
- gradient-boosted trees as onnxmltools writes LightGBM's and XGBoost's classifiers (binary:
  one score voted for one class, onnxruntime's one-score rule; three classes: one score each);
- residual networks on the 8x8 digits as PyTorch's two exporters lay out a ResNet's basic
  blocks (PyTorch itself does not install here, so the graphs are written node by node with
  onnx.helper): the TorchScript exporter's (opset 13: BatchNormalization after Conv, the
  shortcut Add, GlobalAveragePool, Flatten, Gemm) and the dynamo exporter's (opset 18: a static
  batch of 1, the downsampling branch written first, ReduceMean over the plane with its axes as
  an input, a Reshape to the literal [1, 16], MatMul then Add). Their convolutions are random
  (seeded) and the head is a logistic regression fitted on the standardised pooled features, so the models
  classify the digits (accuracy printed).

Each model goes to core-rs/tests/data/exported/NAME.onnx with NAME.json: held-out inputs
(float32, row-major) and onnxruntime's labels for them. Deterministic (fixed seeds); run from
the repository root after scripts/models/setup-venv.sh, naming the cases to write (all without
names):

    .venv/bin/python scripts/models/exporter_cases.py [NAME ...]
"""

import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC
from skl2onnx import to_onnx

OUT = os.path.join("core-rs", "tests", "data", "exported")


def cases():
    iris = load_iris(return_X_y=True)
    wine = load_wine(return_X_y=True)
    yield "iris-logreg", iris, LogisticRegression(max_iter=1000)
    yield "iris-mlp", iris, MLPClassifier(hidden_layer_sizes=(8,), max_iter=3000, random_state=0)
    yield "wine-scaled-logreg", wine, make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    # Two classes: the logistic regression's one coefficient row, LinearSVC's positive-class
    # column (ArrayFeatureExtractor of the two scores).
    cancer = load_breast_cancer(return_X_y=True)
    yield "cancer-scaled-logreg", cancer, make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    yield "cancer-linearsvc", cancer, LinearSVC(C=0.01, max_iter=20000)
    # A float64 sample makes a double graph (StandardScaler as Sub/Div, the regression as
    # MatMul/Add, ArgMax and Softmax both reading the scores).
    yield "wine-scaled-logreg-f64", wine, make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    # Text classes: the species' names (classlabels_strings, a string label output).
    names = load_iris().target_names
    iris_names = (iris[0], names[iris[1]])
    yield "iris-names-logreg", iris_names, LogisticRegression(max_iter=1000)
    yield "iris-names-mlp", iris_names, MLPClassifier(hidden_layer_sizes=(8,), max_iter=3000, random_state=0)
    # SVC with a linear kernel: support vectors and one-vs-one votes. At its default
    # (decision_function_shape="ovr") skl2onnx computes scikit-learn's one-vs-rest scores from
    # the pairwise decisions beside the label; with probability=True, Platt's probabilities and
    # a ZipMap. Ten digit classes make 45 pairwise votes, with tied votes among them.
    yield "iris-svc-linear", iris, SVC(kernel="linear")
    yield "iris-svc-linear-proba", iris, SVC(kernel="linear", probability=True, random_state=0)
    yield "cancer-scaled-svc-linear", cancer, make_pipeline(StandardScaler(), SVC(kernel="linear"))
    yield "digits-svc-linear", load_digits(return_X_y=True), SVC(kernel="linear")
    # MLPs with tanh and logistic hidden layers (Tanh / Sigmoid nodes inside the network).
    mlp = lambda act: MLPClassifier(hidden_layer_sizes=(16,), activation=act, max_iter=3000, random_state=0)
    yield "wine-scaled-mlp-tanh", wine, make_pipeline(StandardScaler(), mlp("tanh"))
    yield "iris-mlp-logistic", iris, mlp("logistic")


def write(name, onx, xte, labels, features):
    # skl2onnx lists the opsets in set order, which changes with Python's string hashing.
    opsets = sorted(onx.opset_import, key=lambda o: o.domain)
    del onx.opset_import[:]
    onx.opset_import.extend(opsets)
    path = os.path.join(OUT, name + ".onnx")
    with open(path, "wb") as f:
        f.write(onx.SerializeToString())
    ref = {
        "model": path,
        "runtime": "onnxruntime " + ort.__version__,
        "features": int(features),
        "inputs": [float(v) for v in xte.reshape(-1)],
        "labels": [v if isinstance(v, str) else int(v) for v in labels.tolist()],
    }
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(ref, f, indent=1)
        f.write("\n")
    ops = [n.op_type for n in onx.graph.node]
    print(f"{name}: {len(labels)} held-out samples, ops {ops}")


class Net:
    """A graph under construction: nodes, initializers and fresh names."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, base, value, dtype=np.float32):
        name = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, bn=True):
        # He-initialised random weights; BatchNormalization with random statistics, as a
        # trained network's would be after export in eval mode.
        w = self.rng.normal(0, np.sqrt(2.0 / (cin * k * k)), (cout, cin, k, k))
        y = self.op("Conv", [x, self.const("w", w), self.const("b", self.rng.normal(0, 0.1, cout))],
                    kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4)
        if not bn:
            return y
        stats = [self.rng.uniform(0.5, 1.5, cout), self.rng.normal(0, 0.1, cout),
                 self.rng.normal(0, 0.1, cout), self.rng.uniform(0.5, 1.5, cout)]
        return self.op("BatchNormalization", [y] + [self.const("bn", v) for v in stats],
                       epsilon=1e-5)

    def model(self, x_dims, output, out_dims, opset):
        graph = helper.make_graph(
            self.nodes, "resnet",
            [helper.make_tensor_value_info("input", TensorProto.FLOAT, x_dims)],
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, out_dims)],
            self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def resnet(dynamo, head):
    """The digits ResNet: a stem, an identity block, a downsampling block, pooled features,
    and a linear head `head` = (W, b) (None: the features are the output)."""
    g = Net(7)
    x = g.op("Div", ["input", g.const("scale", 16.0)])
    x1 = g.op("Relu", [g.conv(x, 1, 8, 3)])
    # Block 1: identity shortcut.
    y = g.op("Relu", [g.conv(x1, 8, 8, 3)])
    y = g.conv(y, 8, 8, 3)
    x2 = g.op("Relu", [g.op("Add", [y, x1])])
    # Block 2: stride 2 with a 1x1 downsampling shortcut (dynamo writes it first).
    if dynamo:
        short = g.conv(x2, 8, 32, 1, stride=2)
    y = g.op("Relu", [g.conv(x2, 8, 32, 3, stride=2)])
    y = g.conv(y, 32, 32, 3)
    if not dynamo:
        short = g.conv(x2, 8, 32, 1, stride=2)
    x3 = g.op("Relu", [g.op("Add", [short, y] if dynamo else [y, short])])
    if dynamo:
        f = g.op("ReduceMean", [x3, g.const("axes", [-1, -2], np.int64)], keepdims=1)
        f = g.op("Reshape", [f, g.const("shape", [1, 32], np.int64)])
    else:
        f = g.op("Flatten", [g.op("GlobalAveragePool", [x3])], axis=1)
    if head is not None:
        w, b = head
        if dynamo:
            f = g.op("Add", [g.op("MatMul", [f, g.const("w", w.T)]), g.const("b", b)])
        else:
            f = g.op("Gemm", [f, g.const("w", w), g.const("b", b)], transB=1)
    batch = 1 if dynamo else "N"
    out = [batch, 32 if head is None else len(head[1])]
    return g.model([batch, 1, 8, 8], f, out, 18 if dynamo else 13)


def run(onx, x):
    sess = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    return np.concatenate([sess.run(None, {name: x[i:i + 1]})[0] for i in range(len(x))])


def residual_cases():
    x, y = load_digits(return_X_y=True)
    x = x.astype(np.float32).reshape(-1, 1, 8, 8)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)
    for name, dynamo in (("digits-resnet", False), ("digits-resnet-dynamo", True)):
        feats = run(resnet(dynamo, None), xtr).reshape(len(xtr), -1)
        mu, sd = feats.mean(axis=0), feats.std(axis=0) + 1e-6
        head = LogisticRegression(max_iter=20000).fit((feats - mu) / sd, ytr)
        # The standardisation folded into the head: W (f − μ)/σ + b.
        w = head.coef_ / sd
        onx = resnet(dynamo, (w, head.intercept_ - w @ mu))
        labels = run(onx, xte).argmax(axis=1)
        print(f"{name}: held-out accuracy {(labels == yte).mean():.3f}")
        write(name, onx, xte, labels, 64)


def boosted_cases():
    # Imported here: only these cases need LightGBM, XGBoost and onnxmltools.
    import lightgbm
    import xgboost
    from onnxmltools import convert_lightgbm, convert_xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType

    for data, (x, y) in (("cancer", load_breast_cancer(return_X_y=True)), ("iris", load_iris(return_X_y=True))):
        x = x.astype(np.float32)
        xtr, xte, ytr, _ = train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)
        types = [("x", FloatTensorType([None, x.shape[1]]))]
        lgbm = lightgbm.LGBMClassifier(n_estimators=20, num_leaves=8, random_state=0, verbose=-1).fit(xtr, ytr)
        xgbm = xgboost.XGBClassifier(n_estimators=20, max_depth=3, random_state=0).fit(xtr, ytr)
        yield f"{data}-lightgbm", convert_lightgbm(lgbm, initial_types=types, target_opset=15, zipmap=False), xte
        yield f"{data}-xgboost", convert_xgboost(xgbm, initial_types=types, target_opset=15), xte


def main():
    wanted = set(sys.argv[1:])
    os.makedirs(OUT, exist_ok=True)
    if not wanted or wanted & {"digits-resnet", "digits-resnet-dynamo"}:
        residual_cases()
    for name, (x, y), clf in cases():
        if wanted and name not in wanted:
            continue
        x = x.astype(np.float32)
        xtr, xte, ytr, _ = train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)
        clf.fit(xtr, ytr)
        sample = xtr[:1].astype(np.float64) if name.endswith("-f64") else xtr[:1]
        # onnxruntime refuses ZipMap over doubles, so a double graph needs zipmap=False.
        options = {LogisticRegression: {"zipmap": False}} if name.endswith("-f64") else None
        onx = to_onnx(clf, sample, options=options)
        sess = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
        label = sess.get_outputs()[0].name  # skl2onnx writes the label first
        labels = sess.run([label], {sess.get_inputs()[0].name: xte.astype(sample.dtype)})[0]
        write(name, onx, xte, labels, x.shape[1])
    boosted = {"cancer-lightgbm", "cancer-xgboost", "iris-lightgbm", "iris-xgboost"}
    if not wanted or wanted & boosted:
        for name, onx, xte in boosted_cases():
            if wanted and name not in wanted:
                continue
            sess = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
            labels = sess.run([sess.get_outputs()[0].name], {sess.get_inputs()[0].name: xte})[0]
            write(name, onx, xte, labels, xte.shape[1])


if __name__ == "__main__":
    main()
