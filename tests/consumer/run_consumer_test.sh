#!/usr/bin/env bash
# Installs the build tree into a fresh prefix, then configures, builds and
# runs tests/consumer/project against it with find_package(dfmpc).
set -euo pipefail
build_dir=$1
source_dir=$2
work_dir=$3

rm -rf "$work_dir"
cmake --install "$build_dir" --prefix "$work_dir/prefix" > "$work_dir.install.log" 2>&1 ||
  { cat "$work_dir.install.log"; exit 1; }
cmake -S "$source_dir/tests/consumer/project" -B "$work_dir/build" \
  -DCMAKE_PREFIX_PATH="$work_dir/prefix" -DCMAKE_BUILD_TYPE=Release
cmake --build "$work_dir/build" -j2
"$work_dir/build/consumer"
