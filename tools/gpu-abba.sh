#!/usr/bin/env bash
# On a GPU machine: one candidate tree A against a base tree B in the order B A A B, then, as the
# budget allows, what decides whether A can land. The forty-ninth session's call shape
# (impls/fused/JOURNAL.md, "v151 measured and merged; v152 and v153"), as a tool:
#   1. A (with tests) and B (mtabench only) built at once, and A's timeline build
#      (MTABENCH_FUSED_TIMELINE=1) beside them with ABBA_TIMELINE=1;
#   2. a smoke run of A on the timed workloads (the gate only, 60 s at most): the call stops
#      there if A fails or hangs, before its time is spent;
#   3. the filtered fused suite (--samples) in the order B A A B (ABBA_ROUNDS=N rounds, default
#      2: B A A B B A A B ... for more), and `mtabench compare` of each round at gpu-lib.sh's
#      threshold (1%: builds timed in one call agree within ~0.3%), then each case's median
#      ratio (and net ratio) over the rounds: at ~5 us a round's ratio moved by 5-8 points
#      between two rounds of one call (the fifty-seventh session), so small cases want more;
#      a round is A's win where every compared case with a name matching ABBA_TARGET is
#      "faster"; with ABBA_CONTROL=REGEX (one workload whose code A does not change; it is added
#      to the timed ones), also where each such case's NEW/BASE ratio divided by the control's is
#      below 1 - threshold (the fifty-sixth session: the same small-kernel SASS measured 2-4%
#      apart between two builds in four rounds, so a launch-bound target's ratio alone misled);
#   4. A's battery (fused_checks: the FusedGpu tests, memcheck and racecheck) when A was faster
#      on ABBA_TARGET in every round (ABBA_CHECKS=1: always; 0: never);
#   5. A's ws item timeline on ABBA_TIMELINE_CASE with ABBA_TIMELINE=1 (tools/fused_timeline.py);
#   6. with ABBA_FULL=1, after a battery that passed, A's whole fused suite: the record to land
#      if A's tree is committed as measured (its source_digest says so).
# Stages that no longer fit in TOTAL_BUDGET_S (seconds of command, default 540) are skipped and
# say so. Writes into OUT at most five files: summary.txt (tables, verdicts, stage times),
# rounds.tar.gz (bR.jsonl, aR.jsonl and cmpR.md of each round R), ctest-1.log, timeline.tar.gz and
# full.jsonl where those stages ran.
# Usage: [ABBA_FILTER=REGEX] [ABBA_TARGET=REGEX] [ABBA_CONTROL=REGEX] [ABBA_ROUNDS=N] [ABBA_CHECKS=auto|1|0] [ABBA_TIMELINE=1]
#        [ABBA_TIMELINE_CASE=FILE:REGEX] [ABBA_FULL=1] tools/gpu-abba.sh OUT A_TREE [B_TREE [TOTAL_BUDGET_S]]
#   e.g. tools/base-tree.sh ab/b (main without what no build reads, for the device's 64 MiB
#   limit), the candidate in this tree: ABBA_TIMELINE=1 tools/gpu-abba.sh $OUT . ab/b
set -uo pipefail
cd "$(dirname "$0")/.."
usage="usage: tools/gpu-abba.sh OUT A_TREE [B_TREE [TOTAL_BUDGET_S]]"
out=${1:?$usage}
tree_a=${2:?$usage}
tree_b=${3:-.}
budget=${4:-540}
[ -f "$tree_a/CMakeLists.txt" ] && [ -f "$tree_b/CMakeLists.txt" ] || { echo "gpu-abba.sh: A and B must be source trees" >&2; exit 2; }
[ "$(realpath "$tree_a")" != "$(realpath "$tree_b")" ] || { echo "gpu-abba.sh: A and B are the same tree" >&2; exit 2; }
abba_filter=${ABBA_FILTER:-'^k7-h32|sweep-seq4096$'}
[ -n "${ABBA_CONTROL:-}" ] && abba_filter="($abba_filter)|($ABBA_CONTROL)"
abba_target=${ABBA_TARGET:-k7-h32}
rounds=${ABBA_ROUNDS:-2}
[[ "$rounds" =~ ^[1-9][0-9]?$ ]] || { echo "gpu-abba.sh: ABBA_ROUNDS must be a number of rounds from 1 to 99, not '$rounds'" >&2; exit 2; }
timeline_case=${ABBA_TIMELINE_CASE:-'workloads/shapes.json:^k7-h32'}
source tools/gpu-lib.sh
left() { echo $((budget - (SECONDS - t0))); }
# cases_of CMP_MD REGEX: "VERDICT RATIO NAMES" of each of compare's rows one of whose names (the
# Workload cell's "seed / sweep-seq32" before its first " · ") matches REGEX; NAMES joined by "/".
cases_of() {
  awk -F'|' -v re="$2" 'NF > 8 && $8 ~ /[0-9]/ {
    n = $3; sub(/^ +/, "", n); sub(/ · .*/, "", n); k = split(n, names, " / ")
    for (x = 1; x <= k; ++x) if (names[x] ~ re) {
      v = $2; gsub(/[ *]/, "", v); split($8, a, " "); gsub(/ \/ /, "/", n); print v, a[1], n; break
    }
  }' "$1"
}

