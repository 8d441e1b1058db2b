#!/usr/bin/env bash
# Measures what outcome conditioning and classifier-free guidance do for a
# task: on one collection of the task's data (mixed policy), trains the
# world model RUNS times (training seeds 0 .. RUNS-1) each three ways:
# unconditioned, conditioned on each window's mean reward
# (--outcome-condition) and on its advantage (--outcome-baseline 8).
# Each conditioned model plans at guidance w = 0, 1 and 2 on the selection
# episodes (`eval --seed 1`), and at the weight those pick on the reported
# episodes (`--seed 0`), beside the unconditioned runs, the data's own
# policy, the MLP-ensemble peer (trained on the same data) and the oracle.
#
# Usage: scripts/probe_outcome_guidance.sh TASK [RUNS]   (RUNS default 2)
# TASK is a built-in task or a task folder. Outputs go to $DFMPC_PROBE_OUT
# (default out/outcome/TASK): data.h5, the models, selection_reward.csv,
# selection_advantage.csv (eval --summary rows of the selection episodes)
# and report.csv (the reported ones). The data and model recipe are
# examples/robots/arm3's (30 episodes, collect --seed 1, width 96);
# DFMPC_STEPS (default 6000) and DFMPC_EVAL_EPISODES (default 10) shorten a
# trial run; DFMPC_PLANNER_FLAGS adds planner flags to every dfmpc
# evaluation (e.g. "--action-gain 1" to measure guidance without the task
# file's gain). On a 2-core machine arm3 takes about 45 minutes (two
# trainings at a time).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
task=${1:-}
runs=${2:-2}
if [ -z "$task" ] || [ "$task" = -h ] || [ "$task" = --help ]; then
  sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  [ -n "$task" ]
  exit
fi
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then
  echo "probe_outcome_guidance: RUNS must be a whole number >= 1, not '$runs'" >&2
  exit 1
fi
dfmpc="${DFMPC_BUILD_DIR:-$root/build}/examples/dfmpc"
out=${DFMPC_PROBE_OUT:-$root/out/outcome/$(basename "$task")}
steps=${DFMPC_STEPS:-6000}
episodes=${DFMPC_EVAL_EPISODES:-10}
read -r -a planner_flags <<< "${DFMPC_PLANNER_FLAGS:-}"
mkdir -p "$out"
rm -f "$out"/selection_reward.csv "$out"/selection_advantage.csv "$out"/report.csv

# shellcheck source=scripts/probe_helpers.sh
source "$root/scripts/probe_helpers.sh"

echo "probe: data and peer" >&2
[ -f "$out/data.h5" ] || quiet "$out/collect.log" "$dfmpc" collect --task "$task" --policy mixed \
  --episodes 30 --seed 1 --threads "$(nproc)" --out "$out/data.h5"
quiet "$out/peer.log" "$dfmpc" train-mlp --data "$out/data.h5" --out "$out/peer.pt" --steps 3000 \
  --seed 0 --ensemble 5

echo "probe: $((3 * runs)) trainings of $steps steps" >&2
declare -A condition=([none]="" [reward]="--outcome-condition"
                      [advantage]="--outcome-condition --outcome-baseline 8")
pids=()
for run in $(seq 0 $((runs - 1))); do
  for kind in none reward advantage; do
    throttle
    # shellcheck disable=SC2086  # the condition's flags split on purpose
    quiet "$out/$kind$run.log" "$dfmpc" train --data "$out/data.h5" --out "$out/$kind$run.pt" \
      --steps "$steps" --batch 32 --window 40 --width 96 --depth 4 --heads 4 --prediction v \
      --seed "$run" --threads 1 ${condition[$kind]} &
    pids+=($!)
  done
done
for pid in "${pids[@]}"; do wait "$pid"; done

evaluate() {  # summary label seed eval-flags...
  local summary=$1 label=$2 seed=$3; shift 3
  [ "$2" = dfmpc ] && set -- "$@" "${planner_flags[@]}"
  quiet "$out/eval_$(echo "$label $seed" | tr -c 'a-z0-9\n' '_').log" "$dfmpc" eval --episodes "$episodes" \
    --seed "$seed" --summary "$summary" --label "$label" "$@"
}

echo "probe: selection episodes" >&2
for run in $(seq 0 $((runs - 1))); do
  for kind in reward advantage; do
    for w in 0 1 2; do
      evaluate "$out/selection_$kind.csv" "$kind run $run w=$w" 1 --policy dfmpc \
        --model "$out/$kind$run.pt" --outcome-guidance "$w"
    done
  done
done

echo "probe: reported episodes" >&2
for run in $(seq 0 $((runs - 1))); do
  evaluate "$out/report.csv" "none run $run" 0 --policy dfmpc --model "$out/none$run.pt"
done
for kind in reward advantage; do
  for run in $(seq 0 $((runs - 1))); do
    w=$(picked_weight "$out/selection_$kind.csv" "$kind run $run w=")
    evaluate "$out/report.csv" "$kind run $run w=$w" 0 --policy dfmpc \
      --model "$out/$kind$run.pt" --outcome-guidance "$w"
  done
done
evaluate "$out/report.csv" "data (mixed)" 0 --task "$task" --policy mixed
evaluate "$out/report.csv" "mlp-mppi" 0 --policy mlp-mppi --mlp-model "$out/peer.pt"
evaluate "$out/report.csv" "oracle" 0 --task "$task" --policy oracle --threads "$(nproc)"
"$dfmpc" report --summary "$out/report.csv"
