#!/usr/bin/env python3
"""Trains a logistic regression on scikit-learn's bundled 8x8 digits, exports it to ONNX with
skl2onnx, checks the export with onnxruntime, and writes what `serve.mjs` needs:

  OUT/digits.onnx         the model: ONNX-ML LinearClassifier (+ Normalizer), input [N, 64]
  OUT/samples.json        held-out digits (64 pixel counts 0..16 each) and onnxruntime's labels

Usage: .venv/bin/python examples/python-export/export_digits.py [--out DIR] [--samples N]
(OUT defaults to examples/python-export/out; the packages come from scripts/models/setup-venv.sh)
"""
import argparse
import json
import os

# One BLAS thread: this problem is tiny, and OpenBLAS's worker threads spinning on a busy machine
# made the fit 50x slower (2 s -> 100 s on 2 shared vCPUs). Set before numpy is imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from skl2onnx import to_onnx  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    ap.add_argument("--samples", type=int, default=10, help="held-out digits to write")
    args = ap.parse_args()

    # The model: any scikit-learn classifier skl2onnx exports as operators the importer takes
    # (README "Supported ONNX operators"); pixels are fed as float32 counts 0..16.
    digits = load_digits()
    x = digits.data.astype(np.float32)
    y = digits.target.astype(np.int64)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.2, random_state=7, stratify=y)
    clf = LogisticRegression(C=0.1, max_iter=3000).fit(xtr, ytr)
    print(f"trained: test accuracy {clf.score(xte, yte):.4f} on {len(yte)} held-out digits")

    # zipmap=False: probabilities as a plain tensor, not a list of maps (ringfence reads the
    # LinearClassifier's scores; the argmax is the label).
    onx = to_onnx(clf, xtr[:1], options={id(clf): {"zipmap": False}}, target_opset={"": 13, "ai.onnx.ml": 1})
    os.makedirs(args.out, exist_ok=True)
    model = os.path.join(args.out, "digits.onnx")
    with open(model, "wb") as f:
        f.write(onx.SerializeToString())
    print(f"wrote {model} ({os.path.getsize(model)} bytes)")

    # An independent runtime's answers, to compare the secure run against.
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    samples = xte[: args.samples]
    labels, _probabilities = sess.run(["label", "probabilities"], {sess.get_inputs()[0].name: samples})
    if not np.array_equal(labels, clf.predict(samples)):
        raise SystemExit("onnxruntime disagrees with scikit-learn on the exported model")
    doc = {
        "model": "digits.onnx",
        "runtime": f"onnxruntime {ort.__version__}",
        "inputs": [[int(v) for v in row] for row in samples],
        "labels": [int(v) for v in labels],
    }
    with open(os.path.join(args.out, "samples.json"), "w") as f:
        json.dump(doc, f)
    print(f"wrote {os.path.join(args.out, 'samples.json')}: {len(samples)} digits, onnxruntime says {doc['labels']}")


if __name__ == "__main__":
    main()
