#!/usr/bin/env bash
# On a GPU machine: where one launch of the fused kernel spends its time, item by item. Builds
# mtabench twice at once, as usual (build-gpu) and with MTABENCH_FUSED_TIMELINE=1
# (build-timeline: thread 0 of each block stamps %globaltimer at each item's start and end, and in
# the few-heads conv item after its statistics, fill and contraction; in the warp-specialised
# kernel its producer's and its consumers' steps apart; fused_common.cuh, fused_params.h); runs
# each case with both (the normal build's median says how much the stamps, and the spills they
# cause, slow the kernel: read the timeline for its shape, the normal build for the time); then
# tools/fused_timeline.py on the last launch's timeline of each case.
# TIMELINE_TWICE=1: each case also with the timeline binary and MTABENCH_FUSED_TIMELINE_TWICE set
# (each call launches the kernel twice, the stamps are the second launch's: its code already in
# L2), reported apart: the start-up of the two timelines tells code fetch from data latency.
# Writes OUT/summary.txt (both builds' tables, the timeline reports) and OUT/timeline.tar.gz (the
# per-workload CSVs; the second launch's under twice/).
# Usage: [TIMELINE_CASES="FILE:REGEX ..."] [TIMELINE_BINS=20] [TIMELINE_TWICE=1] tools/gpu-timeline.sh OUT
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-timeline.sh OUT}
cases=${TIMELINE_CASES:-"workloads/seq-sweep.json:^sweep-seq(1024|2048|4096|8192)\$ workloads/shapes.json:^(fp16-seq4096|k5-h16-b4-seq2048)\$"}
source tools/gpu-lib.sh

stage "build the normal and the timeline binaries at once (mtabench only)"
jobs=$(($(nproc) / 2))
BUILD_TESTS=OFF build_tree . build-timeline /tmp/mtab-build-timeline.log "$jobs" \
  -DCMAKE_CUDA_FLAGS="-DMTABENCH_FUSED_TIMELINE=1" -DCMAKE_CXX_FLAGS="-DMTABENCH_FUSED_TIMELINE=1" &
pid=$!
BUILD_TESTS=OFF build_tree . "$B" /tmp/mtab-build.log "$jobs" || { tail -40 /tmp/mtab-build.log | tee -a "$S"; exit 1; }
wait "$pid" || { tail -40 /tmp/mtab-build-timeline.log | tee -a "$S"; exit 1; }

dir=/tmp/mtab-timeline
mkdir -p "$dir"
# One case (FILE:REGEX) with one binary, its last launch's timeline into DIR (extra environment
# first, e.g. MTABENCH_FUSED_TIMELINE_TWICE=1). Usage: run_case BUILD DIR SPEC [VAR=VALUE ...]
run_case() {
  local build=$1 into=$2 spec=$3
  shift 3
  env "$@" MTABENCH_FUSED_TIMELINE_DIR="$into" timeout 120 "$build/mtabench" run "${spec%%:*}" --filter "${spec#*:}" \
    --impl fused --no-records --max-time 0.3 --min-time 0.1 >>"$S" 2>&1
  echo "rc=$?" >>"$S"
}
# tools/fused_timeline.py on every CSV in DIR. Usage: report DIR
report() {
  python3 tools/fused_timeline.py --bins "${TIMELINE_BINS:-20}" "$1"/*.csv >>"$S" 2>&1
  echo "rc=$?" >>"$S"
}
for spec in $cases; do
  for build in "$B" build-timeline; do
    stage "$build: ${spec}"
    run_case "$build" "$dir" "$spec"
  done
  if [ "${TIMELINE_TWICE:-0}" = 1 ]; then
    stage "build-timeline, each call launching twice: ${spec}"
    mkdir -p "$dir/twice"
    run_case build-timeline "$dir/twice" "$spec" MTABENCH_FUSED_TIMELINE_TWICE=1
  fi
done
stage "timeline reports (tools/fused_timeline.py, bins ${TIMELINE_BINS:-20})"
report "$dir"
if [ "${TIMELINE_TWICE:-0}" = 1 ]; then
  stage "timeline reports of the second launches (MTABENCH_FUSED_TIMELINE_TWICE)"
  report "$dir/twice"
fi
tar -czf "$out/timeline.tar.gz" -C "$dir" .
stage done
