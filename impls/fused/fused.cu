// The `fused` implementation: one launch of the kernel in fused_kernel.cuh (where the plan says
// p.prestats, the statistics kernel of fused_prestats.cuh just before it). Everything that can
// be decided per workload (tiling, work order, scratch, occupancy) is decided in initialize();
// run() only launches, on the harness's stream.
#include "harness/cuda_check.h"
#include "harness/device.h"
#include "impls/fused/fused.h"
#include "impls/fused/fused_launch.h"
#include "impls/fused/fused_plan.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace mtabench::fused {

namespace {

// The wgmma instance (fused_wgmma.cuh) runs only on compute capability 9.0 and only when this
// build compiled it (CMake sets MTABENCH_WGMMA when the architectures include 90a).
bool wgmma_ok(const DeviceInfo* dev) {
#ifdef MTABENCH_WGMMA
  return dev->cc_major == 9 && dev->cc_minor == 0;
#else
  (void)dev;
  return false;
#endif
}

class Fused final : public Implementation {
 public:
  ImplInfo info() const override {
    ImplInfo i;
    i.name = "fused";
    // The kernel's version in JOURNAL.md. Records up to 2026-11-29 19:07Z say "1"; records of v5
    // to v13 (to 2026-11-30 02:31Z) all say "5": it was not bumped, their source_digest tells them
    // apart.
    i.version = "168";
    i.language = "cuda";
    i.license = "Apache-2.0";
    i.source = "impls/fused/fused_kernel.cuh";
    i.description = "one work-queue kernel: in-order work items (row statistics, then probability tiles contracted on "
                    "tensor cores (bf16/fp16: mma.sync, with ldmatrix fragments above 4 heads out, or wgmma on sm_90a for "
                    "heads_in a multiple of 16, warp-specialised at k 5 and 7 with 25-32 heads out) or fp32 FMA), the tiles "
                    "re-reading the scores, y written once; at seq 257-1024, and at any seq on the warp-specialised path "
                    "(v139), the row statistics are a kernel of their own launched just before it in the same call (two "
                    "launches: configuration.kernel_launches), whose 16-bit aligned rows take a lean one-load-a-vector "
                    "fold (rows past 1024 a streaming one, one block an SM) and beside which the main kernel's blocks "
                    "may enter";
    return i;
  }

  Support check_support(const Workload& w, const DeviceInfo* dev) const override {
    if (!dev) return Support::no("needs a CUDA device");
    if (dev->cc_major < 8) return Support::no("needs sm_80 or newer (mma.sync m16n8k16 for bf16)");
    if (w.k > 11) return Support::no(fmt::format("k {} > 11 (the widest kernel this implementation is built for)", w.k));
    if (w.heads_in > 256) return Support::no("heads_in > 256");
    if (w.dtype != DType::fp32 && w.heads_out > 64) return Support::no("heads_out > 64 (the widest tensor-core tile)");
    if (w.seq > (1ll << 20)) return Support::no("seq > 2^20");
    const double tensors = static_cast<double>(w.scores_elems() + w.y_elems()) * dtype_size(w.dtype);
    auto fits_memory = [&](double scratch) {
      return scratch + tensors <= 0.9 * static_cast<double>(dev->memory_bytes);
    };
    auto too_big = [&](double scratch) {
      return Support::no(fmt::format("needs {:.1f} GiB of device memory", (scratch + tensors) / (1 << 30)));
    };
    if (make_small_plan(w, dynamic_smem_budget(dev->smem_per_block_optin), dev->sm_count).why_not.empty())
      return fits_memory(0) ? Support::yes() : too_big(0);
    const FusedPlan plan = plan_on(w, dev, kPlanWindow);
    if (!plan.why_not.empty()) return Support::no(plan.why_not);
    const double scratch = static_cast<double>(plan.partials_bytes + plan.stats_bytes) +
                           static_cast<double>(plan.items.size()) * sizeof(int4);
    if (!fits_memory(scratch)) return too_big(scratch);
    return Support::yes();
  }

