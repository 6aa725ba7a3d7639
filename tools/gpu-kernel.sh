#!/usr/bin/env bash
# On a GPU machine: one iteration of work on the fused kernel, in about 6 minutes of device time.
#   build; the default suite with fused (medians, --samples records); per-SASS-instruction
#   profiles of seq 4096 (few heads) and k 7 heads 32/32 (many); the fused GPU tests, memcheck
#   and racecheck with the rest of the budget.
# Writes into OUT (at most 8 files come back from the device): summary.txt (suite table, test
# results, stage times), fused.jsonl (the suite's records), 1.sass.csv.gz and 2.sass.csv.gz
# (read them with tools/sass_hotspots.py), hotspots.log, ctest.log.
# The full pass with cuDNN, the reference, A/A, leaderboard and the busy GPU is tools/gpu-check.sh.
# Usage: tools/gpu-kernel.sh OUT [MAX_TIME_S] [TOTAL_BUDGET_S]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-kernel.sh OUT [MAX_TIME_S] [TOTAL_BUDGET_S]}
mt=${2:-0.2}
budget=${3:-360}
source tools/gpu-lib.sh

build_gpu

stage "fused on seed + seq-sweep + shapes (--max-time $mt)"
timeout 120 $M run workloads/seed.json workloads/seq-sweep.json workloads/shapes.json --impl fused \
  --max-time "$mt" --min-time 0.1 --samples --quiet --out /tmp/mtab-k >>"$S" 2>&1
echo "rc=$?" >>"$S"
cp "$(ls /tmp/mtab-k/runs/*.jsonl | tail -1)" "$out/fused.jsonl" 2>/dev/null

stage "per-instruction profiles (Nsight Compute source counters)"
timeout 150 tools/gpu-hotspots.sh "$out" $B workloads/seq-sweep.json:'^sweep-seq4096$' \
  workloads/shapes.json:'^k7-h32-b1-seq4096$'
echo "rc=$?" >>"$S"

stage "fused GPU tests, memcheck, racecheck (the rest of the budget)"
rem=$((budget - (SECONDS - t0)))
rem=$((rem < 30 ? 30 : rem))
echo "ctest budget ${rem} s" >>"$S"
timeout "$rem" ctest --test-dir $B -R 'FusedGpu|fused_memcheck|fused_racecheck' -V --timeout 300 \
  >"$out/ctest.log" 2>&1
echo "rc=$? (124: the budget ran out; see ctest.log for what finished)" >>"$S"
grep -E "Test +#[0-9]+:|tests passed|random shapes|ERROR SUMMARY" "$out/ctest.log" >>"$S"
stage done
