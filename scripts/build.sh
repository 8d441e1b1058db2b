#!/usr/bin/env bash
# Installs dependencies (scripts/setup.sh), then configures and builds dfmpc
# in a persistent build directory (default: build/, or $DFMPC_BUILD_DIR) of
# type $DFMPC_BUILD_TYPE (default Release); $DFMPC_CMAKE_ARGS adds CMake
# arguments (word-split, so escape spaces inside one); $DFMPC_BUILD_TARGETS
# (space-separated) builds only those targets.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${DFMPC_BUILD_DIR:-$root/build}
build_type=${DFMPC_BUILD_TYPE:-Release}

bash "$root/scripts/setup.sh"
echo "build: configuring $build_dir ($build_type)"
mkdir -p "$build_dir"
eval "extra=(${DFMPC_CMAKE_ARGS:-})"
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE="$build_type" "${extra[@]}" \
  > "$build_dir/configure.log" 2>&1 ||
  { cat "$build_dir/configure.log"; exit 1; }
echo "build: compiling with $(nproc) jobs (the first build takes several minutes)"
targets=()
for target in ${DFMPC_BUILD_TARGETS:-}; do targets+=(--target "$target"); done
start=$SECONDS
cmake --build "$build_dir" -j"$(nproc)" "${targets[@]}"
echo "build: $build_dir compiled in $((SECONDS - start)) s"
