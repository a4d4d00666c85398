#!/usr/bin/env bash
# Installs kiln's build dependencies on Debian 12 (only what is missing) and builds kiln into
# build/ (Release). Safe to run again: it skips what is already there.
#   KILN_BUILD_DIR=build-asan KILN_CMAKE_ARGS="-DKILN_SANITIZE=ON" scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libonnx-dev libprotobuf-dev protobuf-compiler libopenblas-dev
  libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libgtest-dev
  python3 python3-numpy python3-onnx
  libcpp-httplib-dev libgrpc++-dev protobuf-compiler-grpc python3-grpcio  # kiln serve: REST, gRPC, its tests
)
# shellcheck source=lib/packages.sh
. scripts/lib/packages.sh
ensure_packages setup "${packages[@]}"

build_dir=${KILN_BUILD_DIR:-build}
# shellcheck disable=SC2086  # KILN_CMAKE_ARGS is a list of flags
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${KILN_CMAKE_ARGS:-} >/dev/null
if ! ninja -C "$build_dir" -j "$(nproc)" >"$build_dir/build.log" 2>&1; then
  grep -E 'error|FAILED' "$build_dir/build.log" | head -40 >&2
  echo "setup: build failed (full log: $build_dir/build.log)" >&2
  exit 1
fi
echo "setup: built $build_dir/kiln"
