#!/usr/bin/env python3
"""Runs the committed models with onnxruntime (an independent runtime) on the committed test
sets and writes the reference outputs the Rust tests compare against:

  models/data/<net>.reference.json   argmax and scores of nn-a, nn-b, nn-c, lenet, minionn on
                                     mnist-test-1000
  models/data/logreg.reference.json  label (argmax) and probabilities of logreg on digits8-test
  models/data/svm.reference.json     label and decision scores ("probabilities", skl2onnx's
                                     output name) of the linear SVM on digits8-test
  models/data/tree.reference.json    label and leaf class probabilities of the decision tree
  models/data/minionn-q.reference.json, lenet-qdq.reference.json
                                     argmax and (dequantized) scores of the int8 models that
                                     quantize.py writes, on mnist-test-1000
  models/data/mobilenet-q.reference.json
                                     argmax and scores of the int8 random-weight MobileNet on the
                                     8 random images of mobilenet-q-inputs.u8 (no labels, so no
                                     accuracy)

Each file records the SHA-256 of the model and of the input file it was made from, so
check_reference.py (and a reader) can tell whether it is current.

Usage: .venv/bin/python scripts/models/reference.py
"""
import hashlib
import json
import os

import numpy as np
import onnxruntime as ort

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# name: (model file, inputs file, per-sample input shape, scale applied to the stored bytes)
MNIST = "models/data/mnist-test-1000.u8"
CASES = {
    "nn-a": ("models/nn-a.onnx", MNIST, (784,), 1.0 / 255.0),
    "nn-b": ("models/nn-b.onnx", MNIST, (1, 28, 28), 1.0 / 255.0),
    "nn-c": ("models/nn-c.onnx", MNIST, (1, 28, 28), 1.0 / 255.0),
    "lenet": ("models/lenet.onnx", MNIST, (1, 28, 28), 1.0 / 255.0),
    "minionn": ("models/minionn.onnx", MNIST, (1, 28, 28), 1.0 / 255.0),
    "logreg": ("models/logreg.onnx", "models/data/digits8-test.u8", (64,), 1.0),
    "svm": ("models/svm.onnx", "models/data/digits8-test.u8", (64,), 1.0),
    "tree": ("models/tree.onnx", "models/data/digits8-test.u8", (64,), 1.0),
    # int8 models written by quantize.py (onnxruntime.quantization.quantize_static)
    "minionn-q": ("models/minionn-q.onnx", MNIST, (1, 28, 28), 1.0 / 255.0),
    "lenet-qdq": ("models/lenet-qdq.onnx", MNIST, (1, 28, 28), 1.0 / 255.0),
    "mobilenet-q": ("models/mobilenet-q.onnx", "models/data/mobilenet-q-inputs.u8", (3, 128, 128),
                    1.0 / 255.0),
}


def sha256(path):
    with open(os.path.join(ROOT, path), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def compute(name):
    """Returns the reference document for one case (a dict, serialisable as JSON)."""
    model, inputs, shape, scale = CASES[name]
    px = np.fromfile(os.path.join(ROOT, inputs), dtype=np.uint8).reshape((-1,) + shape)
    x = px.astype(np.float32) * np.float32(scale)
    sess = ort.InferenceSession(os.path.join(ROOT, model), providers=["CPUExecutionProvider"])
    outs = sess.run(None, {sess.get_inputs()[0].name: x})
    names = [o.name for o in sess.get_outputs()]
    doc = {
        "model": model,
        "model_sha256": sha256(model),
        "inputs": inputs,
        "inputs_sha256": sha256(inputs),
        "input_scale": "1/255" if scale != 1.0 else "1",
        "runtime": f"onnxruntime {ort.__version__}",
        "count": int(px.shape[0]),
    }
    if "scores" in names:
        scores = outs[names.index("scores")]
        doc["argmax"] = [int(v) for v in scores.argmax(axis=1)]
        doc["scores"] = [[round(float(v), 6) for v in row] for row in scores]
    else:
        doc["argmax"] = [int(v) for v in outs[names.index("label")]]
        probs = outs[names.index("probabilities")]
        doc["probabilities"] = [[round(float(v), 6) for v in row] for row in probs]
    labels_path = os.path.join(ROOT, inputs.replace(".u8", ".labels.u8"))
    if os.path.exists(labels_path):  # the random MobileNet inputs have none
        labels = np.fromfile(labels_path, dtype=np.uint8)
        doc["accuracy"] = round(float(np.mean(np.asarray(doc["argmax"]) == labels)), 4)
    return doc


def dump(doc):
    # One row per line keeps the file diffable and easy to scan from the Rust test.
    lines = ["{"]
    keys = sorted(doc, key=lambda k: isinstance(doc[k], list))
    for i, k in enumerate(keys):
        v = doc[k]
        end = "," if i < len(keys) - 1 else ""
        if isinstance(v, list) and v and isinstance(v[0], list):
            rows = ",\n".join("    " + json.dumps(r) for r in v)
            lines.append(f'  "{k}": [\n{rows}\n  ]{end}')
        else:
            lines.append(f'  "{k}": {json.dumps(v)}{end}')
    lines.append("}")
    return "\n".join(lines) + "\n"


def path_of(name):
    return os.path.join(ROOT, "models", "data", f"{name}.reference.json")


def main():
    for name in CASES:
        if not os.path.exists(os.path.join(ROOT, CASES[name][0])):
            print(f"skipping {name}: {CASES[name][0]} not there")
            continue
        doc = compute(name)
        with open(path_of(name), "w") as f:
            f.write(dump(doc))
        print(f"wrote {path_of(name)} ({doc['count']} inputs, {doc['runtime']})")


if __name__ == "__main__":
    main()
