#!/usr/bin/env bash
# Runs on the GPU machine (../shared/GPU.md), from the repository root, after scripts/gpu/bundle.sh
# packed .deps/gpu/bundle.tar.xz here and `run` carried .deps/gpu there.
#
#   scripts/gpu/device_run.sh STEP...
#     doctor       kiln doctor
#     gputests     the kiln_gpu_tests executable (GPU vs CPU, op by op)
#     conformance  the ONNX conformance suite on --backend cuda (fp32)
#     conformance16  the same in fp16 (rtol/atol 1e-2: one fp16 rounding of inputs and result
#                  is 2^-11 relative each; informational, min pass 0.8: integer/index ops and
#                  ops whose tests use magnitudes beyond fp16 range are expected to differ)
#     models       the real models on --backend cuda vs ONNX Runtime's reference outputs (fp32)
#     models16     the same in fp16 (rtol 2e-2, atol 1% of each output's range; the models'
#                  sanity checks — text read back, face found — must pass too)
#     resnet50     exports torchvision ResNet-50 here, checks kiln cuda against ONNX Runtime
#     sanitize     compute-sanitizer memcheck over a few GPU tests
#     bench        ResNet-50 benchmark, kiln and PyTorch side by side (bench/resnet50_gpu.sh)
#     ppocr        PP-OCRv4 det/rec benchmark, kiln and ONNX Runtime CPU (bench/ppocr_gpu.sh)
#     ppocr        PP-OCR det/rec benchmark, kiln and ONNX Runtime CPU (bench/ppocr_gpu.sh)
# Each step's log goes to $OUT/<step>.log; the script's exit status is the number of failed steps.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
K=/tmp/kiln
OUT="${OUT:-/tmp/kiln-out}"
mkdir -p "$K" "$OUT"
[[ -x "$K/bin/kiln" ]] || xz -dc "$ROOT/.deps/gpu/bundle.tar.xz" | tar xf - -C "$K"
export LD_LIBRARY_PATH="$K/lib:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1
KILN="$K/bin/kiln"
failed=0

compare_model() {  # NAME MODEL_PATH CASE_DIR [extra kiln args...]; $COMPARE_ARGS go to compare.py
  local name=$1 model=$2 case_dir=$3; shift 3
  local work="$K/work/$name"
  rm -rf "$work"; mkdir -p "$work"
  local args=()
  while read -r kv; do args+=(--input "$kv"); done < <(python3 -c "
import json,sys; d=json.load(open('$case_dir/case.json'))
for k,v in d['inputs'].items(): print(f'{k}=$case_dir/{v}')")
  "$KILN" run "$model" --backend cuda "${args[@]}" --output-dir "$work" "$@" --warmup 1 --runs 5 &&
    python3 "$ROOT/tests/models/compare.py" "$case_dir" "$work" "$case_dir/ort" ${COMPARE_ARGS:-}
}

step_doctor() { "$KILN" doctor; }
step_gputests() { "$K/bin/kiln_gpu_tests" --gtest_brief=1; }
step_conformance() {
  python3 "$ROOT/tests/conformance/run_conformance.py" --kiln "$KILN" --suite "$K/conformance" \
    --backend cuda --log "$OUT/conformance_check.log"
}
step_conformance16() {
  python3 "$ROOT/tests/conformance/run_conformance.py" --kiln "$KILN" --suite "$K/conformance" \
    --backend cuda --precision fp16 --rtol 1e-2 --atol 1e-2 --min-pass 0.8 --log "$OUT/conformance16_check.log"
}
step_models() {  # [extra kiln args...]
  local bad=0
  for case_dir in "$K"/models/testdata/*/; do
    local name; name=$(basename "$case_dir")
    [[ -f "$K/models/$name.onnx" ]] || continue
    echo "== $name"
    compare_model "$name" "$K/models/$name.onnx" "$case_dir" "$@" || bad=$((bad + 1))
  done
  [[ -f "$K/resnet50/resnet50.onnx" ]] &&
    { echo "== resnet50"; compare_model resnet50 "$K/resnet50/resnet50.onnx" "$K/resnet50/testdata/resnet50" "$@" || bad=$((bad + 1)); }
  return $bad
}
step_models16() { COMPARE_ARGS="--rtol 2e-2 --atol-of-range 1e-2" step_models --precision fp16; }
step_resnet50() {
  python3 "$ROOT/scripts/gpu/prepare_resnet50.py" "$K/resnet50" &&
    compare_model resnet50 "$K/resnet50/resnet50.onnx" "$K/resnet50/testdata/resnet50"
}
step_sanitize() {
  compute-sanitizer --tool memcheck --error-exitcode 3 "$K/bin/kiln_gpu_tests" --gtest_brief=1 \
    --gtest_filter="${KILN_SANITIZE_FILTER:-*}"
}
step_bench() { OUT="$OUT" bash "$ROOT/bench/resnet50_gpu.sh" "$K"; }
step_ppocr() { OUT="$OUT" bash "$ROOT/bench/ppocr_gpu.sh" "$K"; }

for step in "$@"; do
  echo "=== $step ($(date +%T))"
  start=$(date +%s)
  if "step_$step" > "$OUT/$step.log" 2>&1; then verdict=ok; else verdict=FAILED; failed=$((failed + 1)); fi
  echo "=== $step: $verdict in $(( $(date +%s) - start )) s"
  tail -n 25 "$OUT/$step.log"
done
exit $failed
