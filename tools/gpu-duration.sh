#!/usr/bin/env bash
# On a GPU machine: candidate tree A against base tree B by the GPU duration of the fused
# kernels under Nsight Compute (gpu__time_duration.sum, caches flushed before every kernel,
# clocks as the protocol sees them), in the order B A A B (DUR_ROUNDS rounds, default 2), then
# tools/ncu_durations.py's per-kernel medians, ratio, Mann-Whitney p and verdict.
# Why: below ~10 us, event-timed A/B rounds of two builds moved 2-4% with identical code; ncu's
# duration leaves out the launch path, which no kernel change moves, and each launch is its own
# sample (impls/fused/JOURNAL.md, "The seed's GPU duration under Nsight Compute"). Its spread is
# not small either (the seed: p20-p80 3200-3360 ns, 32 ns steps), so take 40+ launches a side.
# Rank small-case changes with this, then confirm the event-timed figure with gpu-abba.sh.
#   1. A and B (mtabench only) built at once;
#   2. per round and case (DUR_CASES, "FILE:REGEX ...", default the seed; cases are split at
#      spaces, so a case's regex has none), `ncu --launch-count
#      DUR_LAUNCHES` (default 40) of kernels matching DUR_KERNEL (default fused_) on a run of the
#      case that takes at least that many timed samples (--min-samples: the first device call, by
#      --max-time 0.5, got only 7, the protocol converging early); the gate's own launches count
#      too (its inputs differ, its code does not).
# Writes into OUT: summary.txt (stage times, the comparison) and durations.tar.gz (the CSVs).
# Usage: [DUR_CASES="FILE:REGEX ..."] [DUR_KERNEL=REGEX] [DUR_ROUNDS=N] [DUR_LAUNCHES=N]
#        tools/gpu-duration.sh OUT A_TREE [B_TREE [TOTAL_BUDGET_S]]
#   e.g. tools/base-tree.sh ab/b, the candidate in this tree: tools/gpu-duration.sh $OUT . ab/b
set -uo pipefail
cd "$(dirname "$0")/.."
usage="usage: tools/gpu-duration.sh OUT A_TREE [B_TREE [TOTAL_BUDGET_S]]"
out=${1:?$usage}
tree_a=${2:?$usage}
tree_b=${3:-.}
budget=${4:-400}
[ -f "$tree_a/CMakeLists.txt" ] && [ -f "$tree_b/CMakeLists.txt" ] || { echo "gpu-duration.sh: A and B must be source trees" >&2; exit 2; }
[ "$(realpath "$tree_a")" != "$(realpath "$tree_b")" ] || { echo "gpu-duration.sh: A and B are the same tree" >&2; exit 2; }
rounds=${DUR_ROUNDS:-2}
launches=${DUR_LAUNCHES:-40}
[[ "$rounds" =~ ^[1-9][0-9]?$ ]] || { echo "gpu-duration.sh: DUR_ROUNDS must be 1 to 99, not '$rounds'" >&2; exit 2; }
[[ "$launches" =~ ^[1-9][0-9]{0,3}$ ]] || { echo "gpu-duration.sh: DUR_LAUNCHES must be 1 to 9999, not '$launches'" >&2; exit 2; }
read -r -a cases <<<"${DUR_CASES:-workloads/seed.json:^seed\$}"
kernel=${DUR_KERNEL:-fused_}
source tools/gpu-lib.sh
left() { echo $((budget - (SECONDS - t0))); }

stage "build A ($tree_a) and B ($tree_b), mtabench only, at once"
BUILD_TESTS=OFF build_tree "$tree_a" build-dur-a /tmp/mtab-dur-a.log 8 & pa=$!
BUILD_TESTS=OFF build_tree "$tree_b" build-dur-b /tmp/mtab-dur-b.log 8 & pb=$!
wait "$pa" || { tail -30 /tmp/mtab-dur-a.log | tee -a "$S"; exit 1; }
wait "$pb" || { tail -30 /tmp/mtab-dur-b.log | tee -a "$S"; exit 1; }

dir=/tmp/mtab-durations
mkdir -p "$dir"
# profile SIDE ROUND CASE_INDEX: one ncu run into $dir/SIDE ROUND-c CASE_INDEX.csv (none where
# the budget no longer holds one: ncu_durations.py then leaves that round out).
profile() {
  local spec=${cases[$3]} csv="$dir/$1$2-c$3.csv"
  [ "$(left)" -ge 20 ] || { stage "no time for $1$2 on $spec ($(left) s left)"; return; }
  stage "ncu: build-dur-$1 on ${spec} (round $2)"
  timeout "$(( $(left) < 120 ? $(left) : 120 ))" ncu --clock-control none --cache-control all -k "regex:$kernel" --launch-count "$launches" \
    --metrics gpu__time_duration.sum --print-units base --csv \
    "build-dur-$1/mtabench" run "${spec%%:*}" --filter "${spec#*:}" --impl fused --no-isolate --no-records --quiet \
    --min-samples "$launches" --min-time 0.01 --max-time 60 >"$csv" 2>>"$S"
  echo "rc=$? ($(grep -c gpu__time_duration "$csv") durations)" >>"$S"
}
done_rounds=0
for r in $(seq "$rounds"); do
  if [ "$(left)" -lt 30 ]; then stage "no time for round $r ($(left) s left)"; break; fi
  for c in "${!cases[@]}"; do
    if [ $((r % 2)) = 1 ]; then profile b "$r" "$c"; profile a "$r" "$c"
    else profile a "$r" "$c"; profile b "$r" "$c"; fi
  done
  done_rounds=$r
done
# One comparison a case (its rounds pooled): two cases may run the same kernel and grid.
for c in "${!cases[@]}"; do
  reports=()
  for r in $(seq "$done_rounds"); do
    [ -f "$dir/a$r-c$c.csv" ] && [ -f "$dir/b$r-c$c.csv" ] && reports+=("a$r=$dir/a$r-c$c.csv" "b$r=$dir/b$r-c$c.csv")
  done
  [ "${#reports[@]}" -gt 0 ] || break
  stage "compare on ${cases[$c]} over $done_rounds rounds (A = $tree_a, B = $tree_b)"
  python3 tools/ncu_durations.py --threshold "$compare_threshold" --kernel "$kernel" "${reports[@]}" 2>&1 | tee -a "$S"
done
tar -czf "$out/durations.tar.gz" -C "$dir" .
stage done
