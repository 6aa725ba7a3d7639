#!/usr/bin/env bash
# CPU test of tools/gpu-duration.sh (no GPU, no build): fake `cmake` and `ncu` on PATH; the fake
# ncu prints an ncu CSV whose row-kernel durations are 5% shorter for build-dur-a, so the real
# tools/ncu_durations.py must call A faster. Cases: two rounds over two cases (the order B A A B,
# a CSV a profile, a comparison a case with its rounds pooled, the archive, what ncu is asked),
# a budget too short for a round, a refused tree pair, a refused round count.
# Usage: gpu_duration_test.sh TOOLS_DIR
set -u
tools=${1:?usage: gpu_duration_test.sh TOOLS_DIR}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/bin" "$dir/repo/tools" "$dir/repo/ab/b"
cp "$tools/gpu-duration.sh" "$tools/gpu-lib.sh" "$tools/ncu_durations.py" "$dir/repo/tools/"
touch "$dir/repo/CMakeLists.txt" "$dir/repo/ab/b/CMakeLists.txt"
cat >"$dir/bin/cmake" <<'FAKE'
#!/usr/bin/env bash
b="" prev=""
for a in "$@"; do [ "$prev" = -B ] && b=$a; prev=$a; done
[ -z "$b" ] || mkdir -p "$b"
FAKE
cat >"$dir/bin/ncu" <<FAKE
#!/usr/bin/env bash
echo "\$*" >>"$dir/ncu-args"
FAKE
cat >>"$dir/bin/ncu" <<'FAKE'
# The binary's build directory says which side this is.
side=b
for a in "$@"; do case "$a" in build-dur-a/*) side=a ;; esac; done
echo '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
for i in 0 1 2 3 4 5 6 7; do
  ns=$((3260 + i * 4)); [ "$side" = a ] && ns=$((ns * 95 / 100))
  echo "\"$i\",\"1\",\"mtabench\",\"h\",\"void mtabench::fused::fused_row_kernel<__nv_bfloat16, 1>(mtabench::fused::SmallParams)\",\"1\",\"7\",\"(128, 1, 1)\",\"(64, 1, 1)\",\"0\",\"9.0\",\"m\",\"gpu__time_duration.sum\",\"ns\",\"$ns\""
done
FAKE
chmod +x "$dir/bin/cmake" "$dir/bin/ncu"
failures=0
run() { (cd "$dir/repo" && env PATH="$dir/bin:$PATH" "$@") >"$dir/log" 2>&1; }
fail() { echo "FAIL: $*"; cat "$dir/log" "$dir/out/summary.txt" 2>/dev/null; failures=$((failures + 1)); }

run env DUR_CASES='workloads/seed.json:^seed$ workloads/seq-sweep.json:^sweep-seq64$' \
  bash tools/gpu-duration.sh "$dir/out" . ab/b || fail "exit status $? on two rounds"
[ "$(grep -c "fused_row_kernel<__nv_bfloat16, 1>.* 0\.9[45][0-9]* .*faster (" "$dir/out/summary.txt")" = 2 ] ||
  fail "the row kernel is not called faster on each case"
# 2 rounds x 2 cases x 2 sides, B A then A B.
order=$(grep -o 'ncu: build-dur-[ab] on [^ ]* (round [0-9])' "$dir/out/summary.txt" | awk '{ print substr($2, 11) $NF }' | tr -d ')' | tr '\n' ' ')
[ "$order" = "b1 a1 b1 a1 a2 b2 a2 b2 " ] || fail "profiles ran in the order '$order'"
[ "$(tar -tzf "$dir/out/durations.tar.gz" | grep -c '\.csv$')" = 8 ] || fail "durations.tar.gz does not hold 8 CSVs"
# What ncu and the profiled run were asked for: DUR_LAUNCHES launches, as many timed samples.
grep -q -- "--cache-control all -k regex:fused_ --launch-count 40 " "$dir/ncu-args" || fail "ncu not given the kernel regex, --launch-count 40 and --cache-control all"
grep -q -- "--min-samples 40 " "$dir/ncu-args" || fail "the run not given --min-samples 40"
grep -q " 16 .* 16 " "$dir/out/summary.txt" || fail "a case's 2 profiles a side x 8 launches are not pooled"

run bash tools/gpu-duration.sh "$dir/out4" . ab/b 10 || fail "exit status $? on a budget without a round"
grep -q "no time for round 1" "$dir/out4/summary.txt" || fail "a budget without a round not said"
grep -q "ncu:" "$dir/out4/summary.txt" && fail "a profile ran past the budget"
run bash tools/gpu-duration.sh "$dir/out2" . . && fail "A and B the same tree accepted"
run env DUR_ROUNDS=two bash tools/gpu-duration.sh "$dir/out3" . ab/b && fail "DUR_ROUNDS=two accepted"

[ "$failures" -eq 0 ] || exit 1
echo "gpu-duration.sh: B A A B profiles of two cases pooled and compared; a tree pair and a round count refused"
