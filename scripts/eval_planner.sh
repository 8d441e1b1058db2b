#!/usr/bin/env bash
# Reproduces the README's closed-loop table: random, oracle, dfmpc replan and
# dfmpc warm r = 1, 2 with the shipped models on pendulum and cartpole
# swing-up, every policy at the control rate of the task's shipped model.
# Outputs (per-episode CSV and the printed summaries) go to out/eval/.
# DFMPC_EPISODES sets the episodes of the fast policies (default 10) and
# DFMPC_REPLAN_EPISODES those of replan (default 3: about 2 min per episode).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dfmpc="${DFMPC_BUILD_DIR:-$root/build}/examples/dfmpc"
out="$root/out/eval"
episodes=${DFMPC_EPISODES:-10}
replan_episodes=${DFMPC_REPLAN_EPISODES:-3}
mkdir -p "$out"

run() {  # name, then dfmpc eval arguments
  local name=$1
  shift
  "$dfmpc" eval --seed 0 --csv "$out/$name.csv" "$@" 2>/dev/null | tail -2 | tee "$out/$name.txt"
}
for task in pendulum_swingup cartpole_swingup; do
  # Physics steps per control step of the shipped model (scripts/train_default_models.sh).
  case "$task" in
    cartpole_*) rate=(--action-repeat 4) ;;
    *) rate=(--action-repeat 1) ;;
  esac
  case "${1:-fast}" in
    fast)
      run "${task}_random" --task "$task" "${rate[@]}" --policy random --episodes "$episodes"
      run "${task}_oracle" --task "$task" "${rate[@]}" --policy oracle --episodes "$episodes"
      run "${task}_warm_r1" --task "$task" "${rate[@]}" --policy dfmpc --episodes "$episodes"
      run "${task}_warm_r2" --task "$task" "${rate[@]}" --policy dfmpc --calls 2 \
        --episodes "$episodes"
      ;;
    replan)
      run "${task}_replan" --task "$task" "${rate[@]}" --policy dfmpc --mode replan \
        --episodes "$replan_episodes"
      ;;
  esac
done
