#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU (written for an H100/H200: sm_90, CUDA 13 in
# /usr/local/cuda, no package installs): configures grove with CUDA into its own build folder,
# builds the GPU tests and benchmarks, runs them, and prints a short table at the end.
# Also the SPH sample's GPU passes: grove_gpu_sph_tests, and samples/sph with --gpu none,
# template, engine and resident (the whole step on the device), and a resident run at 2^21
# template and engine (the sample needs CLI11: carry .deps, found through CMAKE_PREFIX_PATH), and the
# GPU tutorials (doc/tutorial/04_multiwalk_gpu, 05_gpu_resident) at 1 and 2 ranks, and the
# installed package's GPU consumer (tests/consumer_gpu: built against an install, -Werror, run).
#
#   bash tools/gpu_check.sh            from the repository root
#
# Logs, test XML, benchmark JSON lines and the compiler's resource report go to $OUT when it is
# set (the device tool fetches that folder), else to <build>/gpu_check. Environment knobs:
#   GROVE_GPU_BUILD_DIR   build folder (default build-gpu-check)
#   GROVE_GPU_JOBS        parallel build jobs (default 16)
#   GROVE_GPU_BENCH_ARGS  extra arguments for multiwalk_benchmark (e.g. --quick)
#   GROVE_SPH_ARGS        arguments for the samples/sph runs (default --nx 128 --max-steps 10)
#   GROVE_SPH_PATHS       the --gpu paths of those runs (default "none template engine resident")
#   GROVE_SPH_RESIDENT_RANKS  rank counts (sharing the GPU) for more --gpu resident runs of those
#                         arguments (default "2"; their profiles join the comparison)
#   GROVE_SPH_LARGE_ARGS  arguments for one more --gpu resident run, the SPH throughput benchmark
#                         (default --nx 312 --n-ngb 100 --max-steps 5: 2.14e6 particles; "" skips)
#   GROVE_TABLE2_EXTRA    more gravity_table2 argument sets, separated by ';' (e.g. other n_group
#                         or particle orders); each one's summary lines join the table
#   GROVE_HOST_BENCH_ARGS when set, multiwalk_host_benchmark runs with these arguments (the host
#                         side of a G3 step with a device that takes no time)
#   GROVE_COMPUTE_SANITIZER tools to run the GPU suites under ("memcheck racecheck"; none by default)
#   GROVE_SANITIZER_FILTER  gtest filter for the compute-sanitizer runs (default: every test)
#   GROVE_RESIDENT_ARGS   arguments for resident_benchmark, the GPU-resident pipeline (default
#                         --cpu-reference: N = 2^22, theta 0.5, leaf 16, group 512, and the CPU
#                         tree's error beside the device's)
#   GROVE_RESIDENT_EXTRA  more resident_benchmark argument sets, ';'-separated (default: N = 2^24,
#                         and the fused walk's rebuilt steps at 2^22 and 2^24 for comparison)
#   GROVE_NBODY_ARGS      arguments for samples/nbody --gpu resident (needs CLI11: carry .deps)
#   GROVE_NBODY_RANKS     rank counts for those runs, sharing the GPU (default "1 2")
#   GROVE_MPI_RANKS       rank counts for the multi-rank GPU suite (default "1 2 3 4")
#   GROVE_SKIP_TABLE2     1: no gravity_table2 runs
#   GROVE_SKIP_BENCH      1: build and test only (no samples/sph runs, no benchmarks)
#   GROVE_GPU_ONLY        single-process GPU suites to build and run instead of all of them (e.g.
#                         "grove_gpu_tree_tests"): no MPI suites, tutorials or samples then
#   GROVE_GPU_MPI_ONLY    MPI suites to build and run at GROVE_MPI_RANKS instead of all of them
#                         (e.g. "grove_gpu_fmm_tests"; with GROVE_GPU_ONLY, beside its suites)
#   GROVE_FMM_ARGS        when set, fmm_benchmark argument sets (';'-separated), each run twice:
#                         --far-field host, and --far-field device --no-tree (the FMM's traversal
#                         and far field on the GPU; the tree runs once), at OMP_NUM_THREADS
#                         threads; JSON lines in fmm.jsonl, rows in the table
#   GROVE_FMM_GPU_ARGS    when set, fmm_gpu_benchmark argument sets (';'-separated): the FMM and the
#                         tree with their force work on the GPU; lines in fmm.jsonl too
#   GROVE_GPU_SKIP        targets (suites, benchmarks, tutorials) to leave out of the build and the
#                         runs, space-separated (e.g. "grove_gpu_tree_tests gravity_table2")
#   GROVE_SCALING_RUNS    when set, samples/scaling runs (';'-separated, each "RANKS ARGS..."), the
#                         ranks sharing this machine's GPUs; their JSON lines go to scaling.jsonl
#                         and rows to the table (the multi-GPU series: tools/scaling_check.sh)
# Exit status: 0 when everything built and no test failed.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD
BUILD=${GROVE_GPU_BUILD_DIR:-build-gpu-check}
JOBS=${GROVE_GPU_JOBS:-16}
LOGS=${OUT:-$ROOT/$BUILD/gpu_check}
mkdir -p "$LOGS"
export PATH=/usr/local/cuda/bin:$PATH
# OpenMPI (the tests start grove's runtime) refuses root and needs ptrace for single-copy
# shared memory without these; neither changes what the tests check.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}

