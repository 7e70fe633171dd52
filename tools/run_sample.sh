#!/usr/bin/env bash
# The main sample: set-up, build, then samples/nbody on ${GROVE_RANKS:-2} MPI ranks, then a plot
# of its energy error. Extra arguments go to the sample (see --help), e.g.
#   tools/run_sample.sh --ic plummer -n 100000 --t-end 2
set -euo pipefail
cd "$(dirname "$0")/.."
# Only the sample is built (the test command builds the rest).
GROVE_EXTRA_PACKAGES="python3-matplotlib" GROVE_BUILD_TARGETS="nbody" tools/setup.sh
source tools/mpi_env.sh
out=nbody_out
for ((i = 1; i <= $#; i++)); do
  if [[ "${!i}" == "-o" || "${!i}" == "--output-dir" ]]; then j=$((i + 1)); out="${!j}"; fi
done
mpirun --oversubscribe -np "${GROVE_RANKS:-2}" "${GROVE_BUILD_DIR:-build}/samples/nbody/nbody" "$@"
/usr/bin/python3 tools/plot_energy.py "$out"
