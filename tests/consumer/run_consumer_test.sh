#!/usr/bin/env bash
# Proves that an installed dfmpc is usable from another CMake project
# (tests/consumer/project). Arguments: those of build_installed_project.sh
# without the project.
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
bash "$here/build_installed_project.sh" "$1" "$2" "$3" "$here/project"
"$3/build/consumer"
