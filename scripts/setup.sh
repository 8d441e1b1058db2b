#!/usr/bin/env bash
# Installs every build and run dependency of dfmpc from Debian's packages.
# Idempotent: packages already present are skipped, so a second run is fast.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  libtorch-dev libopenblas0-openmp libgloo-dev
  libmujoco-dev libqhull-dev
  libeigen3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libegl-dev libegl-mesa0 libgl1-mesa-dri libgl-dev
  libhdf5-dev libcli11-dev nlohmann-json3-dev libstb-dev libgif-dev libtomlplusplus-dev
  libmuparser-dev libtinyxml2-dev
  zlib1g-dev
  gnuplot-nox
  pybind11-dev python3-dev python3-numpy python3-pytest python3-h5py python3-optuna
  python3-torch
  ffmpeg
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
  fi
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
