#!/usr/bin/env bash
# Builds dfmpc against a CUDA LibTorch (an official LibTorch 2.x, or the one
# inside a CUDA PyTorch) into build-cuda/ ($DFMPC_CUDA_BUILD_DIR), for
# training, planning and rollouts with --device cuda and CUDA graphs.
# Debian's LibTorch has no CUDA; CI and the README's commands keep using it.
#
# Where LibTorch comes from: $DFMPC_LIBTORCH (a LibTorch folder, the one
# with share/cmake/Torch), else the `torch` of $DFMPC_PYTHON (default
# python3). CUDA: nvcc on PATH, else /usr/local/cuda. The GPU architecture:
# $TORCH_CUDA_ARCH_LIST, else what nvidia-smi reports, else 9.0 (Hopper).
#
# What is built: everything when MuJoCo, HDF5, EGL and CLI11 are installed
# (DFMPC_CUDA_ENVS=1); by default the world model, the planner, their tests
# (tests/cuda among them) and the device check (DFMPC_CUDA_ENVS=0), which is
# what a GPU server without MuJoCo can build (on one with no network,
# scripts/pack_debian_deps.sh brings the packages for DFMPC_CUDA_ENVS=1 from
# a Debian 12 machine). $DFMPC_CMAKE_ARGS adds CMake
# arguments, $DFMPC_CMAKE_PREFIX_PATH folders to find packages in, and
# $DFMPC_BUILD_TARGETS (space-separated) builds only those targets.
# Run the programs with the printed LD_LIBRARY_PATH.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${DFMPC_CUDA_BUILD_DIR:-$root/build-cuda}
python=${DFMPC_PYTHON:-python3}

if [ -n "${DFMPC_LIBTORCH:-}" ]; then
  torch_prefix=$DFMPC_LIBTORCH
  torch_lib=$DFMPC_LIBTORCH/lib
else
  if ! torch_prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)
  then
    echo "build_cuda: no LibTorch: set DFMPC_LIBTORCH to a CUDA LibTorch folder, or" \
         "DFMPC_PYTHON to a Python whose torch has CUDA" >&2
    exit 1
  fi
  torch_lib=$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
fi

nvcc=$(command -v nvcc || true)
[ -n "$nvcc" ] || nvcc=/usr/local/cuda/bin/nvcc
if [ ! -x "$nvcc" ]; then
  echo "build_cuda: no nvcc on PATH or in /usr/local/cuda/bin: install the CUDA toolkit" >&2
  exit 1
fi
cuda_root=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
if [ -z "${TORCH_CUDA_ARCH_LIST:-}" ]; then
  TORCH_CUDA_ARCH_LIST=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
                         head -n 1 || true)
  export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
fi

generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
envs=OFF
[ "${DFMPC_CUDA_ENVS:-0}" = 1 ] && envs=ON
eval "extra=(${DFMPC_CMAKE_ARGS:-})"
prefix_path="$torch_prefix${DFMPC_CMAKE_PREFIX_PATH:+;$DFMPC_CMAKE_PREFIX_PATH}"

echo "build_cuda: LibTorch from $torch_prefix, CUDA $cuda_root (arch $TORCH_CUDA_ARCH_LIST)," \
     "environments $envs, into $build_dir"
mkdir -p "$build_dir"
CUDACXX=$nvcc cmake -S "$root" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix_path" -DCMAKE_CUDA_COMPILER="$nvcc" \
  -DCUDAToolkit_ROOT="$cuda_root" -DDFMPC_BUILD_ENVS=$envs "${extra[@]}" \
  > "$build_dir/configure.log" 2>&1 || { cat "$build_dir/configure.log"; exit 1; }
grep -q "CUDA ON" "$build_dir/configure.log" ||
  { echo "build_cuda: that LibTorch has no CUDA (see $build_dir/configure.log)" >&2; exit 1; }
# The CUDA libraries of a pip PyTorch live beside it, in nvidia/*/lib. The
# build runs the test binaries too (to list their suites), so it needs them.
library_path=$torch_lib
for folder in "$torch_lib"/../../nvidia/*/lib; do
  if [ -d "$folder" ]; then library_path+=":$(readlink -f "$folder")"; fi
done
echo "$library_path" > "$build_dir/library_path.txt"
export LD_LIBRARY_PATH="$library_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

targets=()
for target in ${DFMPC_BUILD_TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$build_dir" -j"$(nproc)" "${targets[@]}"
echo "build_cuda: done; run its programs with" \
     "LD_LIBRARY_PATH=\$(cat $build_dir/library_path.txt)\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
