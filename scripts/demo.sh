#!/usr/bin/env bash
# The README's main command: installs dependencies, builds, and runs the
# closed-loop demo: the planner swings up the pendulum with the shipped world
# model (no training), next to a random policy. Writes out/demo/trajectory.png,
# out/demo/episode.gif and out/demo/steps.csv. Extra arguments go to
# `dfmpc control` (see `build/examples/dfmpc control --help`).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${DFMPC_BUILD_DIR:-$root/build}

# Only what the demo runs: the dfmpc tool (the tests build in scripts/test.sh).
DFMPC_BUILD_TARGETS=dfmpc bash "$root/scripts/build.sh"
"$build_dir/examples/dfmpc" control --task pendulum_swingup \
  --model "$root/examples/models/pendulum_swingup.pt" --out "$root/out/demo" "$@"
