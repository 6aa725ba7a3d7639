#!/usr/bin/env bash
# compute-sanitizer over `mtabench verify` of small cases of the fused kernel.
# Usage: sanitize.sh TOOL MTABENCH WORKLOADS. Exit 77 (ctest: skipped) without a GPU or the tool.
# One sanitizer process per case (`--shard k/N`), all at once: racecheck of the ldmatrix case
# alone takes minutes, and run one after another the cases did not finish in a device session's
# time. Each case's log is printed as it ends; the exit status is 1 if any case failed.
set -u
tool=$1 mtabench=$2 workloads=$3
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if ! nvidia-smi -L >/dev/null 2>&1 || [ ! -x "$san" ]; then
  echo "SKIPPED: no GPU or no compute-sanitizer"
  exit 77
fi
n=$(grep -c '"name"' "$workloads")  # one "name" per workload (the suite itself has none)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
declare -A shard_of  # pid -> shard
for ((k = 0; k < n; k++)); do
  timeout 600 "$san" --tool "$tool" --error-exitcode 1 "$mtabench" verify "$workloads" --impl fused --no-isolate \
    --shard "$k/$n" >"$logs/$k.log" 2>&1 &
  shard_of[$!]=$k
done
# Each case's log as soon as it ends (wait -n), not in shard order: when a device call's time runs
# out and ctest is killed, the cases that did end have been reported (the eleventh session lost
# the warp-specialised case's racecheck result behind a slower case printed before it).
rc=0
for ((i = 0; i < n; i++)); do
  wait -n -p pid
  st=$?
  k=${shard_of[$pid]}
  echo "##### shard $k/$n: exit $st"
  cat "$logs/$k.log"
  [ "$st" -eq 0 ] || rc=1
done
exit "$rc"
