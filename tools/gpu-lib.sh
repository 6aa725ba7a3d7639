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
# Builds, or prints the end of the build log into the summary and exits 1.
build_gpu() {
  stage build
  { cmake -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMTABENCH_BUILD_TESTS=ON && cmake --build "$B" -j"$(nproc)"; } \
    >/tmp/mtab-build.log 2>&1 || { tail -40 /tmp/mtab-build.log | tee -a "$S"; exit 1; }
}
