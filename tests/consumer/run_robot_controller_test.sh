#!/usr/bin/env bash
# Builds examples/robot_controller against the installed package, checks that
# nothing of LibTorch (include directories, its flags) reaches the
# controller's compile commands, and runs a short controlled episode, then
# both deadline kinds into a CSV.
# Arguments: those of build_installed_project.sh without the project.
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
source_dir=$2
work_dir=$3
bash "$here/build_installed_project.sh" "$1" "$source_dir" "$work_dir" \
  "$source_dir/examples/robot_controller"
if grep -i -E 'torch|_GLIBCXX_USE_CXX11_ABI' "$work_dir/build/compile_commands.json"; then
  echo "robot_controller: LibTorch reached the controller's compile commands (above)" >&2
  exit 1
fi
"$work_dir/build/robot_controller" --model "$source_dir/examples/models/pendulum_swingup.pt" \
  --steps 150 --rate 50 | tee "$work_dir/run.log"
grep -q "^deadline misses: " "$work_dir/run.log"
# Two deadline kinds side by side, as docs/experiments.md's table is made.
"$work_dir/build/robot_controller" --model "$source_dir/examples/models/pendulum_swingup.pt" \
  --steps 50 --rate 50 --deadline-kind hard start-only --csv "$work_dir/runs.csv" > /dev/null
[ "$(cut -d, -f2 "$work_dir/runs.csv" | tr '\n' ' ')" = "deadline_kind hard start-only " ] || {
  echo "robot_controller: unexpected --csv rows:" >&2
  cat "$work_dir/runs.csv" >&2
  exit 1
}
echo "robot_controller: ok"
