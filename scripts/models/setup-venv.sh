#!/usr/bin/env bash
# Creates (or reuses) the project virtual environment `.venv` at the repository root with the
# pinned Python packages the model scripts need. Idempotent: re-running only installs what is
# missing or at the wrong version. Usage: scripts/models/setup-venv.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="$ROOT/.venv"
PYTHON="${PYTHON:-python3}"

# Pinned versions (PyPI). Change them together and re-run scripts/models/check_reference.py.
PACKAGES=(
  "numpy==2.3.5"
  "onnx==1.19.1"
  "onnxruntime==1.23.2"
  "scikit-learn==1.7.2"
  "skl2onnx==1.19.1"
  # exporter_cases.py's gradient-boosted trees.
  "lightgbm==4.7.0"
  "xgboost==3.2.0"
  "onnxmltools==1.16.0"
)

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup-venv: creating $VENV with $($PYTHON --version)"
  "$PYTHON" -m venv "$VENV"
else
  echo "setup-venv: reusing $VENV ($("$VENV/bin/python" --version))"
fi

echo "setup-venv: installing ${PACKAGES[*]}"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PACKAGES[@]}"
echo "setup-venv: installed:"
"$VENV/bin/python" -m pip freeze --disable-pip-version-check | grep -iE '^(numpy|onnx|onnxruntime|scikit-learn|skl2onnx|lightgbm|xgboost|onnxmltools)==' | sed 's/^/  /'
echo "setup-venv: done; activate with: source $VENV/bin/activate"