  void initialize(const Workload& w, const DeviceInfo* dev, cudaStream_t stream) override {
    dtype_ = w.dtype;
    programmatic_ = dev->cc_major >= 9;
    const int smem = dynamic_smem_budget(dev->smem_per_block_optin);
    small_ = make_small_plan(w, smem, dev->sm_count);
    if (small_.why_not.empty()) {
      prepare_small_kernel(small_, dtype_);
#if MTABENCH_FUSED_TIMELINE
      small_.p.timeline = alloc_timeline(w, static_cast<std::size_t>(kSmallTimelineWords) * small_.grid);
#endif
      return;
    }
    // Occupancy depends only on the tiling; the item order depends on how many blocks run at
    // once, so plan twice.
    plan_ = plan_on(w, dev, kPlanWindow);
    const int per_sm = prepare_kernel(plan_, dtype_);
    if (per_sm < 1) throw std::runtime_error("fused: the kernel does not fit on an SM (" + plan_.describe() + ")");
    grid_ = plan_.p.local_stats ? plan_.p.n_items : std::min(plan_.p.n_items, per_sm * dev->sm_count);
    plan_ = plan_on(w, dev, grid_);
    FusedParams& p = plan_.p;
    p.sms = dev->sm_count;
    MTABENCH_CUDA_CALL(cudaMalloc(&items_, plan_.items.size() * sizeof(int4)));
    MTABENCH_CUDA_CALL(cudaMemcpy(items_, plan_.items.data(), plan_.items.size() * sizeof(int4), cudaMemcpyHostToDevice));
    p.items = static_cast<const int4*>(items_);
    if (!p.local_stats) {
      MTABENCH_CUDA_CALL(cudaMalloc(&partials_, plan_.partials_bytes));
      MTABENCH_CUDA_CALL(cudaMalloc(&stats_, plan_.stats_bytes));
      p.partials = static_cast<float2*>(partials_);
      p.stats = static_cast<float2*>(stats_);
    }
    // Counters start at zero; every launch leaves them at zero again.
    MTABENCH_CUDA_CALL(cudaMalloc(&counters_, plan_.counter_words * sizeof(unsigned)));
    MTABENCH_CUDA_CALL(cudaMemsetAsync(counters_, 0, plan_.counter_words * sizeof(unsigned), stream));
    MTABENCH_CUDA_CALL(cudaStreamSynchronize(stream));
    auto* c = static_cast<unsigned*>(counters_);
    p.band_count = c;
    p.band_ready = c + static_cast<std::size_t>(p.B) * p.Q;
    p.ticket = c + 2 * static_cast<std::size_t>(p.B) * p.Q;
    p.done = p.ticket + 1;
#if MTABENCH_FUSED_TIMELINE
    prestats_blocks_ = prestats_blocks(p, dtype_);
    const std::size_t main_words = static_cast<std::size_t>(kTimelineWords) * p.n_items + kTimelineBlockWords * static_cast<std::size_t>(grid_);
    p.timeline = alloc_timeline(w, main_words + 2 * static_cast<std::size_t>(prestats_blocks_));
    if (prestats_blocks_ > 0) p.timeline_prestats = p.timeline + main_words;
    twice_ = std::getenv("MTABENCH_FUSED_TIMELINE_TWICE") != nullptr;
#endif
  }

  nlohmann::json configuration() const override {
    if (small_.why_not.empty()) {
      const SmallParams& s = small_.p;
      nlohmann::json c = {{"path", small_.row ? "row (fused_row.cuh)" : "small-seq (fused_small.cuh)"},
              {"threads_per_block", small_.threads},
              {"rows_per_block", s.RB},
              {"grid", small_.grid},
              {"k_compile_time", small_.KT},
              {"columns_per_lane", s.NCOL},
              {"shared_memory_bytes", s.sm_total},
              {"kernel_launches", 1}};
      // The row kernel has no channel groups: a warp takes one channel (fused_row.cuh).
      if (small_.row)
        c["warps_per_channel"] = 1;
      else
        c["channel_groups"] = s.G;
      if (kTimeline)
        c["diagnostic_build"] = "MTABENCH_FUSED_TIMELINE: thread 0 of each block stamps %globaltimer at the small-seq "
                                "or row kernel's phases (MTABENCH_FUSED_TIMELINE_TWICE does not apply to it)";
      return c;
    }
    nlohmann::json c = {{"path", plan_.mma ? "tensor-core work queue (fused_kernel.cuh)" : "fp32 FMA work queue (fused_kernel.cuh)"},
                         {"plan", plan_.describe()},
                         {"grid", grid_},
                         // Kernels each timed call launches: the statistics kernel (p.prestats) and the main one.
                         {"kernel_launches", plan_.p.prestats ? 2 : 1}};
    if (kTimeline)
      c["diagnostic_build"] = twice_ ? "MTABENCH_FUSED_TIMELINE with MTABENCH_FUSED_TIMELINE_TWICE: each call launches the "
                                       "kernel twice (times are not the operation's); the stamps are the second launch's"
                                     : "MTABENCH_FUSED_TIMELINE: thread 0 of each block stamps %globaltimer per item";
    return c;
  }

