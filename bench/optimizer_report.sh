#!/usr/bin/env bash
# What the graph optimizer does to the real models: for each model, every pass's time and node
# count before -> after (from `kiln inspect --dump-passes`), then the whole pipeline's time and
# the node total before -> after.
#
#   bench/optimizer_report.sh [KILN] [extra inspect flags, e.g. --prefer-channels-last -O1]
#
# KILN defaults to build/kiln; models come from models/ (scripts/fetch_models.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
kiln="${1:-$root/build/kiln}"
shift || true
models=(resnet50 ppocr_det ppocr_rec blazeface)
# Concrete sizes for the dynamic dims (the cost table needs them; the optimizer itself works on
# the declared shapes, as a session does).
declare -A shapes=([ppocr_det]="--shape x=1,3,640,640" [ppocr_rec]="--shape x=1,3,48,320")
err="$(mktemp)"
trap 'rm -f "$err"' EXIT

for m in "${models[@]}"; do
  model="$root/models/$m.onnx"
  if [[ ! -f "$model" ]]; then
    echo "== $m: $model is missing (run scripts/fetch_models.sh)"
    continue
  fi
  echo "== $m"
  # The per-pass lines go to stderr, the summary to stdout.
  # shellcheck disable=SC2086  # the shape option is two words
  if ! out="$("$kiln" inspect --optimized --dump-passes ${shapes[$m]:-} "$@" "$model" 2>"$err")"; then
    cat "$err"
    continue
  fi
  grep -v "^passes on graph" "$err" || true
  grep -E "^optimization:|^  total nodes" <<<"$out" | sed 's/^  total nodes */  total nodes (before, after): /'
  echo
done
