#!/usr/bin/env bash
# CPU test of tools/gpu-abba.sh (no GPU, no build): fake `cmake` and `ctest` on PATH, a fake
# mtabench whose `run` hands back committed records (A's and B's set by the case) and whose
# `compare` is the real one, so the script's reading of compare's verdict table is tested too.
# Cases: A faster in both rounds (battery, timeline, whole suite), in four rounds (ABBA_ROUNDS),
# A the same (no battery, no
# whole suite), A failing its smoke run (stops before timing), a budget too short for the
# battery, and A and B the same tree (refused). Like every gpu-*.sh script, gpu-abba.sh clears
# /tmp/mtab-* as it starts (gpu-lib.sh).
# Usage: gpu_abba_test.sh TOOLS_DIR MTABENCH RECORDS_SLOWER RECORDS_FASTER
set -u
tools=${1:?usage: gpu_abba_test.sh TOOLS_DIR MTABENCH RECORDS_SLOWER RECORDS_FASTER}
mtabench=$(realpath "${2:?}")
slower=$(realpath "${3:?}")
faster=$(realpath "${4:?}")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/bin" "$dir/repo/tools" "$dir/repo/ab/b"
cp "$tools/gpu-abba.sh" "$tools/gpu-lib.sh" "$dir/repo/tools/"
touch "$dir/repo/CMakeLists.txt" "$dir/repo/ab/b/CMakeLists.txt"
# cmake -B DIR ... makes DIR/mtabench, a wrapper naming its build; --build does nothing.
cat >"$dir/bin/cmake" <<FAKE
#!/usr/bin/env bash
b="" prev=""
for a in "\$@"; do [ "\$prev" = -B ] && b=\$a; prev=\$a; done
[ -z "\$b" ] && exit 0
mkdir -p "\$b"
printf '#!/usr/bin/env bash\nexec "%s" "%s" "\$@"\n' "$dir/fake-mtabench" "\$b" >"\$b/mtabench"
chmod +x "\$b/mtabench"
FAKE
printf '#!/bin/sh\necho "100%% tests passed, 0 tests failed out of 13"\n' >"$dir/bin/ctest"
cat >"$dir/fake-mtabench" <<FAKE
#!/usr/bin/env bash
# BUILD run ... [--out DIR] [--no-records] | BUILD compare ...
build=\$1
shift
[ "\$1" = compare ] && exec "$mtabench" "\$@"
out="" prev="" smoke=0
for a in "\$@"; do [ "\$prev" = --out ] && out=\$a; [ "\$a" = --no-records ] && smoke=1; prev=\$a; done
echo "fake run by \$build"
[ "\$smoke" = 1 ] && exit "\${FAKE_SMOKE_RC:-0}"
mkdir -p "\$out/runs"
# FAKE_A_LIST="R1 R2 ...": A's timed runs take these records in turn (one a round), else FAKE_A.
if [ "\${build##*-}" = a ] && [ -n "\${FAKE_A_LIST:-}" ]; then
  n=\$(cat "$dir/a-runs" 2>/dev/null || echo 0); echo \$((n + 1)) >"$dir/a-runs"
  read -r -a list <<<"\$FAKE_A_LIST"; cp "\${list[\$((n % \${#list[@]}))]}" "\$out/runs/r.jsonl"; exit 0
fi
case "\$build" in *-a) cp "\$FAKE_A" "\$out/runs/r.jsonl" ;; *) cp "\$FAKE_B" "\$out/runs/r.jsonl" ;; esac
FAKE
chmod +x "$dir/bin/cmake" "$dir/bin/ctest" "$dir/fake-mtabench"

