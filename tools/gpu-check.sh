#!/usr/bin/env bash
# On a GPU machine: build (Release, the local GPU's architecture), then the stages asked for,
# each under a time limit, logs into OUT. Prints a short summary at the end.
#   tools/gpu-check.sh OUT [build] [verify] [gputests] [suite] [ncu] [all]
# Stages:
#   verify    mtabench verify of every shipped workload with every implementation (gate only)
#   gputests  ctest -L gpu (GPU unit tests, sanitizers, adversarial)
#   suite     mtabench run of the default suite (seed, seq sweep, shapes), every implementation
#   ncu       Nsight Compute on the fused kernel at seq 4096 and at the k7/32-head shape
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-check.sh OUT [stages...]}
shift
mkdir -p "$out"
stages=" ${*:-all} "
want() { [[ $stages == *" $1 "* || $stages == *" all "* ]]; }
bin=build-gpu/mtabench
summary=()
stage() {  # stage NAME LIMIT_S CMD...
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  echo "=== $name: $*" | tee -a "$out/stages.log"
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  summary+=("$name rc=$rc $((SECONDS - t0))s")
  echo "=== $name rc=$rc in $((SECONDS - t0)) s" | tee -a "$out/stages.log"
  tail -n 25 "$out/$name.log"
  return $rc
}

nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || true
stage configure 300 cmake -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMTABENCH_BUILD_TESTS=ON || exit 1
stage build 900 cmake --build build-gpu -j"$(nproc)" || exit 1
want verify && stage verify 900 $bin verify workloads --quiet
want gputests && stage gputests 1500 ctest --test-dir build-gpu -L gpu --output-on-failure -j1
want suite && stage suite 1800 $bin run workloads/seed.json workloads/seq-sweep.json workloads/shapes.json \
  --out "$out/results" --samples --quiet
if want ncu; then
  # One launch each (the gate's first call), replayed by Nsight Compute for its counters.
  for w in 'sweep-seq4096$' 'k7-h32-b1-seq4096$' 'fp32-seq4096$'; do
    stage "ncu-${w//[^a-z0-9]/}" 600 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis -k regex:fused_kernel -c 1 \
      $bin verify workloads --filter "$w" --impl fused --no-isolate --quiet
  done
fi
echo
printf '%s\n' "${summary[@]}"
