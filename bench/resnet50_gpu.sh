#!/usr/bin/env bash
# ResNet-50 on the GPU machine: kiln (every precision, plus -O0 and no-CUDA-graph rows, plan
# build times cold and warm) and the PyTorch peers in the same run, then one markdown table.
#
#   bench/resnet50_gpu.sh [KILN [RESNET50_ONNX]]
#     KILN           kiln binary or unpacked bundle folder (default /tmp/kiln, see
#                    scripts/gpu/device_run.sh)
#     RESNET50_ONNX  default <bundle>/resnet50/resnet50.onnx, exported by
#                    scripts/gpu/prepare_resnet50.py when missing
#   env: OUT (logs, JSON, plot and table go to $OUT/resnet50_bench); MIN_SECONDS, RUNS, WARMUP,
#        BACKEND: see bench/gpu_common.sh (BACKEND=cpu: a dry run without a GPU); BATCHES: the
#        small and large batch sizes (1,256)
# Exit status: the number of failed steps.
set -uo pipefail
BENCH_NAME=resnet50_bench
# shellcheck source=bench/gpu_common.sh
source "$(dirname "$0")/gpu_common.sh"
MODEL="${2:-$BUNDLE/resnet50/resnet50.onnx}"
PLAN="$D/resnet50_fp16.plan"
BATCHES="${BATCHES:-1,256}"  # small,large: the table's columns
PROFILE="input:1,${BATCHES#*,},${BATCHES#*,}"  # the plan covers batch 1 to the large one
[[ -f "$MODEL" ]] || step export python3 "$ROOT/scripts/gpu/prepare_resnet50.py" "$(dirname "$MODEL")"

bench() {  # NAME MODEL_OR_PLAN LABEL kiln-bench-args...
  local name=$1 model=$2 label=$3; shift 3
  step "$name" "$KILN" bench "$model" --backend "$BACKEND" --batch "$BATCHES" --min-seconds "$MIN_SECONDS" \
    --runs "$RUNS" --warmup "$WARMUP" --label "$label" --json "$D/$name.json" "$@"
}
bench kiln_all "$MODEL" "-O2, graph" --precision fp32,tf32,fp16,bf16 --plot "$D/resnet50.svg"
bench kiln_fp16_O0 "$MODEL" "-O0" --precision fp16 -O0
bench kiln_fp16_nograph "$MODEL" "no CUDA graph" --precision fp16 --no-graph

# Plan build: cold (a fresh timing cache), then again with the cache the first build filled;
# then the plan itself benchmarked (what a deployment loads).
build() {  # NAME
  step "$1" "$KILN" build "$MODEL" -o "$PLAN" --backend "$BACKEND" --precision fp16 --profile "$PROFILE" \
    --timing-cache "$D/timing_cache.json"
}
rm -f "$D/timing_cache.json"
cold=null warm=null  # JSON null: that build failed
build build_cold && cold=$STEP_S
build build_warm && warm=$STEP_S
echo "plan build: cold $cold s, warm $warm s"
printf '{"precision": "fp16", "profile": "%s", "cold_s": %s, "warm_s": %s}\n' "$PROFILE" "$cold" "$warm" \
  > "$D/build.json"
[[ -f "$PLAN" ]] && bench kiln_plan "$PLAN" "plan"  # at the plan's own precision

step torch python3 "$ROOT/bench/torch_resnet50.py" --batch "$BATCHES" --modes eager32,eager16cl,graph16cl,compile16cl \
  --min-seconds "$MIN_SECONDS" --json "$D/torch.json"

python3 "$ROOT/bench/side_by_side.py" --title "ResNet-50 224x224, kiln and PyTorch in one run" --batches "$BATCHES" \
  --kiln "$D"/kiln_*.json --peers "$D/torch.json" --build "$D/build.json" | tee "$D/table.md"
echo "logs, JSON, plot (resnet50.svg) and table.md in $D"
exit "$FAILED"
