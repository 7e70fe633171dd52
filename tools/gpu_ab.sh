#!/usr/bin/env bash
# Before/after timings on one GPU machine, in one call: builds resident_benchmark and
# gravity_table2 from a baseline source tree and from this one, then runs them alternately
# (baseline, current, baseline, current, ...) so that both see the same machine state, and prints
# each run's step times and the medians. For "within x% of before" checks of a restructuring.
#
#   GROVE_AB_BASE=/path/to/baseline/source bash tools/gpu_ab.sh
#
# The baseline is a source tree (e.g. `git archive <commit> | tar -x -C base`). Knobs:
#   GROVE_AB_REPEATS        runs of each program per tree (default 3)
#   GROVE_AB_RESIDENT_ARGS  resident_benchmark arguments (default: 2^22 bodies, its defaults)
#   GROVE_AB_TABLE2_ARGS    gravity_table2 arguments (default "4194304 0.5 16 512 1000 4 16 G3":
#                           the FDPS-API program's G3 mode, 16-step reuse cycles)
#   GROVE_GPU_JOBS          parallel build jobs (default: nproc)
# Output (JSON lines, logs) goes to $OUT when set, else build-ab/results.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
BASE=${GROVE_AB_BASE:?set GROVE_AB_BASE to the baseline source tree}
REPEATS=${GROVE_AB_REPEATS:-3}
RESIDENT_ARGS=${GROVE_AB_RESIDENT_ARGS:---n 4194304}
TABLE2_ARGS=${GROVE_AB_TABLE2_ARGS:-4194304 0.5 16 512 1000 4 16 G3}
JOBS=${GROVE_GPU_JOBS:-$(nproc)}
LOGS=${OUT:-$PWD/build-ab/results}
mkdir -p "$LOGS"

build() {  # build <source> <build dir> <label>
  local src=$1 dir=$2 label=$3
  if ! cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DGROVE_CUDA=ON \
      -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DGROVE_BUILD_TESTS=OFF -DGROVE_BUILD_SAMPLES=ON > "$LOGS/configure_$label.log" 2>&1 ||
     ! cmake --build "$dir" -j "$JOBS" --target resident_benchmark gravity_table2 > "$LOGS/build_$label.log" 2>&1; then
    tail -n 20 "$LOGS/configure_$label.log" "$LOGS/build_$label.log"
    echo "gpu_ab: the $label build FAILED"
    exit 1
  fi
}
build "$BASE" "$BASE/build-ab" baseline &
baseline_build=$!
build "$PWD" "$PWD/build-ab/current" current &
current_build=$!
wait "$baseline_build" || exit 1
wait "$current_build" || exit 1

declare -A exe=(
  [baseline]="$BASE/build-ab/samples/benchmarks/gpu"
  [current]="$PWD/build-ab/current/samples/benchmarks/gpu"
)
: > "$LOGS/ab.jsonl"
for ((r = 1; r <= REPEATS; r++)); do
  for label in baseline current; do
    # shellcheck disable=SC2086
    OMP_NUM_THREADS=$(nproc) timeout 200 "${exe[$label]}/resident_benchmark" $RESIDENT_ARGS 2> "$LOGS/resident_$label.err" |
      sed "s/^{/{\"ab\":\"$label\",\"repeat\":$r,/" >> "$LOGS/ab.jsonl"
    # shellcheck disable=SC2086
    OMP_NUM_THREADS=$(nproc) timeout 300 "${exe[$label]}/gravity_table2" $TABLE2_ARGS > "$LOGS/table2_${label}_$r.log" 2>&1
    grep '"mode":"G3"' "$LOGS/table2_${label}_$r.log" | sed "s/^{/{\"ab\":\"$label\",\"repeat\":$r,/" >> "$LOGS/ab.jsonl"
  done
done

python3 - "$LOGS/ab.jsonl" <<'EOF'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
def series(label, pick):
    return [v for v in (pick(r) for r in rows if r.get("ab") == label) if v is not None]
def resident(r):
    return r["step_ms_median"] if r.get("bench") == "resident" and r.get("mode") == "rebuild" else None
def resident_reuse(r):
    return r["step_ms_median"] if r.get("bench") == "resident" and r.get("mode") == "reuse" else None
def g3_means(label):  # per repeat: the mean step of the G3 cycle (build step and reuse steps)
    by_repeat = {}
    for r in rows:
        if r.get("ab") == label and r.get("mode") == "G3" and "step_s" in r:
            by_repeat.setdefault(r["repeat"], []).append(1e3 * r["step_s"])
    return [statistics.mean(v) for _, v in sorted(by_repeat.items())]
print("gpu_ab: medians over repeats (ms); each repeat's value in brackets")
for name, pick in (("resident_benchmark rebuilt step", resident), ("resident_benchmark reuse step", resident_reuse),
                   ("gravity_table2 G3 step (mean over the cycle)", None)):
    b, c = (series("baseline", pick), series("current", pick)) if pick else (g3_means("baseline"), g3_means("current"))
    if not b or not c:
        print(f"  {name}: no data (baseline {len(b)}, current {len(c)})")
        continue
    mb, mc = statistics.median(b), statistics.median(c)
    print(f"  {name}: baseline {mb:.2f} {[round(x, 2) for x in b]}  current {mc:.2f} {[round(x, 2) for x in c]}"
          f"  change {100 * (mc / mb - 1):+.1f}%")
EOF
