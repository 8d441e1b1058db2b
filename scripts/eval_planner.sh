#!/usr/bin/env bash
# The closed-loop benchmark table: for each task (the six built-in tasks
# without contacts, or those given as arguments) with a shipped model, random,
# oracle, mlp-mppi, dfmpc replan and dfmpc warm r = 1 at a fixed seed, every
# policy at the control rate of the task's shipped model. Every run appends a
# row to out/eval/summary.csv (its per-episode CSV and printed summary go
# beside it); then `dfmpc report` prints the table and writes
# out/eval/table.md and out/eval/returns.png.
# A rerun appends again and the report shows the latest row of each task and
# label; delete out/eval/summary.csv to start afresh.
#
# DFMPC_EPISODES: episodes of every policy but replan (default 10).
# DFMPC_REPLAN_EPISODES: replan's (default 3: about 2 min per 1000-step episode).
# DFMPC_SEED: the episodes' seed (default 0: the same initial states for all).
# DFMPC_EVAL_OUT: the output directory (default out/eval).
# DFMPC_POLICIES: which rows to run (default "random oracle mlp-mppi replan
# warm"), e.g. DFMPC_POLICIES=replan to add the slow rows separately; "block"
# adds dfmpc warm r = 1 with each block cache setting of DFMPC_BLOCK_CACHE,
# "bf16" dfmpc warm r = 1 with bfloat16 products (--cpu-bf16).
# DFMPC_BLOCK_CACHE: block cache settings F/R for the "block" rows (default
# "16/4"): F front tokens, the whole plan every R control steps.
# DFMPC_MPPI_ARGS_<task>: mlp-mppi options for a task (word-split), replacing
# the tuned ones below, e.g. DFMPC_MPPI_ARGS_reacher="--mppi-samples 512".
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dfmpc="${DFMPC_BUILD_DIR:-$root/build}/examples/dfmpc"
models="$root/examples/models"
out=${DFMPC_EVAL_OUT:-$root/out/eval}
summary="$out/summary.csv"
episodes=${DFMPC_EPISODES:-10}
replan_episodes=${DFMPC_REPLAN_EPISODES:-3}
seed=${DFMPC_SEED:-0}
policies=" ${DFMPC_POLICIES:-random oracle mlp-mppi replan warm} "
tasks=("$@")
if [ ${#tasks[@]} -eq 0 ]; then
  tasks=(pendulum_swingup cartpole_swingup cartpole_balance reacher pointmass_maze pendulum_swingup_novel)
fi
mkdir -p "$out"

# Physics steps per control step the model file $1 was trained on.
action_repeat() {
  "$dfmpc" info "$1" | sed -n 's/^action repeat: *\([0-9][0-9]*\) .*/\1/p'
}

# The peer's settings tuned per task (3 episodes each, docs/experiments.md lists what
# was tried); the rest are eval's defaults (horizon 30, 32 samples, noise
# 0.5, 4 knots, keep the best).
tuned_mppi_args() {
  case "$1" in
    cartpole_*) echo "--mppi-noise 0.3" ;;
    reacher) echo "--mppi-horizon 15" ;;
  esac
}

wanted() { [[ "$policies" == *" $1 "* ]]; }

run() {  # task, file name, label, then dfmpc eval arguments
  local task=$1 name=$2 label=$3
  shift 3
  "$dfmpc" eval --task "$task" --seed "$seed" --action-repeat "$rate" \
    --summary "$summary" --label "$label" --csv "$out/${task}_$name.csv" "$@" |
    grep -E "mean return|mean \|da\||per control step" | tee "$out/${task}_$name.txt"
}

for task in "${tasks[@]}"; do
  model="$models/$task.pt"
  if [ ! -f "$model" ]; then
    echo "eval_planner: skipping $task: no shipped model $model"
    continue
  fi
  rate=$(action_repeat "$model")
  if [ -z "$rate" ]; then
    echo "eval_planner: \`dfmpc info $model\` names no action repeat" >&2
    exit 1
  fi
  echo "eval_planner: $task at $rate physics step(s) per control step"
  if wanted random; then run "$task" random random --policy random --episodes "$episodes"; fi
  if wanted oracle; then run "$task" oracle oracle --policy oracle --episodes "$episodes"; fi
  mlp_model="$models/${task}_mlp_ensemble.pt"
  if wanted mlp-mppi && [ ! -f "$mlp_model" ]; then
    echo "eval_planner: skipping mlp-mppi on $task: no MLP ensemble $mlp_model"
  elif wanted mlp-mppi; then
    mppi_args_var="DFMPC_MPPI_ARGS_$task"
    read -r -a mppi_args <<< "${!mppi_args_var:-$(tuned_mppi_args "$task")}"
    run "$task" mlp_mppi mlp-mppi --policy mlp-mppi --mlp-model "$mlp_model" \
      --episodes "$episodes" "${mppi_args[@]}"
  fi
  if wanted replan; then
    run "$task" replan "dfmpc replan" --policy dfmpc --model "$model" --mode replan \
      --episodes "$replan_episodes"
  fi
  if wanted warm; then
    run "$task" warm_r1 "dfmpc warm r=1" --policy dfmpc --model "$model" --episodes "$episodes"
  fi
  if wanted bf16; then
    run "$task" warm_r1_bf16 "dfmpc warm r=1 bf16" --policy dfmpc --model "$model" \
      --episodes "$episodes" --cpu-bf16
  fi
  if wanted block; then
    for setting in ${DFMPC_BLOCK_CACHE:-16/4}; do
      if [[ ! $setting =~ ^[0-9]+/[0-9]+$ ]]; then
        echo "eval_planner: DFMPC_BLOCK_CACHE takes F/R settings, got '$setting'" >&2
        exit 1
      fi
      run "$task" "block_${setting/\//_}" "dfmpc block $setting" --policy dfmpc --model "$model" \
        --episodes "$episodes" --front-tokens "${setting%/*}" --refresh-every "${setting#*/}"
    done
  fi
done

if [ ! -f "$summary" ]; then
  echo "eval_planner: nothing evaluated, so no report" >&2
  exit 1
fi
"$dfmpc" report --summary "$summary" --markdown "$out/table.md" --png "$out/returns.png"
