#pragma once
// The fused kernel's shared-memory tiles: the probability tile fills (generic, four-channel
// vector, channel-lane vector for the ldmatrix path) and the y staging tile's copy to y.
#include "impls/fused/fused_common.cuh"
#include "impls/fused/fused_contraction.h"

namespace mtabench::fused {

// ---- probability tile ----------------------------------------------------------------------------
// p = 2^(s*log2e - max) / sum for rows i0-r .. i0+R+r-1 and columns j0-r .. j0+TJ+r-1 of
// channels [c0, c0+nch): 0 outside the causal region and outside the tensor (the convolution's
// zero padding), and for channels >= C (padding). Element (row, column, channel) goes to
// dst[row*s_row + column*s_col + channel*s_ch]. A warp takes two (row, channel) rows at a time,
// lanes over columns; all ten loads of a lane are issued before any is used.
constexpr int kColChunks = 5;  // lanes x 5 = 160 >= TJ + 2r for TJ <= 128, r <= 5
template <class T, int NTHR = kThreads>
__device__ void fill_probabilities(const FusedParams& p, const float2* st, T* dst, int b, long long i0, long long j0,
                                   int c0, int nch, int s_row, int s_col, int s_ch) {
  const T* scores = static_cast<const T*>(p.scores);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int tasks = (p.R + 2 * p.r) * nch;
  constexpr int kW = NTHR / 32;
  #pragma unroll 1
  for (int t0 = warp; t0 < tasks; t0 += 2 * kW) {
    float raw[2][kColChunks];
    unsigned live = 0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int task = t0 + h * kW;
      const int pr = task / nch, c = c0 + task - pr * nch;
      const long long ip = i0 - p.r + pr;
      const bool row_ok = !(kAblate & kAblateFillLoads) && task < tasks && c < p.C && ip >= 0 && ip < p.S;
      const T* src = scores + (row_ok ? ((static_cast<long long>(b) * p.C + c) * p.S + ip) * p.S : 0);
#pragma unroll
      for (int q = 0; q < kColChunks; ++q) {
        const int pc = lane + 32 * q;
        const long long jp = j0 - p.r + pc;
        const bool ok = row_ok && pc < p.PW && jp >= 0 && jp <= ip;
        raw[h][q] = ok ? to_f(src[jp]) : 0.f;
        live |= (ok ? 1u : 0u) << (h * kColChunks + q);
      }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int task = t0 + h * kW;
      if (task >= tasks) break;
      const int pr = task / nch, cl = task - pr * nch, c = c0 + cl;
      const float2 sv = c < p.C ? st[pr * p.C + c] : make_float2(0.f, 0.f);
#pragma unroll
      for (int q = 0; q < kColChunks; ++q) {
        const int pc = lane + 32 * q;
        if (pc >= p.PW) break;
        const bool ok = (live >> (h * kColChunks + q)) & 1u;
        dst[pr * s_row + pc * s_col + cl * s_ch] = from_f<T>(ok ? ex2(raw[h][q] * kLog2e - sv.x) * sv.y : 0.f);
      }
    }
  }
}

// The same for four channels (heads_in 3 or 4) of a 16-bit type, seq a multiple of 8 (fill4):
// a task is one 16-byte vector of columns [jg, jg + 8) of one row, all four channels: four
// 16-byte loads, one FFMA and one EX2 per element (the sum is folded into the exponent:
// 2^(x log2e - max - log2 sum)), and four 16-byte stores of the eight channel-last columns. Tile
// column 0 is output column j0 - 8, so vectors line up in both memories.
// A task's loads (fill4_load) are split from its math (fill4_finish) so that a caller can issue a
// thread's first task before the tile's statistics are waited for. v10c did, and was 4-5%
// slower at seq 2048-8192 than loading it after them (v10ab, merged; JOURNAL.md v10): the
// caller now loads it right after tile_stats. A thread's next task is loaded right after its
// last one's math, every register overwritten (a conditional load kept them live and spilled).
struct Fill4Task {
  uint4 raw[4];  // channels 0-3, eight columns each
  int n;         // valid columns [jg, jg + n): clamp(ip - jg + 1, 0, 8); 0 also outside the tensor
};