failures=0
# One case: NAME EXPECTED_RC then environment assignments and the script's arguments after --.
run_case() {
  local name=$1 want=$2
  shift 2
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  out="$dir/out-$name"
  (cd "$dir/repo" && env PATH="$dir/bin:$PATH" "${envs[@]}" bash tools/gpu-abba.sh "$out" "$@") >"$dir/log-$name" 2>&1
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL $name: exit $rc, expected $want"; cat "$dir/log-$name" "$out/summary.txt" 2>/dev/null; failures=$((failures + 1))
  fi
}
has() { grep -q -- "$2" "$dir/out-$1/summary.txt" || { echo "FAIL $1: summary lacks '$2'"; failures=$((failures + 1)); }; }
lacks() { ! grep -q -- "$2" "$dir/out-$1/summary.txt" || { echo "FAIL $1: summary has '$2'"; failures=$((failures + 1)); }; }
has_file() { [ -s "$dir/out-$1/$2" ] || { echo "FAIL $1: no $2"; failures=$((failures + 1)); }; }
nofile() { [ ! -e "$dir/out-$1/$2" ] || { echo "FAIL $1: $2 written"; failures=$((failures + 1)); }; }

run_case win 0 FAKE_A="$faster" FAKE_B="$slower" ABBA_TIMELINE=1 ABBA_FULL=1 -- . ab/b
has win "A faster on k7-h32 in 2 of 2 rounds"
has win "FusedGpu tests of build-abba-a"
has win "A's item timeline"
for f in summary.txt rounds.tar.gz ctest-1.log timeline.tar.gz full.jsonl; do has_file win "$f"; done
# At most 8 files come back from the device: the rounds travel as one archive.
[ "$(find "$dir/out-win" -type f | wc -l)" -le 8 ] || { echo "FAIL win: more than 8 files in OUT"; failures=$((failures + 1)); }
[ "$(tar -tzf "$dir/out-win/rounds.tar.gz" | sort | tr '\n' ' ')" = "a1.jsonl a2.jsonl b1.jsonl b2.jsonl cmp1.md cmp2.md " ] ||
  { echo "FAIL win: rounds.tar.gz lacks a round"; failures=$((failures + 1)); }

has win "k7-h32-b1-seq4096: median over 2 rounds NEW/BASE 0.9818"

# ABBA_ROUNDS: four rounds (B A A B B A A B), each compared, their medians (net of a control),
# every round's files in the archive; a count that is not a number is refused.
run_case four 0 FAKE_A="$faster" FAKE_B="$slower" ABBA_ROUNDS=4 ABBA_CONTROL='^sweep-seq2048$' -- . ab/b
has four "A faster on k7-h32 in 4 of 4 rounds"
has four "round 4: k7-h32-b1-seq4096 faster"
has four "k7-h32-b1-seq4096: median over 4 rounds NEW/BASE 0.9818, net 0.9839"
has four "sweep-seq2048: median over 4 rounds NEW/BASE 0.9979, net 1.0000"
has_file four ctest-1.log
[ "$(tar -tzf "$dir/out-four/rounds.tar.gz" | wc -l)" = 12 ] ||
  { echo "FAIL four: rounds.tar.gz does not hold 4 rounds' files"; failures=$((failures + 1)); }
[ "$(grep -o '=== \[[0-9]* s\] fused suite, [ab][0-9]' "$dir/out-four/summary.txt" | awk '{ print $NF }' | tr '\n' ' ')" = "b1 a1 a2 b2 b3 a3 a4 b4 " ] ||
  { echo "FAIL four: the suites did not run in the order B A A B B A A B"; failures=$((failures + 1)); }