step() { echo "[gpu_check] $(date +%T) $*"; }
status=0
START=$SECONDS
SPH_TABLE_PATHS=()

# ---- what machine ---------------------------------------------------------------------------------
{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(hostname)"
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  else
    echo "gpu: none seen (no nvidia-smi)"
  fi
  nvcc --version 2>&1 | tail -2 | sed 's/^/nvcc: /'
  cmake --version 2>&1 | head -1 | sed 's/^/cmake: /'
  g++ --version 2>&1 | head -1 | sed 's/^/g++: /'
  echo "git: $(git rev-parse --short HEAD 2>/dev/null) ($(git status --porcelain 2>/dev/null | wc -l) changed files)"
} > "$LOGS/machine.txt"
cat "$LOGS/machine.txt"

# ---- SPH: CLI11 for samples/sph --------------------------------------------------------------------
# The GPU machine has no CLI11; its headers and CMake files may come along in .deps (git-excluded).
if [[ -d $ROOT/.deps ]]; then
  export CMAKE_PREFIX_PATH=$ROOT/.deps${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
fi

# ---- configure ------------------------------------------------------------------------------------
GENERATOR=()
if [[ ! -f $BUILD/CMakeCache.txt ]] && command -v ninja > /dev/null; then
  GENERATOR=(-G Ninja)  # ninja prints each command's output in one piece: a readable ptxas report
fi
step "configure into $BUILD"
if ! cmake -S . -B "$BUILD" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DGROVE_CUDA=ON \
    -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DGROVE_CUDA_RESOURCE_USAGE=ON -DGROVE_BUILD_TESTS=ON -DGROVE_BUILD_SAMPLES=ON > "$LOGS/configure.log" 2>&1; then
  tail -30 "$LOGS/configure.log"
  step "configure FAILED (log: $LOGS/configure.log)"
  exit 1
fi
if [[ ! -d $BUILD/tests/gpu || ! -d $BUILD/samples/benchmarks/gpu ]]; then
  step "tests/gpu or samples/benchmarks/gpu is not part of the build: add 'add_subdirectory(gpu)' to"
  step "tests/CMakeLists.txt and samples/benchmarks/CMakeLists.txt"
  exit 1
fi

# ---- build ----------------------------------------------------------------------------------------
TARGETS=(grove_gpu_tests grove_gpu_tree_tests grove_gpu_resident_tests grove_gpu_resident_exchange_tests
         grove_gpu_fmm_tests multiwalk_benchmark gravity_table2 resident_benchmark)
[[ -n ${GROVE_HOST_BENCH_ARGS:-} ]] && TARGETS+=(multiwalk_host_benchmark)
SUITES=(grove_gpu_tests grove_gpu_tree_tests grove_gpu_resident_tests)
# Suites run under mpirun at each of GROVE_MPI_RANKS (ranks share the GPU).
MPI_SUITES=(grove_gpu_resident_exchange_tests grove_gpu_fmm_tests)
read -r -a MPI_RANKS <<< "${GROVE_MPI_RANKS:-1 2 3 4}"
read -r -a NBODY_RANKS <<< "${GROVE_NBODY_RANKS:-1 2}"
# SPH: the GPU suite, and the sample where CLI11 was found (samples/sph is configured only then).
TARGETS+=(grove_gpu_sph_tests grove_gpu_resident_short_tests)
SUITES+=(grove_gpu_sph_tests grove_gpu_resident_short_tests)
[[ -d $BUILD/samples/sph ]] && TARGETS+=(sph)
[[ -d $BUILD/samples/nbody ]] && TARGETS+=(nbody)
# The GPU tutorials (doc/tutorial): programs that check what their pages claim.
TUTORIALS=(tutorial_04_multiwalk_gpu tutorial_05_gpu_resident)
[[ -d $BUILD/doc/tutorial ]] && TARGETS+=("${TUTORIALS[@]}")
if [[ -n ${GROVE_GPU_ONLY:-} ]]; then
  read -r -a SUITES <<< "$GROVE_GPU_ONLY"
  TARGETS=("${SUITES[@]}")
  MPI_SUITES=()
  TUTORIALS=()
fi
if [[ -n ${GROVE_GPU_MPI_ONLY:-} ]]; then
  read -r -a MPI_SUITES <<< "$GROVE_GPU_MPI_ONLY"
  TARGETS+=("${MPI_SUITES[@]}")
fi
if [[ -n ${GROVE_GPU_SKIP:-} ]]; then
  keep() { local out=() x; for x in "$@"; do [[ " $GROVE_GPU_SKIP " == *" $x "* ]] || out+=("$x"); done; echo "${out[@]}"; }
  read -r -a TARGETS <<< "$(keep "${TARGETS[@]}")"
  read -r -a SUITES <<< "$(keep "${SUITES[@]}")"
  read -r -a MPI_SUITES <<< "$(keep "${MPI_SUITES[@]}")"
  read -r -a TUTORIALS <<< "$(keep "${TUTORIALS[@]}")"
fi
[[ -n ${GROVE_FMM_ARGS:-} ]] && TARGETS+=(fmm_benchmark)
[[ -n ${GROVE_FMM_GPU_ARGS:-} ]] && TARGETS+=(fmm_gpu_benchmark)
[[ -n ${GROVE_SCALING_RUNS:-} && -d $BUILD/samples/scaling ]] && TARGETS+=(scaling)
step "build ${TARGETS[*]} with -j$JOBS"
build_ok=1
if ! cmake --build "$BUILD" -j "$JOBS" --target "${TARGETS[@]}" > "$LOGS/build.log" 2>&1; then
  # The tree test follows headers that others edit: build what still builds, one target at a time.
  build_ok=0
  status=1
  for t in "${TARGETS[@]}"; do cmake --build "$BUILD" -j "$JOBS" --target "$t" >> "$LOGS/build.log" 2>&1; done
  grep -E "error" "$LOGS/build.log" | head -20
fi
warnings=$(grep -E "warning" "$LOGS/build.log" | grep -vc "ptxas info")
# The compiler's resource report, one line per kernel: registers, stack, spills, shared memory.
kernels=?
spilling=?
if command -v python3 > /dev/null; then
  read -r kernels spilling < <(python3 - "$LOGS/build.log" "$LOGS/ptxas.txt" << 'PY'
import re, subprocess, sys
rows, name, frame = {}, None, (0, 0, 0)
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"Compiling entry function '([^']+)' for '(sm_\w+)'", line)
    if m:
        name, frame = m.group(1) + " " + m.group(2), (0, 0, 0)
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m and name:
        frame = tuple(int(x) for x in m.groups())
    m = re.search(r"Used (\d+) registers", line)
    if m and name:
        s = re.search(r"(\d+) bytes smem", line)
        rows[name] = (int(m.group(1)), frame, int(s.group(1)) if s else 0)
        name = None
def demangle(n):
    try:
        return subprocess.run(["c++filt"], input=n, capture_output=True, text=True).stdout.strip() or n
    except OSError:
        return n
with open(sys.argv[2], "w") as out:
    for n, (regs, (stack, st, ld), smem) in sorted(rows.items()):
        sym, arch = n.rsplit(" ", 1)
        out.write("regs %3d  stack %4d  spill st/ld %4d/%4d  smem %6d  %s  %s\n" % (regs, stack, st, ld, smem, arch, demangle(sym)))
print(len(rows), sum(1 for r in rows.values() if r[1][1] or r[1][2]))
PY
  )
