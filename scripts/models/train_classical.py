#!/usr/bin/env python3
"""Trains a multinomial logistic regression on scikit-learn's bundled 8x8 digits and exports it
with skl2onnx (ONNX-ML LinearClassifier, no ZipMap). Writes the held-out test split too.

Inputs are the raw 8x8 pixel counts 0..16 as float32 (stored as bytes). The split is
train_test_split(test_size=0.25, random_state=SEED, stratify=labels).

Usage: .venv/bin/python scripts/models/train_classical.py
Outputs: models/logreg.onnx, models/data/digits8-test.u8, models/data/digits8-test.labels.u8
"""
import os

import numpy as np
from skl2onnx import to_onnx
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SEED = 20260521


def main():
    digits = load_digits()
    x = digits.data.astype(np.float32)
    y = digits.target.astype(np.int64)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.25, random_state=SEED, stratify=y)
    clf = LogisticRegression(max_iter=2000, C=0.05)
    clf.fit(xtr, ytr)
    print(f"logreg: train accuracy {clf.score(xtr, ytr):.4f}, test accuracy {clf.score(xte, yte):.4f}"
          f" on {len(yte)} held-out digits")
    onx = to_onnx(clf, xtr[:1], options={id(clf): {"zipmap": False}}, target_opset={"": 13, "ai.onnx.ml": 1})
    onx.producer_name = "ringfence-train_classical"
    out = os.path.join(ROOT, "models", "logreg.onnx")
    with open(out, "wb") as f:
        f.write(onx.SerializeToString())
    print(f"wrote {out} ({os.path.getsize(out)} bytes)")
    data = os.path.join(ROOT, "models", "data")
    os.makedirs(data, exist_ok=True)
    xte.astype(np.uint8).tofile(os.path.join(data, "digits8-test.u8"))
    yte.astype(np.uint8).tofile(os.path.join(data, "digits8-test.labels.u8"))


if __name__ == "__main__":
    main()