also=""
[ "${ABBA_TIMELINE:-0}" = 1 ] && also=" and A's timeline build"
stage "build A ($tree_a, with tests) and B ($tree_b)$also at once"
build_tree "$tree_a" build-abba-a /tmp/mtab-abba-a.log 8 & pids=($!)
BUILD_TESTS=OFF build_tree "$tree_b" build-abba-b /tmp/mtab-abba-b.log 4 & pids+=($!)
if [ "${ABBA_TIMELINE:-0}" = 1 ]; then
  BUILD_TESTS=OFF build_tree "$tree_a" build-abba-t /tmp/mtab-abba-t.log 4 \
    -DCMAKE_CUDA_FLAGS=-DMTABENCH_FUSED_TIMELINE=1 -DCMAKE_CXX_FLAGS=-DMTABENCH_FUSED_TIMELINE=1 & pids+=($!)
fi
k=0
for name in a b t; do
  [ "$k" -lt "${#pids[@]}" ] || break
  wait "${pids[$k]}" || { tail -30 "/tmp/mtab-abba-$name.log" | tee -a "$S"; exit 1; }
  k=$((k + 1))
done

stage "smoke: A on the timed workloads ($abba_filter), the gate only"
timeout 60 build-abba-a/mtabench run workloads/seed.json workloads/seq-sweep.json workloads/shapes.json \
  --impl fused --filter "$abba_filter" --no-records --max-time 0.02 --min-time 0.01 >/tmp/mtab-abba-smoke.txt 2>&1
rc=$?
cat /tmp/mtab-abba-smoke.txt >>"$S"
# mtabench's exit status says whether every case passed its gate; a hang ends in 124.
[ "$rc" -eq 0 ] || { stage "A's smoke run failed (rc $rc): stopping"; exit 1; }

export SUITE_FILTER=$abba_filter
# Round r times B then A when r is odd, A then B when even: B A A B B A A B ... (an odd count
# leaves the last pair unbalanced). A round starts only where the last one's time and 20 s are
# left (a round of five small workloads takes ~6 s, of the whole suite ~170 s).
done_rounds=0 per_round=0
for r in $(seq "$rounds"); do
  if [ "$(left)" -lt $((per_round + 20)) ]; then
    stage "no time for round $r and after ($(left) s left): $done_rounds rounds"
    break
  fi
  round_t0=$SECONDS
  if [ $((r % 2)) = 1 ]; then fused_suite build-abba-b "b$r"; fused_suite build-abba-a "a$r"
  else fused_suite build-abba-a "a$r"; fused_suite build-abba-b "b$r"; fi
  per_round=$((SECONDS - round_t0))
  done_rounds=$r