else
  grep -E "ptxas info|bytes stack frame" "$LOGS/build.log" > "$LOGS/ptxas.txt"
  kernels=$(grep -c "Used [0-9]* registers" "$LOGS/ptxas.txt")
  spilling=$(grep "bytes spill" "$LOGS/ptxas.txt" | grep -vc " 0 bytes spill stores, 0 bytes spill loads")
fi

# ---- tests ----------------------------------------------------------------------------------------
declare -A passed failed skipped ran
# run_suite KEY COMMAND...: runs one suite (rank 0 prints gtest's report), its counts under KEY.
run_suite() {
  local t=$1
  shift
  step "run $t"
  timeout 300 "$@" > "$LOGS/$t.log" 2>&1
  local rc=$?
  ran[$t]=yes
  passed[$t]=$(grep -oE '^\[  PASSED  \] [0-9]+' "$LOGS/$t.log" | head -1 | grep -oE '[0-9]+$' || echo 0)
  skipped[$t]=$(grep -oE '^\[  SKIPPED \] [0-9]+ test' "$LOGS/$t.log" | head -1 | grep -oE '[0-9]+' || echo 0)
  failed[$t]=$(grep -oE '^\[  FAILED  \] [0-9]+ test' "$LOGS/$t.log" | head -1 | grep -oE '[0-9]+' || echo 0)
  [[ -z ${passed[$t]} ]] && passed[$t]=0
  [[ -z ${skipped[$t]} ]] && skipped[$t]=0
  [[ -z ${failed[$t]} ]] && failed[$t]=0
  if [[ $rc -ne 0 ]]; then
    status=1
    [[ ${failed[$t]} == 0 ]] && failed[$t]="rc=$rc"
    grep -E "Failure|FAILED|error" "$LOGS/$t.log" | head -20
  fi
  grep -E "^  \[|^  engine vs|^  median error|^  interactions|^  EP |^  quadrupole|^  rank " "$LOGS/$t.log" | head -40
}
for t in "${SUITES[@]}"; do
  exe=$BUILD/tests/gpu/$t
  passed[$t]=-; failed[$t]=-; skipped[$t]=-; ran[$t]=no
  if [[ ! -x $exe ]]; then
    step "$t was not built"
    status=1
    continue
  fi
  run_suite "$t" "$exe" --gtest_color=no --gtest_output="xml:$LOGS/$t.xml"
