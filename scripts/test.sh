#!/usr/bin/env bash
# The README's test command: installs dependencies, builds, runs every test.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${DFMPC_BUILD_DIR:-$root/build}

bash "$root/scripts/build.sh"
cd "$build_dir"
ctest --output-on-failure -j"$(nproc)" "$@"