// A task's valid columns (Fill4Task::n) and the address of its channel 0 vector.
template <class T>
__device__ __forceinline__ const char* fill4_source(const FusedParams& p, int b, long long i0, long long j0, int task,
                                                    int& n) {
  const Fill4Slot at = fill4_task(p, task);
  // Row and column as ints (both < seq < 2^31; v22: the 64-bit compares and clamp were ~10
  // instructions per task), the address in 64 bits.
  const int ip = static_cast<int>(i0) - p.r + at.pr, jg = static_cast<int>(j0) - 8 + 8 * at.v;
  n = ((kAblate & kAblateFillLoads) || task >= fill4_tasks(p) || ip < 0 || ip >= p.S || jg < 0)
          ? 0
          : min(max(ip - jg + 1, 0), 8);
  return static_cast<const char*>(p.scores) +
         (static_cast<long long>(b) * p.C * p.S * p.S + static_cast<long long>(ip) * p.S + jg) *
             static_cast<long long>(sizeof(T));
}

template <class T>
__device__ __forceinline__ void fill4_load(const FusedParams& p, int b, long long i0, long long j0, int task,
                                           Fill4Task& t) {
  const char* src = fill4_source<T>(p, b, i0, j0, task, t.n);
  // Every word written, loaded or not: the task's registers are then dead after its math, and
  // the next task can reuse them (a conditional write kept them live across the fill's loop).
  // Channel c + 1 is one plane (seq^2 elements) after channel c: a 64-bit add per channel (v22;
  // before, each channel's address was rebuilt from the kernel parameter).
  const long long plane_bytes = p.S * p.S * static_cast<long long>(sizeof(T));
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    t.raw[c] = t.n > 0 && c < p.C ? *reinterpret_cast<const uint4*>(src) : make_uint4(0, 0, 0, 0);
    src += plane_bytes;
  }
}

// v59: the fill's second round without a second round trip. 324 tasks over 256 threads at seq
// 2048-8192 (18 halo rows x 18 vectors): three warps took a second task, loaded after their
// first task's math, while the other five waited at the fill's barrier (v55's profile at seq
// 4096: that barrier 8.2% of the stall samples, the loads' first use 9.5%). Now the first
// p.fill4_stage threads copy their second task (cp.async, 16 bytes, zero-filled where nothing
// is read) into the y staging space, free during the fill, right after issuing their first
// task's loads, so both round trips overlap. v59b: the copies go through L1 (.ca), as the loads
// do; v59's L2-only copies (.cg) took 2x their ideal L2 sectors and 3.7x their ideal shared
// wavefronts at seq 4096. Slot s of channel c sits at (c * fill4_stage + s) * 16: a warp's
// copies and reads are contiguous 16-byte runs (v16's 64 bytes a thread conflicted 4-way).
template <class T, int NTHR>
__device__ __forceinline__ void fill4_stage_copy(const FusedParams& p, int b, long long i0, long long j0,
                                                 unsigned stage) {
  const int slot = static_cast<int>(threadIdx.x);
  if (slot >= p.fill4_stage) return;
  int n;
  const char* src = fill4_source<T>(p, b, i0, j0, NTHR + slot, n);
  const long long plane_bytes = p.S * p.S * static_cast<long long>(sizeof(T));
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const bool read = n > 0 && c < p.C;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(stage + (c * p.fill4_stage + slot) * 16),
                 "l"(read ? src : p.scores), "r"(read ? 16 : 0)
                 : "memory");
    src += plane_bytes;
  }
}
// Task NTHR + slot from the staging space, once this thread's copies have landed.
template <class T, int NTHR>
__device__ __forceinline__ void fill4_load_staged(const FusedParams& p, int b, long long i0, long long j0, int task,
                                                  unsigned stage, Fill4Task& t) {
  fill4_source<T>(p, b, i0, j0, task, t.n);
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  const int slot = task - NTHR;
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(stage + (c * p.fill4_stage + slot) * 16)
                 : "memory");
    t.raw[c] = v;
  }
}