done
TABLE_SUITES=("${SUITES[@]}")
for t in "${MPI_SUITES[@]}"; do
  exe=$BUILD/tests/gpu/$t
  for np in "${MPI_RANKS[@]}"; do
    key=${t}_np$np
    TABLE_SUITES+=("$key")
    passed[$key]=-; failed[$key]=-; skipped[$key]=-; ran[$key]=no
    if [[ ! -x $exe ]]; then
      step "$t was not built"
      status=1
      continue
    fi
    OMP_NUM_THREADS=$(( $(nproc) / np )) run_suite "$key" mpirun -np "$np" "$exe" --gtest_color=no
  done
done

# The tutorials at 1 and 2 ranks (sharing the GPU): exit 0 when what the page claims holds.
declare -A tutorial_result
TUTORIAL_RUNS=()
for t in "${TUTORIALS[@]}"; do
  exe=$BUILD/doc/tutorial/$t
  for np in 1 2; do
    key=${t}_np$np
    TUTORIAL_RUNS+=("$key")
    if [[ ! -x $exe ]]; then
      tutorial_result[$key]="not built"
      status=1
      continue
    fi
    step "run $t on $np rank(s)"
    OMP_NUM_THREADS=$(( $(nproc) / np )) timeout 300 mpirun -np "$np" "$exe" > "$LOGS/$key.log" 2>&1
    rc=$?
    [[ $rc -ne 0 ]] && status=1
    tutorial_result[$key]="rc $rc: $(grep -v '^\[' "$LOGS/$key.log" | tail -2 | tr '\n' ' ')"
  done
done

# The installed package as an outside GPU program uses it (tests/consumer_gpu): install, build with
# warnings as errors against the install, run (ctest's grove_consumer_gpu_build and _run).
consumer_gpu_result="not run (GROVE_GPU_ONLY)"
if [[ -z ${GROVE_GPU_ONLY:-} && " ${GROVE_GPU_SKIP:-} " != *" consumer_gpu "* ]]; then
  step "the GPU consumer: install, build against the install (-Werror), run"
  if ctest --test-dir "$BUILD" -R '^grove_consumer_gpu_(build|run)$' -V > "$LOGS/consumer_gpu.log" 2>&1; then
    consumer_gpu_result="ok: $(grep -o 'grove_consumer_gpu: [0-9]* ranks.*' "$LOGS/consumer_gpu.log" | tail -1)"
    grep -qF '***Skipped' "$LOGS/consumer_gpu.log" && consumer_gpu_result="SKIPPED ($(grep -m1 'no CUDA device' "$LOGS/consumer_gpu.log"))"
  else
    consumer_gpu_result="FAILED (log: consumer_gpu.log)"
    status=1
  fi
fi

# ---- the FMM with its far field on the host and on the device --------------------------------------
fmm_exe=$BUILD/samples/benchmarks/fmm_benchmark
: > "$LOGS/fmm.jsonl"
if [[ -n ${GROVE_FMM_ARGS:-} ]]; then
  IFS=';' read -r -a fmm_runs <<< "$GROVE_FMM_ARGS"
  for args in "${fmm_runs[@]}"; do
    for engine in "host" "device --no-tree"; do
      step "run fmm_benchmark $args --far-field $engine"
      # shellcheck disable=SC2086
      if ! timeout 400 "$fmm_exe" $args --far-field $engine >> "$LOGS/fmm.jsonl" 2>> "$LOGS/fmm.err"; then
        step "fmm_benchmark $args --far-field $engine failed or timed out"
        tail -5 "$LOGS/fmm.err"
        status=1
      fi
    done
  done
fi

fmm_gpu_exe=$BUILD/samples/benchmarks/gpu/fmm_gpu_benchmark
if [[ -n ${GROVE_FMM_GPU_ARGS:-} ]]; then
  IFS=';' read -r -a fmm_runs <<< "$GROVE_FMM_GPU_ARGS"
  for args in "${fmm_runs[@]}"; do
    step "run fmm_gpu_benchmark $args"
    # shellcheck disable=SC2086
    if ! timeout 400 "$fmm_gpu_exe" $args >> "$LOGS/fmm.jsonl" 2>> "$LOGS/fmm.err"; then
      step "fmm_gpu_benchmark $args failed or timed out"
      tail -5 "$LOGS/fmm.err"
      status=1
    fi
  done
fi

# ---- samples/scaling, ranks sharing the GPUs --------------------------------------------------------
: > "$LOGS/scaling.jsonl"
if [[ -n ${GROVE_SCALING_RUNS:-} ]]; then
  IFS=';' read -r -a scaling_runs <<< "$GROVE_SCALING_RUNS"
  for run in "${scaling_runs[@]}"; do
    read -r np args <<< "$run"
    step "run samples/scaling $args on $np rank(s)"
    # shellcheck disable=SC2086
    if ! OMP_NUM_THREADS=$(( $(nproc) / np )) timeout 300 mpirun -np "$np" --bind-to none \
        "$BUILD/samples/scaling/scaling" $args --label "np$np $args" >> "$LOGS/scaling.jsonl" 2>> "$LOGS/scaling.err"; then
      step "samples/scaling $args on $np rank(s) failed or timed out"
      tail -5 "$LOGS/scaling.err"
      status=1
    fi
  done
