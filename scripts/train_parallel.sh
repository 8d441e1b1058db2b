#!/usr/bin/env bash
# Data-parallel training on this machine: N `dfmpc train` processes share
# every batch (--batch is the global batch) through LibTorch's c10d (a TCP
# store and Gloo all-reduce), and end with the model one process training on
# the same global batch would write, up to float summation order.
#
#   scripts/train_parallel.sh N [dfmpc train arguments...]
#
# Rank 0's output shows here and it writes the model, the loss files and the
# resume state (--resume resumes all ranks from it); rank r's output goes to
# <stem of --out>_rank<r>.log. If a process fails the others are stopped and
# the script exits 1. $DFMPC_STORE_PORT picks the store's port (default: a
# free one). Several machines: run `dfmpc train --world-size N --rank R
# --store HOST:PORT ...` on each, HOST being rank 0's (see the README).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dfmpc="${DFMPC_BUILD_DIR:-$root/build}/examples/dfmpc"
if [ $# -lt 1 ] || ! [[ "$1" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 N [dfmpc train arguments...] (N >= 1 processes)" >&2
  exit 1
fi
world=$1
shift
out=""
for ((i = 1; i <= $#; ++i)); do
  if [ "${!i}" = --out ]; then j=$((i + 1)); out=${!j}; fi
done
[ -n "$out" ] || { echo "train_parallel: --out is required" >&2; exit 1; }
port=${DFMPC_STORE_PORT:-$(python3 -c \
  'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}

pids=()
stop_all() { kill "${pids[@]}" 2>/dev/null || true; }
trap stop_all EXIT
for ((rank = world - 1; rank >= 0; --rank)); do
  args=(train "$@" --world-size "$world" --rank "$rank" --store "127.0.0.1:$port")
  if [ "$rank" -eq 0 ]; then
    "$dfmpc" "${args[@]}" &
  else
    "$dfmpc" "${args[@]}" > "${out%.*}_rank$rank.log" 2>&1 &
  fi
  pids+=($!)
done
# The first process to fail stops the others at once.
status=0
for _ in "${pids[@]}"; do
  if ! wait -n; then
    status=1
    stop_all
  fi
done
trap - EXIT
if [ $status -ne 0 ]; then
  echo "train_parallel: a process failed (logs: ${out%.*}_rank*.log)" >&2
fi
exit $status
