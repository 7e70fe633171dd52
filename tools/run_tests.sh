#!/usr/bin/env bash
# The whole test suite: set-up, build, then every ctest entry (MPI suites at 1-4 ranks,
# the serial GROVE_MPI=OFF build, the installed-package consumer, the fatal-abort check, the
# -ffast-math bad-input suite, the particle-file fuzz loop); and beside them the sanitizer pass:
# the unit and MPI suites built again with AddressSanitizer + UndefinedBehaviorSanitizer in a build
# folder of their own and run at 1 and 2 ranks (GROVE_SANITIZE=0 skips it). Arguments go to the
# first ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
# doxygen: the API reference, built with warnings as errors (doc/Doxyfile); the sample needs none.
# GROVE_WERROR: a warning in Grove's own libraries fails the build.
GROVE_EXTRA_PACKAGES="doxygen ${GROVE_EXTRA_PACKAGES:-}" GROVE_CMAKE_ARGS="-DGROVE_WERROR=ON ${GROVE_CMAKE_ARGS:-}" tools/setup.sh
source tools/mpi_env.sh
# Tests run side by side, so OpenMP threads outnumber the cores: threads waiting at a barrier
# sleep instead of spinning on a core another test needs (2.5x faster on 2 cores; CMakeLists.txt).
export OMP_WAIT_POLICY=PASSIVE
start=$(date +%s)
status=0
# The sanitizer pass runs beside the suite, at the lowest priority: its build first, then its runs
# as soon as the build is done. The suite leaves about 40% of the cores idle (mpiexec start-ups,
# ranks waiting on messages, one-thread runs, and the serial build's long tail at the end), and the
# pass takes that time rather than the suite's. Its output goes to two logs, shown after the suite.
sanitize=${GROVE_SANITIZE:-1}
sanitize_dir=${GROVE_SANITIZE_BUILD_DIR:-build-sanitize}
sanitize_build_log=$sanitize_dir/background-build.log
sanitize_run_log=$sanitize_dir/background-run.log
if [[ $sanitize != 0 ]]; then
  mkdir -p "$sanitize_dir"
  rm -f "$sanitize_run_log"
  (nice -n 19 tools/run_sanitized_tests.sh build > "$sanitize_build_log" 2>&1 || exit 10
   nice -n 19 tools/run_sanitized_tests.sh run > "$sanitize_run_log" 2>&1) &
  sanitize_pass=$!
fi
ctest --test-dir "${GROVE_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" "$@" || status=$?
echo "grove test suite: $(( $(date +%s) - start )) s"

if [[ $sanitize != 0 ]]; then
  sanitize_status=0
  wait "$sanitize_pass" || sanitize_status=$?
  if [[ $sanitize_status == 10 ]]; then
    cat "$sanitize_build_log"
    echo "grove sanitizer build FAILED (log above: $sanitize_build_log)"
    status=1
  else
    tail -n 1 "$sanitize_build_log"
    cat "$sanitize_run_log"
    ((sanitize_status == 0)) || status=1
  fi
fi
echo "grove tests and sanitizer pass: $(( $(date +%s) - start )) s"
exit "$status"