  void run(const TensorArgs& t, cudaStream_t stream) override {
    if (small_.why_not.empty()) {
      SmallParams p = small_.p;
      p.scores = t.scores;
      p.weight = t.weight;
      p.bias = t.bias;
      p.y = t.y;
      launch_small(small_, dtype_, p, stream);
      return;
    }
    FusedParams p = plan_.p;
    p.scores = t.scores;
    p.weight = t.weight;
    p.bias = t.bias;
    p.y = t.y;
    // Diagnostic only (timeline build, MTABENCH_FUSED_TIMELINE_TWICE set): a first launch right
    // before the stamped one, so the second starts with the kernel's code in L2 (the protocol's
    // flush presumably evicts code as well as data: the hypothesis this tests) and, past seq
    // ~2048, its first bands' rows still cold: the two timelines' start-up tell code fetch from
    // data latency (JOURNAL.md, twenty-first session's code-size lead).
    if (twice_) launch(plan_, dtype_, p, grid_, stream, programmatic_);
    launch(plan_, dtype_, p, grid_, stream, programmatic_);
  }

  ~Fused() override {
    dump_timeline();
    for (void* ptr : {items_, partials_, stats_, counters_, timeline_})
      if (ptr) MTABENCH_CUDA_CALL_NOTHROW(cudaFree(ptr));
  }

 private:
  // The plan on this device (its shared memory per block less the static reserve, whether wgmma
  // may run) for `window` blocks at once, on which the item order depends.
  static FusedPlan plan_on(const Workload& w, const DeviceInfo* dev, int window) {
    return make_plan(w, dynamic_smem_budget(dev->smem_per_block_optin), window, kLeadWindows, wgmma_ok(dev));
  }

#if MTABENCH_FUSED_TIMELINE
  // The timeline build: `words` zeroed stamps on the device for either kernel, dumped by
  // dump_timeline as <workload>.csv.
  unsigned long long* alloc_timeline(const Workload& w, std::size_t words) {
    timeline_name_ = fmt::format("k{}-seq{}-b{}-h{}x{}-{}", w.k, w.seq, w.batch, w.heads_in, w.heads_out, dtype_name(w.dtype));
    timeline_words_ = words;
    MTABENCH_CUDA_CALL(cudaMalloc(&timeline_, words * sizeof(unsigned long long)));
    MTABENCH_CUDA_CALL(cudaMemset(timeline_, 0, words * sizeof(unsigned long long)));
    return static_cast<unsigned long long*>(timeline_);
  }
#endif

  // The timeline build (MTABENCH_FUSED_TIMELINE): the last launch's stamps, as CSV in
  // $MTABENCH_FUSED_TIMELINE_DIR/<workload>.csv (tools/fused_timeline.py reads it). One row per
  // ticket (type, b, band, chunk, sm, block, then ns from the first block's entry: start,
  // statistics in, fill done, contraction done, end, and the warp-specialised kernel's pair 0
  // written, consumers' take, last pair's wait, wgmmas done (fused_params.h's TimelineSlot says
  // what each means there); -1 where not stamped), then one row per
  // block (type "block": entry as start, thread 0's set-up done as stats, the set-up's barrier
  // passed as fill, exit as end), then one row per block of the statistics kernel (type
  // "prestats": entry as start, exit as end). Best effort: a destructor must not throw.
  void dump_timeline() noexcept {
    const char* dir = std::getenv("MTABENCH_FUSED_TIMELINE_DIR");
    if (!timeline_ || !dir) return;
    std::vector<unsigned long long> h(timeline_words_);
    if (cudaMemcpy(h.data(), timeline_, h.size() * sizeof(h[0]), cudaMemcpyDeviceToHost) != cudaSuccess) return;
    if (small_.why_not.empty()) {
      dump_small_timeline(dir, h);
      return;
    }
    const std::size_t n = plan_.items.size(), blocks0 = static_cast<std::size_t>(kTimelineWords) * n;
    unsigned long long t0 = ~0ull;
    for (int b = 0; b < grid_; ++b)
      if (h[blocks0 + kTimelineBlockWords * b + kTlEntry]) t0 = std::min(t0, h[blocks0 + kTimelineBlockWords * b + kTlEntry]);
    const auto rel = [t0](unsigned long long t) { return t ? static_cast<long long>(t - t0) : -1ll; };
    const std::string path = fmt::format("{}/{}.csv", dir, timeline_name_);
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) return;
    std::fprintf(f, "# %s grid=%d\n", plan_.describe().c_str(), grid_);
    std::fprintf(f, "ticket,type,b,band,chunk,sm,block,start,stats,fill,mma,end,ws_pair0,ws_take,ws_last,ws_mma,"
                    "ws_issued0,ws_take1,ws_end1\n");
    static const char* kType[] = {"stats", "conv", "zero"};
    for (std::size_t t = 0; t < n; ++t) {
      const unsigned long long* r = &h[kTimelineWords * t];
      const int4 it = plan_.items[t];
      std::fprintf(f, "%zu,%s,%d,%d,%d,%llu,%llu,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld\n", t, kType[it.x],
                   it.y, it.z, it.w, r[kTlWhere] >> 32, r[kTlWhere] & 0xffffffffull, rel(r[kTlStart]), rel(r[kTlStats]),
                   rel(r[kTlFill]), rel(r[kTlMma]), rel(r[kTlEnd]), rel(r[kTlWsPair0]), rel(r[kTlWsTake]), rel(r[kTlWsLast]),
                   rel(r[kTlWsMma]), rel(r[kTlWsIssued0]), rel(r[kTlWsTake1]), rel(r[kTlWsEnd1]));
    }
    for (int b = 0; b < grid_; ++b) {
      const unsigned long long* r = &h[blocks0 + kTimelineBlockWords * b];
      std::fprintf(f, "-1,block,0,0,0,0,%d,%lld,%lld,%lld,-1,%lld,-1,-1,-1,-1,-1,-1,-1\n", b, rel(r[kTlEntry]), rel(r[kTlSetup]),
                   rel(r[kTlSetupBarrier]), rel(r[kTlExit]));
    }
    // The statistics kernel's blocks (v82): entry as start, exit as end, from the same origin
    // (the main kernel's first block entry; they start before it, so mostly negative).
    const std::size_t pre0 = blocks0 + kTimelineBlockWords * static_cast<std::size_t>(grid_);
    for (int b = 0; b < prestats_blocks_; ++b)
      std::fprintf(f, "-1,prestats,0,0,0,0,%d,%lld,-1,-1,-1,%lld,-1,-1,-1,-1,-1,-1,-1\n", b, rel(h[pre0 + 2 * b]), rel(h[pre0 + 2 * b + 1]));
    std::fclose(f);
  }