template <class T>
__device__ __forceinline__ void fill4_finish(const FusedParams& p, const float4* mbs, unsigned* dst, int task,
                                             const Fill4Task& t) {
  const Fill4Slot at = fill4_task(p, task);
  uint4 out[4];  // 8 columns x 2 words (channels 0-1, 2-3)
  {
    // v20: no test per element. A channel >= C (heads_in 3) has raw 0 and max + log2 sum 0, so
    // its probability is 1, finite, and meets a zero weight (weight_bits); v18 selected 0 for it
    // per element, and with C a run-time value ptxas predicated every EX2 and zeroed its
    // register first. Columns past the diagonal (t.n < 8) are zeroed per word, only on the
    // tasks that cross it. v21: max + log2 sum of the row's four channels in one 16-byte load
    // (tile_stats<T, 4>). v22: a task that loaded nothing (t.n = 0: raw all 0, max + log2
    // sum finite) takes the same math and is zeroed by the same per-word pass, instead of a
    // branch around the math and a zeroed copy of the result.
    const float4 m4 = mbs[at.pr];
    const float mb[4] = {m4.x, m4.y, m4.z, m4.w};
    unsigned* o = reinterpret_cast<unsigned*>(out);
#pragma unroll
    for (int h = 0; h < 4; ++h) {  // column pair (2h, 2h + 1)
      float pc[4][2];
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const float2 x = unpack2<T>((&t.raw[c].x)[h]);
        pc[c][0] = ex2(fmaf(x.x, kLog2e, -mb[c]));
        pc[c][1] = ex2(fmaf(x.y, kLog2e, -mb[c]));
      }
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        o[(2 * h + e) * 2] = pack2<T>(pc[0][e], pc[1][e]);
        o[(2 * h + e) * 2 + 1] = pack2<T>(pc[2][e], pc[3][e]);
      }
    }
    if (t.n < 8) {
#pragma unroll
      for (int col = 0; col < 8; ++col)
        if (col >= t.n) o[2 * col] = o[2 * col + 1] = 0u;
    }
  }
  // Store x writes chunk x ^ sx (fill4_chunk_xor: no bank conflicts in a quarter-warp); its
  // data out[x ^ sx] comes from two stages of selects (a register array takes no run-time index).
  const int sx = fill4_chunk_xor(at.v);
  char* d = reinterpret_cast<char*>(dst) + fill4_tile_byte(p, at.pr, at.v);
  uint4 a[4];
#pragma unroll
  for (int x = 0; x < 4; ++x) a[x] = (sx & 1) ? out[x ^ 1] : out[x];
#pragma unroll
  for (int x = 0; x < 4; ++x) *reinterpret_cast<uint4*>(d + 16 * (x ^ sx)) = (sx & 2) ? a[x ^ 2] : a[x];
}

// The whole tile; `first` is task threadIdx.x, already loaded by the caller (fill4_load), and
// the first p.fill4_stage threads' second task already copied to `stage` (fill4_stage_copy).
template <class T, int NTHR>
__device__ void fill_probabilities4(const FusedParams& p, const float4* mbs, unsigned* dst, int b, long long i0,
                                    long long j0, const Fill4Task& first, unsigned stage) {
  const int tasks = fill4_tasks(p);
  Fill4Task t = first;
  #pragma unroll 1
  for (int task = threadIdx.x; task < tasks;) {
    fill4_finish<T>(p, mbs, dst, task, t);  // one copy of the math
    task += NTHR;
    if (task < NTHR + p.fill4_stage) fill4_load_staged<T, NTHR>(p, b, i0, j0, task, stage, t);
    else if (task < tasks) fill4_load<T>(p, b, i0, j0, task, t);
  }
}

