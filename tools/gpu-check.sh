#!/usr/bin/env bash
# On a GPU machine: build, then gather the figures of the closing notes in one pass, each stage
# under a time limit so the whole fits one short lease (about 9 minutes on an H200 at the default
# MAX_TIME). Writes at most 8 files into OUT:
#   summary.txt   every stage's table (smoke suite too), compare's verdicts, timer agreement, stage times
#   a.jsonl       run A: fused and cudnn on the default suite (seed, seq sweep, shapes)
#   aref.jsonl    run A: reference on seed and the seq sweep
#   b.jsonl       run B: fused and cudnn on seed and the sweep again (A/A with run A)
#   compare.md    mtabench compare A B;   LEADERBOARD.md  from A, B, the reference and the page
#   busy.jsonl    fused and reference at seq 1024/4096 while a second process loads the GPU
#   ctest.log     ctest -L gpu -LE large (GPU tests, compute-sanitizer, adversarial suite; the
#                 `large` ones, ~4 min on an H200, run alone: ctest --test-dir build-gpu -L large)
# Usage: tools/gpu-check.sh OUT [MAX_TIME_S] [TOTAL_BUDGET_S]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-check.sh OUT [MAX_TIME_S] [TOTAL_BUDGET_S]}
mt=${2:-0.2}
budget=${3:-570}
source tools/gpu-lib.sh
first_jsonl() { ls "$1"/runs/*.jsonl 2>/dev/null | tail -1; }  # the newest (run ids start with the time)

build_gpu
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,temperature.gpu,driver_version --format=csv >>"$S" 2>&1

stage "run A: fused, cudnn on seed + seq-sweep + shapes (--max-time $mt)"
timeout 170 $M run workloads/seed.json workloads/seq-sweep.json workloads/shapes.json --impl fused,cudnn \
  --max-time "$mt" --min-time 0.1 --samples --quiet --out /tmp/mtab-a >>"$S" 2>&1
echo "rc=$?" >>"$S"
cp "$(first_jsonl /tmp/mtab-a)" "$out/a.jsonl"

stage "run A: reference on seed + seq-sweep"
timeout 50 $M run workloads/seed.json workloads/seq-sweep.json --impl reference --max-time "$mt" --min-time 0.1 \
  --quiet --out /tmp/mtab-aref >>"$S" 2>&1
echo "rc=$?" >>"$S"
cp "$(first_jsonl /tmp/mtab-aref)" "$out/aref.jsonl"

stage "run B (A/A): fused, cudnn on seed + seq-sweep"
timeout 80 $M run workloads/seed.json workloads/seq-sweep.json --impl fused,cudnn --max-time "$mt" --min-time 0.1 \
  --samples --quiet --out /tmp/mtab-b >>"$S" 2>&1
echo "rc=$?" >>"$S"
cp "$(first_jsonl /tmp/mtab-b)" "$out/b.jsonl"
$M compare "$out/a.jsonl" "$out/b.jsonl" --format md --out "$out/compare.md" >>"$S" 2>&1
echo "compare rc=$?" >>"$S"
$M leaderboard /tmp/mtab-a/history /tmp/mtab-aref/history /tmp/mtab-b/history \
  results/reported/rtx3090-leaderboard-page.jsonl --out /tmp/mtab-lb >>"$S" 2>&1
cp /tmp/mtab-lb/LEADERBOARD.md "$out/LEADERBOARD.md" 2>/dev/null

# Figure 4 of the timing protocol: the record of a shared GPU must say so.
stage "busy GPU: a PyTorch matmul loop in a second process during the measurement"
python3 -c "
import torch
a = torch.randn(8192, 8192, device='cuda', dtype=torch.bfloat16)
while True:  # until killed after the measurement
    for _ in range(10): b = a @ a
    torch.cuda.synchronize()
" &
hog=$!
sleep 8
kill -0 $hog 2>/dev/null || echo "WARNING: the load process is not running (no PyTorch with CUDA?): the records below are of an idle GPU" | tee -a "$S"
timeout 40 $M run workloads/seq-sweep.json --filter '^sweep-seq(1024|4096)$' --impl fused,reference --max-time 2 \
  --min-time 0.5 --samples --out /tmp/mtab-busy >>"$S" 2>&1
echo "rc=$?" >>"$S"
kill $hog 2>/dev/null
wait $hog 2>/dev/null
cp "$(first_jsonl /tmp/mtab-busy)" "$out/busy.jsonl"

# Figure 3: the protocol's median against Nsight Compute's gpu__time_duration.
stage "timer agreement: protocol median vs ncu gpu__time_duration"
timeout 70 python3 tools/ncu_agreement.py "$M" workloads/seq-sweep.json '^sweep-seq(1024|4096)$' fused >>"$S" 2>&1
echo "rc=$?" >>"$S"

stage "every implementation on the smoke suite (seq 1, k 1, ...)"
timeout 60 $M run workloads/smoke.json --max-time 0.2 --min-time 0.05 --no-records --quiet >>"$S" 2>&1
echo "rc=$?" >>"$S"

stage "ctest -L gpu -LE large (the rest of the budget)"
rem=$((budget - (SECONDS - t0)))
rem=$((rem < 30 ? 30 : rem))
echo "ctest budget ${rem} s" >>"$S"
timeout "$rem" ctest --test-dir $B -L gpu -LE large --output-on-failure --timeout 300 >"$out/ctest.log" 2>&1
echo "rc=$?" >>"$S"
tail -25 "$out/ctest.log" >>"$S"
stage done
