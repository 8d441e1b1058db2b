#!/usr/bin/env bash
# Trains the same tiny model twice on DATASET, once as two data-parallel
# processes (scripts/train_parallel.sh) and once alone, with one global
# batch, and prints "same validation loss" when the last validation losses
# (6 decimals) agree to 1e-4 of their value. Usage: SOURCE_DIR BUILD_DIR
# WORK_DIR DATASET.
set -euo pipefail
source_dir=$1
build_dir=$2
work=$3
data=$4
args=(--data "$data" --steps 20 --window 16 --width 32 --depth 1 --heads 2 --batch 8
      --validate-every 10)
DFMPC_BUILD_DIR=$build_dir "$source_dir/scripts/train_parallel.sh" 2 "${args[@]}" \
  --out "$work/two.pt" > "$work/two.log" 2>&1 || { cat "$work/two.log"; exit 1; }
"$build_dir/examples/dfmpc" train "${args[@]}" --out "$work/one.pt" > "$work/one.log" 2>&1 ||
  { cat "$work/one.log"; exit 1; }
paste -d, "$work/two_loss.csv" "$work/one_loss.csv" | tail -n 1 | awk -F, '
  { d = $3 - $8; if (d < 0) d = -d
    print (d <= 1e-4 * $8 ? "same validation loss" : "different validation losses"), $3, $8 }'
