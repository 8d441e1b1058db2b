#!/usr/bin/env bash
# The README's main command: installs dependencies, builds, and runs the main
# job. Until the closed-loop demo lands this is the KV-cache benchmark.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${DFMPC_BUILD_DIR:-$root/build}

bash "$root/scripts/build.sh"
mkdir -p "$root/out"
"$build_dir/examples/dfmpc" bench cache --csv "$root/out/bench_cache.csv" "$@"
