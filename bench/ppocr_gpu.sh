#!/usr/bin/env bash
# PP-OCRv4 detection (1x3x640x640) and recognition (1x3x48x320) on the GPU machine: kiln at
# batch 1 and 16 in fp32 and fp16, and ONNX Runtime on the CPU (16 threads) for context, then
# one markdown table.
#
#   bench/ppocr_gpu.sh [KILN [MODELS_DIR]]
#     KILN        kiln binary or unpacked bundle folder (default /tmp/kiln)
#     MODELS_DIR  folder with ppocr_det.onnx and ppocr_rec.onnx (default <bundle>/models)
#   env: OUT (logs, JSON, plots and table go to $OUT/ppocr_bench); MIN_SECONDS, RUNS, WARMUP,
#        BACKEND: see bench/gpu_common.sh (BACKEND=cpu: a dry run without a GPU)
# Exit status: the number of failed steps.
set -uo pipefail
BENCH_NAME=ppocr_bench
# shellcheck source=bench/gpu_common.sh
source "$(dirname "$0")/gpu_common.sh"
MODELS="${2:-$BUNDLE/models}"

for spec in ppocr_det:x=1,3,640,640 ppocr_rec:x=1,3,48,320; do
  name=${spec%%:*} shape=${spec#*:}
  step "kiln_$name" "$KILN" bench "$MODELS/$name.onnx" --backend "$BACKEND" --precision fp32,fp16 --batch 1,16 \
    --shape "$shape" --min-seconds "$MIN_SECONDS" --runs "$RUNS" --warmup "$WARMUP" --json "$D/kiln_$name.json" \
    --plot "$D/$name.svg"
  step "ort_$name" python3 "$ROOT/bench/ort_bench.py" --model "$MODELS/$name.onnx" --shape "$shape" \
    --batch 1,16 --threads 16 --min-seconds "$MIN_SECONDS" --json "$D/ort_$name.json"
done

python3 "$ROOT/bench/side_by_side.py" --title "PP-OCRv4 det 640x640 and rec 48x320: kiln (GPU), ONNX Runtime (CPU)" \
  --batches 1,16 --kiln "$D"/kiln_*.json --peers "$D"/ort_*.json | tee "$D/table.md"
echo "logs, JSON, plots and table.md in $D"
exit "$FAILED"
