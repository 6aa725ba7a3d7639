# Sourced by the tools/gpu-*.sh scripts (from the repository root, after OUT is known): the
# stage log and the Release build with tests into build-gpu (or $gpu_build_dir when the caller
# sets it). Defines B, M (the mtabench binary), S (OUT/summary.txt), stage and build_gpu, and
# clears what an earlier call on a still-warm machine left in /tmp/mtab-* (records, profiles),
# so nothing stale is handed back.
B=${gpu_build_dir:-build-gpu}
rm -rf /tmp/mtab-*
M=$B/mtabench
S=$out/summary.txt
mkdir -p "$out"
t0=$SECONDS
stage() { echo "=== [$((SECONDS - t0)) s] $*" | tee -a "$S"; }
# `mtabench compare`'s verdict threshold (percent) for builds timed in one call: they agree round
# to round within ~0.3%, and compare's default of 5 (for records of different runs and machines)
# called v149's +3.7% at p 6.5e-10 "same" (JOURNAL.md, forty-seventh session).
compare_threshold=${COMPARE_THRESHOLD:-1}
# Builds, or prints the end of the build log into the summary and exits 1.
build_gpu() {
  stage build
  build_tree . "$B" /tmp/mtab-build.log "$(nproc)" || { tail -40 /tmp/mtab-build.log | tee -a "$S"; exit 1; }
}
# Configures and builds the checkout SRC into BUILD (Release, with tests; with BUILD_TESTS=OFF
# only the mtabench binary, a sixth faster), JOBS at a time, the output into LOG; returns the
# build's status. CMAKE_ARG ...: more configure arguments (a diagnostic build's defines).
# Usage: build_tree SRC BUILD LOG JOBS [CMAKE_ARG ...]
build_tree() {
  local tests=${BUILD_TESTS:-ON} target=()
  [ "$tests" = OFF ] && target=(--target mtabench)
  { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMTABENCH_BUILD_TESTS="$tests" "${@:5}" &&
    cmake --build "$2" -j"$4" "${target[@]}"; } >"$3" 2>&1
}