done
rounds=$done_rounds
wins=0
ratios=""  # "NAME RATIO NET" of every compared case in each round with a verdict
for r in $(seq "$rounds"); do
  stage "compare b$r (base) a$r (new), threshold $compare_threshold%"
  build-abba-a/mtabench compare --threshold "$compare_threshold" "$out/b$r.jsonl" "$out/a$r.jsonl" >"$out/cmp$r.md" 2>&1
  cat "$out/cmp$r.md" >>"$S"
  targets=$(cases_of "$out/cmp$r.md" "$abba_target")
  [ -n "$targets" ] || { stage "round $r: no compared case is named by ABBA_TARGET ($abba_target)"; continue; }
  c=1
  if [ -n "${ABBA_CONTROL:-}" ]; then
    control=$(cases_of "$out/cmp$r.md" "$ABBA_CONTROL")
    n_control=$(printf '%s\n' "$control" | grep -c .)
    if [ "$n_control" != 1 ]; then
      stage "round $r: ABBA_CONTROL ($ABBA_CONTROL) names $n_control compared cases, not one: no verdict"
      continue
    fi
    if printf '%s\n' "$targets" | awk '{ print $3 }' | grep -qxF "${control##* }"; then
      stage "round $r: ABBA_CONTROL ($ABBA_CONTROL) names a target case: no verdict"
      continue
    fi
    c=$(echo "$control" | awk '{ print $2 }')
  fi
  verdict=$(printf '%s\n' "$targets" | awk -v c="$c" -v th="$compare_threshold" -v ctl="${ABBA_CONTROL:-}" '
    { net = $2 / c; if ($1 != "faster" || (ctl != "" && !(net < 1 - th / 100))) lost = 1
      line = line sprintf("%s%s %s NEW/BASE %s", NR > 1 ? "; " : "", $3, $1, $2) (ctl != "" ? sprintf(", net %.4f", net) : "") }
    END { print (lost ? 0 : 1) " " line }')
  stage "round $r: ${verdict#* }${ABBA_CONTROL:+ (control ${control##* } NEW/BASE $c)}"
  [ "${verdict%% *}" = 1 ] && wins=$((wins + 1))
  ratios+=$(cases_of "$out/cmp$r.md" . | awk -v c="$c" '{ printf "%s %s %.4f\n", $3, $2, $2 / c }')$'\n'
done
stage "A faster on $abba_target in $wins of $rounds rounds${ABBA_CONTROL:+ (net of control $ABBA_CONTROL)}"
# Each compared case's median over the rounds (the target's and the others', the control's own
# net being 1; a round without a verdict does not count).
for name in $(printf '%s' "$ratios" | awk 'NF { print $1 }' | sort -u); do
  stage "$(printf '%s' "$ratios" | awk -v k="$name" -v ctl="${ABBA_CONTROL:-}" '
    function median(v, n,   i, j, t) {
      for (i = 2; i <= n; ++i) for (j = i; j > 1 && v[j - 1] > v[j]; --j) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
    $1 == k { ++n; ratio[n] = $2; net[n] = $3 }
    END { printf "%s: median over %d rounds NEW/BASE %.4f", k, n, median(ratio, n)
          if (ctl != "") printf ", net %.4f", median(net, n) }')"
done
unset SUITE_FILTER
# The device hands back at most 8 files (the fifty-fifth session lost summary.txt three times to
# the ninth and tenth): the rounds' records and compares go back as one archive.
round_files=()
for r in $(seq "$rounds"); do round_files+=("b$r.jsonl" "a$r.jsonl" "cmp$r.md"); done
tar -czf "$out/rounds.tar.gz" -C "$out" "${round_files[@]}" &&
  (cd "$out" && rm -f "${round_files[@]}")

checks=${ABBA_CHECKS:-auto}
passed=0
if [ "$checks" = 1 ] || { [ "$checks" = auto ] && [ "$rounds" -gt 0 ] && [ "$wins" -eq "$rounds" ]; }; then
  if [ "$(left)" -ge 150 ]; then
    fused_checks $(($(left) - 10)) build-abba-a
    grep -q "100% tests passed" "$out/ctest-1.log" && passed=1
  else
    stage "no time for A's battery ($(left) s left; it takes ~140 s)"
  fi
fi

if [ "${ABBA_TIMELINE:-0}" = 1 ]; then
  if [ "$(left)" -ge 40 ]; then
    stage "A's item timeline ($timeline_case)"
    dir=/tmp/mtab-abba-timeline
    rm -rf "$dir" && mkdir -p "$dir"
    MTABENCH_FUSED_TIMELINE_DIR=$dir timeout 60 build-abba-t/mtabench run "${timeline_case%%:*}" \
      --filter "${timeline_case#*:}" --impl fused --no-records --max-time 0.3 --min-time 0.1 >>"$S" 2>&1
    python3 tools/fused_timeline.py --bins 10 "$dir"/*.csv >>"$S" 2>&1
    tar -czf "$out/timeline.tar.gz" -C "$dir" .
  else
    stage "no time for A's timeline ($(left) s left)"
  fi
fi

if [ "${ABBA_FULL:-0}" = 1 ]; then
  if [ "$passed" = 1 ] && [ "$(left)" -ge 100 ]; then
    fused_suite build-abba-a full
  else
    stage "A's whole suite not run (battery passed: $passed; $(left) s left, it takes ~85 s)"
  fi
fi
stage "done"
