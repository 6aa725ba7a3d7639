#!/usr/bin/env bash
# The nightly record update (issue 8): build, run the default suite, append to the history,
# regenerate the leaderboard, compare with the previous night's run, and exit non-zero on a
# regression.
#
#   tools/nightly.sh [options] [-- extra `mtabench run` arguments]
#
# Options (each also an environment variable):
#   --build-dir DIR    MTABENCH_BUILD_DIR   build folder (default: build-nightly; build with --preset)
#   --preset NAME      MTABENCH_PRESET      configure with this CMake preset instead of plain options
#   --skip-build       MTABENCH_SKIP_BUILD=1  use an already-built binary
#   --mtabench PATH    MTABENCH_BIN         the binary (default: BUILD_DIR/mtabench)
#   --results DIR      MTABENCH_RESULTS     results folder (default: results): runs/, history/,
#                                           reported/ are read; leaderboard/ and compare/ are written
#   --threshold PCT    MTABENCH_THRESHOLD   compare's threshold (default 5)
#   --cpu                                   CI mode without a GPU: the CPU implementation on
#                                           workloads/smoke.json, short timing
#
# Exit status: 0 fine; 1 a regression (a case slower beyond the threshold, or newly failing);
# 3 some case did not pass in this run (and nothing regressed); 5 (with `-- --fail-on-shared-gpu`)
# every case passed but some were measured on a GPU shared with other processes, which the
# leaderboard does not use (and nothing regressed); other: the step that failed.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${MTABENCH_BUILD_DIR:-build-nightly}
preset=${MTABENCH_PRESET:-}
skip_build=${MTABENCH_SKIP_BUILD:-0}
bin=${MTABENCH_BIN:-}
results=${MTABENCH_RESULTS:-results}
threshold=${MTABENCH_THRESHOLD:-5}
cpu=0
run_args=()

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --preset) preset=$2; shift 2 ;;
    --skip-build) skip_build=1; shift ;;
    --mtabench) bin=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --threshold) threshold=$2; shift 2 ;;
    --cpu) cpu=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; run_args+=("$@"); break ;;
    *) echo "nightly.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done

log() { echo "nightly: $*" >&2; }
# The presets of CMakePresets.json build into build/.
[[ -n "$preset" && -z "${MTABENCH_BUILD_DIR:-}" && "$build_dir" == build-nightly ]] && build_dir=build
# Paths given relative to where the script was started; it works from the repository root.
[[ -n "$bin" ]] || bin="$build_dir/mtabench"
build_dir=$(realpath -m "$build_dir")
results=$(realpath -m "$results")
bin=$(realpath -m "$bin")
cd "$repo"

# 1. Build.
if [[ "$skip_build" != 1 ]]; then
  if [[ -n "$preset" ]]; then
    cmake --preset "$preset"
    cmake --build --preset "$preset" --target mtabench
  else
    generator=()
    command -v ninja > /dev/null && generator=(-G Ninja)
    cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DMTABENCH_BUILD_TESTS=OFF
    cmake --build "$build_dir" --target mtabench -j "$(nproc)"
  fi
fi
[[ -x "$bin" ]] || { log "no mtabench binary at $bin"; exit 2; }

# 2. The suite. The run appends every record to $results/history/<hardware>.jsonl as it
#    arrives and writes $results/runs/<run_id>.jsonl; run ids start with the UTC time, so the
#    previous night's run is the newest run file that existed before this one.
mkdir -p "$results/runs"
shopt -s nullglob
before=("$results"/runs/*.jsonl)
previous=""
[[ ${#before[@]} -gt 0 ]] && previous=$(printf '%s\n' "${before[@]}" | sort | tail -n 1)
if [[ "$cpu" == 1 ]]; then
  run_args=(workloads/smoke.json --impl reference-cpu --max-time 2 --min-time 0.2 "${run_args[@]}")
fi
log "running the suite into $results"
set +e
"$bin" run --out "$results" --quiet "${run_args[@]}"
run_rc=$?
set -e
if [[ $run_rc -ne 0 && $run_rc -ne 3 && $run_rc -ne 5 ]]; then
  log "mtabench run failed (exit $run_rc)"
  exit "$run_rc"
fi
new=""
for f in "$results"/runs/*.jsonl; do
  found=0
  for b in "${before[@]}"; do [[ "$f" == "$b" ]] && found=1; done
  [[ $found == 0 ]] && new=$f
done
[[ -n "$new" ]] || { log "the run wrote no run file"; exit 2; }
log "this run: $new"

# 3. The leaderboard over the whole history and the reported records (the sealed *.jsonl files:
#    reported/sources/ holds their unsealed sources, which readers would reject).
inputs=("$results/history")
inputs+=("$results"/reported/*.jsonl)
"$bin" leaderboard "${inputs[@]}" --out "$results/leaderboard"

# 4. Compare with the previous night.
compare_rc=0
if [[ -n "$previous" ]]; then
  name=$(basename "$new" .jsonl)
  mkdir -p "$results/compare"
  set +e
  "$bin" compare "$previous" "$new" --threshold "$threshold" --format json --out "$results/compare/$name.json"
  compare_rc=$?
  "$bin" compare "$previous" "$new" --threshold "$threshold" --out "$results/compare/$name.md"
  set -e
  cp "$results/compare/$name.md" "$results/compare/latest.md"
  log "compared with $previous: $results/compare/$name.md (exit $compare_rc)"
  if [[ $compare_rc -ne 0 && $compare_rc -ne 1 ]]; then exit "$compare_rc"; fi
else
  log "no previous run to compare with (first night)"
fi

if [[ $compare_rc -eq 1 ]]; then
  log "REGRESSION: see $results/compare/latest.md"
  exit 1
fi
if [[ $run_rc -eq 3 ]]; then
  log "some case did not pass in this run"
  exit 3
fi
if [[ $run_rc -eq 5 ]]; then
  log "some cases were measured on a shared GPU (not eligible on the leaderboard)"
  exit 5
fi
log "done"
