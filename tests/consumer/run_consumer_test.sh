#!/usr/bin/env bash
# Installs the build tree into a fresh prefix, then configures, builds and
# runs tests/consumer/project against it with find_package(dfmpc). A fourth
# argument lists the sanitizers the installed libraries were built with.
set -euo pipefail
build_dir=$1
source_dir=$2
work_dir=$3
sanitize=${4:-}
flags=()
if [ -n "$sanitize" ]; then
  flags=(-DCMAKE_CXX_FLAGS="-fsanitize=$sanitize" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=$sanitize")
fi

rm -rf "$work_dir"
cmake --install "$build_dir" --prefix "$work_dir/prefix" > "$work_dir.install.log" 2>&1 ||
  { cat "$work_dir.install.log"; exit 1; }
cmake -S "$source_dir/tests/consumer/project" -B "$work_dir/build" \
  -DCMAKE_PREFIX_PATH="$work_dir/prefix" -DCMAKE_BUILD_TYPE=Release "${flags[@]}"
cmake --build "$work_dir/build" -j2
"$work_dir/build/consumer"
