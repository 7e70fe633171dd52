#!/usr/bin/env bash
# The main sample: set-up, build, then samples/nbody on ${GROVE_RANKS:-2} MPI ranks.
# Extra arguments go to the sample (see --help), e.g. tools/run_sample.sh --ic plummer -n 100000
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
source tools/mpi_env.sh
exec mpirun --oversubscribe -np "${GROVE_RANKS:-2}" "${GROVE_BUILD_DIR:-build}/samples/nbody/nbody" "$@"
