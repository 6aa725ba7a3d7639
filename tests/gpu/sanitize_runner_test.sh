#!/usr/bin/env bash
# CPU test of sanitize.sh's runner (no GPU, no sanitizer): fake `nvidia-smi` and
# `compute-sanitizer` on PATH, four cases that end in reverse order, case 1 failing. The runner
# must report each case once, with its own log, in the order they end (so that a killed run has
# reported every case that ended), and exit 1.
# Usage: sanitize_runner_test.sh SANITIZE_SH
set -u
runner=${1:?usage: sanitize_runner_test.sh SANITIZE_SH}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '#!/bin/sh\nexit 0\n' >"$dir/nvidia-smi"
cat >"$dir/compute-sanitizer" <<'FAKE'
#!/usr/bin/env bash
# The shard from `--shard K/N`; case K sleeps N - 1 - K seconds, then prints; case 1 fails.
while [ $# -gt 0 ]; do [ "$1" = --shard ] && shard=$2; shift; done
k=${shard%/*} n=${shard#*/}
sleep $((n - 1 - k))
echo "case $k log"
[ "$k" -ne 1 ]
FAKE
chmod +x "$dir/nvidia-smi" "$dir/compute-sanitizer"
printf '[\n{"name": "a"},\n{"name": "b"},\n{"name": "c"},\n{"name": "d"}\n]\n' >"$dir/w.json"  # a case a line
out=$(PATH="$dir:$PATH" bash "$runner" racecheck /bin/true "$dir/w.json")
rc=$?
fail() { echo "FAIL: $*"; echo "--- runner output:"; echo "$out"; exit 1; }
[ "$rc" -eq 1 ] || fail "exit status $rc, expected 1 (case 1 failed)"
order=$(echo "$out" | sed -n 's/^##### shard \([0-9]\)\/4: exit [0-9]*$/\1/p' | tr -d '\n')
[ "$order" = 3210 ] || fail "cases reported in the order '$order', expected the order they ended, 3210"
for k in 0 1 2 3; do
  echo "$out" | grep -A1 "^##### shard $k/4: exit" | grep -qx "case $k log" || fail "case $k's log not under its header"
done
echo "$out" | grep -qx '##### shard 1/4: exit 1' || fail "case 1's exit status not reported as 1"
echo "sanitize.sh runner: 4 cases reported in the order they ended, exit 1 for the failed case"
