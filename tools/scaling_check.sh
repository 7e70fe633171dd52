#!/usr/bin/env bash
# The scaling check, for a GPU machine of one or more GPUs (written for the device tool's
# nvidia-h100-x2 / nvidia-h200-x2: sm_90, CUDA 13, OpenMPI, no package installs): builds
# samples/scaling and fmm_benchmark with CUDA into their own build folder, runs the series of
# doc/scaling.md (GPU paths at one rank per GPU; the SPH and FMM paths on CPU ranks) and the FMM
# benchmark of doc/fmm.md, and prints a short table. CLI11 comes along in .deps (git-excluded;
# carry it), found through CMAKE_PREFIX_PATH.
#
#   bash tools/scaling_check.sh            from the repository root
#
# Output (to $OUT when set, else <build>/scaling_check): log.txt, series.tar (one JSONL file per
# series, tools/scaling_series.py's format; plot them with --plot-only), fmm_benchmark.jsonl.
# Environment knobs:
#   GROVE_SCALING_BUILD_DIR  build folder (default build-scaling-check)
#   GROVE_SCALING_SERIES     which series: any of "gpu sph fmm resident plummer multiwalk sph-resident
#                            stream" (default "gpu sph fmm"; gpu = resident and multiwalk). resident:
#                            the cold sphere, weak and strong, and at the largest rank count the
#                            issue-35 baseline (merged tree, staged payloads, sampled cuts, FDPS's
#                            groups); plummer: the user program that decomposes, exchanges and rebuilds
#                            every step; multiwalk: weak, and with --tree-order; sph-resident: the SPH
#                            sample's GPU step; stream: the host's memory bandwidth (tools/stream_probe)
#   GROVE_SCALING_RANKS      rank counts (default "1 2")
#   GROVE_SCALING_THREADS    OpenMP threads per rank (default 16)
#   GROVE_SCALING_STRONG_N   N of the GPU paths' strong series (default 8388608; issue 19's
#                            four-GPU run asks 16777216)
#   GROVE_SCALING_EXTRA      more runs at the largest rank count, ';'-separated "name|arguments" (each a
#                            series of its own: e.g. one option changed, to weigh what it does)
#   GROVE_FMM_BENCH_ARGS     fmm_benchmark arguments, ';'-separated runs ("" skips it)
#   GROVE_FMM_BENCH_THREADS  OpenMP threads of fmm_benchmark (default 16)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD
BUILD=${GROVE_SCALING_BUILD_DIR:-build-scaling-check}
LOGS=${OUT:-$ROOT/$BUILD/scaling_check}
SERIES_DIR=$ROOT/$BUILD/series
mkdir -p "$LOGS" "$SERIES_DIR"
export PATH=/usr/local/cuda/bin:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
[[ -d $ROOT/.deps ]] && export CMAKE_PREFIX_PATH=$ROOT/.deps${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
RANKS=${GROVE_SCALING_RANKS:-1 2}
THREADS=${GROVE_SCALING_THREADS:-16}
SERIES=${GROVE_SCALING_SERIES:-gpu sph fmm}
FMM_ARGS=${GROVE_FMM_BENCH_ARGS-"-n 1048576 --orders 4 6 8 --thetas 0.45 0.5 0.6 0.7 --fmm-leaf 32 --tree-thetas 0.15 0.2 0.3 0.4 0.5 --repeat 1 --check 1000"}
exec > >(tee "$LOGS/log.txt") 2>&1
step() { echo "[scaling_check] $(date +%T) $*"; }
status=0

step "machine: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | xargs), $(nproc) logical CPUs"
lscpu 2>/dev/null | grep -E "^(Model name|Socket|Core|Thread|NUMA node)" | sed 's/^/  /'
step "configure and build"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DGROVE_CUDA=ON -DGROVE_BUILD_TESTS=OFF > "$BUILD.configure.log" 2>&1 ||
  { cat "$BUILD.configure.log"; exit 1; }
cmake --build "$BUILD" -j "$(nproc)" --target scaling fmm_benchmark > "$BUILD.build.log" 2>&1 ||
  { tail -50 "$BUILD.build.log"; exit 1; }
EXE=$BUILD/samples/scaling/scaling

series() {  # name, then tools/scaling_series.py arguments
  local name=$1
  shift
  step "series $name: $*"
  python3 tools/scaling_series.py --exe "$EXE" --ranks $RANKS --threads "$THREADS" --out "$SERIES_DIR/$name" "$@" ||
    { [[ -s $SERIES_DIR/$name.jsonl ]] || status=1; }  # the plot needs matplotlib; the JSONL is what counts
}
LARGEST=$(echo $RANKS | tr ' ' '\n' | sort -n | tail -1)
STRONG_N=${GROVE_SCALING_STRONG_N:-8388608}
baseline() {  # name, then arguments: the same run at the largest rank count only
  local name=$1
  shift
  step "series $name (largest rank count): $*"
  python3 tools/scaling_series.py --exe "$EXE" --ranks "$LARGEST" --threads "$THREADS" --out "$SERIES_DIR/$name" "$@" ||
    { [[ -s $SERIES_DIR/$name.jsonl ]] || status=1; }
}
if [[ " $SERIES " == *" gpu "* || " $SERIES " == *" resident "* ]]; then
  series resident_weak --mode weak -n 4194304 --path resident --steps 16 -- --n-reuse 16
  series resident_strong --mode strong -n "$STRONG_N" --path resident --steps 16 -- --n-reuse 16
  baseline resident_weak_baseline --mode weak -n 4194304 --path resident --steps 16 -- --n-reuse 16 --let merged \
    --transport staged --cuts sampled --group-target 0
  baseline resident_strong_baseline --mode strong -n "$STRONG_N" --path resident --steps 16 -- --n-reuse 16 \
    --let merged --transport staged --cuts sampled --group-target 0
fi
if [[ " $SERIES " == *" plummer "* ]]; then
  series plummer_weak --mode weak -n 4194304 --path resident --steps 8 -- --ic plummer --eps 0.015625 --n-reuse 1 \
    --decompose-every 1
  series plummer_strong --mode strong -n "$STRONG_N" --path resident --steps 8 -- --ic plummer --eps 0.015625 \
    --n-reuse 1 --decompose-every 1
fi
if [[ " $SERIES " == *" gpu "* || " $SERIES " == *" multiwalk "* ]]; then
  series multiwalk_weak --mode weak -n 4194304 --path multiwalk --steps 16 -- --n-reuse 16
  [[ " $SERIES " == *" gpu "* ]] &&
    series multiwalk_strong --mode strong -n "$STRONG_N" --path multiwalk --steps 16 -- --n-reuse 16
  baseline multiwalk_weak_tree_order --mode weak -n 4194304 --path multiwalk --steps 16 -- --n-reuse 16 --tree-order
fi
if [[ " $SERIES " == *" sph-resident "* ]]; then
  series sph_resident_strong --mode strong -n 2097152 --path sph-resident --steps 3 -- --n-ngb 100
  series sph_resident_weak --mode weak -n 2097152 --path sph-resident --steps 3 -- --n-ngb 100
fi
if [[ " $SERIES " == *" sph "* ]]; then
  series sph_strong --mode strong -n 2097152 --path sph --steps 3
  series sph_weak --mode weak -n 1048576 --path sph --steps 3
fi
if [[ " $SERIES " == *" fmm "* ]]; then
  series fmm_strong --mode strong -n 2097152 --path fmm --steps 2 -- --order 6 --theta 0.6 --n-leaf 32
  series fmm_weak --mode weak -n 1048576 --path fmm --steps 2 -- --order 6 --theta 0.6 --n-leaf 32
fi
if [[ -n ${GROVE_SCALING_EXTRA:-} ]]; then
  IFS=';' read -r -a extra_runs <<< "$GROVE_SCALING_EXTRA"
  for run in "${extra_runs[@]}"; do
    # shellcheck disable=SC2086
    baseline "${run%%|*}" ${run#*|}
  done
fi
if [[ " $SERIES " == *" stream "* ]]; then
  # The host's memory bandwidth: one rank's threads, then as many ranks as the series' largest.
  g++ -O3 -march=native -fopenmp tools/stream_probe.cpp -o "$BUILD/stream_probe" || status=1
  step "stream probe: 1 process x $THREADS threads, then $LARGEST processes x $THREADS threads"
  OMP_NUM_THREADS=$THREADS OMP_PROC_BIND=close OMP_PLACES=cores "$BUILD/stream_probe" | tee "$LOGS/stream.jsonl"
  mpirun -np "$LARGEST" --bind-to none -x OMP_NUM_THREADS="$THREADS" "$BUILD/stream_probe" | tee -a "$LOGS/stream.jsonl"
fi
tar -C "$SERIES_DIR" -cf "$LOGS/series.tar" . 2>/dev/null

if [[ -n $FMM_ARGS ]]; then
  IFS=';' read -ra runs <<< "$FMM_ARGS"
  for args in "${runs[@]}"; do
    step "fmm_benchmark $args (OMP_NUM_THREADS=${GROVE_FMM_BENCH_THREADS:-16})"
    # shellcheck disable=SC2086
    OMP_NUM_THREADS=${GROVE_FMM_BENCH_THREADS:-16} OMP_PROC_BIND=close OMP_PLACES=cores "$BUILD/samples/benchmarks/fmm_benchmark" $args |
      tee -a "$LOGS/fmm_benchmark.jsonl" || status=1
  done
fi

step "summary (seconds per step; strong: speed-up, weak: efficiency)"
for f in "$SERIES_DIR"/*.jsonl; do
  [[ -s $f ]] || continue
  python3 - "$f" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
base = min(rows, key=lambda r: r["ranks"])
for r in rows:
    ratio = base["seconds_per_step"] / r["seconds_per_step"]
    what = "speed-up %.2fx" % ratio if r["mode"] == "strong" else "efficiency %.3f" % ratio
    s = r["stages"]
    print("%-26s ranks %d gpus %d N %9d  %.4f s/step  %-16s | dec %.2f exch %.2f tree %.2f let %.2f glob %.2f walk %.2f int %.2f ms | %.0f int/p peers %.1f" % (
          sys.argv[1].rsplit("/", 1)[-1][:-6], r["ranks"], r["gpus"], r["n_total"], r["seconds_per_step"], what,
          1e3 * s["decompose"], 1e3 * s["exchange"], 1e3 * s["local_tree"], 1e3 * s["let"], 1e3 * s["global_tree"],
          1e3 * s["walk_force"], 1e3 * s["integrate"], r["interactions_per_particle"], r.get("let_peers_max", 0)))
EOF
done
step "done, status $status"
exit $status
