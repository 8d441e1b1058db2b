#!/usr/bin/env bash
# Judges a task's training recipe over several runs instead of by one lucky
# file: trains the world model of scripts/train_default_models.sh with
# training seeds 0 .. RUNS-1 on one collection of data, evaluates each run's
# model (and the cart-pole's distilled student) with the task's planner on
# the selection episodes (`eval --seed 1`) and on the reported ones (`--seed
# 0`), and prints per run and over runs (mean ± std, spread) the return and
# mean |da|, and the run the selection episodes pick.
#
# Usage: scripts/judge_recipe.sh TASK [RUNS]   (RUNS default 3, at least 2)
# Outputs go to $DFMPC_RECIPE_OUT (default out/recipe/TASK): data/, runS/
# (model files and training log), summary.csv (every evaluation, as `dfmpc
# eval --summary` writes it) and table.md. A cart-pole run takes about 30
# minutes of one core (training, distillation, four evaluations); runs after
# the first train $(nproc) at a time. DFMPC_EPISODES and DFMPC_STEPS shrink a
# trial run as in train_default_models.sh, DFMPC_EVAL_EPISODES (default 10)
# its evaluations.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
task=${1:-}
runs=${2:-3}
if [ -z "$task" ] || [ "$task" = -h ] || [ "$task" = --help ]; then
  sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  [ -n "$task" ]
  exit
fi
[[ "$runs" =~ ^[0-9]+$ ]] && [ "$runs" -ge 2 ] ||
  { echo "judge_recipe: RUNS must be a whole number >= 2, not '$runs'" >&2; exit 1; }
out=${DFMPC_RECIPE_OUT:-$root/out/recipe/$task}
dfmpc="${DFMPC_BUILD_DIR:-$root/build}/examples/dfmpc"
summary=$out/summary.csv
selection_seed=1 report_seed=0
eval_episodes=${DFMPC_EVAL_EPISODES:-10}

bash "$root/scripts/build.sh"
mkdir -p "$out/data"
rm -f "$summary"

train_run() {  # seed
  local dir=$out/run$1
  mkdir -p "$dir"
  DFMPC_MODELS_DIR=$dir DFMPC_DATA_DIR=$out/data DFMPC_TRAIN_SEED=$1 DFMPC_WORLD_MODEL_ONLY=1 \
    DFMPC_BUILT=1 bash "$root/scripts/train_default_models.sh" "$task" > "$dir/train.log" 2>&1 ||
    { echo "judge_recipe: run $1 failed, see $dir/train.log" >&2; return 1; }
  local model seed
  for model in "$dir"/*.pt; do
    for seed in $selection_seed $report_seed; do
      "$dfmpc" eval --task "$task" --policy dfmpc --model "$model" --seed "$seed" \
        --episodes "$eval_episodes" --summary "$summary" --label "$(basename "$model" .pt) run $1" \
        >> "$dir/eval.log" 2>&1 ||
        { echo "judge_recipe: evaluating $model failed, see $dir/eval.log" >&2; return 1; }
    done
  done
  echo "judge_recipe: run $1 done ($(( SECONDS / 60 )) min)"
}

# The first run collects the data the others share.
echo "judge_recipe: $task, $runs runs, outputs in $out"
train_run 0
running=0
for ((seed = 1; seed < runs; ++seed)); do
  train_run "$seed" &
  running=$((running + 1))
  if [ "$running" -ge "$(nproc)" ]; then wait -n; running=$((running - 1)); fi
done
wait

# One table per model kind: each run's returns, then mean ± std over runs.
awk -F, -v sel=$selection_seed -v rep=$report_seed '
  NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
  {
    split($col["label"], part, " run "); kind = part[1]; run = part[2]
    key = kind SUBSEP run; kinds[kind] = 1; runs[kind, run] = 1
    if ($col["seed"] == sel) select[key] = $col["return_mean"]
    if ($col["seed"] == rep) { report[key] = $col["return_mean"]; da[key] = $col["mean_abs_da"] }
  }
  END {
    for (kind in kinds) {
      printf "\n### %s\n\n| run | selection return (seed %d) | reported return (seed %d) | mean abs da |\n", kind, sel, rep
      print "| --- | --- | --- | --- |"
      n = 0; sum = 0; sq = 0; lo = 1e30; hi = -1e30; best = ""
      for (r = 0; (kind, r) in runs; ++r) {
        key = kind SUBSEP r
        printf "| %d | %.1f | %.1f | %.3f |\n", r, select[key], report[key], da[key]
        x = report[key]; n++; sum += x; sq += x * x
        if (x < lo) lo = x; if (x > hi) hi = x
        if (best == "" || select[key] > select[kind SUBSEP best]) best = r
      }
      mean = sum / n; sd = sqrt((sq - n * mean * mean) / (n - 1) > 0 ? (sq - n * mean * mean) / (n - 1) : 0)
      printf "\nOver %d runs: %.1f ± %.1f (std %.1f%% of the mean, spread %.1f%%); the selection episodes pick run %d (reported %.1f).\n", n, mean, sd, 100 * sd / mean, 100 * (hi - lo) / mean, best, report[kind SUBSEP best]
    }
  }' "$summary" | tee "$out/table.md"
