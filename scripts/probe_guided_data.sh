#!/usr/bin/env bash
# Data from the guided planner (issue 57, item 5): after
# scripts/probe_outcome_guidance.sh, each reward-conditioned run's guided
# planner (at the weight its selection episodes picked) collects EPISODES
# episodes; a reward-conditioned model is trained again, with the run's
# seed and recipe, on the probe's data plus that collection, and planned at
# guidance w = 0 and 2 on the selection episodes (`eval --seed 1`) and at the
# better of the two on the reported ones (`--seed 0`).
#
# Usage: scripts/probe_guided_data.sh TASK [RUNS] [EPISODES]
# Reads probe_outcome_guidance.sh's outputs for TASK (data.h5, rewardI.pt,
# selection_reward.csv in $DFMPC_PROBE_OUT, default out/outcome/TASK) and
# writes guidedI.h5 (kept for a rerun), iterI.pt, selection_iter.csv and
# report_iter.csv beside them; RUNS default 2, EPISODES default 30.
# DFMPC_PLANNER_FLAGS adds planner flags to every dfmpc collection and
# evaluation (e.g. "--action-gain 1"); DFMPC_STEPS as in the probe;
# DFMPC_OUTCOME_BASELINE=K trains on the advantage instead (train
# --outcome-baseline K; outputs named iter_advantageI.pt and
# *_iter_advantage.csv), on the same collections.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
task=${1:-}
runs=${2:-2}
episodes=${3:-30}
if [ -z "$task" ] || [ "$task" = -h ] || [ "$task" = --help ]; then
  sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  [ -n "$task" ]
  exit
fi
out=${DFMPC_PROBE_OUT:-$root/out/outcome/$(basename "$task")}
for file in "$out/data.h5" "$out/selection_reward.csv"; do
  [ -f "$file" ] || { echo "probe_guided_data: no $file (run probe_outcome_guidance.sh first)" >&2; exit 1; }
done
for number in "$runs" "$episodes"; do
  [[ "$number" =~ ^[1-9][0-9]*$ ]] || { echo "probe_guided_data: not a whole number >= 1: '$number'" >&2; exit 1; }
done
dfmpc="${DFMPC_BUILD_DIR:-$root/build}/examples/dfmpc"
steps=${DFMPC_STEPS:-6000}
read -r -a planner_flags <<< "${DFMPC_PLANNER_FLAGS:-}"
baseline=${DFMPC_OUTCOME_BASELINE:-0}
if ! [[ "$baseline" =~ ^[0-9]+$ ]]; then
  echo "probe_guided_data: DFMPC_OUTCOME_BASELINE must be a whole number, not '$baseline'" >&2
  exit 1
fi
kind=iter outcome_flags=(--outcome-condition) name="guided data"
if [ "$baseline" -gt 0 ]; then
  kind=iter_advantage outcome_flags+=(--outcome-baseline "$baseline") name="guided data advantage"
fi
rm -f "$out/selection_$kind.csv" "$out/report_$kind.csv"

# shellcheck source=scripts/probe_helpers.sh
source "$root/scripts/probe_helpers.sh"
pids=()
wait_all() { for pid in "${pids[@]}"; do wait "$pid"; done; pids=(); }

echo "probe: $runs guided collections of $episodes episodes" >&2
for run in $(seq 0 $((runs - 1))); do
  [ -f "$out/reward$run.pt" ] || { echo "probe_guided_data: no $out/reward$run.pt" >&2; exit 1; }
  w=$(picked_weight "$out/selection_reward.csv" "reward run $run w=")
  [ -f "$out/guided$run.h5" ] && continue
  throttle
  # Episode seeds apart from the selection (1) and reported (0) episodes.
  quiet "$out/collect_guided$run.log" "$dfmpc" collect --task "$task" --policy dfmpc --model "$out/reward$run.pt" \
    --outcome-guidance "$w" --episodes "$episodes" --seed $((10 + run)) \
    --out "$out/guided$run.h5" "${planner_flags[@]}" &
  pids+=($!)
done
wait_all

echo "probe: $runs trainings of $steps steps" >&2
for run in $(seq 0 $((runs - 1))); do
  throttle
  quiet "$out/$kind$run.log" "$dfmpc" train --data "$out/data.h5" "$out/guided$run.h5" \
    --out "$out/$kind$run.pt" --steps "$steps" --batch 32 --window 40 --width 96 --depth 4 \
    --heads 4 --prediction v --seed "$run" --threads 1 "${outcome_flags[@]}" &
  pids+=($!)
done
wait_all

evaluate() {  # summary label seed eval-flags...
  local summary=$1 label=$2 seed=$3; shift 3
  quiet "$out/eval_$(echo "$label $seed" | tr -c 'a-z0-9\n' '_').log" "$dfmpc" eval --episodes 10 \
    --seed "$seed" --summary "$summary" --label "$label" --policy dfmpc "$@" "${planner_flags[@]}"
}
echo "probe: selection and reported episodes" >&2
for run in $(seq 0 $((runs - 1))); do
  for w in 0 2; do
    evaluate "$out/selection_$kind.csv" "$name run $run w=$w" 1 --model "$out/$kind$run.pt" \
      --outcome-guidance "$w"
  done
  w=$(picked_weight "$out/selection_$kind.csv" "$name run $run w=")
  evaluate "$out/report_$kind.csv" "$name run $run w=$w" 0 --model "$out/$kind$run.pt" \
    --outcome-guidance "$w"
done
"$dfmpc" report --summary "$out/report_$kind.csv"
