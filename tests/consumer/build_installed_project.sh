#!/usr/bin/env bash
# Installs the build tree into a fresh prefix, then configures and builds a
# separate CMake project against it with find_package(dfmpc), writing its
# compile commands. Usage: BUILD_DIR SOURCE_DIR WORK_DIR PROJECT_DIR. The
# project is built in WORK_DIR/build.
set -euo pipefail
build_dir=$1
source_dir=$2
work_dir=$3
project_dir=$4

rm -rf "$work_dir"
mkdir -p "$work_dir"
cmake --install "$build_dir" --prefix "$work_dir/prefix" > "$work_dir/install.log" 2>&1 ||
  { cat "$work_dir/install.log"; exit 1; }
cmake -S "$project_dir" -B "$work_dir/build" -DCMAKE_PREFIX_PATH="$work_dir/prefix" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
cmake --build "$work_dir/build" -j2
