"""Models as scikit-learn's exporter writes them at its default settings, for the importer's
tests (core-rs/tests/nn_import.rs): skl2onnx's `to_onnx` with no options, so the label side
branch, ZipMap, the input Cast and the pipeline's Scaler are all in the graphs. Each model goes
to core-rs/tests/data/exported/NAME.onnx with NAME.json: held-out inputs (float32, row-major)
and onnxruntime's labels for them. Deterministic (fixed seeds); run from the repository root
after scripts/models/setup-venv.sh:

    .venv/bin/python scripts/models/exporter_cases.py
"""

import json
import os

import numpy as np
import onnxruntime as ort
from sklearn.datasets import load_iris, load_wine
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from skl2onnx import to_onnx

OUT = os.path.join("core-rs", "tests", "data", "exported")


def cases():
    iris = load_iris(return_X_y=True)
    wine = load_wine(return_X_y=True)
    yield "iris-logreg", iris, LogisticRegression(max_iter=1000)
    yield "iris-mlp", iris, MLPClassifier(hidden_layer_sizes=(8,), max_iter=3000, random_state=0)
    yield "wine-scaled-logreg", wine, make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, (x, y), clf in cases():
        x = x.astype(np.float32)
        xtr, xte, ytr, _ = train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)
        clf.fit(xtr, ytr)
        onx = to_onnx(clf, xtr[:1])
        path = os.path.join(OUT, name + ".onnx")
        with open(path, "wb") as f:
            f.write(onx.SerializeToString())
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        labels = sess.run(["output_label"], {sess.get_inputs()[0].name: xte})[0]
        ref = {
            "model": path,
            "runtime": "onnxruntime " + ort.__version__,
            "features": int(x.shape[1]),
            "inputs": [float(v) for v in xte.reshape(-1)],
            "labels": [int(v) for v in labels],
        }
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(ref, f, indent=1)
            f.write("\n")
        ops = [n.op_type for n in onx.graph.node]
        print(f"{name}: {len(labels)} held-out samples, ops {ops}")


if __name__ == "__main__":
    main()