// Staging tile to y: each (head, row) is TJ contiguous elements; 16-byte stores where aligned.
// A thread keeps one 8-column vector v (NTHR is a multiple of TJ / 8) over rows NTHR /
// (TJ / 8) apart. A tile inside y with seq a multiple of 8 and y 16-byte aligned (every vector
// aligned and in range) skips the per-vector tests (v7: with them and the 64-bit index
// arithmetic this loop was a tenth of the kernel's instructions at seq 4096).
// v119: store_staging's rows when seq is not a multiple of 8 (16-bit types, y 16-byte aligned):
// a (head, row) of y then starts m elements into a 16-byte line (m = 0..7, row by row), and the
// loop below stored every vector as 8 2-byte stores (k 5 heads 8/12 at seq 777: 24% of the
// kernel's stall samples on them, 370 K warp stores a launch). Here the V = TJ / 8 lanes of a row
// store whole lines: lane v the line at column 8 v (m = 0) or 8 (v + 1) - m (the last lane none),
// its 8 values read from the staging row as 2-byte loads (shared memory is not the bound), then
// the 8 columns left over (the first 8 - m and the last m) one each, lane e taking element e; a
// line past seq's last column, element by element. y0: column j0 of head 0, row i0 of batch b.
template <class T>
__device__ __forceinline__ void store_staging_realigned(const FusedParams& p, const T* ys, T* y0, long long i0,
                                                        long long j0, int v, int V, int step, int rshift) {
  const int yp = p.TJ + 8;
  const int cols = static_cast<int>(min(static_cast<long long>(p.TJ), p.S - j0));  // columns inside seq
  const long long plane = p.S * p.S;
  #pragma unroll 1
  for (int orow = static_cast<int>(threadIdx.x) / V; orow < p.O * p.R; orow += step) {
    const int rr = orow & (p.R - 1), o = orow >> rshift;
    if (i0 + rr >= p.S) continue;
    T* const dst = y0 + o * plane + rr * p.S;
    const T* const src = ys + o * p.yhp + rr * yp;
    const int m = static_cast<int>((reinterpret_cast<std::uintptr_t>(dst) >> 1) & 7);
    const int c0 = m == 0 ? 8 * v : 8 * (v + 1) - m;
    if (m == 0 || v < V - 1) {
      if (c0 + 8 <= cols) {
        unsigned w[4];
#pragma unroll
        for (int x = 0; x < 4; ++x) w[x] = bits16(src[c0 + 2 * x]) | (bits16(src[c0 + 2 * x + 1]) << 16);
        store_stream(dst + c0, make_uint4(w[0], w[1], w[2], w[3]));
      } else {
        for (int x = 0; x < 8 && c0 + x < cols; ++x) dst[c0 + x] = src[c0 + x];
      }
    }
    if (m != 0)
      for (int e = v; e < 8; e += V) {
        const int c = e < 8 - m ? e : p.TJ - 8 + e;
        if (c < cols) dst[c] = src[c];
      }
  }
}

template <class T, int NTHR = kThreads>
__device__ void store_staging(const FusedParams& p, const T* ys, int b, long long i0, long long j0) {
  if constexpr ((kAblate & kAblateTileStores) != 0) return;
  const int yp = p.TJ + 8;
  T* y = static_cast<T*>(p.y);
  const int vshift = __ffs(p.TJ / 8) - 1, rshift = __ffs(p.R) - 1;
  const int v = threadIdx.x & ((1 << vshift) - 1), step = NTHR >> vshift;
  // Element (o, rr, v) of y: plane o of batch b, row i0 + rr, column j0 + 8 v.
  T* const y0 = y + (static_cast<long long>(b) * p.O * p.S + i0) * p.S + j0 + v * 8;
  const long long plane = p.S * p.S;
  if ((p.S & 7) == 0 && (reinterpret_cast<std::uintptr_t>(y) & 15) == 0 && i0 + p.R <= p.S && j0 + p.TJ <= p.S) {
    #pragma unroll 1
    for (int orow = threadIdx.x >> vshift; orow < p.O * p.R; orow += step) {
      const int rr = orow & (p.R - 1), o = orow >> rshift;
      store_stream(y0 + o * plane + rr * p.S, *reinterpret_cast<const uint4*>(ys + o * p.yhp + rr * yp + v * 8));
    }
    return;
  }
  // Not in the few-heads instance (NTHR kFewThreads, 64 registers): there it spilled 76/168 bytes
  // against 44/52, and that instance's time follows its spills and code (JOURNAL.md v111-v113).
  if constexpr (sizeof(T) == 2 && NTHR == kThreads) {
    if ((reinterpret_cast<std::uintptr_t>(y) & 15) == 0) {
      store_staging_realigned<T>(p, ys, y0 - v * 8, i0, j0, v, 1 << vshift, step, rshift);
      return;
    }
  }
  #pragma unroll 1
  for (int orow = threadIdx.x >> vshift; orow < p.O * p.R; orow += step) {
    const int rr = orow & (p.R - 1), o = orow >> rshift;
    const long long i = i0 + rr, j = j0 + v * 8;
    if (i >= p.S || j >= p.S) continue;
    T* dst = y0 + o * plane + rr * p.S;
    const T* src = ys + o * p.yhp + rr * yp + v * 8;
    if (j + 8 <= p.S && (reinterpret_cast<std::uintptr_t>(dst) & 15) == 0) {
      store_stream(dst, *reinterpret_cast<const uint4*>(src));
    } else {
#pragma unroll 1
      for (int x = 0; x < 8 && j + x < p.S; ++x) dst[x] = src[x];
    }
  }
}

