# Sourced by bench/resnet50_gpu.sh and bench/ppocr_gpu.sh (on the GPU machine).
#   KILN_ARG: the kiln binary, or the folder scripts/gpu/device_run.sh unpacks the bundle into
#   (default /tmp/kiln), whose bin/kiln is used. Sets KILN, BUNDLE, D (= $OUT/<name>, where the
#   logs and JSON go), MIN_SECONDS, RUNS, WARMUP and BACKEND (from the environment;
#   defaults 2, 100, 10 and cuda),
#   FAILED, and the function `step NAME CMD...`.
# shellcheck shell=bash disable=SC2034  # the variables are for the scripts that source this
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KILN_ARG="${1:-/tmp/kiln}"
if [[ -d "$KILN_ARG" ]]; then
  BUNDLE="$KILN_ARG"
  KILN="$KILN_ARG/bin/kiln"
else
  KILN="$KILN_ARG"
  BUNDLE="$(cd "$(dirname "$KILN")/.." && pwd)"
fi
[[ -d "$BUNDLE/lib" ]] && export LD_LIBRARY_PATH="$BUNDLE/lib:${LD_LIBRARY_PATH:-}"
[[ -x "$KILN" ]] || { echo "no kiln binary at $KILN" >&2; exit 2; }
D="${OUT:-/tmp/kiln-out}/$BENCH_NAME"
mkdir -p "$D"
MIN_SECONDS="${MIN_SECONDS:-2}"
RUNS="${RUNS:-100}"  # timed runs per point, at least
WARMUP="${WARMUP:-10}"  # untimed runs before each point
BACKEND="${BACKEND:-cuda}"  # cpu: a dry run of the script on a machine without a GPU
FAILED=0

# step NAME CMD...: runs CMD with its output shown and kept in $D/NAME.log; counts failures
# (a failed step does not stop the others) and returns CMD's status. STEP_S: its seconds.
step() {
  local name=$1 t0 rc=0; shift
  echo "== $name: $*"
  t0=$(date +%s.%N)
  "$@" 2>&1 | tee "$D/$name.log" || rc=$?
  STEP_S=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  if ((rc != 0)); then
    echo "== $name FAILED (exit $rc)"
    FAILED=$((FAILED + 1))
  fi
  return "$rc"
}
