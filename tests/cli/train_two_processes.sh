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
# The store's port is picked free just before rank 0 binds it, and another
# process can take it in between: a run that could not bind it is tried
# again on a new port. Any other failure prints every rank's log (a full
# parallel ctest run failed here once, with only rank 0's log kept).
for attempt in 1 2 3; do
  if DFMPC_BUILD_DIR=$build_dir "$source_dir/scripts/train_parallel.sh" 2 "${args[@]}" \
       --out "$work/two.pt" > "$work/two.log" 2>&1; then
    break
  fi
  if [ $attempt -lt 3 ] && grep -qi "address already in use" "$work/two.log"; then continue; fi
  cat "$work/two.log" "$work"/two_rank*.log
  exit 1
done
"$build_dir/examples/dfmpc" train "${args[@]}" --out "$work/one.pt" > "$work/one.log" 2>&1 ||
  { cat "$work/one.log"; exit 1; }
paste -d, "$work/two_loss.csv" "$work/one_loss.csv" | tail -n 1 | awk -F, '
  { d = $3 - $8; if (d < 0) d = -d
    print (d <= 1e-4 * $8 ? "same validation loss" : "different validation losses"), $3, $8 }'