fi

# ---- compute-sanitizer ----------------------------------------------------------------------------
# GROVE_COMPUTE_SANITIZER="memcheck racecheck" (any of memcheck, racecheck, synccheck, initcheck)
# runs each GPU suite again under compute-sanitizer with that tool; GROVE_SANITIZER_FILTER is a
# gtest filter for those runs (default: every test). A finding or a failed test fails the check.
declare -A sanitized
for tool in ${GROVE_COMPUTE_SANITIZER:-}; do
  for t in "${SUITES[@]}"; do
    exe=$BUILD/tests/gpu/$t
    [[ -x $exe ]] || continue
    step "compute-sanitizer --tool $tool $t"
    timeout "${GROVE_SANITIZER_TIMEOUT:-400}" compute-sanitizer --tool "$tool" --error-exitcode 99 \
      "$exe" --gtest_filter="${GROVE_SANITIZER_FILTER:-*}" > "$LOGS/${t}_$tool.log" 2>&1
    rc=$?
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$LOGS/${t}_$tool.log" | tail -1)
    tests=$(grep -oE '^\[  PASSED  \] [0-9]+' "$LOGS/${t}_$tool.log" | grep -oE '[0-9]+$' || echo 0)
    sanitized[$t/$tool]="rc $rc, ${tests:-0} tests passed, ${summary:-no summary}"
    if [[ $rc -ne 0 ]]; then
      status=1
      grep -E "=========|Failure|FAILED" "$LOGS/${t}_$tool.log" | head -20
    fi
  done
done

sph_exe=$BUILD/samples/sph/sph
if [[ ${GROVE_SKIP_BENCH:-0} != 1 ]]; then
# ---- samples/sph --gpu ----------------------------------------------------------------------------
# The Sod shock tube for a few steps with the density and hydro passes on the CPU, the
# hand-written CUDA template and grove's engine: seconds per step, and the results against the
# CPU run (L1 errors; profiles.csv, 10 digits).
SPH_ARGS=${GROVE_SPH_ARGS:---nx 128 --max-steps 10}
read -r -a SPH_PATHS <<< "${GROVE_SPH_PATHS:-none template engine resident}"
if [[ -x $sph_exe ]]; then
  for path in "${SPH_PATHS[@]}"; do
    step "run samples/sph $SPH_ARGS --gpu $path"
    # shellcheck disable=SC2086
    if ! timeout 300 "$sph_exe" $SPH_ARGS --gpu "$path" -o "$LOGS/sph_$path" > "$LOGS/sph_$path.log" 2>&1; then
      step "samples/sph --gpu $path failed or timed out"
      tail -5 "$LOGS/sph_$path.log"
      status=1
    fi
  done
  SPH_TABLE_PATHS=("${SPH_PATHS[@]}")
  for np in ${GROVE_SPH_RESIDENT_RANKS-2}; do
    step "run samples/sph $SPH_ARGS --gpu resident on $np ranks"
    # shellcheck disable=SC2086
    if ! OMP_NUM_THREADS=$(( $(nproc) / np )) timeout 300 mpirun -np "$np" --bind-to none "$sph_exe" $SPH_ARGS \
        --gpu resident -o "$LOGS/sph_resident_np$np" > "$LOGS/sph_resident_np$np.log" 2>&1; then
      step "samples/sph --gpu resident on $np ranks failed or timed out"
      tail -5 "$LOGS/sph_resident_np$np.log"
      status=1
    fi
    SPH_TABLE_PATHS+=("resident_np$np")
  done
  SPH_LARGE_ARGS=${GROVE_SPH_LARGE_ARGS---nx 312 --n-ngb 100 --max-steps 5}
  if [[ -n $SPH_LARGE_ARGS ]]; then
    step "run samples/sph $SPH_LARGE_ARGS --gpu resident"
    # shellcheck disable=SC2086
    if ! timeout 300 "$sph_exe" $SPH_LARGE_ARGS --gpu resident -o "$LOGS/sph_large" > "$LOGS/sph_large.log" 2>&1; then
      step "samples/sph $SPH_LARGE_ARGS --gpu resident failed or timed out"
      tail -5 "$LOGS/sph_large.log"
      status=1
    fi
  fi
else
  step "samples/sph was not built (CLI11 not found: carry .deps)"
fi

