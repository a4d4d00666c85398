#!/usr/bin/env bash
# kiln's whole test suite, from a fresh Debian 12 machine: installs what is missing, builds
# the Release and the sanitizer (ASan + UBSan) builds, fetches the test models, then runs
# the sanitizer subset (unit + conformance) and finally every test on the Release build.
# The last lines are CTest's summary of the Release run.
set -uo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

scripts/setup.sh || exit 1
KILN_BUILD_DIR=build-asan KILN_CMAKE_ARGS="-DKILN_SANITIZE=ON -DKILN_CUDA=OFF" scripts/setup.sh || exit 1
scripts/fetch_models.sh || exit 1

echo "== sanitizer build (ASan + UBSan): unit, conformance and bad-input tests"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan -L "sanitize|unit" -j "$(nproc)" --output-on-failure --timeout 1500 >build-asan/ctest.log 2>&1
asan_rc=$?
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|Not Run" build-asan/ctest.log | tail -20
[ $asan_rc -eq 0 ] || { echo "sanitizer run failed; log: build-asan/ctest.log"; tail -60 build-asan/ctest.log; }

echo "== release build: all tests ($(($(date +%s) - start)) s so far)"
ctest --test-dir build -j "$(nproc)" --output-on-failure --timeout 1500
rc=$?
[ $asan_rc -eq 0 ] && [ $rc -eq 0 ]
