#!/usr/bin/env bash
# On a GPU machine: a phase budget of the fused kernel. The mtabench binary is built once per
# ablation mask (MTABENCH_FUSED_ABLATE, impls/fused/fused_common.cuh: a bit per phase the kernel
# leaves out; 0 is the normal kernel), all at once; then one launch of each is timed under Nsight
# Compute (kernel duration after a cache flush, clocks unlocked, with DRAM bytes), ROUNDS times,
# the masks in a rotated order each round. An ablated kernel's output is wrong, so its gate fails
# after two launches; the launch profiled is the second one (the harness's first checked call)
# for every mask alike, mask 0 included. Prints per mask the median duration, its change against
# mask 0, and DRAM bytes. The masks' bits: 1 the conv items' score loads (in fill8, the ws
# producer's fill, its math goes with them: ptxas drops math whose outputs are constant zeros),
# 2 the mma.sync contraction (four-channel path), 4 the conv items' y stores, 8 the zero items,
# 16 the stats items' loads, 32 fill8's score loads only (its math kept), 64 fill8's math only,
# 128 fill8's loads from two L1-resident rows instead, 256 fill8's stores without the rotation's
# selects at XOR-swizzled columns, 512 the ws consumers' y rows' read-back and global stores (their
# stmatrix staging and barriers kept), 1024 those global stores only (fused_common.cuh).
# Writes OUT/summary.txt (the table, the stage times) and OUT/ablate.csv (every measurement).
# Usage: tools/gpu-ablate.sh OUT [MASK ...]   (default masks: 0 1 2 4 8 16 6 31)
#   ABLATE_CASE="FILE:REGEX" (default workloads/seq-sweep.json:^sweep-seq4096$), ROUNDS (3).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-ablate.sh OUT [MASK ...]}
shift
masks=("$@")
[ "${#masks[@]}" -eq 0 ] && masks=(0 1 2 4 8 16 6 31)
spec=${ABLATE_CASE:-workloads/seq-sweep.json:^sweep-seq4096\$}
rounds=${ROUNDS:-3}
source tools/gpu-lib.sh

stage "build ${#masks[@]} masks at once (${masks[*]}), mtabench only"
specs=()
for m in "${masks[@]}"; do specs+=("build-ablate-$m=-DMTABENCH_FUSED_ABLATE=$m"); done
build_flag_variants "${specs[@]}"

csv=$out/ablate.csv
echo "round,mask,duration_us,dram_read_mb,dram_write_mb" >"$csv"
n=${#masks[@]}
for ((round = 0; round < rounds; round++)); do
  stage "round $((round + 1)) of $rounds ($spec)"
  for ((x = 0; x < n; x++)); do
    m=${masks[$(((x + round) % n))]}
    # --csv: one line per metric; the value is the last field. Units are asked for in us and MB.
    timeout 90 ncu --clock-control none --cache-control all -k regex:'fused_kernel' --launch-skip 1 --launch-count 1 \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv --print-units base \
      "build-ablate-$m/mtabench" run "${spec%%:*}" --filter "${spec#*:}" --impl fused --no-isolate --no-records \
      --quiet --max-time 0.05 --min-time 0.01 >"/tmp/mtab-ablate-$m-$round.csv" 2>&1
    python3 - "$round" "$m" "/tmp/mtab-ablate-$m-$round.csv" >>"$csv" <<'EOF'
import csv, sys
vals = {}
for row in csv.reader(open(sys.argv[3])):
    if len(row) > 3 and row[-3] in ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"):
        vals[row[-3]] = float(row[-1].replace(",", ""))
if len(vals) == 3:  # base units: ns and bytes
    print(f"{sys.argv[1]},{sys.argv[2]},{vals['gpu__time_duration.sum'] / 1e3:.2f},"
          f"{vals['dram__bytes_read.sum'] / 1e6:.1f},{vals['dram__bytes_write.sum'] / 1e6:.1f}")
else:
    print(f"{sys.argv[1]},{sys.argv[2]},,,", file=sys.stdout)
EOF
  done
done

stage "phase budget (median of $rounds launches per mask)"
python3 - "$csv" >>"$S" <<'EOF'
import csv, statistics, sys
names = {1: "conv score loads", 2: "contraction", 4: "conv y stores", 8: "zero items", 16: "stats loads",
         32: "fill8 score loads (math kept)", 64: "fill8 math (loads kept)",
         128: "fill8 loads' latency (L1-resident)", 256: "fill8 store rotation",
         512: "ws y rows' read-back and stores", 1024: "ws y rows' stores"}
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["duration_us"]]
by = {}
for r in rows:
    by.setdefault(int(r["mask"]), []).append(r)
med = {m: statistics.median(float(r["duration_us"]) for r in rs) for m, rs in by.items()}
print("Kernel duration (Nsight Compute gpu__time_duration, cache flushed, clocks unlocked), median of the rounds.")
print(f"{'mask':>4}  {'left out':<40} {'us':>9} {'vs mask 0':>10} {'DRAM read MB':>13} {'write MB':>9}  n")
for m in sorted(med):
    left = ", ".join(v for b, v in names.items() if m & b) or "nothing"
    rd = statistics.median(float(r["dram_read_mb"]) for r in by[m])
    wr = statistics.median(float(r["dram_write_mb"]) for r in by[m])
    rel = f"{(med[m] / med[0] - 1) * 100:+.1f}%" if 0 in med else "-"
    print(f"{m:>4}  {left:<40} {med[m]:>9.2f} {rel:>10} {rd:>13.1f} {wr:>9.1f}  {len(by[m])}")
EOF
tail -12 "$S"
stage done