# ---- benchmarks -----------------------------------------------------------------------------------
bench=$BUILD/samples/benchmarks/gpu/multiwalk_benchmark
if [[ -x $bench ]]; then
  step "run multiwalk_benchmark ${GROVE_GPU_BENCH_ARGS:-}"
  # shellcheck disable=SC2086
  if ! timeout 300 "$bench" ${GROVE_GPU_BENCH_ARGS:-} > "$LOGS/benchmark.jsonl" 2> "$LOGS/benchmark.err"; then
    step "multiwalk_benchmark failed or timed out"
    tail -5 "$LOGS/benchmark.err"
    status=1
  fi
else
  step "multiwalk_benchmark was not built"
  status=1
fi

# The GPU-resident pipeline: rebuild and list-reuse steps, per-stage device times.
resident=$BUILD/samples/benchmarks/gpu/resident_benchmark
resident_runs=("${GROVE_RESIDENT_ARGS---cpu-reference}")
IFS=';' read -r -a more_resident <<< "${GROVE_RESIDENT_EXTRA---n 16777216 --steps 4 --cycles 1;--fused-walk --cycles 0;--n 16777216 --steps 4 --cycles 0 --fused-walk}"
resident_runs+=("${more_resident[@]}")
: > "$LOGS/resident.jsonl"
if [[ -x $resident ]]; then
  for args in "${resident_runs[@]}"; do
    step "run resident_benchmark $args"
    # shellcheck disable=SC2086
    if ! OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)} timeout 300 "$resident" $args >> "$LOGS/resident.jsonl" 2> "$LOGS/resident.err"; then
      step "resident_benchmark $args failed or timed out"
      tail -5 "$LOGS/resident.err"
      status=1
    fi
  done
else
  step "resident_benchmark was not built"
  status=1
fi
nbody_exe=$BUILD/samples/nbody/nbody
NBODY_ARGS=${GROVE_NBODY_ARGS:--n 1048576 --n-leaf 16 --n-group 512 --t-end 0.0625 --dt 0.0078125 --n-reuse 4}
if [[ -x $nbody_exe ]]; then
  for np in "${NBODY_RANKS[@]}"; do
    step "run samples/nbody $NBODY_ARGS --gpu resident on $np rank(s)"
    launcher=()
    [[ $np -gt 1 ]] && launcher=(mpirun -np "$np")
    # shellcheck disable=SC2086
    if ! OMP_NUM_THREADS=$(( $(nproc) / np )) timeout 300 "${launcher[@]}" "$nbody_exe" $NBODY_ARGS --gpu resident \
        -o "$LOGS/nbody_resident_np$np" > "$LOGS/nbody_resident_np$np.log" 2>&1; then
      step "samples/nbody --gpu resident on $np rank(s) failed or timed out"
      tail -5 "$LOGS/nbody_resident_np$np.log"
      status=1
    fi
  done
else
  step "samples/nbody was not built (CLI11 not found: carry .deps)"
fi

# The paper's Table 2 for grove: C1/G1/G2/G3 steps on the cold sphere (GROVE_TABLE2_ARGS: N theta
# n_leaf n_group n_walk steps n_reuse modes).
table2=$BUILD/samples/benchmarks/gpu/gravity_table2
if [[ ${GROVE_SKIP_TABLE2:-0} == 1 ]]; then
  step "gravity_table2 skipped (GROVE_SKIP_TABLE2=1)"
elif [[ -x $table2 ]]; then
  step "run gravity_table2 ${GROVE_TABLE2_ARGS:-}"
  # shellcheck disable=SC2086
  if ! OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)} timeout 420 "$table2" ${GROVE_TABLE2_ARGS:-} > "$LOGS/table2.log" 2>&1; then
    step "gravity_table2 failed or timed out"
    tail -5 "$LOGS/table2.log"
    status=1
  fi
else
  step "gravity_table2 was not built"
  status=1
fi

# More Table 2 runs (GROVE_TABLE2_EXTRA), and the host-only benchmark (GROVE_HOST_BENCH_ARGS).
extra_runs=()
if [[ -n ${GROVE_TABLE2_EXTRA:-} && -x $table2 ]]; then
  IFS=';' read -r -a extra_runs <<< "$GROVE_TABLE2_EXTRA"
  for k in "${!extra_runs[@]}"; do
    step "run gravity_table2 ${extra_runs[$k]}"
    # shellcheck disable=SC2086
    if ! OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)} timeout 300 "$table2" ${extra_runs[$k]} > "$LOGS/table2_extra_$k.log" 2>&1; then
      step "gravity_table2 ${extra_runs[$k]} failed or timed out"
      tail -5 "$LOGS/table2_extra_$k.log"
      status=1
    fi
  done
fi
host_bench=$BUILD/samples/benchmarks/multiwalk_host_benchmark
if [[ -n ${GROVE_HOST_BENCH_ARGS:-} ]]; then
  step "run multiwalk_host_benchmark $GROVE_HOST_BENCH_ARGS"
  # shellcheck disable=SC2086
  if ! timeout 300 "$host_bench" $GROVE_HOST_BENCH_ARGS > "$LOGS/host_benchmark.log" 2>&1; then
    step "multiwalk_host_benchmark failed or timed out"
    tail -5 "$LOGS/host_benchmark.log"
    status=1
  fi
fi