# This tree's mtabench alone, once per "DIR=FLAGS" argument (DIR up to the first "="; FLAGS both
# the CUDA and the C++ flags, so a host-side knob in the plan's code works too), all
# builds at once with the cores shared (gpu-ablate.sh's masks, gpu-variants.sh's knobs); a failed
# build's log end goes into the summary and the script exits 1.
# Usage: build_flag_variants DIR=FLAGS ...
build_flag_variants() {
  local jobs=$(($(nproc) / $#)) pids=() spec k
  for spec in "$@"; do
    BUILD_TESTS=OFF build_tree . "${spec%%=*}" "/tmp/mtab-${spec%%=*}.log" $((jobs > 0 ? jobs : 1)) \
      -DCMAKE_CUDA_FLAGS="${spec#*=}" -DCMAKE_CXX_FLAGS="${spec#*=}" &
    pids+=($!)
  done
  k=0
  for spec in "$@"; do
    wait "${pids[$k]}" || { tail -30 "/tmp/mtab-${spec%%=*}.log" | tee -a "$S"; exit 1; }
    k=$((k + 1))
  done
}

# The fused suite (seed, sequence sweep, shapes) timed with --samples by BUILD's mtabench; its
# records are copied to OUT/NAME.jsonl. SUITE_FILTER (a regular expression on workload names)
# keeps only some workloads: ~15 s for four large ones instead of ~80 s for all 18.
# Usage: fused_suite BUILD NAME [MAX_TIME_S]
fused_suite() {
  local filter=()
  [ -n "${SUITE_FILTER:-}" ] && filter=(--filter "$SUITE_FILTER")
  stage "fused suite, $2 (--max-time ${3:-0.2}${SUITE_FILTER:+, --filter $SUITE_FILTER})"
  timeout 150 "$1/mtabench" run workloads/seed.json workloads/seq-sweep.json workloads/shapes.json --impl fused \
    "${filter[@]}" --max-time "${3:-0.2}" --min-time 0.1 --samples --out "/tmp/mtab-$2" >>"$S" 2>&1
  echo "rc=$?" >>"$S"
  cp "$(ls /tmp/mtab-"$2"/runs/*.jsonl | tail -1)" "$out/$2.jsonl" 2>/dev/null
}

# Per-SASS-instruction profiles (Nsight Compute source counters) of BUILD's fused kernel on
# seq 4096 (few heads) and k 7 heads 32/32 (many), or on PROFILE_CASES ("FILE:REGEX ...", at
# most three): OUT/1.sass.csv.gz, 2.sass.csv.gz, ..., hotspots.log.
fused_profiles() {
  local cases=(workloads/seq-sweep.json:'^sweep-seq4096$' workloads/shapes.json:'^k7-h32-b1-seq4096$')
  [ -n "${PROFILE_CASES:-}" ] && read -r -a cases <<<"$PROFILE_CASES"
  stage "per-instruction profiles of $1 (${cases[*]})"
  timeout $((90 * ${#cases[@]})) tools/gpu-hotspots.sh "$out" "$1" "${cases[@]}"
  echo "rc=$?" >>"$S"
}

# Nsight Compute's METRICS (comma-separated) for one launch of BUILD's fused kernel (the 13th,
# past the warm-up) on the workload FILE:REGEX; ncu's report and errors on stdout.
# Usage: fused_ncu_metrics BUILD METRICS FILE:REGEX
fused_ncu_metrics() {
  timeout 90 ncu --clock-control none --cache-control all -k regex:'fused_kernel' --launch-skip 12 --launch-count 1 \
    --metrics "$2" "$1/mtabench" run "${3%%:*}" --filter "${3#*:}" --impl fused --no-isolate --no-records --quiet \
    --max-time 0.2 --min-time 0.05 2>&1
}

# Memory traffic of BUILD's fused kernel on one workload (default seq 4096), one Nsight Compute
# launch with four metrics (~15 s): DRAM bytes read and written, the L2 read hit rate and the
# kernel's duration under the profiler, into the summary as "NAME: metric unit value" lines
# (v10-v11: the DRAM bytes said what the medians alone could not).
# Usage: fused_traffic BUILD NAME [FILE:REGEX]
fused_traffic() {
  local spec=${3:-workloads/seq-sweep.json:^sweep-seq4096\$}
  stage "memory traffic of $2 ($spec)"
  fused_ncu_metrics "$1" dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_op_read_hit_rate.pct,gpu__time_duration.sum \
    "$spec" | grep -E "dram__|lts__|gpu__time" | sed "s|^ *|$2: |" >>"$S"
  echo "rc=$?" >>"$S"
}

# Untimed, all at once within SECONDS_LEFT: the FusedGpu tests of each BUILD and memcheck and
# racecheck of the first, one ctest per build directory (OUT/ctest-<n>.log, n = 1, 2, ...: two
# ctests in one directory would share its Testing/ logs); the results' lines go into the
# summary. Nothing may be timed while this runs: the processes share the GPU.
# Usage: fused_checks SECONDS_LEFT BUILD [BUILD]
fused_checks() {
  local rem=$1 n=0 pids=() b tests
  shift
  stage "FusedGpu tests of $*, memcheck and racecheck of $1, at once (${rem} s left)"
  for b in "$@"; do
    n=$((n + 1))
    tests='FusedGpu'
    [ "$n" -eq 1 ] && tests='FusedGpu|fused_memcheck|fused_racecheck'
    timeout "$rem" ctest --test-dir "$b" -R "$tests" -j3 -V --timeout 600 >"$out/ctest-$n.log" 2>&1 &
    pids+=($!)
  done
  n=0
  for b in "$@"; do
    wait "${pids[$n]}"
    echo "tests of $b: rc=$? (124: the time ran out)" >>"$S"
    n=$((n + 1))
    grep -E "Test +#[0-9]+:|tests passed|random shapes|shard|ERROR SUMMARY|RACECHECK SUMMARY" "$out/ctest-$n.log" >>"$S"
  done
}
