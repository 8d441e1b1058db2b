#!/usr/bin/env bash
# Installs the build tree into a fresh prefix, builds examples/robot_controller
# against it as a separate project, checks that nothing of LibTorch (include
# directories, its flags) reaches the controller's compile commands, and runs
# a short controlled episode. A fourth argument lists the sanitizers the
# installed libraries were built with.
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
mkdir -p "$work_dir"
cmake --install "$build_dir" --prefix "$work_dir/prefix" > "$work_dir/install.log" 2>&1 ||
  { cat "$work_dir/install.log"; exit 1; }
cmake -S "$source_dir/examples/robot_controller" -B "$work_dir/build" \
  -DCMAKE_PREFIX_PATH="$work_dir/prefix" -DCMAKE_BUILD_TYPE=Release "${flags[@]}"
if grep -i -E 'torch|_GLIBCXX_USE_CXX11_ABI' "$work_dir/build/compile_commands.json"; then
  echo "robot_controller: LibTorch reached the controller's compile commands (above)" >&2
  exit 1
fi
cmake --build "$work_dir/build" -j2
"$work_dir/build/robot_controller" --model "$source_dir/examples/models/pendulum_swingup.pt" \
  --steps 150 --rate 50 | tee "$work_dir/run.log"
grep -q "^deadline misses: " "$work_dir/run.log"
echo "robot_controller: ok"