fi  # GROVE_SKIP_BENCH

# ---- the table ------------------------------------------------------------------------------------
{
  echo
  echo "==== grove GPU check ($(grep -m1 '^gpu:' "$LOGS/machine.txt" | cut -d, -f1 | sed 's/^gpu: //'), $((SECONDS - START)) s) ===="
  echo "build      : $([[ $build_ok == 1 ]] && echo ok || echo FAILED), $warnings compiler warnings, $kernels kernels compiled, $spilling of them spill registers (ptxas.txt)"
  for t in "${TUTORIAL_RUNS[@]}"; do
    printf "%-20s : %s\n" "$t" "${tutorial_result[$t]}"
  done
  printf "%-20s : %s\n" "consumer_gpu" "$consumer_gpu_result"
  for t in "${TABLE_SUITES[@]}"; do
    printf "%-20s : passed %s, failed %s, skipped %s\n" "$t" "${passed[$t]}" "${failed[$t]}" "${skipped[$t]}"
  done
  for key in "${!sanitized[@]}"; do
    printf "compute-sanitizer %-32s : %s\n" "$key" "${sanitized[$key]}"
  done
  if [[ -s $LOGS/fmm.jsonl ]] && command -v python3 > /dev/null; then
    echo "fmm_benchmark (best of repeats; far field: the engine's own time, overlapped with the near field on the device):"
    python3 - "$LOGS/fmm.jsonl" << 'PY'
import json, sys
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if "method" in r:
        d = r["details"]
        s = d.get("seconds", {})
        # --periodic lines carry their time against the open run's instead of an error.
        error = ("median error %.2e" % r["median_error"]) if "median_error" in r else (
            "%.3f x open" % r.get("periodic_over_open", 0))
        print("  %-14s n %8d order %d theta %.2f: %7.3f s, %s | tree %.3f traversal %.3f m2l %.3f down %.3f p2p %.3f (kernel %.4f) wait %.3f lattice %.3f" % (
            r["method"], r["n"], r["order"], r["theta"], r["seconds"], error, s.get("tree", 0), s.get("traversal", 0),
            s.get("m2l", 0), s.get("downward", 0), s.get("p2p", 0), s.get("p2p_kernel", 0), s.get("far_field_wait", 0),
            s.get("lattice", 0)))
    elif "summary" in r:
        print("  summary", json.dumps(r["summary"]))
    elif "device_far_field_bytes" in r:
        print("  device far field memory: %.1f MB" % (r["device_far_field_bytes"] / 1e6))
PY
  fi
  echo "benchmark (median of repeats; interactions/s):"
  if [[ -s $LOGS/benchmark.jsonl ]] && command -v python3 > /dev/null; then
    python3 - "$LOGS/benchmark.jsonl" << 'PY'
import json, sys
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if "skipped" in r:
        print("  skipped:", r["skipped"]); continue
    shape = ("n=%d" % r["n"]) if "n" in r else "walks=%d ni=%.0f nj=%.0f nsp=%.0f" % (
        r["n_walk"], r["mean_n_i"], r["mean_n_j"], r["mean_n_sp"])
    extra = ""
    if "kernel_seconds_sum" in r:
        extra = " step %.2f ms (kernels %.2f ms)" % (1e3 * r["seconds"], 1e3 * r["kernel_seconds_sum"])
    print("  %-24s %-22s %-10s %10.3e  err %.1e  %s%s" % (r["benchmark"], r["variant"], r.get("expansion", ""),
          r["interactions_per_s"], r["max_rel_err"], shape, extra))
PY
  elif [[ -s $LOGS/benchmark.jsonl ]]; then
    grep -oE '"(benchmark|variant|expansion|interactions_per_s)":[^,]*' "$LOGS/benchmark.jsonl" | paste -sd' ' | sed 's/"benchmark"/\n  "benchmark"/g'
    echo
  else
    echo "  (no benchmark output)"
  fi
  if [[ -s $LOGS/scaling.jsonl ]] && command -v python3 > /dev/null; then
    echo "samples/scaling (ms per step, slowest rank; ranks share the GPUs here):"
    python3 - "$LOGS/scaling.jsonl" << 'PY'
import json, sys
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    s = r["stages"]
    print("  %-60s %8.2f ms | let %.2f global/let tree %.2f walk+force %.2f exchange %.2f decompose %.2f | %.0f int/body, %.1f peers" % (
        r["label"][:60], 1e3 * r["seconds_per_step"], 1e3 * s["let"], 1e3 * s["global_tree"], 1e3 * s["walk_force"],
        1e3 * s["exchange"], 1e3 * s["decompose"], r["interactions_per_particle"], r.get("let_peers_max", 0)))
PY
  fi
  if [[ -s $LOGS/resident.jsonl ]] && command -v python3 > /dev/null; then
    echo "resident_benchmark (ms, medians over steps; error: median vs direct summation, CPU tree's beside):"
    python3 - "$LOGS/resident.jsonl" << 'PY'
import json, sys
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if "skipped" in r or "error" in r:
        print("  ", r); continue
    m = r["ms"]
    print("  n=%-9d %-13s group %-4d/%-3d step %7.2f ms mean (%7.2f median) | keys %.2f sort %.2f reorder %.2f link %.2f "
          "moments %.2f groups %.2f lists %.2f force %.2f write %.2f integrate %.2f | %.0f int/p %.2e int/s %.2e p/s err %.3e cpu %.3e"
          " %.0f B/p" % (r["n"], r["mode"] + "/" + r.get("walk", "fused"), r["group"], r.get("group_target", 0),
          r["step_ms_mean"], r["step_ms_median"], m["keys"], m["sort"],
          m["reorder"], m["link"], m["moments"], m["groups"], m["lists"], m["force"], m["write_back"], m["integrate"],
          r["interactions_per_particle"], r["interactions_per_s"], r["particles_per_s"], r["median_error"], r["cpu_median_error"],
          r["bytes_per_particle"]))
PY
  fi
  for np in "${NBODY_RANKS[@]}"; do
    if [[ -s $LOGS/nbody_resident_np$np.log ]]; then
      echo "samples/nbody --gpu resident $NBODY_ARGS, $np rank(s) on the GPU:"
      grep -E "^step|^done" "$LOGS/nbody_resident_np$np.log" | tail -3 | sed 's/^/  /'
    fi
  done
  if [[ -s $LOGS/table2.log ]]; then
    echo "Table 2 (gravity_table2):"
    sed -n '/^Table 2/,$p' "$LOGS/table2.log" | grep -v '^{' | sed 's/^/  /'
    grep -E '^\{"summary"' "$LOGS/table2.log" | sed 's/^/  /'
    grep -E 'median relative error' "$LOGS/table2.log" | sed 's/^/  /'
  fi
  for k in "${!extra_runs[@]}"; do
    echo "Table 2, more runs: ${extra_runs[$k]}"
    grep -E '^\{"summary"' "$LOGS/table2_extra_$k.log" | sed 's/^/  /'
  done
  if [[ -s $LOGS/host_benchmark.log ]]; then
    echo "multiwalk_host_benchmark $GROVE_HOST_BENCH_ARGS:"
    grep -E '^\{"summary"' "$LOGS/host_benchmark.log" | sed 's/^/  /'
  fi
  if [[ -x $sph_exe ]]; then
    echo "samples/sph ${SPH_ARGS:-} (s/step; L1 binned rho v P | per particle rho v P; profiles vs --gpu none):"
    if command -v python3 > /dev/null; then
      python3 - "$LOGS" "${SPH_TABLE_PATHS[@]}" << 'PY'
import csv, json, os, sys
logs, paths = sys.argv[1], sys.argv[2:]
def run(path):
    line = None
    try:
        for l in open(os.path.join(logs, "sph_%s.log" % path), errors="replace"):
            if l.startswith('{"sample":"sph"'):
                line = l
    except OSError:
        pass
    return json.loads(line) if line else None
def profile(path):
    try:
        with open(os.path.join(logs, "sph_" + path, "profiles.csv")) as f:
            return [r for r in csv.reader(f) if r and not r[0].startswith("#") and r[0] != "x"]
    except OSError:
        return None
cpu = profile("none")
for path in paths:
    r = run(path)
    if r is None:
        print("  --gpu %-12s no result" % path); continue
    l1 = " ".join("%.6f" % r[k] for k in ("l1_density", "l1_velocity", "l1_pressure"))
    l1p = " ".join("%.6f" % r[k] for k in ("l1_particle_density", "l1_particle_velocity", "l1_particle_pressure"))
    diff = "-"
    p = profile(path)
    if path != "none" and p and cpu and len(p) == len(cpu):
        worst = 0.0
        for k in (1, 2, 3):  # density, velocity_x, pressure: differences over the column's largest value
            scale = max(abs(float(b[k])) for b in cpu) or 1.0
            worst = max([worst] + [abs(float(a[k]) - float(b[k])) / scale for a, b in zip(p, cpu)])
        diff = "max diff %.1e" % worst
    print("  --gpu %-12s %.4f s/step (density %.4f, hydro %.4f)  L1 %s | %s  %s" % (
        path, r["s_per_step"], r["density"], r["hydro"], l1, l1p, diff))
r = run("large")
if r is not None:
    print("  resident, %d particles, %g neighbours: %.4f s/step (median %.4f; density %.4f, hydro %.4f; device %.4f + %.4f): "
          "%.3g particles/s" % (r["n"], r["n_neighbours"], r["s_per_step"], r["median_s_per_step"], r["density"],
                                r["hydro"], r["device_density"], r["device_hydro"], r["n"] / r["median_s_per_step"]))
PY
    else
      grep -h '^{"sample":"sph"' "$LOGS"/sph_*.log | sed 's/^/  /'
    fi
  fi
  echo "logs       : $LOGS"
  echo "result     : $([[ $status == 0 ]] && echo PASS || echo FAIL)"
} | tee "$LOGS/summary.txt"
exit $status
