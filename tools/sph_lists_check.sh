#!/usr/bin/env bash
# Issue 31, the resident SPH step's neighbour lists (samples/sph --gpu resident --lists fresh|shared,
# --skin, --sort-every; user_templates/cuda/sph_resident.h), on a machine with an NVIDIA GPU (written
# for an H100: sm_90, CUDA in /usr/local/cuda; the sample needs CLI11: carry .deps). Builds the sample
# and the two GPU suites that test the lists, runs them, then for every list setting the Sod run of
# grove_sph_sod_l1_test's options (its L1 errors against the exact solution, and the test's bounds)
# and the throughput benchmark (nx 312, 100 neighbours: 2.14e6 particles), and a two-rank run
# (several ranks search afresh whatever --lists says).
#
#   bash tools/sph_lists_check.sh      from the repository root
#
# Logs go to $OUT when it is set (the device tool fetches that folder), else to <build>/logs.
#   GROVE_GPU_BUILD_DIR  build folder (default build-sph-lists)
#   GROVE_GPU_JOBS       parallel build jobs (default 16)
#   GROVE_SPH_LISTS      list settings, ';'-separated (default below; the first is the baseline)
#   GROVE_SPH_BENCH      benchmark arguments (default --nx 312 --n-ngb 100 --max-steps 20)
#   GROVE_SKIP_TESTS     1: no test suites
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
BUILD=${GROVE_GPU_BUILD_DIR:-build-sph-lists}
LOGS=${OUT:-$BUILD/logs}
mkdir -p "$LOGS"
export PATH=/usr/local/cuda/bin:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
# Run 152's settings (a skin of 0.5 h_min or more is refused at nx 48: r_search + skin would reach
# half the tube's periodic width).
LISTS=${GROVE_SPH_LISTS:-"--lists fresh;--lists shared;--lists shared --sort-every 2;--lists shared --sort-every 4;--lists shared --sort-every 8;--lists shared --skin 0.3 --sort-every 4;--lists fresh"}
BENCH=${GROVE_SPH_BENCH:-"--nx 312 --n-ngb 100 --max-steps 20"}
step() { echo "[sph_lists] $(date +%T) $*"; }
status=0

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
echo "commit: $(git log -1 --format='%h %s' 2>/dev/null) (working tree may differ)"

GEN=()
[[ ! -f $BUILD/CMakeCache.txt ]] && command -v ninja > /dev/null && GEN=(-G Ninja)
step "configure"
cmake -S . -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DGROVE_CUDA=ON \
  -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc -DCMAKE_CUDA_ARCHITECTURES=90 -DGROVE_BUILD_TESTS=ON \
  -DGROVE_BUILD_SAMPLES=ON -DCMAKE_PREFIX_PATH="$PWD/.deps" > "$LOGS/configure.log" 2>&1 ||
  { tail -30 "$LOGS/configure.log"; exit 1; }
step "build"
if ! cmake --build "$BUILD" -j "${GROVE_GPU_JOBS:-16}" --target grove_gpu_resident_short_tests grove_gpu_sph_tests sph \
  > "$LOGS/build.log" 2>&1; then
  grep -m 40 -A 6 -E "error|Error" "$LOGS/build.log"
  step "build FAILED"
  exit 1
fi
SPH=$BUILD/samples/sph/sph
[[ -x $SPH ]] || { step "no samples/sph/sph (CLI11 missing? carry .deps)"; exit 1; }

if [[ ${GROVE_SKIP_TESTS:-0} != 1 ]]; then
  for suite in grove_gpu_resident_short_tests grove_gpu_sph_tests; do
    step "$suite"
    "$BUILD/tests/gpu/$suite" > "$LOGS/$suite.log" 2>&1 || status=1
    grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|^  \[|Failure|Expected|Which is" "$LOGS/$suite.log" | head -60
  done
fi

run_sph() {  # label, arguments...: one run; its summary lines
  local label=$1
  shift
  local dir
  dir=$(mktemp -d)
  if ! "$@" -o "$dir" > "$dir/log" 2>&1; then
    echo "$label: FAILED"
    tail -20 "$dir/log"
    status=1
  fi
  cat "$dir/log" >> "$LOGS/sph_runs.log"
  grep -E '^\{"sample":"sph"|neighbour lists|s per step|density tree, last|hydro tree, last' "$dir/log" | sed "s/^/$label: /"
  rm -rf "$dir"
}

step "Sod L1 (grove_sph_sod_l1_test's options; its bounds: binned 0.10 0.16 0.11, particles 0.10 0.18 0.11)"
IFS=';' read -r -a SETTINGS <<< "$LISTS"
for s in "${SETTINGS[@]}"; do
  # shellcheck disable=SC2086
  run_sph "sod [$s]" "$SPH" --nx 48 --n-ngb 50 --t-end 0.12 --gpu resident $s
done
step "benchmark $BENCH"
for s in "${SETTINGS[@]}"; do
  # shellcheck disable=SC2086
  run_sph "bench [$s]" "$SPH" $BENCH --gpu resident $s
done
step "two ranks (search afresh on several ranks)"
if command -v mpirun > /dev/null; then
  for s in "--lists fresh" "--lists shared --skin 0.5 --sort-every 4"; do
    # shellcheck disable=SC2086
    run_sph "np2 [$s]" mpirun -np 2 --bind-to none "$SPH" --nx 64 --max-steps 5 --gpu resident $s
  done
fi
step "done, status $status"
exit $status
