#!/usr/bin/env bash
# On a GPU machine: A/B of the fused kernel between this tree (A, the candidate) and another
# source tree (B, e.g. `tools/base-tree.sh ab/b BRANCH --with-tests`, carried to the device as an ignored
# path), in one call: both built at once; the fused suite (medians, --samples) on B then A in
# the same warm session; `mtabench compare B A` (B the base); per-SASS-instruction profiles of
# A's seq 4096 and k 7 heads 32/32 (PROFILE_CASES="FILE:REGEX ...": others, at most three;
# AB_PROFILE=0: none); then, untimed and all at once, the fused GPU tests of A (and of B with
# AB_TEST_B=1) and memcheck and racecheck of A, with the rest of the budget (AB_CHECKS=0: none,
# when the call's time is wanted for something else; then only the mtabench binaries are built). AB_FILTER="REGEX": only the matching workloads are timed
# (SUITE_FILTER of gpu-lib.sh). AB_TRAFFIC=1: DRAM bytes and L2 hit rate of every tree at seq
# 4096 (fused_traffic; AB_TRAFFIC_CASE="FILE:REGEX" another workload), after the suites.
# AB_MORE="TREE ...": further candidates C, D, ... (trees like B), built with A and B, timed
# after A and each compared with B: one device call for several experiments; their records go
# into one file, more.jsonl (each record's source_digest names its tree), as the device hands
# back at most 8 files; profiles and tests stay A's. COMPARE_THRESHOLD sets the verdicts' threshold
# (gpu-lib.sh's compare_threshold).
# Writes into OUT: summary.txt (tables, compare, test lines, stage times), a.jsonl, b.jsonl,
# 1.sass.csv.gz, 2.sass.csv.gz, hotspots.log, ctest-1.log (A's tests and sanitizers),
# ctest-2.log (B's tests, with AB_TEST_B=1) and more.jsonl (with AB_MORE).
# Usage: [AB_MORE="TREE ..."] tools/gpu-ab.sh OUT B_TREE [TOTAL_BUDGET_S]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-ab.sh OUT B_TREE [TOTAL_BUDGET_S]}
tree_b=$(realpath "${2:?usage: tools/gpu-ab.sh OUT B_TREE [TOTAL_BUDGET_S]}")
budget=${3:-540}
source tools/gpu-lib.sh
[ "${AB_CHECKS:-1}" = 0 ] && export BUILD_TESTS=OFF
[ -n "${AB_FILTER:-}" ] && export SUITE_FILTER=$AB_FILTER
B_B=$tree_b/build-gpu

# Every tree to build: name, source, build directory (A first, B second, then AB_MORE's).
names=(a b) srcs=(. "$tree_b") dirs=("$B" "$B_B")
letters=(c d e f g h)
for t in ${AB_MORE:-}; do
  [ "${#names[@]}" -lt 8 ] || { echo "gpu-ab.sh: at most six trees in AB_MORE" | tee -a "$S"; exit 2; }
  t=$(realpath "$t")
  names+=("${letters[${#names[@]} - 2]}") srcs+=("$t") dirs+=("$t/build-gpu")
done

stage "build ${names[*]} at once (${dirs[*]})"
jobs=$(( $(nproc) / ${#names[@]} ))
pids=()
for k in "${!names[@]}"; do
  build_tree "${srcs[$k]}" "${dirs[$k]}" "/tmp/mtab-build-${names[$k]}.log" $((jobs > 0 ? jobs : 1)) & pids+=($!)
done
for k in "${!names[@]}"; do
  wait "${pids[$k]}" || { tail -40 "/tmp/mtab-build-${names[$k]}.log" | tee -a "$S"; exit 1; }
done

fused_suite "$B_B" b
fused_suite "$B" a
for k in "${!names[@]}"; do
  [ "$k" -ge 2 ] && fused_suite "${dirs[$k]}" "${names[$k]}"
done
for k in "${!names[@]}"; do
  [ "$k" -eq 1 ] && continue
  stage "compare b (base) ${names[$k]} (new)"
  "$M" compare --threshold "$compare_threshold" "$out/b.jsonl" "$out/${names[$k]}.jsonl" >>"$S" 2>&1
  echo "rc=$?" >>"$S"
  if [ "$k" -ge 2 ]; then
    cat "$out/${names[$k]}.jsonl" >>"$out/more.jsonl"
    mv "$out/${names[$k]}.jsonl" "/tmp/mtab-${names[$k]}.jsonl"
  fi
done

if [ "${AB_TRAFFIC:-0}" = 1 ]; then
  for k in "${!names[@]}"; do fused_traffic "${dirs[$k]}" "${names[$k]}" "${AB_TRAFFIC_CASE:-}"; done
fi
[ "${AB_PROFILE:-1}" = 1 ] && fused_profiles "$B"

if [ "${AB_CHECKS:-1}" = 0 ]; then
  stage "done (AB_CHECKS=0: no tests)"
  exit 0
fi
rem=$((budget - (SECONDS - t0)))
tested=("$B")
[ "${AB_TEST_B:-0}" = 1 ] && tested+=("$B_B")
fused_checks $((rem < 30 ? 30 : rem)) "${tested[@]}"
stage done
