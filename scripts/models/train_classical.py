#!/usr/bin/env python3
"""Trains classical models on scikit-learn's bundled 8x8 digits and exports them with skl2onnx
(ONNX-ML, no ZipMap): a multinomial logistic regression (LinearClassifier), a linear SVM
(LinearSVC, which skl2onnx exports as a LinearClassifier with post_transform NONE: one-vs-rest
decision functions, label = the largest) and a decision tree (DecisionTreeClassifier,
max_depth 6: a TreeEnsembleClassifier with BRANCH_LEQ nodes and class-probability leaves).
Writes the held-out test split too.

Inputs are the raw 8x8 pixel counts 0..16 as float32 (stored as bytes). The split is
train_test_split(test_size=0.25, random_state=SEED, stratify=labels), the same for every model.

Usage: .venv/bin/python scripts/models/train_classical.py
Outputs: models/logreg.onnx, models/svm.onnx, models/tree.onnx, models/data/digits8-test.u8,
         models/data/digits8-test.labels.u8
"""
import os

import numpy as np
import skl2onnx.common._container
from skl2onnx import to_onnx
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

# skl2onnx 1.19.1 passes the tree converter's `nodes_missing_value_tracks_true` as Python bools,
# which onnx 1.19's protobuf refuses in an int list: turn bools in list attributes into ints.
_make_node = skl2onnx.common._container.make_node


def _make_node_bools_as_ints(*args, **attrs):
    fixed = {k: [int(x) if isinstance(x, (bool, np.bool_)) else x for x in v]
             if isinstance(v, list) else v for k, v in attrs.items()}
    return _make_node(*args, **fixed)


skl2onnx.common._container.make_node = _make_node_bools_as_ints

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SEED = 20260521


def main():
    digits = load_digits()
    x = digits.data.astype(np.float32)
    y = digits.target.astype(np.int64)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.25, random_state=SEED, stratify=y)
    models = {
        "logreg": LogisticRegression(max_iter=2000, C=0.05),
        "svm": LinearSVC(C=0.01, max_iter=20000, random_state=SEED),
        "tree": DecisionTreeClassifier(max_depth=6, random_state=SEED),
    }
    for name, clf in models.items():
        clf.fit(xtr, ytr)
        print(f"{name}: train accuracy {clf.score(xtr, ytr):.4f}, test accuracy {clf.score(xte, yte):.4f}"
              f" on {len(yte)} held-out digits")
        # LinearSVC has no probabilities, hence no ZipMap to turn off.
        options = {} if name == "svm" else {id(clf): {"zipmap": False}}
        onx = to_onnx(clf, xtr[:1], options=options, target_opset={"": 13, "ai.onnx.ml": 1})
        onx.producer_name = "ringfence-train_classical"
        # The range the model was trained on (8×8 pixel counts): parties describe it to clients.
        entry = onx.metadata_props.add()
        entry.key, entry.value = "ringfence.input_range", "0,16"
        out = os.path.join(ROOT, "models", f"{name}.onnx")
        with open(out, "wb") as f:
            f.write(onx.SerializeToString())
        print(f"wrote {out} ({os.path.getsize(out)} bytes)")
    data = os.path.join(ROOT, "models", "data")
    os.makedirs(data, exist_ok=True)
    xte.astype(np.uint8).tofile(os.path.join(data, "digits8-test.u8"))
    yte.astype(np.uint8).tofile(os.path.join(data, "digits8-test.labels.u8"))


if __name__ == "__main__":
    main()
