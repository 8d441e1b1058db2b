#!/usr/bin/env bash
# Measures CFG-aware distillation on the models of an outcome probe
# (scripts/probe_outcome_guidance.sh, which must have run first): each
# reward-conditioned run (K = 16) is distilled into a K = 8 student that
# takes the guidance weight as an input (--max-outcome-guidance 2), and
# the teacher at w = 0 and 2 and the student at w = 0, 1 and 2 plan the
# selection episodes (`eval --seed 1`) and the reported ones (`--seed 0`),
# one evaluation at a time so that latencies compare.
#
# Usage: scripts/probe_cfg_distillation.sh TASK [RUNS]   (RUNS default 2)
# Reads and writes $DFMPC_PROBE_OUT (default out/outcome/TASK), as the
# probe: rewardR_cfg.pt (the students), cfg_selection.csv and
# cfg_report.csv (eval --summary rows). On a 2-core machine arm3 takes
# about 10 minutes per run.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
task=${1:-}
runs=${2:-2}
if [ -z "$task" ] || [ "$task" = -h ] || [ "$task" = --help ]; then
  sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  [ -n "$task" ]
  exit
fi
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then
  echo "probe_cfg_distillation: RUNS must be a whole number >= 1, not '$runs'" >&2
  exit 1
fi
dfmpc="${DFMPC_BUILD_DIR:-$root/build}/examples/dfmpc"
out=${DFMPC_PROBE_OUT:-$root/out/outcome/$(basename "$task")}
episodes=${DFMPC_EVAL_EPISODES:-10}
for run in $(seq 0 $((runs - 1))); do
  if [ ! -f "$out/reward$run.pt" ]; then
    echo "probe_cfg_distillation: no $out/reward$run.pt; run scripts/probe_outcome_guidance.sh" \
      "$task $runs first" >&2
    exit 1
  fi
done
rm -f "$out"/cfg_selection.csv "$out"/cfg_report.csv
quiet() { local log=$1; shift; "$@" > "$log" 2>&1 || { echo "failed, see $log" >&2; exit 1; }; }

for run in $(seq 0 $((runs - 1))); do
  echo "probe: run $run: distilling" >&2
  quiet "$out/reward${run}_cfg.log" "$dfmpc" distill --model "$out/reward$run.pt" \
    --data "$out/data.h5" --out "$out/reward${run}_cfg.pt" --max-outcome-guidance 2 \
    --threads "$(nproc)"
  echo "probe: run $run: evaluating" >&2
  for seed in 1 0; do
    summary=$out/cfg_report.csv
    [ "$seed" = 1 ] && summary=$out/cfg_selection.csv
    for model in teacher student; do
      file=$out/reward$run.pt weights="0 2"
      [ "$model" = student ] && file=$out/reward${run}_cfg.pt weights="0 1 2"
      for w in $weights; do
        label="$model run $run w=$w"
        quiet "$out/eval_cfg_$(echo "$label $seed" | tr -c 'a-z0-9\n' '_').log" "$dfmpc" eval \
          --policy dfmpc --model "$file" --episodes "$episodes" --seed "$seed" \
          --summary "$summary" --label "$label" --outcome-guidance "$w"
      done
    done
  done
done
"$dfmpc" report --summary "$out/cfg_report.csv"
