#!/usr/bin/env bash
# The README's main command: installs dependencies, builds, and runs the
# closed-loop demo: the planner swings up the pendulum with the shipped world
# model (no training), next to a random policy. Writes out/demo/trajectory.png,
# out/demo/episode.gif and out/demo/steps.csv. Extra arguments go to
# `dfmpc control` (see `build/examples/dfmpc control --help`). It also builds
# the Python module into build/python (PYTHONPATH=build/python /usr/bin/python3).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${DFMPC_BUILD_DIR:-$root/build}

# The dfmpc tool the demo runs, and the Python module (the tests build in
# scripts/test.sh).
DFMPC_BUILD_TARGETS="dfmpc dfmpc_python" bash "$root/scripts/build.sh"
"$build_dir/examples/dfmpc" control --task pendulum_swingup \
  --model "$root/examples/models/pendulum_swingup.pt" --out "$root/out/demo" "$@"
