#!/usr/bin/env bash
# kiln's main job on its built-in default: installs what is missing, builds kiln, obtains
# torchvision's ResNet-50 (seeded random weights, exported to ONNX, cached in models/) and
# runs it on the best backend present on a real photograph, printing the top-5 classes and a
# timing table.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/fetch_models.sh
input=models/testdata/resnet50/input.npy
echo "== kiln run models/resnet50.onnx on $input (a photograph from shared/data/images, ImageNet-preprocessed)"
build/kiln run models/resnet50.onnx --backend auto --input "input=$input" --warmup 2 --runs 10
