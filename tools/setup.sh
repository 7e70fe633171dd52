#!/usr/bin/env bash
# Installs what grove needs to build and test, from Debian's packages, only where missing
# (safe to run again), then configures and builds into ${GROVE_BUILD_DIR:-build}: everything, or only
# the targets named in GROVE_BUILD_TARGETS (space-separated; tools/run_sample.sh builds the sample
# alone, so that a newcomer's first step does not wait for every test and benchmark).
set -euo pipefail
cd "$(dirname "$0")/.."

# libhdf5-openmpi-dev: grove::io's parallel HDF5 snapshots; python3-h5py: the test that reads a
# sample's snapshot as users do. (tools/run_tests.sh adds doxygen, for the API reference's check.)
packages=(g++ cmake make libopenmpi-dev openmpi-bin libfmt-dev libgtest-dev libcli11-dev libfftw3-dev libfftw3-mpi-dev
          libhdf5-openmpi-dev python3-h5py ${GROVE_EXTRA_PACKAGES:-})
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "grove setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  # No recommended packages: they are not needed, and matplotlib's alone pull in Boost and sympy.
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

build_dir=${GROVE_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release ${GROVE_CMAKE_ARGS:-}
targets=()
for t in ${GROVE_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
