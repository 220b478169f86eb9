#!/usr/bin/env bash
# The CNN checks that need Python and ONNX Runtime (run by scripts/test.sh):
#  1. AlexNet, SqueezeNet 1.1, ResNet-18 and MobileNetV2 (torchvision topologies, seeded random
#     weights, built with onnx.helper) converted and run by mvision vs ONNX Runtime (rtol 1e-4);
#  2. MTCNN's trained P-, R- and O-Net (weights from the mtcnn wheel) on random inputs, and on
#     face / non-face crops of astronaut.png vs the independent numpy reference.
# Everything it generates goes to build/ (git-ignored); wheels are downloaded from PyPI once.
#   usage: scripts/nn-check.sh [path/to/mvision]   (default: builds target/release/mvision)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

PY=$(bash scripts/nn-venv.sh "$root/build/venv-nn" | tail -n1)
if [ $# -ge 1 ]; then
  mv=$1
else
  cargo build --release --locked -p mvision-cli
  mv=$root/target/release/mvision
fi

wheels=$root/build/wheels
mtcnn_wheel=$wheels/mtcnn-1.0.0-py3-none-any.whl
[ -f "$mtcnn_wheel" ] || "$PY" -m pip download --quiet --disable-pip-version-check --no-deps \
  -d "$wheels" mtcnn==1.0.0

echo "--- architectures vs ONNX Runtime"
"$PY" models/make_archs.py --out build/nn-models
"$PY" models/check_models.py --mvision "$mv" --dir build/nn-models --drop-converted

echo "--- MTCNN (trained weights) vs ONNX Runtime, random inputs"
"$PY" models/mtcnn_to_onnx.py --wheel "$mtcnn_wheel" --out build/nn-mtcnn
"$PY" models/check_models.py --mvision "$mv" --dir build/nn-mtcnn

echo "--- MTCNN on astronaut.png crops vs the numpy reference"
"$PY" models/check_mtcnn_crops.py --mvision "$mv" --dir build/nn-mtcnn