// The probability tile of the ldmatrix path (16-bit types, Cp a multiple of 8): a task is one
// 8-column vector of one (row, channel), channels fastest, so a warp's 2-byte shared stores of
// one column are consecutive (no bank conflicts) and each lane issues one 16-byte load per task
// (v3 loaded 2 bytes per lane per (row, channel): ~44 dependent L2 round trips per tile at 32
// channels). Tile column 0 is output column j0 - 8. U = 4 tasks per thread are loaded before
// any is used (v126, 8 on the ldmatrix path's wide tile, one round of 1,600 tasks at seq 777
// instead of two: +5.0%, JOURNAL.md). Task indices are split with float reciprocals (exact for
// indices below 2^20).
// CHUNKED (the wgmma path): the tile is [c / 8][row][column] x 8 channels, chunks p.cstride bytes
// apart, instead of channel-last with a column pitch.
__device__ __forceinline__ int div_small(int x, float inv) { return static_cast<int>((x + 0.5f) * inv); }

template <class T, bool CHUNKED = false>
__device__ void fill_channels(const FusedParams& p, const float2* st, T* dst, int b, long long i0, long long j0) {
  constexpr int U = 4;
  const int nv = p.TJ / 8 + 2, halo_rows = p.R + 2 * p.r, tasks = halo_rows * nv * p.Cp;
  const int pitch_h = CHUNKED ? 8 : 2 * p.pitch_w;  // elements from one column to the next
  const float icp = 1.f / p.Cp, inv = 1.f / nv;
  const T* scores = static_cast<const T*>(p.scores);
  #pragma unroll 1
  for (int t0 = threadIdx.x; t0 < tasks; t0 += kThreads * U) {
    Vec8<T> raw[U];
    int n[U], dst_at[U], st_at[U];  // the task's tile offset and statistics index
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int task = t0 + u * kThreads, rest = div_small(task, icp), c = task - rest * p.Cp;
      const int pr = div_small(rest, inv), v = rest - pr * nv;
      const long long ip = i0 - p.r + pr, jg = j0 - 8 + 8 * v;
      const bool ok = task < tasks && c < p.C && ip >= 0 && ip < p.S && jg >= 0;
      n[u] = ok ? static_cast<int>(min(ip - jg + 1, 8ll)) : 0;  // columns up to the diagonal
      dst_at[u] = CHUNKED ? chunked_offset(p, pr, 8 * v, c) / 2 : (pr * p.PW + 8 * v) * pitch_h + c;
      st_at[u] = pr * p.C + c;
      if (n[u] > 0) {
        const T* src = scores + ((static_cast<long long>(b) * p.C + c) * p.S + ip) * p.S + jg;
        raw[u] = load_vec8(src, jg, min(jg + 8, p.S));
      } else {
        raw[u] = Vec8<T>{};
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (t0 + u * kThreads >= tasks) break;
      float mb = 0.f;
      if (n[u] > 0) {
        const float2 sv = st[st_at[u]];
        mb = sv.x - __log2f(sv.y);  // max + log2(sum): one FFMA and one EX2 per element
      }
      const T* h = reinterpret_cast<const T*>(&raw[u]);
      T* d = dst + dst_at[u];
#pragma unroll
      for (int e = 0; e < 8; ++e) d[e * pitch_h] = from_f<T>(e < n[u] ? ex2(fmaf(to_f(h[e]), kLog2e, -mb)) : 0.f);
    }
  }
}

// v24: the same tile for seq a multiple of 8 by eight-channel tasks (fill8_task,
// fused_contraction.h): per 64 probabilities 8 coalesced 16-byte loads, one FFMA and one EX2
// each, 32 packs, 8 16-byte stores (fill_channels: a 2-byte store, a select and an unpack per
// probability, and its 16-byte loads each from another channel plane). max + log2 sum comes
// from tile_stats<T, -1> ([row][Cp] floats, 0 for a channel >= C: its raw scores are 0, its
// probability 1, and it meets a zero weight, weight_bits). Columns past the diagonal or outside
// the tensor are zeroed per chunk after the math.

