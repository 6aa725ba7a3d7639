#!/usr/bin/env bash
# On a GPU machine: Nsight Compute profiles of the fused kernel, one launch per case (the figures,
# timer agreement and GPU tests are tools/gpu-check.sh's). Writes into OUT:
#   summary.txt  stage log
#   ncu.txt      ncu details (speed of light, memory, warp states, scheduler, occupancy) per case
# Usage: tools/gpu-profile.sh OUT [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-profile.sh OUT [BUILD_DIR]}
gpu_build_dir=${2:-build-gpu}
source tools/gpu-lib.sh

build_gpu

stage "ncu: fused kernel, one launch per case"
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats
  --section Occupancy --section LaunchStats --section InstructionStats --section ComputeWorkloadAnalysis"
for spec in "workloads/seed.json:^seed$" "workloads/seq-sweep.json:^sweep-seq4096$" \
            "workloads/shapes.json:^fp32-seq4096$" "workloads/shapes.json:^k7-h32-b1-seq4096$"; do
  echo "##### ${spec}" >>"$out/ncu.txt"
  # shellcheck disable=SC2086
  timeout 90 ncu --clock-control none --cache-control all -k regex:'fused_(small_)?kernel' --launch-skip 12 --launch-count 1 \
    $sections "$M" run "${spec%%:*}" --filter "${spec##*:}" --impl fused --no-isolate --no-records --quiet \
    --max-time 0.2 --min-time 0.05 >>"$out/ncu.txt" 2>&1
  echo "rc=$? ${spec}" >>"$S"
done

stage done
