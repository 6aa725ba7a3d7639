#!/usr/bin/env bash
# On a GPU machine: one iteration of work on the fused kernel, in about 6 minutes of device time.
#   build; the default suite with fused (medians, --samples records); per-SASS-instruction
#   profiles of seq 4096 (few heads) and k 7 heads 32/32 (many); then, untimed and all at once,
#   the fused GPU tests, memcheck and racecheck with the rest of the budget.
# Writes into OUT (at most 8 files come back from the device): summary.txt (suite table, test
# results, stage times), fused.jsonl (the suite's records), 1.sass.csv.gz and 2.sass.csv.gz
# (read them with tools/sass_hotspots.py), hotspots.log, ctest-1.log (tests and sanitizers).
# The full pass with cuDNN, the reference, A/A, leaderboard and the busy GPU is tools/gpu-check.sh.
# Usage: tools/gpu-kernel.sh OUT [MAX_TIME_S] [TOTAL_BUDGET_S]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-kernel.sh OUT [MAX_TIME_S] [TOTAL_BUDGET_S]}
mt=${2:-0.2}
budget=${3:-360}
source tools/gpu-lib.sh

build_gpu

fused_suite "$B" fused "$mt"

fused_profiles "$B"

rem=$((budget - (SECONDS - t0)))
fused_checks $((rem < 30 ? 30 : rem)) "$B"
stage done