// A fill8 task's loads: channel 8 g + x of halo row pr, columns jg .. jg + 7 into raw[x] (zeros
// for channels >= C and where none of the 8 columns is at or left of the diagonal inside the
// tensor, or where the task is not live). Returns n, how many of the 8 are (0 when not live, and
// in an ablation build with gpu-ablate.sh bit 1, where n is then 0 at compile time, so
// fill8_store's outputs are constant zeros and ptxas drops its math too: bits 32, 64 and 128
// split the loads from the math).
template <class T>
__device__ __forceinline__ int fill8_load(const FusedParams& p, int b, long long i0, long long j0, const Fill8Slot& at,
                                          bool live, uint4 (&raw)[8]) {
  const int ip = static_cast<int>(i0) - p.r + at.pr, jg = static_cast<int>(j0) - 8 + 8 * at.v;
  const int n = ((kAblate & kAblateFillLoads) || !live || ip < 0 || ip >= p.S || jg < 0)
                    ? 0
                    : min(max(ip - jg + 1, 0), 8);
  const long long plane_bytes = p.S * p.S * static_cast<long long>(sizeof(T));
  const char* src = static_cast<const char*>(p.scores) +
                    ((static_cast<long long>(b) * p.C + 8 * at.g) * p.S * p.S + static_cast<long long>(ip) * p.S + jg) *
                        static_cast<long long>(sizeof(T));
  if constexpr ((kAblate & kAblateFill8LoadsNear) != 0)
    src = static_cast<const char*>(p.scores) +  // row g & 1 of planes 0..7, at the task's columns
          (static_cast<long long>(at.g & 1) * p.S + jg) * static_cast<long long>(sizeof(T));
#pragma unroll
  for (int x = 0; x < 8; ++x) {
    if constexpr ((kAblate & kAblateFill8LoadsOnly) != 0) {
      const unsigned u = static_cast<unsigned>(ip * 40503 + jg * 977 + x);  // not a load, not a constant
      raw[x] = make_uint4(u, u ^ 0x3c003c00u, u + 0x10001u, u ^ 0x40004000u);
    } else {
      raw[x] = n > 0 && 8 * at.g + x < p.C ? *reinterpret_cast<const uint4*>(src) : make_uint4(0, 0, 0, 0);
    }
    src += plane_bytes;
  }
  return n;
}

// A fill8 task's math and stores (task: its index in the enumeration, for fill8_rot; ROT_MASK:
// the rotation's stages that run, kWsFillRotMask).
template <class T, int ROT_MASK = 7>
__device__ __forceinline__ void fill8_store(const FusedParams& p, const float* mbs, char* tile, int task,
                                           const Fill8Slot& at, int n, const uint4 (&raw)[8]) {
  const int col_bytes = 16 * fill8_col_units(p);
  const float4* m4 = reinterpret_cast<const float4*>(mbs + at.pr * p.Cp + 8 * at.g);
  const float4 ma = m4[0], mc = m4[1];
  const float mb[8] = {ma.x, ma.y, ma.z, ma.w, mc.x, mc.y, mc.z, mc.w};
  uint4 out[8];  // column col: channels (0, 1), (2, 3), (4, 5), (6, 7)
  if constexpr ((kAblate & kAblateFill8MathOnly) != 0) {
#pragma unroll
    for (int x = 0; x < 8; ++x) out[x] = raw[x];
  } else {
#pragma unroll
    for (int h = 0; h < 4; ++h) {  // columns 2h, 2h + 1
#pragma unroll
      for (int xp = 0; xp < 4; ++xp) {
        const float2 lo = unpack2<T>((&raw[2 * xp].x)[h]), hi = unpack2<T>((&raw[2 * xp + 1].x)[h]);
        (&out[2 * h].x)[xp] = pack2<T>(ex2(fmaf(lo.x, kLog2e, -mb[2 * xp])), ex2(fmaf(hi.x, kLog2e, -mb[2 * xp + 1])));
        (&out[2 * h + 1].x)[xp] = pack2<T>(ex2(fmaf(lo.y, kLog2e, -mb[2 * xp])), ex2(fmaf(hi.y, kLog2e, -mb[2 * xp + 1])));
      }
    }
  }
  if (n < 8) {
#pragma unroll
    for (int col = 0; col < 8; ++col)
      if (col >= n) out[col] = make_uint4(0, 0, 0, 0);
  }
  // Ablation bit 256 (gpu-ablate.sh): the stores below without their selects.
  if constexpr ((kAblate & kAblateFill8Unrotated) != 0) {
    char* d = tile + fill8_chunk_byte(p, at.pr, 8 * at.v, at.g);
#pragma unroll
    for (int y = 0; y < 8; ++y) *reinterpret_cast<uint4*>(d + ((y ^ task) & 7) * col_bytes) = out[y];
    return;
  }
  // Store y writes column (y + rot) & 7 (fill8_rot: no bank conflicts in a quarter-warp), its
  // data rotated by three stages of selects (a register array takes no run-time index). A stage
  // left out of ROT_MASK is a rotation bit that is 0 at compile time, so its selects fold away:
  // fewer instructions, more bank conflicts.
  const int rot = fill8_rot(p, task, at) & ROT_MASK;
  uint4 a[8], c[8];
#pragma unroll
  for (int y = 0; y < 8; ++y) a[y] = (rot & 1) ? out[(y + 1) & 7] : out[y];
#pragma unroll
  for (int y = 0; y < 8; ++y) c[y] = (rot & 2) ? a[(y + 2) & 7] : a[y];
  char* d = tile + fill8_chunk_byte(p, at.pr, 8 * at.v, at.g);
#pragma unroll
  for (int y = 0; y < 8; ++y)
    *reinterpret_cast<uint4*>(d + ((y + rot) & 7) * col_bytes) = (rot & 4) ? c[(y + 4) & 7] : c[y];
}

