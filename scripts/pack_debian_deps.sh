#!/usr/bin/env bash
# Packs the Debian packages that a full dfmpc build needs besides LibTorch
# (MuJoCo, HDF5, EGL, GIF, CLI11, toml++, stb and the libraries they load),
# as this machine has them installed, into one tarball for a GPU machine that
# has CUDA and PyTorch but no network (docs/experiments.md, GPUs and
# data-parallel training). Run it on a Debian 12 machine after
# scripts/setup.sh. On the GPU machine, unpack it without replacing any file
# that is already there, then build with the environments:
#   tar -xzf deps.tar.gz --skip-old-files -C / && ldconfig
#   DFMPC_CUDA_ENVS=1 scripts/build_cuda.sh
# Debian 12's libraries need glibc 2.36, which Ubuntu 22.04 and later exceed.
# Usage: scripts/pack_debian_deps.sh OUT.tar.gz
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: scripts/pack_debian_deps.sh OUT.tar.gz" >&2
  exit 2
fi
out=$1
[ -d "$(dirname "$out")" ] || { echo "pack_debian_deps: no folder $(dirname "$out")" >&2; exit 1; }

# The development packages of scripts/setup.sh that the build needs beyond
# LibTorch, and the development packages their link lines name.
wanted=(libmujoco-dev libqhull-dev libhdf5-dev libaec-dev libcurl4-openssl-dev
  libssl-dev zlib1g-dev libegl-dev libgl-dev libglx-dev libopengl-dev libx11-dev x11proto-dev
  libxcb1-dev libxau-dev libxdmcp-dev libcli11-dev libstb-dev libgif-dev
  libtomlplusplus-dev libmuparser-dev libtinyxml2-dev nlohmann-json3-dev libeigen3-dev gnuplot-nox)
# The C and C++ runtimes: every target machine has its own, and newer.
base=" libc6 libstdc++6 libgcc-s1 "

declare -A packed=()
queue=("${wanted[@]}")
files=$(mktemp)
trap 'rm -f "$files"' EXIT
while [ ${#queue[@]} -gt 0 ]; do
  pkg=${queue[0]}
  queue=("${queue[@]:1}")
  [ -z "${packed[$pkg]:-}" ] || continue
  packed[$pkg]=1
  if ! listing=$(dpkg -L "$pkg" 2>/dev/null); then
    echo "pack_debian_deps: $pkg is not installed (run scripts/setup.sh first)" >&2
    exit 1
  fi
  while IFS= read -r path; do
    case "$path" in /usr/share/doc/* | /usr/share/man/* | /usr/share/lintian/*) continue ;; esac
    [ -d "$path" ] && [ ! -L "$path" ] && continue
    [ -e "$path" ] || [ -L "$path" ] || continue
    echo "${path#/}" >> "$files"
    # A library or program of the package (or the library a development
    # link names), and the shared libraries it loads, by owning package.
    case "$path" in *.so | *.so.* | */bin/*) ;; *) continue ;; esac
    real=$(readlink -f "$path")
    for library in "$real" $(ldd "$real" 2>/dev/null | awk '$3 ~ /^\// {print $3}'); do
      # dpkg may know a merged-/usr file by its /lib name.
      library=$(readlink -f "$library")
      owner=$( (dpkg -S "$library" || dpkg -S "${library#/usr}") 2>/dev/null |
        head -n 1 | cut -d: -f1) || continue
      [ -n "$owner" ] && [[ $base != *" $owner "* ]] && queue+=("$owner")
    done
  done <<< "$listing"
done

sort -u "$files" | tar -czf "$out" -C / -T -
echo "pack_debian_deps: ${#packed[@]} packages, $(sort -u "$files" | wc -l) files," \
     "$(du -h "$out" | cut -f1) in $out"
