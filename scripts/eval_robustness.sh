#!/usr/bin/env bash
# The robustness table: for each task (default pendulum_swingup and
# cartpole_swingup) the return against observation noise, mass scale,
# damping scale and action delay, one parameter at a time, of
#   oracle          predictive sampling on the true perturbed simulator (it
#                   reads the true state, so noise cannot touch it: an
#                   upper bound),
#   mlp-mppi        the learned-dynamics peer, its ensemble trained on the
#                   same randomized data as the robust model,
#   dfmpc nominal   the world model trained on the unperturbed simulator,
#   dfmpc robust    the world model trained on randomized, noisy data,
#   dfmpc robust ctx 2
#                   the robust model with the shortest history the planner
#                   allows (the newest real token and one before it), in the
#                   unperturbed and mismatched cells: what the history buys.
# Every run appends a row to $out/summary_TASK.csv (tasks can run at the same
# time in separate processes); then `dfmpc report --robustness` reads them
# all and writes $out/table.md, $out/robustness.csv and $out/robustness.png.
#
# DFMPC_EPISODES: episodes per cell (default 10). DFMPC_SEED: their seed
# (default 0). DFMPC_EVAL_OUT: output directory (default out/robustness).
# DFMPC_POLICIES: rows to run (default "oracle mlp-mppi nominal robust
# short-context"). DFMPC_CELLS: perturbations to run, "nominal" for none
# (default: the whole grid below). Model files: DFMPC_NOMINAL_MODEL_<task>,
# DFMPC_ROBUST_MODEL_<task>, DFMPC_MLP_MODEL_<task> (defaults below).
# Only the report: DFMPC_POLICIES=none.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dfmpc="${DFMPC_BUILD_DIR:-$root/build}/examples/dfmpc"
models="$root/examples/models"
out=${DFMPC_EVAL_OUT:-$root/out/robustness}
episodes=${DFMPC_EPISODES:-10}
seed=${DFMPC_SEED:-0}
policies=" ${DFMPC_POLICIES:-oracle mlp-mppi nominal robust short-context} "
noise_cells="obs_noise=0.01 obs_noise=0.03 obs_noise=0.1"
mismatch_cells="mass=0.5 mass=0.7 mass=1.3 mass=1.5 mass=2 damping=0.5 damping=0.7 damping=1.3"
mismatch_cells+=" damping=1.5 damping=2"
delay_cells="delay=1 delay=2"
read -r -a cells <<< "${DFMPC_CELLS:-nominal $noise_cells $mismatch_cells $delay_cells}"
tasks=("$@")
[ ${#tasks[@]} -gt 0 ] || tasks=(pendulum_swingup cartpole_swingup)
mkdir -p "$out"

wanted() { [[ "$policies" == *" $1 "* ]]; }
is_mismatch() { [ "$1" = nominal ] || [[ " $mismatch_cells " == *" $1 "* ]]; }

# The model file for task $1 of kind $2 (NOMINAL, ROBUST or MLP): the
# variable DFMPC_<kind>_MODEL_<task> or the shipped file.
model_file() {
  local variable="DFMPC_$2_MODEL_$1"
  case "$2" in
    NOMINAL) echo "${!variable:-$models/${1}_nominal.pt}" ;;
    ROBUST) echo "${!variable:-$models/$1.pt}" ;;
    MLP) echo "${!variable:-$models/${1}_mlp_ensemble.pt}" ;;
  esac
}

# The mlp-mppi settings of scripts/eval_planner.sh (tuned per task there).
mppi_args() {
  case "$1" in
    cartpole_*) echo "--mppi-noise 0.3" ;;
  esac
}

run() {  # task, cell, label, then dfmpc eval arguments
  local task=$1 cell=$2 label=$3
  shift 3
  local perturb=()
  [ "$cell" = nominal ] || perturb=(--perturb "$cell")
  echo "eval_robustness: $task, $label, $cell"
  "$dfmpc" eval --task "$task" --seed "$seed" --episodes "$episodes" "${perturb[@]}" \
    --summary "$out/summary_$task.csv" --label "$label" \
    --csv "$out/${task}_${label// /_}_${cell//=/_}.csv" "$@" | grep "mean return"
}

for task in "${tasks[@]}"; do
  nominal=$(model_file "$task" NOMINAL)
  robust=$(model_file "$task" ROBUST)
  mlp=$(model_file "$task" MLP)
  for file in "$nominal" "$robust" "$mlp"; do
    if [ ! -f "$file" ]; then
      echo "eval_robustness: no model $file for $task (see the variables in $0)" >&2
      exit 1
    fi
  done
  rate=$("$dfmpc" info "$robust" | sed -n 's/^action repeat: *\([0-9][0-9]*\) .*/\1/p')
  read -r -a peer_args <<< "$(mppi_args "$task")"
  for cell in "${cells[@]}"; do
    if wanted oracle; then
      run "$task" "$cell" oracle --policy oracle --action-repeat "$rate"
    fi
    if wanted mlp-mppi; then
      run "$task" "$cell" mlp-mppi --policy mlp-mppi --mlp-model "$mlp" "${peer_args[@]}"
    fi
    if wanted nominal; then run "$task" "$cell" "dfmpc nominal" --policy dfmpc --model "$nominal"; fi
    if wanted robust; then run "$task" "$cell" "dfmpc robust" --policy dfmpc --model "$robust"; fi
    if wanted short-context && is_mismatch "$cell"; then
      run "$task" "$cell" "dfmpc robust ctx 2" --policy dfmpc --model "$robust" \
        --context-length 2
    fi
  done
done

summaries=("$out"/summary_*.csv)
if [ ! -f "${summaries[0]}" ]; then
  echo "eval_robustness: nothing evaluated, so no report" >&2
  exit 1
fi
# One summary of every task: the first file's header, then all rows.
{
  head -n 1 "${summaries[0]}"
  for file in "${summaries[@]}"; do tail -n +2 "$file"; done
} > "$out/summary.csv"
"$dfmpc" report --robustness --summary "$out/summary.csv" --markdown "$out/table.md" \
  --csv "$out/robustness.csv" --png "$out/robustness.png"