run_case badrounds 2 FAKE_A="$faster" FAKE_B="$slower" ABBA_ROUNDS=two -- . ab/b
# A faster in rounds 1, 3 and 4 only (round 2 times B's records for A): 3 of 4 wins, so no
# battery by default; the medians are over all four (0.9818 three times, 1.0000 once).
rm -f "$dir/a-runs"
run_case mixed 0 FAKE_A_LIST="$faster $slower $faster $faster" FAKE_B="$slower" ABBA_ROUNDS=4 ABBA_FULL=1 -- . ab/b
has mixed "round 2: k7-h32-b1-seq4096 same NEW/BASE 1.0000"
has mixed "A faster on k7-h32 in 3 of 4 rounds"
has mixed "k7-h32-b1-seq4096: median over 4 rounds NEW/BASE 0.9818"
nofile mixed ctest-1.log
# Three rounds (0.9818, 1.0000, 0.9818): the median is the middle value.
rm -f "$dir/a-runs"
run_case odd 0 FAKE_A_LIST="$faster $slower $faster" FAKE_B="$slower" ABBA_ROUNDS=3 -- . ab/b
has odd "k7-h32-b1-seq4096: median over 3 rounds NEW/BASE 0.9818"
rm -f "$dir/a-runs"
run_case odd2 0 FAKE_A_LIST="$slower $faster $slower" FAKE_B="$slower" ABBA_ROUNDS=3 -- . ab/b
has odd2 "k7-h32-b1-seq4096: median over 3 rounds NEW/BASE 1.0000"
# A budget that holds the build and smoke run but not one round's time plus 20 s: no round, no
# battery, no verdict of A's.
run_case norounds 0 FAKE_A="$faster" FAKE_B="$slower" -- . ab/b 15
has norounds "no time for round 1 and after"
has norounds "A faster on k7-h32 in 0 of 0 rounds"
nofile norounds ctest-1.log

run_case same 0 FAKE_A="$slower" FAKE_B="$slower" ABBA_FULL=1 -- . ab/b
has same "A faster on k7-h32 in 0 of 2 rounds"
has same "A's whole suite not run"
nofile same ctest-1.log
nofile same full.jsonl

# ABBA_CONTROL: a control that held still (seq 2048, -0.2%) keeps the win, net of it; anchored
# like a filter, it matches the case's name (not the table's whole cell); one that names a target
# case, or none, gives no verdict; a target that names two cases wins only where both are faster.
run_case controlled 0 FAKE_A="$faster" FAKE_B="$slower" ABBA_CONTROL='^sweep-seq2048$' -- . ab/b
has controlled "round 1: k7-h32-b1-seq4096 faster NEW/BASE 0.9818, net 0.9839 (control sweep-seq2048 NEW/BASE 0.9979)"
has controlled "A faster on k7-h32 in 2 of 2 rounds (net of control ^sweep-seq2048\$)"
grep -qF -- '--filter (^k7-h32|sweep-seq4096$)|(^sweep-seq2048$)' "$dir/out-controlled/summary.txt" ||
  { echo "FAIL controlled: the control is not among the timed workloads"; failures=$((failures + 1)); }
has_file controlled ctest-1.log
run_case cancelled 0 FAKE_A="$faster" FAKE_B="$slower" ABBA_CONTROL=k7-h32 -- . ab/b
has cancelled "names a target case: no verdict"
has cancelled "A faster on k7-h32 in 0 of 2 rounds"
nofile cancelled ctest-1.log
run_case nocontrol 0 FAKE_A="$faster" FAKE_B="$slower" ABBA_CONTROL='^no-such-workload$' -- . ab/b
has nocontrol "names 0 compared cases, not one: no verdict"
has nocontrol "A faster on k7-h32 in 0 of 2 rounds"
run_case twotargets 0 FAKE_A="$faster" FAKE_B="$slower" ABBA_TARGET='^k7-h32|^sweep-seq2048$' -- . ab/b
has twotargets "k7-h32-b1-seq4096 faster NEW/BASE 0.9818; sweep-seq2048 same NEW/BASE 0.9979"
has twotargets "A faster on ^k7-h32|^sweep-seq2048\$ in 0 of 2 rounds"

run_case smoke 1 FAKE_A="$faster" FAKE_B="$slower" FAKE_SMOKE_RC=3 -- . ab/b
has smoke "A's smoke run failed (rc 3)"
nofile smoke b1.jsonl
nofile smoke rounds.tar.gz

run_case short 0 FAKE_A="$faster" FAKE_B="$slower" -- . ab/b 100
has short "no time for A's battery"
nofile short ctest-1.log

run_case sametree 2 FAKE_A="$faster" FAKE_B="$slower" -- . .

[ "$failures" -eq 0 ] || exit 1
echo "gpu-abba.sh: a win battery-tested, timed and recorded; a control that cancels it and one that does not; a tie, a failed smoke run, a short budget and one tree handled"
