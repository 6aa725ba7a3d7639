#!/usr/bin/env bash
# On a GPU machine: A/B of the fused kernel between this tree (A, the candidate) and another
# source tree (B, e.g. `git archive BRANCH | tar -x -C ab/b`, carried to the device as an ignored
# path), in one call: both built at once; the fused suite (medians, --samples) on B then A in
# the same warm session; `mtabench compare B A` (B the base); the fused GPU tests of A (and of B
# with AB_TEST_B=1); per-SASS-instruction profiles of A's seq 4096 and k 7 heads 32/32; memcheck
# and racecheck of A with the rest of the budget.
# Writes into OUT (at most 8 files come back): summary.txt (tables, compare, test lines, stage
# times), a.jsonl, b.jsonl, 1.sass.csv.gz, 2.sass.csv.gz, hotspots.log, ctest-a.log, ctest-b.log.
# Usage: tools/gpu-ab.sh OUT B_TREE [TOTAL_BUDGET_S]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-ab.sh OUT B_TREE [TOTAL_BUDGET_S]}
tree_b=$(realpath "${2:?usage: tools/gpu-ab.sh OUT B_TREE [TOTAL_BUDGET_S]}")
budget=${3:-540}
source tools/gpu-lib.sh
B_B=$tree_b/build-gpu

stage "build A ($B) and B ($B_B) at once"
half=$(( $(nproc) / 2 ))
build_one() {  # SRC BUILD LOG
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMTABENCH_BUILD_TESTS=ON >"$3" 2>&1 &&
    cmake --build "$2" -j"$half" >>"$3" 2>&1
}
build_one . "$B" /tmp/mtab-build-a.log & pa=$!
build_one "$tree_b" "$B_B" /tmp/mtab-build-b.log & pb=$!
wait $pa; ra=$?; wait $pb; rb=$?
[ "$ra" -eq 0 ] || { tail -40 /tmp/mtab-build-a.log | tee -a "$S"; exit 1; }
[ "$rb" -eq 0 ] || { tail -40 /tmp/mtab-build-b.log | tee -a "$S"; exit 1; }

suite() {  # BUILD NAME
  stage "fused suite, $2"
  timeout 150 "$1/mtabench" run workloads/seed.json workloads/seq-sweep.json workloads/shapes.json --impl fused \
    --max-time 0.2 --min-time 0.1 --samples --out "/tmp/mtab-$2" >>"$S" 2>&1
  echo "rc=$?" >>"$S"
  cp "$(ls /tmp/mtab-$2/runs/*.jsonl | tail -1)" "$out/$2.jsonl" 2>/dev/null
}
suite "$B_B" b
suite "$B" a
stage "compare b (base) a (new)"
"$M" compare "$out/b.jsonl" "$out/a.jsonl" >>"$S" 2>&1
echo "rc=$?" >>"$S"

if [ "${AB_PROFILE:-1}" = 1 ]; then
  stage "per-instruction profiles of A"
  timeout 150 tools/gpu-hotspots.sh "$out" "$B" workloads/seq-sweep.json:'^sweep-seq4096$' \
    workloads/shapes.json:'^k7-h32-b1-seq4096$'
  echo "rc=$?" >>"$S"
fi

# Nothing is timed from here on: the tests and the sanitizers share the GPU, all at once.
rem=$((budget - (SECONDS - t0)))
rem=$((rem < 30 ? 30 : rem))
stage "FusedGpu tests of A$([ "${AB_TEST_B:-0}" = 1 ] && echo " and B"), memcheck and racecheck of A, at once (${rem} s left)"
timeout "$rem" ctest --test-dir "$B" -R 'FusedGpu' -V --timeout 300 >"$out/ctest-a.log" 2>&1 &
pt=$!
if [ "${AB_TEST_B:-0}" = 1 ]; then
  timeout "$rem" ctest --test-dir "$B_B" -R 'FusedGpu' -V --timeout 300 >"$out/ctest-b.log" 2>&1 &
  pb=$!
fi
timeout "$rem" ctest --test-dir "$B" -R 'fused_memcheck|fused_racecheck' -j2 -V --timeout 600 >"$out/sanitizers.log" 2>&1 &
ps=$!
wait $pt; echo "FusedGpu A rc=$? (124: the budget ran out)" >>"$S"
grep -E "Test +#[0-9]+:|tests passed|random shapes" "$out/ctest-a.log" >>"$S"
if [ "${AB_TEST_B:-0}" = 1 ]; then
  wait $pb; echo "FusedGpu B rc=$?" >>"$S"
  grep -E "Test +#[0-9]+:|tests passed|random shapes" "$out/ctest-b.log" >>"$S"
fi
wait $ps; echo "sanitizers rc=$? (124: the budget ran out)" >>"$S"
grep -E "Test +#[0-9]+:|shard|ERROR SUMMARY|RACECHECK SUMMARY" "$out/sanitizers.log" >>"$S"
stage done
