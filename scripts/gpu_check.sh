#!/usr/bin/env bash
# The GPU check: builds dfmpc against a CUDA LibTorch (scripts/build_cuda.sh,
# its variables apply), runs the CUDA tests, then prints the device table
# (examples/device_check: warm-step latency eager and with CUDA graphs at
# N = 8 .. 1024, training tokens/s, rollout frames/s) beside the same
# machine's CPU. About 5 minutes on one H100/H200 with 16 cores.
# Writes $DFMPC_GPU_CHECK_OUT (default out/gpu_check/): gpu.txt, tests.log,
# device_check.txt and the table's CSV files. Extra arguments go to
# dfmpc_device_check (e.g. --candidates 8 64).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${DFMPC_CUDA_BUILD_DIR:-$root/build-cuda}
out=${DFMPC_GPU_CHECK_OUT:-$root/out/gpu_check}
mkdir -p "$out"
start=$SECONDS

DFMPC_BUILD_TARGETS=${DFMPC_BUILD_TARGETS:-cuda_test dfmpc_device_check} \
  bash "$root/scripts/build_cuda.sh"
echo "gpu_check: built in $((SECONDS - start)) s"
export LD_LIBRARY_PATH="$(cat "$build_dir/library_path.txt")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader |
  tee "$out/gpu.txt" || echo "gpu_check: nvidia-smi failed" | tee "$out/gpu.txt"

# Every case's line, so that a skipped one shows: none may skip for want of
# a GPU here.
"$build_dir/tests/cuda/cuda_test" 2>&1 | tee "$out/tests.log"
if grep -q 'no CUDA device' "$out/tests.log"; then
  echo "gpu_check: CUDA tests were skipped: LibTorch sees no GPU" >&2
  exit 1
fi
echo "gpu_check: tests done at $((SECONDS - start)) s"

"$build_dir/examples/device_check/dfmpc_device_check" --csv-prefix "$out/device_check" "$@" |
  tee "$out/device_check.txt"
echo "gpu_check: done in $((SECONDS - start)) s"
