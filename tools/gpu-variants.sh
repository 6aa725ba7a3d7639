#!/usr/bin/env bash
# On a GPU machine: the fused suite timed for builds of this tree that differ only by compile
# defines (a tuning knob such as MTABENCH_WS_FILL_ROT_MASK, impls/fused/fused_common.cuh), in one
# call: every variant built at once (mtabench only), then the filtered suite (--samples) in
# ROUNDS rotated orders, and `mtabench compare` of each variant against the first, round by
# round (the first is the base: normally the default build, DEFINES ""). Unlike gpu-ablate.sh
# (Nsight Compute durations of kernels whose output is wrong), these builds must pass the gate,
# and the times are the harness's medians.
# Writes OUT/summary.txt (suite tables, compare verdicts, stage times) and OUT/vN.jsonl (variant
# N's records, all rounds).
# Usage: [ROUNDS=2] [SUITE_FILTER=REGEX] [COMPARE_THRESHOLD=1] tools/gpu-variants.sh OUT "DEFINES_0" "DEFINES_1" ...
#   e.g. SUITE_FILTER='^k7-h32|sweep-seq4096$' tools/gpu-variants.sh $OUT "" \
#          "-DMTABENCH_WS_FILL_ROT_MASK=6" "-DMTABENCH_WS_FILL_ROT_MASK=4"
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-variants.sh OUT DEFINES_0 DEFINES_1 ...}
shift
defs=("$@")
[ "${#defs[@]}" -ge 2 ] || { echo "gpu-variants.sh: give at least two variants (the first is the base)" >&2; exit 2; }
rounds=${ROUNDS:-2}
source tools/gpu-lib.sh
n=${#defs[@]}

stage "build $n variants at once: $(printf '[%s] ' "${defs[@]}")"
specs=()
for ((k = 0; k < n; k++)); do specs+=("build-variant-$k=${defs[$k]}"); done
build_flag_variants "${specs[@]}"

for ((round = 0; round < rounds; round++)); do
  for ((x = 0; x < n; x++)); do
    k=$(((x + round) % n))
    fused_suite "build-variant-$k" "v$k-r$round"
  done
  for ((k = 1; k < n; k++)); do
    stage "round $((round + 1)): compare v0 [${defs[0]}] (base) v$k [${defs[$k]}] (new)"
    build-variant-0/mtabench compare --threshold "$compare_threshold" "$out/v0-r$round.jsonl" "$out/v$k-r$round.jsonl" 2>&1 |
      grep -E '^\| \*\*|^\*\*Summary' >>"$S"
  done
done
# One file a variant (the device hands back few files).
for ((k = 0; k < n; k++)); do
  cat "$out"/v$k-r*.jsonl >"$out/v$k.jsonl" 2>/dev/null
  rm -f "$out"/v$k-r*.jsonl
done
stage done