// v40b: a thread's tasks two at a time, the second's eight loads issued before the first's math.
// With one block of 8 warps an SM (k 7 heads 32: 880 tasks over 256 threads) the busiest
// threads waited four round trips in series, now two (−1.8%); the 128-register instances (two
// blocks an SM, k 5 heads 16's) too, at 12/12 bytes of spills in the register-A one (−2.2%;
// v40, one task at a time there, +0.1%). JOURNAL.md v40 and v40b.
// Tasks tid, tid + NTHR, ... of [0, tasks), task t at slot_of(t): fill8's whole tile (NTHR =
// kThreads) or the warp-specialised producer's chunk pair (fused_ws.cuh, NTHR = 256 since v151).
// PER_ROUND: tasks a thread loads before their math (v151: 1 for the warp-specialised producer
// at 64 registers, whose two warp groups keep as many loads in flight).
template <class T, int NTHR, int ROT_MASK = 7, class SlotOf, int PER_ROUND = 2>
__device__ __forceinline__ void fill8_tasks_of(const FusedParams& p, const float* mbs, char* tile, int b,
                                               long long i0, long long j0, int tid, int tasks, SlotOf slot_of) {
  static_assert(PER_ROUND == 1 || PER_ROUND == 2, "one or two tasks a round");
  if constexpr (PER_ROUND == 1) {
    #pragma unroll 1
    for (int task = tid; task < tasks; task += NTHR) {
      const Fill8Slot at = slot_of(task);
      uint4 raw[8];
      const int n = fill8_load<T>(p, b, i0, j0, at, true, raw);
      fill8_store<T, ROT_MASK>(p, mbs, tile, task, at, n, raw);
    }
  } else {  // not a return above: nvcc then warns the loop below unreachable (#128-D)
    #pragma unroll 1
    for (int task = tid; task < tasks; task += 2 * NTHR) {
      const Fill8Slot at = slot_of(task);
      uint4 raw[8];
      const int n = fill8_load<T>(p, b, i0, j0, at, true, raw);
      // The second task's loads predicated, not branched around: behind a branch ptxas merged
      // them with the second task's stores, after the first task's math.
      const int task2 = task + NTHR;
      const bool two = task2 < tasks;
      const Fill8Slot at2 = slot_of(two ? task2 : task);
      uint4 raw2[8];
      const int n2 = fill8_load<T>(p, b, i0, j0, at2, two, raw2);
      fill8_store<T, ROT_MASK>(p, mbs, tile, task, at, n, raw);
      if (two) fill8_store<T, ROT_MASK>(p, mbs, tile, task2, at2, n2, raw2);
    }
  }
}

// The whole tile by one block's threads; its layout (ldmatrix or wgmma path) comes from p.wgmma
// (fill8_chunk_byte), so unlike fill_channels it takes no CHUNKED parameter.
template <class T>
__device__ void fill8(const FusedParams& p, const float* mbs, char* tile, int b, long long i0, long long j0) {
  fill8_tasks_of<T, kThreads>(p, mbs, tile, b, i0, j0, threadIdx.x, fill8_tasks(p),
                              [&p](int task) { return fill8_task(p, task); });
}

}  // namespace mtabench::fused
