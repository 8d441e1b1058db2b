#!/usr/bin/env bash
# Data from the planner itself (issue 31, item 3; docs/experiments.md, Data
# from the planner): each iteration collects episodes with the current
# planner, adds them to the data, and teaches the world model again on all of
# it; every iteration's planner is evaluated on the selection episodes
# (`eval --seed 1`) and the reported ones (`--seed 0`).
#
# The teaching step is the cart-pole recipe's distillation
# (scripts/train_default_models.sh): TEACHER (a K = 16 world model) is
# distilled to K = 4 on DATA plus every planner collection so far, so one
# iteration costs minutes, not the hour a full retraining takes on 2 cores.
#
# Usage: scripts/iterate_planner_data.sh TASK TEACHER.pt DATA.h5 [DATA.h5 ...]
#   DFMPC_ITERATIONS       planner collections (default 2)
#   DFMPC_PLANNER_EPISODES episodes per collection (default 30)
#   DFMPC_EVAL_EPISODES    episodes per evaluation (default 10)
#   DFMPC_START_STUDENT    iteration 0's student, when distilled already
#                          (default: distilled here on DATA alone)
#   DFMPC_ITERATE_DIR      outputs (default: out/iterate/<teacher's stem>)
# Writes student_I.pt, planner_I.h5 and the table iterations.md (iteration,
# data episodes, returns, mean |da|) under the output directory.
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n 2,22p "$0" | sed 's/^# \{0,1\}//'
  exit 1
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
task=$1 teacher=$2
shift 2
data=("$@")
for file in "$teacher" "${data[@]}"; do
  [ -f "$file" ] || { echo "iterate_planner_data: no such file: $file" >&2; exit 1; }
done
dfmpc=${DFMPC_TOOL:-$root/build/examples/dfmpc}
[ -x "$dfmpc" ] || bash "$root/scripts/build.sh"
iterations=${DFMPC_ITERATIONS:-2}
collect_episodes=${DFMPC_PLANNER_EPISODES:-30}
eval_episodes=${DFMPC_EVAL_EPISODES:-10}
out=${DFMPC_ITERATE_DIR:-$root/out/iterate/$(basename "$teacher" .pt)}
mkdir -p "$out"

distill() {  # student file, data...
  local student=$1
  shift
  "$dfmpc" distill --model "$teacher" --teacher-levels 8 --data "$@" --out "$student" \
    --steps 1000 --batch 16 --validate-every 100 --threads 1 > "${student%.pt}_distill.log" 2>&1
}

# Prints "mean_return mean_abs_da" of the model's planner on episode seed $2.
evaluate() {
  "$dfmpc" eval --task "$task" --policy dfmpc --model "$1" --seed "$2" \
    --episodes "$eval_episodes" 2> /dev/null |
    awk '/mean return/ { sub(",", "", $5); r = $5 } /mean \|da\|/ { sub(",", "", $5); d = $5 }
         END { print r, d }'
}

table=$out/iterations.md
{
  echo "| iteration | planner episodes in the data | return, seed 1 (selection) | return, seed 0 (reported) | mean abs da, seed 0 |"
  echo "|---|---|---|---|---|"
} > "$table"
student=$out/student_0.pt
if [ -n "${DFMPC_START_STUDENT:-}" ]; then
  cp "$DFMPC_START_STUDENT" "$student"
else
  echo "== iteration 0: distilling $teacher on ${data[*]}"
  distill "$student" "${data[@]}"
fi
planner_data=()
for ((i = 0; i <= iterations; i++)); do
  if [ "$i" -gt 0 ]; then
    collection=$out/planner_$i.h5
    # Collection seeds 10, 11, ... share no episode with the mixed data
    # (seeds 1, 2) or the evaluations (0, 1).
    echo "== iteration $i: collecting $collect_episodes episodes with the planner of iteration $((i - 1))"
    "$dfmpc" collect --task "$task" --policy dfmpc --model "$student" \
      --episodes "$collect_episodes" --seed $((9 + i)) --out "$collection" 2>/dev/null
    planner_data+=("$collection")
    student=$out/student_$i.pt
    echo "== iteration $i: distilling $teacher on the data and ${#planner_data[@]} planner collection(s)"
    distill "$student" "${data[@]}" "${planner_data[@]}"
  fi
  read -r selection _ < <(evaluate "$student" 1)
  read -r reported change < <(evaluate "$student" 0)
  echo "| $i | $((i * collect_episodes)) | $selection | $reported | $change |" | tee -a "$table"
done
echo "wrote $table"
