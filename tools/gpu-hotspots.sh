#!/usr/bin/env bash
# On a GPU machine: where the fused kernel's instructions and stalls go, per SASS instruction.
# One Nsight Compute launch per case with the SourceCounters section; the per-instruction table
# (instructions executed, warp-stall samples) is exported as CSV for tools/sass_hotspots.py. The
# log also gets the ComputeWorkloadAnalysis section: how busy each pipe was (its rule names the
# busiest, e.g. the tensor pipe, and its share), which the stall samples alone cannot say.
# Usage: tools/gpu-hotspots.sh OUT BUILD_DIR WORKLOADS_JSON:FILTER_REGEX [...]
# Writes OUT/<n>.sass.csv.gz (n = 1, 2, ... in argument order) and OUT/hotspots.log.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-hotspots.sh OUT BUILD_DIR FILE:REGEX [...]}
M=${2:?}/mtabench
shift 2
mkdir -p "$out"
n=0
for spec in "$@"; do
  n=$((n + 1))
  rep=/tmp/mtab-hot-$n
  echo "##### $n ${spec}" >>"$out/hotspots.log"
  rm -f "$rep.ncu-rep"  # never export a report an earlier call left
  timeout 120 ncu --clock-control none --cache-control all -k regex:'fused_(small_)?kernel' --launch-skip 12 \
    --launch-count 1 --section SourceCounters --section InstructionStats --section WarpStateStats \
    --section ComputeWorkloadAnalysis \
    --import-source no -f -o "$rep" \
    "$M" run "${spec%%:*}" --filter "${spec##*:}" --impl fused --no-isolate --no-records --quiet \
    --max-time 0.2 --min-time 0.05 >>"$out/hotspots.log" 2>&1
  rc=$?
  echo "profile rc=$rc" >>"$out/hotspots.log"
  [ "$rc" -eq 0 ] && [ -f "$rep.ncu-rep" ] || continue
  ncu -i "$rep.ncu-rep" --page source --csv --print-source sass 2>>"$out/hotspots.log" | gzip >"$out/$n.sass.csv.gz"
  ncu -i "$rep.ncu-rep" --page details --section SourceCounters --section WarpStateStats \
    --section ComputeWorkloadAnalysis >>"$out/hotspots.log" 2>&1
done
