#!/usr/bin/env bash
# On a GPU machine: Nsight Compute profiles of the fused kernel, the timer-agreement figure, the
# cuDNN smoke run and the GPU tests, each stage under a time limit. Writes into OUT:
#   summary.txt  stage log, agreement table, smoke table, ctest summary
#   ncu.txt      ncu details (speed of light, memory, warp states, scheduler, occupancy) per case
#   ctest.log    ctest -L gpu
# Usage: tools/gpu-profile.sh OUT [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-profile.sh OUT [BUILD_DIR]}
B=${2:-build-gpu}
M=$B/mtabench
S=$out/summary.txt
mkdir -p "$out"
t0=$SECONDS
stage() { echo "=== [$((SECONDS - t0)) s] $*" | tee -a "$S"; }

stage build
{ cmake -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DMTABENCH_BUILD_TESTS=ON && cmake --build $B -j"$(nproc)"; } \
  >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }

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

stage "timer agreement (figure 3): protocol median vs ncu gpu__time_duration"
timeout 150 python3 tools/ncu_agreement.py "$M" workloads/seq-sweep.json '^sweep-seq(1024|4096)$' fused reference \
  >>"$S" 2>&1
echo "rc=$?" >>"$S"

stage "cudnn on the smoke suite"
timeout 60 "$M" run workloads/smoke.json --impl cudnn,fused,reference --max-time 0.2 --min-time 0.05 \
  --out /tmp/mtab-smoke >>"$S" 2>&1
echo "rc=$?" >>"$S"

stage "ctest -L gpu"
rem=$(( ${TOTAL_BUDGET:-560} - (SECONDS - t0) )); rem=$(( rem < 30 ? 30 : rem )); echo "ctest budget ${rem} s" >>"$S"
timeout "$rem" ctest --test-dir $B -L gpu --output-on-failure --timeout 240 >"$out/ctest.log" 2>&1
echo "rc=$?" >>"$S"
tail -25 "$out/ctest.log" >>"$S"
stage done
