#!/usr/bin/env bash
# The sanitizer pass of the test suite (tools/run_tests.sh runs it after the ordinary suite):
# grove's unit and MPI suites, the particle-file fuzz loop included, built with AddressSanitizer
# and UndefinedBehaviorSanitizer (-O1, frame pointers, every UB finding fatal; -g1: the line
# tables a report needs for file:line, without the variable info that made each object 40%
# slower to compile) into ${GROVE_SANITIZE_BUILD_DIR:-build-sanitize}, and run at 1 and 2 ranks.
# Any finding fails it.
# Leak detection is off: every suite starts MPI, and OpenMPI's components, loaded with dlopen and
# unloaded at MPI_Finalize, leave allocations that LeakSanitizer reports with frames in modules
# that are gone by then, which no suppression can name (tried: all 17 runs reported only such
# leaks). The CUDA targets, samples and the integration builds are not part of it.
# Usage: run_sanitized_tests.sh [build|run]: only the build (configure and compile), or only the
# runs of a build made before; both, in turn, without an argument. tools/run_tests.sh builds at
# the lowest priority while the ordinary suite runs, then runs.
set -euo pipefail
phase=${1:-all}
[[ $phase == all || $phase == build || $phase == run ]] ||
  { echo "run_sanitized_tests.sh: unknown phase '$phase' (build, run, or none for both)" >&2; exit 2; }
cd "$(dirname "$0")/.."
source tools/mpi_env.sh
export OMP_WAIT_POLICY=PASSIVE  # tests side by side: waiting threads sleep (tools/run_tests.sh)
build_dir=${GROVE_SANITIZE_BUILD_DIR:-build-sanitize}
suites=(grove_unit_tests grove_comm_tests grove_domain_tests grove_short_range_tests grove_multiwalk_tests
        grove_gravity_tests grove_opening_tests grove_cutoff_tree_tests grove_long_search_tree_tests grove_fdps_tests
        grove_fdps_split_stage_program grove_particle_file_fuzz_tests grove_sph_tests grove_checkpoint_tests grove_fmm_tests)
start=$(date +%s)
# The particle-mesh and HDF5 suites, where grove built those modules (FFTW, HDF5 found).
add_optional_suites() {
  if grep -q "GROVE_HAS_PM 1" "$build_dir/generated/grove/config.hpp"; then suites+=(grove_pm_tests grove_treepm_tests); fi
  if grep -q "GROVE_HAS_HDF5 1" "$build_dir/generated/grove/config.hpp"; then suites+=(grove_hdf5_tests); fi
}

build_suites() {
  # UBSan's alignment check only where byte buffers are viewed as typed data: grove's library
  # sources and the suites of its byte-level code (GROVE_LIBRARY_CXX_FLAGS, CMakeLists.txt). In
  # the tree and force suites it checked arrays typed from their allocation on, and doubled their
  # compile time (gravity_tree_test.cpp: 72 CPU-s with it, 38 without).
  local flags="-fsanitize=address,undefined -fno-sanitize=alignment -fno-sanitize-recover=all -fno-omit-frame-pointer"
  mkdir -p "$build_dir"
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DCMAKE_CXX_FLAGS="$flags" -DGROVE_LIBRARY_CXX_FLAGS="-fsanitize=alignment" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DGROVE_CUDA=OFF -DGROVE_BUILD_SAMPLES=OFF -DGROVE_TEST_RANK_COUNTS="1;2" > "$build_dir/configure.log" 2>&1 ||
    { cat "$build_dir/configure.log"; return 1; }
  add_optional_suites
  # One target for all suites, so that they compile side by side (CMakeLists.txt: GROVE_TARGET_GROUP).
  cmake -S . -B "$build_dir" -DGROVE_TARGET_GROUP="$(IFS=';'; echo "${suites[*]}")" >> "$build_dir/configure.log" 2>&1 ||
    { cat "$build_dir/configure.log"; return 1; }
  cmake --build "$build_dir" -j "$(nproc)" --target grove_target_group
  echo "grove sanitizer build: $(( $(date +%s) - start )) s"
}

# Every finding ends the process with a report and a non-zero exit.
run_suites() {
  export ASAN_OPTIONS=detect_leaks=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  local regex
  regex="^($(IFS='|'; echo "${suites[*]}"))(_np[12])?\$"
  ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" -R "$regex"
  echo "grove sanitizer pass (address, undefined): $(( $(date +%s) - start )) s"
}

case $phase in
  build) build_suites ;;
  run)
    [[ -f $build_dir/generated/grove/config.hpp ]] ||
      { echo "run_sanitized_tests.sh run: no sanitizer build in $build_dir (run its build phase first)" >&2; exit 2; }
    add_optional_suites
    run_suites ;;
  all) build_suites; run_suites ;;
esac
