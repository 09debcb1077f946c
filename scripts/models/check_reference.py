#!/usr/bin/env python3
"""Verifies that the committed reference files (models/data/*.reference.json) are current:
re-runs onnxruntime on the committed models and test sets and compares hashes, argmax (exact)
and logits/probabilities (within 1e-5). Exits non-zero on any difference. Covers every case of
reference.CASES: the float MNIST nets, the 8x8-digit models and the int8 models of quantize.py
(minionn-q, lenet-qdq, mobilenet-q; the last on models/data/mobilenet-q-inputs.u8).

Usage: .venv/bin/python scripts/models/check_reference.py
"""
import json
import sys

import reference


def main():
    bad = 0
    for name in reference.CASES:
        with open(reference.path_of(name)) as f:
            committed = json.load(f)
        fresh = reference.compute(name)
        problems = []
        for k in ("model_sha256", "inputs_sha256", "count", "argmax"):
            if committed.get(k) != fresh[k]:
                problems.append(f"{k} differs")
        for k in ("scores", "probabilities"):
            if k in fresh:
                a, b = committed.get(k), fresh[k]
                if a is None or len(a) != len(b):
                    problems.append(f"{k} missing or wrong length")
                elif max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb)) > 1e-5:
                    problems.append(f"{k} differ by more than 1e-5")
        if problems:
            bad += 1
            print(f"{name}: STALE ({'; '.join(problems)}); run scripts/models/reference.py")
        else:
            print(f"{name}: ok ({fresh['count']} inputs, {fresh['runtime']})")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
