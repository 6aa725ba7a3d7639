#!/usr/bin/env bash
# On a GPU machine: the instruction-cache counters of the fused kernel (fused_kernel*, not the
# small path's) in one workload. Nsight Compute's names vary by version, so it lists the ones it
# has (sm__icc_*: the SM's instruction cache; smsp__imc_* would be the immediate-constant cache)
# and collects every icc one, with the cycles and instructions executed, on one launch
# (fused_ncu_metrics; JOURNAL.md, thirty-sixth session).
# Usage: tools/gpu-icache.sh OUT BUILD_DIR [FILE:REGEX]   (default: bf16 seq 4096)
# Writes OUT/icache.txt (the table) and OUT/icache-metrics.txt (the names found).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-icache.sh OUT BUILD_DIR [FILE:REGEX]}
build=${2:?usage: tools/gpu-icache.sh OUT BUILD_DIR [FILE:REGEX]}
spec=${3:-'workloads/seq-sweep.json:^sweep-seq4096$'}
source tools/gpu-lib.sh
ncu --query-metrics 2>&1 | grep -E '^sm__icc_' >"$out/icache-metrics.txt"
names=$(awk '{print $1}' "$out/icache-metrics.txt" | grep -v 'rate$' | sed 's/$/.sum/' | paste -sd, -)
[ -n "$names" ] || { echo "gpu-icache.sh: this ncu has no sm__icc_ metrics" | tee -a "$out/icache.txt"; exit 1; }
fused_ncu_metrics "$build" "$names,smsp__inst_executed.sum,sm__cycles_elapsed.avg" "$spec" >>"$out/icache.txt"
echo "icache rc=$?" >>"$out/icache.txt"
