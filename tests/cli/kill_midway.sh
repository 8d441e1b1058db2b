#!/usr/bin/env bash
# kill -9 at moments spread over a run of `collect`, `train` (with resume
# states) and `train-mlp`: each output file is then absent or whole (the
# tool that reads it accepts it), never torn, and `train --resume` ends at
# the uninterrupted run's final validation loss. Prints "all whole" on
# success. Usage: BUILD_DIR WORK_DIR DATASET SEED.
set -euo pipefail
dfmpc=$1/examples/dfmpc
work=$2/kill_midway
data=$3
RANDOM=$4  # the kill moments are drawn from this seed; each is printed
rm -rf "$work"
mkdir -p "$work"

# Starts a command, kills it with SIGKILL after $1 seconds (if still
# running) and reaps it.
kill_after() {
  local delay=$1
  shift
  "$@" > "$work/killed.log" 2>&1 &
  local pid=$!
  sleep "$delay"
  kill -9 "$pid" 2> /dev/null || true
  wait "$pid" 2> /dev/null || true
}
# A delay in [0.1, $1) seconds.
random_delay() { awk -v r="$RANDOM" -v span="$1" 'BEGIN { printf "%.2f", 0.1 + (span - 0.1) * r / 32768 }'; }
# Seconds a command takes.
timed() {
  local start=$EPOCHREALTIME
  "$@" > "$work/timed.log" 2>&1 || { cat "$work/timed.log"; exit 1; }
  awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'
}
fail() { echo "kill_midway: $*" >&2; exit 1; }
# A model or dataset is whole when `dfmpc` reads it.
check_model() { [ ! -e "$1" ] || "$dfmpc" info "$1" > /dev/null 2>&1 || fail "$1 is torn"; }
check_mlp() {  # eval-model reads it beside the reference world model
  [ ! -e "$1" ] || "$dfmpc" eval-model --model "$work/reference.pt" --mlp "$1" --data "$data" \
    --episodes 1 --context 4 --horizon 8 > /dev/null 2>&1 || fail "$1 is torn"
}
check_dataset() {
  [ ! -e "$1" ] || "$dfmpc" train --data "$1" --steps 1 --window 8 --width 16 --depth 1 \
    --heads 2 --batch 2 --out "$work/probe.pt" > /dev/null 2>&1 || fail "$1 is torn"
}

train_args=(--data "$data" --steps 60 --window 16 --width 32 --depth 1 --heads 2 --batch 8
            --validate-every 5 --checkpoint-every 5 --seed 3)
span=$(timed "$dfmpc" train "${train_args[@]}" --out "$work/reference.pt")
# The last row's step, losses and learning rate (not its tokens/s).
last_losses() { tail -n 1 "$1" | cut -d, -f1-4; }
reference=$(last_losses "$work/reference_loss.csv")
for trial in 1 2 3; do
  delay=$(random_delay "$span")
  echo "train: killed after $delay of $span s"
  kill_after "$delay" "$dfmpc" train "${train_args[@]}" --out "$work/cut.pt"
  check_model "$work/cut.pt"
  resume=()
  [ -e "$work/cut.state" ] && resume=(--resume)
  "$dfmpc" train "${train_args[@]}" --out "$work/cut.pt" "${resume[@]}" > "$work/resume.log" 2>&1 ||
    { cat "$work/resume.log"; fail "train ${resume[*]} failed after the kill"; }
  [ "$(last_losses "$work/cut_loss.csv")" = "$reference" ] ||
    fail "resumed run ended at '$(last_losses "$work/cut_loss.csv")', not '$reference'"
  rm -f "$work"/cut*
done

collect_args=(collect --task pendulum_swingup --policy random --episodes 100)
span=$(timed "$dfmpc" "${collect_args[@]}" --out "$work/whole.h5")
for trial in 1 2 3; do
  delay=$(random_delay "$span")
  echo "collect: killed after $delay of $span s"
  "$dfmpc" "${collect_args[@]}" --seed "$trial" --out "$work/cut.h5" > /dev/null 2>&1
  kill_after "$delay" "$dfmpc" "${collect_args[@]}" --out "$work/cut.h5"  # over the old file
  check_dataset "$work/cut.h5"
  rm -f "$work"/cut*
done

mlp_args=(train-mlp --data "$data" --steps 400 --seed 3)
span=$(timed "$dfmpc" "${mlp_args[@]}" --out "$work/mlp.pt")
for trial in 1 2 3; do
  delay=$(random_delay "$span")
  echo "train-mlp: killed after $delay of $span s"
  kill_after "$delay" "$dfmpc" "${mlp_args[@]}" --out "$work/cut_mlp.pt"
  check_mlp "$work/cut_mlp.pt"
  rm -f "$work"/cut*
done
echo "all whole"
