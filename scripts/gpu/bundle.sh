#!/usr/bin/env bash
# Packs what the GPU machine needs to test and benchmark a kiln built here (Debian 12) into
# .deps/gpu/bundle.tar.xz: the binaries, the shared libraries its Ubuntu image lacks (libonnx,
# OpenBLAS, fmt, ...; CUDA, cuDNN and cuBLAS are there already), the conformance tests and the
# smaller real models with their ONNX Runtime reference outputs. ResNet-50 (98 MB) does not fit
# the 64 MiB that travels: scripts/gpu/device_run.sh exports it there with torchvision.
#
#   scripts/gpu/bundle.sh [BUILD_DIR]      (default: build)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${1:-$ROOT/build}"
STAGE="$ROOT/.deps/gpu/stage"
rm -rf "$STAGE"
mkdir -p "$STAGE/bin" "$STAGE/lib" "$STAGE/models"

bins=("$BUILD/kiln")
for t in "$BUILD/tests/gpu/kiln_gpu_tests" "$BUILD/tests/kiln_unit_tests"; do
  [[ -x "$t" ]] && bins+=("$t")
done
cp "${bins[@]}" "$STAGE/bin/"

# Every shared library the binaries load except the C runtime and the GPU vendor libraries,
# which the GPU machine has in versions matching its driver.
ldd "${bins[@]}" | awk '/=> \//{print $1, $3}' | sort -u | while read -r soname path; do
  case "$soname" in
    libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
    libcuda.so*|libcudart.so*|libcublas*|libcudnn*|libnccl*) ;;
    *) cp -L "$path" "$STAGE/lib/$soname" ;;
  esac
done

cp -r /work/shared/conformance "$STAGE/conformance" 2>/dev/null || cp -r "$ROOT/../shared/conformance" "$STAGE/conformance"
for m in ppocr_det ppocr_rec ppocr_cls blazeface mobilenetv2 silero_vad; do
  [[ -f "$ROOT/models/$m.onnx" ]] && cp "$ROOT/models/$m.onnx" "$STAGE/models/"
done
cp -r "$ROOT/models/testdata" "$STAGE/models/testdata"
cp "$ROOT/models/ppocr_keys_v1.txt" "$STAGE/models/"
rm -rf "$STAGE/models/testdata/resnet50"  # made on the GPU machine (prepare_resnet50.py)

tar cf - -C "$STAGE" . | xz -T2 -3 > "$ROOT/.deps/gpu/bundle.tar.xz"
rm -rf "$STAGE"
ls -la "$ROOT/.deps/gpu/bundle.tar.xz"
