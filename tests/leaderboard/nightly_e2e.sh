#!/usr/bin/env bash
# tools/nightly.sh --cpu end to end, three nights into a temporary results folder, with the
# binary already built (ctest nightly.cpu_e2e): usage nightly_e2e.sh MTABENCH WORKDIR
#   night 1: no previous run; records, history and the leaderboard appear.
#   night 2: compared with night 1. A CPU shared with other jobs is far too noisy for a 5% gate,
#            so these two nights use a huge threshold: they test the plumbing, not the CPU.
#   night 3: compared with a fabricated previous night 100x faster (night 2's records, edited
#            and resealed): a regression, so nightly.sh must exit 1.
set -euo pipefail
bin=$(realpath "$1")
work=$(realpath -m "$2")
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rm -rf "$work"
mkdir -p "$work"
results=$work/results
nightly() { "$repo/tools/nightly.sh" --cpu --skip-build --mtabench "$bin" --results "$results" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

nightly --threshold 100000 || fail "night 1 exited $?"
ls "$results"/runs/*.jsonl > /dev/null || fail "no run file"
ls "$results"/history/*.jsonl > /dev/null || fail "no history"
for f in leaderboard.json LEADERBOARD.md index.html; do
  [[ -s "$results/leaderboard/$f" ]] || fail "no leaderboard/$f"
done
[[ ! -e "$results/compare" ]] || fail "night 1 compared with something"

# Night 2 also passes --fail-on-shared-gpu through to run: no GPU, no NVML counts, exit 0.
nightly --threshold 100000 -- --fail-on-shared-gpu || fail "night 2 exited $?"
[[ $(ls "$results"/runs/*.jsonl | wc -l) -eq 2 ]] || fail "expected two run files"
[[ -s "$results/compare/latest.md" ]] || fail "night 2 wrote no comparison"
grep -q "same\|unsure\|faster" "$results/compare/latest.md" || fail "no verdicts in the comparison"
"$bin" validate "$results/history" > /dev/null || fail "the history does not validate"

last=$(ls "$results"/runs/*.jsonl | sort | tail -n 1)
python3 - "$last" "$work/fast.json" <<'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
for r in records:
    r["run_id"] = "29990101T000000Z-fabricated"
    d = r["timing"]["device"]
    for k in list(d):
        if k.endswith("_s"):
            d[k] *= 0.01
json.dump(records, open(sys.argv[2], "w"))
PY
"$bin" seal "$work/fast.json" --reseal --out "$results/runs/29990101T000000Z-fabricated.jsonl" > /dev/null
set +e
nightly
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "night 3 against a 100x faster previous night exited $rc, expected 1 (a regression)"
grep -q "slower" "$results/compare/latest.md" || fail "the comparison names no slower case"
echo "PASS: three nights; the regression was caught"
