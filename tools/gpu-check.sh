#!/usr/bin/env bash
# On a GPU machine: build, then gather the figures in one pass, each stage under a time limit so
# the whole fits one short lease. Writes at most 8 files into OUT:
#   summary.txt   the tables of every stage, compare's verdicts, timings of the stages
#   a.jsonl       run A: fused and cudnn on the default suite (seed, seq sweep, shapes)
#   aref.jsonl    run A: reference on seed and the seq sweep
#   b.jsonl       run B: fused and cudnn on seed and the sweep again (A/A with run A)
#   gtest.log     GPU tests: cudnn, fused property test, GPU reference, timing
#   compare.md    mtabench compare A B;   LEADERBOARD.md  from A, B and the reported records
#   build.log
# Usage: tools/gpu-check.sh OUT [MAX_TIME_S]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-check.sh OUT [MAX_TIME_S]}
mt=${2:-0.3}
mkdir -p "$out"
B=build-gpu
M=$B/mtabench
S=$out/summary.txt
t0=$SECONDS
stage() { echo "=== [$((SECONDS - t0)) s] $*" | tee -a "$S"; }
first_jsonl() { ls "$1"/runs/*.jsonl 2>/dev/null | head -1; }

stage build
{ cmake -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DMTABENCH_BUILD_TESTS=ON && cmake --build $B -j"$(nproc)"; } \
  >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,temperature.gpu,driver_version --format=csv >>"$S" 2>&1

stage "run A: fused, cudnn on seed + seq-sweep + shapes (--max-time $mt)"
timeout 200 $M run workloads/seed.json workloads/seq-sweep.json workloads/shapes.json --impl fused,cudnn \
  --max-time "$mt" --min-time 0.1 --samples --quiet --out /tmp/mtab-a >>"$S" 2>&1
echo "rc=$?" >>"$S"
cp "$(first_jsonl /tmp/mtab-a)" "$out/a.jsonl"

stage "run A: reference on seed + seq-sweep"
timeout 60 $M run workloads/seed.json workloads/seq-sweep.json --impl reference --max-time "$mt" --min-time 0.1 \
  --quiet --out /tmp/mtab-aref >>"$S" 2>&1
echo "rc=$?" >>"$S"
cp "$(first_jsonl /tmp/mtab-aref)" "$out/aref.jsonl"

stage "GPU tests"
timeout 70 $B/tests/mtabench_gpu_tests --gtest_filter='*Cudnn*:*ReferenceGpu*:Protocol*:L2*:FusedGpu.RandomShapes*:FusedGpu.Timed*' \
  >"$out/gtest.log" 2>&1
echo "rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/gtest.log" | tr '\n' ' ')" >>"$S"

stage "run B (A/A): fused, cudnn on seed + seq-sweep"
timeout 60 $M run workloads/seed.json workloads/seq-sweep.json --impl fused,cudnn --max-time "$mt" --min-time 0.1 \
  --samples --quiet --out /tmp/mtab-b >>"$S" 2>&1
echo "rc=$?" >>"$S"
cp "$(first_jsonl /tmp/mtab-b)" "$out/b.jsonl"
$M compare "$out/a.jsonl" "$out/b.jsonl" --format md --out "$out/compare.md" >>"$S" 2>&1
echo "compare rc=$?" >>"$S"
$M leaderboard /tmp/mtab-a/history /tmp/mtab-aref/history /tmp/mtab-b/history \
  results/reported/rtx3090-leaderboard-page.jsonl --out /tmp/mtab-lb >>"$S" 2>&1
cp /tmp/mtab-lb/LEADERBOARD.md "$out/LEADERBOARD.md" 2>/dev/null

stage "graph mode: reference on seed and seq 4096"
timeout 25 $M run workloads/seed.json workloads/seq-sweep.json --filter '^(seed|sweep-seq4096)$' --impl reference \
  --graph --max-time 1 --quiet --no-records >>"$S" 2>&1
stage done