  // The small or row kernel's stamps (fused_small_params.h, SmallTimelineWord), one row a block,
  // ns from the first block's entry: entry, loads, probs, weights, barrier, conv, exit, then its SM.
  void dump_small_timeline(const char* dir, const std::vector<unsigned long long>& h) const noexcept {
    unsigned long long t0 = ~0ull;
    for (int b = 0; b < small_.grid; ++b)
      if (h[kSmallTimelineWords * static_cast<std::size_t>(b) + kStEntry])
        t0 = std::min(t0, h[kSmallTimelineWords * static_cast<std::size_t>(b) + kStEntry]);
    std::FILE* f = std::fopen(fmt::format("{}/{}.csv", dir, timeline_name_).c_str(), "w");
    if (!f) return;
    if (small_.row)  // tools/fused_timeline.py reads its phases in the row kernel's order
      std::fprintf(f, "# row kernel, grid=%d threads=%d\n", small_.grid, small_.threads);
    else
      std::fprintf(f, "# small kernel, grid=%d RB=%d NCOL=%d G=%d\n", small_.grid, small_.p.RB, small_.p.NCOL, small_.p.G);
    std::fprintf(f, "block,sm,entry,loads,probs,weights,barrier,conv,exit\n");
    for (int b = 0; b < small_.grid; ++b) {
      const unsigned long long* r = &h[kSmallTimelineWords * static_cast<std::size_t>(b)];
      std::fprintf(f, "%d,%llu", b, r[kStSm]);
      for (int w = kStEntry; w <= kStExit; ++w) std::fprintf(f, ",%lld", r[w] ? static_cast<long long>(r[w] - t0) : -1ll);
      std::fprintf(f, "\n");
    }
    std::fclose(f);
  }

  DType dtype_ = DType::bf16;
  FusedPlan plan_;
  SmallPlan small_;  // used when its why_not is empty
  int grid_ = 0;
  void *items_ = nullptr, *partials_ = nullptr, *stats_ = nullptr, *counters_ = nullptr, *timeline_ = nullptr;
  std::size_t timeline_words_ = 0;
  int prestats_blocks_ = 0;  // the statistics kernel's blocks (timeline build: their stamps)
  bool programmatic_ = false;  // programmatic dependent launch (v82's statistics kernel first)
  bool twice_ = false;  // MTABENCH_FUSED_TIMELINE_TWICE (timeline build only)
  std::string timeline_name_;
};

}  // namespace

std::unique_ptr<Implementation> make() { return std::make_unique<Fused>(); }

}  // namespace mtabench::fused
