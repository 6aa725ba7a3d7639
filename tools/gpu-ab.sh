#!/usr/bin/env bash
# On a GPU machine: A/B of the fused kernel between this tree (A, the candidate) and another
# source tree (B, e.g. `git archive BRANCH | tar -x -C ab/b`, carried to the device as an ignored
# path), in one call: both built at once; the fused suite (medians, --samples) on B then A in
# the same warm session; `mtabench compare B A` (B the base); per-SASS-instruction profiles of
# A's seq 4096 and k 7 heads 32/32 (AB_PROFILE=0: none); then, untimed and all at once, the fused
# GPU tests of A (and of B with AB_TEST_B=1) and memcheck and racecheck of A, with the rest of
# the budget.
# Writes into OUT: summary.txt (tables, compare, test lines, stage times), a.jsonl, b.jsonl,
# 1.sass.csv.gz, 2.sass.csv.gz, hotspots.log, ctest-1.log (A's tests and sanitizers) and
# ctest-2.log (B's tests).
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
build_tree . "$B" /tmp/mtab-build-a.log "$half" & pa=$!
build_tree "$tree_b" "$B_B" /tmp/mtab-build-b.log "$half" & pb=$!
wait $pa; ra=$?; wait $pb; rb=$?
[ "$ra" -eq 0 ] || { tail -40 /tmp/mtab-build-a.log | tee -a "$S"; exit 1; }
[ "$rb" -eq 0 ] || { tail -40 /tmp/mtab-build-b.log | tee -a "$S"; exit 1; }

fused_suite "$B_B" b
fused_suite "$B" a
stage "compare b (base) a (new)"
"$M" compare "$out/b.jsonl" "$out/a.jsonl" >>"$S" 2>&1
echo "rc=$?" >>"$S"

[ "${AB_PROFILE:-1}" = 1 ] && fused_profiles "$B"

rem=$((budget - (SECONDS - t0)))
if [ "${AB_TEST_B:-0}" = 1 ]; then
  fused_checks $((rem < 30 ? 30 : rem)) "$B" "$B_B"
else
  fused_checks $((rem < 30 ? 30 : rem)) "$B"
fi
stage done
