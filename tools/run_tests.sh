#!/usr/bin/env bash
# The whole test suite: set-up, build, then every ctest entry (MPI suites at 1-4 ranks,
# the serial GROVE_MPI=OFF build, the installed-package consumer, the fatal-abort check).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
source tools/mpi_env.sh
start=$(date +%s)
ctest --test-dir "${GROVE_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" "$@"
echo "grove test suite: $(( $(date +%s) - start )) s"
