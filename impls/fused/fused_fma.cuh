#pragma once
// The fused kernel's fp32 path: the probability tile contracted by FMA.
#include "impls/fused/fused_stats.cuh"
#include "impls/fused/fused_tiles.cuh"

namespace mtabench::fused {

// ---- probability tile, fp32 path -----------------------------------------------------------------
// The probability tile of this path: float, channel cl's halo rows at pt + cl * halo_rows * pwp
// (pwp = fp32_pitch), tile column t at shared column t + sh (sh = fp32_shift(r), v100), and TJ =
// 128 (the plan's only fp32 tile). In two passes (v99): the issue pass copies the tile's raw
// scores straight into their places (cp.async, no register held: all of a thread's loads in
// flight at once, and issued before the statistics are waited for); the finish pass, after every
// copy has landed, turns them into probabilities in place: p = 2^(s log2e - max) / sum where the
// column is in the tensor, on or below the diagonal and in the tile, 0 elsewhere (a select: what
// lies there was not loaded, or lies above the diagonal). A row without statistics (off the
// tensor, a padding channel) has none of its columns valid. (The diagnostic build without the
// fill's loads, kAblateFillLoads, transforms whatever the tile held: its outputs are not checked.)
// v100: where seq is a multiple of 4 and the tensor 16-byte aligned (every row is then) the
// copies are 16-byte chunks, four columns each: v99's one copy a column cost ~16 instructions
// (three of them never-executed LDS that ptxas puts before each LDGSTS), ~45 copies a thread an
// item. Otherwise v99's 4-byte copies, into the same layout. The finish pass walks the tile's
// chunks: (task = (row, channel), chunk).
struct Fp32Fill {
  int halo_rows, tasks, chunks;  // chunks: 16-byte chunks a row (pwp / 4)
  unsigned row_magic;    // task / nch = umulhi(task, row_magic) for every task < 2^32 / nch; nch 1 needs none
  unsigned chunk_magic;  // e / chunks likewise
  int nch;
  __device__ int row_of(int task) const {
    return nch > 1 ? static_cast<int>(__umulhi(static_cast<unsigned>(task), row_magic)) : task;
  }
  __device__ int task_of(int e) const { return static_cast<int>(__umulhi(static_cast<unsigned>(e), chunk_magic)); }
};
__device__ inline Fp32Fill fp32_fill_shape(const FusedParams& p, int nch, int pwp) {
  const int halo_rows = p.R + 2 * p.r;
  // ceil(2^32 / d) as fill4's (fused_contraction.h)
  return {halo_rows, halo_rows * nch, pwp / 4, nch > 1 ? fill4_magic(nch) : 0u, fill4_magic(pwp / 4), nch};
}

// v99's copy of tile column lane + 32 Q of a task, where loaded (both addresses as one register
// and an immediate offset, which ptxas did not fold from a computed pointer).
template <int Q>
__device__ __forceinline__ void fp32_column(unsigned dst, const float* src, bool loaded) {
  if (loaded) asm volatile("cp.async.ca.shared.global [%0+%2], [%1+%2], 4;\n" ::"r"(dst), "l"(src), "n"(128 * Q) : "memory");
}

// Whether the fill copies 16-byte chunks (v100; on sm_90a a row's chunks as one bulk copy, v102).
__device__ __forceinline__ bool fp32_chunked(const FusedParams& p) {
  return p.S % 4 == 0 && (reinterpret_cast<std::uintptr_t>(p.scores) & 15) == 0;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// v102: the bulk copies' mbarrier, one a block (setup_block initialises it for kThreads arrivals):
// each phase is one fill, every thread arriving once after its copies (fill_fp32_issue).
__shared__ unsigned long long fp32_fill_bar;
#endif

// Returns the fill's mbarrier token where the copies are bulk ones (v102), else 0; pass it to
// fill_fp32_wait.
__device__ inline unsigned long long fill_fp32_issue(const FusedParams& p, float* pt, int b, long long i0, long long j0,
                                                     int c0, int nch, int pwp, int sh) {
  const Fp32Fill f = fp32_fill_shape(p, nch, pwp);
  const int S = static_cast<int>(p.S), ib = static_cast<int>(i0) - p.r, jb = static_cast<int>(j0) - p.r;
  const long long plane = static_cast<long long>(S) * S;
  const float* batch = static_cast<const float*>(p.scores) + static_cast<long long>(b) * p.C * plane;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if (fp32_chunked(p)) {
    // v102: a (row, channel) task's chunks (v100's, below) are contiguous on both sides, so one
    // bulk copy (the TMA unit, L2 to shared memory, completing on fp32_fill_bar) moves them all:
    // 72 copies an item at k 3 instead of ~610, and ~75% of the threads issue none (v100's issue
    // loop was ~41 instructions a chunk, 13% of the kernel's instructions at seq 4096). Chunk ch
    // holds columns G + 4 ch .. G + 4 ch + 3, G = jb - sh (a multiple of 4); copied: from the
    // first at or after column 0 to the last starting on or below the diagonal (ending inside
    // the row: G and S are multiples of 4).
    const int G = jb - sh, first = G < 0 ? -G / 4 : 0;
    const unsigned bar = smem_u32(&fp32_fill_bar);
    #pragma unroll 1
    for (int task = threadIdx.x; task < f.tasks; task += kThreads) {
      const int pr = f.row_of(task), cl = task - pr * nch, c = c0 + cl, ip = ib + pr;
      if ((kAblate & kAblateFillLoads) || c >= p.C || ip < 0 || ip >= S || ip < G) continue;
      const int last = min(f.chunks - 1, (ip - G) >> 2);
      if (last < first) continue;
      const unsigned bytes = 16u * static_cast<unsigned>(last - first + 1);
      const float* src = batch + c * plane + static_cast<long long>(ip) * S + G + 4 * first;
      const unsigned dst = smem_u32(pt + (cl * f.halo_rows + pr) * pwp + 4 * first);
      asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
      bulk_copy_to_shared(dst, src, bytes, bar);
    }
    unsigned long long state;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];\n" : "=l"(state) : "r"(bar) : "memory");
    return state;
  }
#endif
  if (fp32_chunked(p)) {
    // Chunk ch holds global columns g0 .. g0 + 3, g0 = jb - sh + 4 ch (a multiple of 4). It is
    // copied when some of it is on or below the diagonal and none of it before column 0; it then
    // ends inside the row (g0 <= ip < S, g0 and S multiples of 4). The chunk on the diagonal reads
    // up to three scores above it, in the sector the row's last ones come in anyway; the finish
    // pass drops them.
    #pragma unroll 1
    for (int e = threadIdx.x; e < f.tasks * f.chunks; e += kThreads) {
      const int task = f.task_of(e), ch = e - task * f.chunks;
      const int pr = f.row_of(task), cl = task - pr * nch, c = c0 + cl, ip = ib + pr, g0 = jb - sh + 4 * ch;
      if ((kAblate & kAblateFillLoads) || c >= p.C || ip < 0 || ip >= S || g0 < 0 || g0 > ip) continue;
      const float* src = batch + c * plane + static_cast<long long>(ip) * S + g0;
      const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(pt + (cl * f.halo_rows + pr) * pwp + 4 * ch));
      asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
    }
    return 0;
  }
  // One column a copy (v99): a warp takes a task, its lanes columns t = lane + 32 q.
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  constexpr int kW = kThreads / 32;
  const int lo = max(-jb, 0);  // the first tile column inside the tensor (> 0 only at j0 = 0)
  #pragma unroll 1
  for (int task = warp; task < f.tasks; task += kW) {
    const int pr = f.row_of(task), cl = task - pr * nch, c = c0 + cl, ip = ib + pr;
    if ((kAblate & kAblateFillLoads) || c >= p.C || ip < 0 || ip >= S) continue;
    const int hi = min(ip - jb, p.PW - 1);  // tile columns lo .. hi: on or below the diagonal, in the tile
    const float* src = batch + c * plane + static_cast<long long>(ip) * S + jb + lane;
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(pt + (cl * f.halo_rows + pr) * pwp + sh + lane));
    fp32_column<0>(dst, src, lane >= lo && lane <= hi);
    fp32_column<1>(dst, src, lane + 32 >= lo && lane + 32 <= hi);
    fp32_column<2>(dst, src, lane + 64 >= lo && lane + 64 <= hi);
    fp32_column<3>(dst, src, lane + 96 <= hi);   // lo <= r < 96
    fp32_column<4>(dst, src, lane + 128 <= hi);  // hi < PW
  }
  return 0;
}

// Until the fill's copies have landed, all of them (the finish pass reads other threads' chunks).
__device__ __forceinline__ void fill_fp32_wait(const FusedParams& p, unsigned long long token) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if (fp32_chunked(p)) {
    mbar_wait_token(&fp32_fill_bar, token);
    return;
  }
#endif
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncthreads();
}

// Before a barrier that ends the tile's use (the contraction's reads, the finish pass's writes):
// those generic-proxy accesses ordered before the next fill's bulk copies (the async proxy).
__device__ __forceinline__ void fp32_tile_release() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

__device__ inline void fill_fp32_finish(const FusedParams& p, const float2* st, float* pt, long long i0, long long j0, int c0,
                                        int nch, int pwp, int sh) {
  const Fp32Fill f = fp32_fill_shape(p, nch, pwp);
  const int S = static_cast<int>(p.S), ib = static_cast<int>(i0) - p.r, jb = static_cast<int>(j0) - p.r;
  const int lo = sh + max(-jb, 0);  // shared columns lo .. hi of a row are valid
  #pragma unroll 1
  for (int e = threadIdx.x; e < f.tasks * f.chunks; e += kThreads) {
    const int task = f.task_of(e), ch = e - task * f.chunks;
    const int pr = f.row_of(task), cl = task - pr * nch, c = c0 + cl, ip = ib + pr;
    const bool row_ok = c < p.C && ip >= 0 && ip < S;
    const float2 sv = row_ok ? st[pr * p.C + c] : make_float2(0.f, 0.f);
    const float mx = sv.y > 0.f ? sv.x : 0.f;  // as v98: a row of -inf scores has (-inf, 0); 0, not NaN
    const int hi = row_ok ? sh + min(ip - jb, p.PW - 1) : -1;
    float4* at = reinterpret_cast<float4*>(pt + (cl * f.halo_rows + pr) * pwp + 4 * ch);
    float v[4];
    *reinterpret_cast<float4*>(v) = *at;
#pragma unroll
    for (int x = 0; x < 4; ++x) {
      const int col = 4 * ch + x;
      v[x] = col >= lo && col <= hi ? ex2(v[x] * kLog2e - mx) * sv.y : 0.f;
    }
    *at = *reinterpret_cast<const float4*>(v);
  }
}

// Window row [SH, SH + NW) of a thread's shared row into win, in the fewest 16-, 8- and 4-byte
// loads that keep to their alignment (row is 16-byte aligned; v96: the window in 16-byte loads,
// where one 4-byte load a value conflicted 4-way). All of it compile-time.
__host__ __device__ constexpr bool win4_at(int c, int lo, int end) { return c % 4 == 0 && c >= lo && c + 4 <= end; }
__host__ __device__ constexpr bool win2_at(int c, int lo, int end) { return c % 2 == 0 && c >= lo && c + 2 <= end && !win4_at(c - c % 4, lo, end); }
template <int SH, int NW>
__device__ __forceinline__ void load_window(const float* row, float (&win)[NW]) {
  constexpr int END = SH + NW;
#pragma unroll
  for (int c = SH; c < END; ++c) {
    if (win4_at(c, SH, END)) {
      const float4 q = *reinterpret_cast<const float4*>(row + c);
      win[c - SH] = q.x, win[c - SH + 1] = q.y, win[c - SH + 2] = q.z, win[c - SH + 3] = q.w;
    } else if (win2_at(c, SH, END)) {
      const float2 q = *reinterpret_cast<const float2*>(row + c);
      win[c - SH] = q.x, win[c - SH + 1] = q.y;
    } else if (!win4_at(c - c % 4, SH, END) && !win2_at(c - c % 2, SH, END)) {
      win[c - SH] = row[c];
    }
  }
}

// ---- conv item, fp32 FMA path --------------------------------------------------------------------
// 256 threads = 16 rows x 16 groups of 8 columns (TJ = 128); each thread accumulates 8 columns x
// 4 heads at a time, over channel groups of CG (one probability tile per group). KT > 0: the
// kernel width at compile time (registers hold the row window).
template <int KT>
__device__ void conv_item_fma(const FusedParams& p, char* smem, int b, int q, int tile) {
  const long long i0 = static_cast<long long>(q) * p.R, j0 = static_cast<long long>(tile) * p.TJ;
  const float2* st = reinterpret_cast<const float2*>(smem + p.sm_stats);
  float* pt = reinterpret_cast<float*>(smem + p.sm_p);
  // The tile's shift and pitch (fused_contraction.h): compile-time for KT > 0.
  const int sh = KT > 0 ? fp32_shift(KT / 2) : fp32_shift(p.r);
  const int halo_rows = p.R + 2 * p.r, pwp = KT > 0 ? fp32_row_pitch(KT / 2, 128 + KT - 1) : fp32_pitch(p);
  const bool one_tile = p.C <= p.CG;
  // v99: the tile's score copies in flight while the statistics are waited for.
  const unsigned long long token = one_tile ? fill_fp32_issue(p, pt, b, i0, j0, 0, p.C, pwp, sh) : 0ull;
  tile_stats<float>(p, smem, b, i0);
  if (one_tile) {
    fill_fp32_wait(p, token);
    fill_fp32_finish(p, st, pt, i0, j0, 0, p.C, pwp, sh);
    __syncthreads();
  }
  // Weights: in shared memory as [head group of 4][c][u][v][4 heads] (setup_block, v94), one
  // 16-byte broadcast load a tap; or, when too many, straight from global memory as [o][c][u][v]
  // (the same address in every thread: a broadcast), only in the KT 0 instance (the plan's
  // choice), so the KT 3/5/7 instances hold one copy of the loop: v93r's one pointer for both
  // made every weight a generic load; v94's two copies in every instance spilled more.
  const float* wg = static_cast<const float*>(p.weight);
  const float4* ws4 = reinterpret_cast<const float4*>(smem + p.sm_w);
  const float* bias_s = reinterpret_cast<const float*>(smem + p.sm_bias);
  const int rho = threadIdx.x >> 4, g0 = (threadIdx.x & 15) * 8;
  const long long i = i0 + rho;
  const int K = KT > 0 ? KT : p.K;
  const int KK = K * K;
  float* y = static_cast<float*>(p.y);
  for (int oc = 0; oc < p.O; oc += 4) {
    float acc[8][4];
#pragma unroll
    for (int x = 0; x < 8; ++x)
#pragma unroll
      for (int oo = 0; oo < 4; ++oo) acc[x][oo] = 0.f;
    // Channel cl of the tile (channel c of the weights), weight_of(c, tap) -> the four heads' weights.
    const auto channel = [&](int cl, int c, const auto& weight_of) {
      if constexpr (KT > 0) {
#pragma unroll
        for (int u = 0; u < KT; ++u) {
          // row is 16-byte aligned: the tile, its pitch pwp (a multiple of 4) and g0 (of 8); the
          // window starts sh columns in (v100).
          const float* row = pt + (cl * halo_rows + rho + u) * pwp + g0;
          float win[8 + KT - 1];
          load_window<fp32_shift(KT / 2)>(row, win);
#pragma unroll
          for (int v = 0; v < KT; ++v) {
            const float4 w4 = weight_of(c, u * KT + v);
            const float wv[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
            for (int x = 0; x < 8; ++x)
#pragma unroll
              for (int oo = 0; oo < 4; ++oo) acc[x][oo] = fmaf(wv[oo], win[x + v], acc[x][oo]);
          }
        }
      } else {
        for (int u = 0; u < K; ++u) {
          const float* row = pt + (cl * halo_rows + rho + u) * pwp + g0 + sh;
          for (int v = 0; v < K; ++v) {
            const float4 w4 = weight_of(c, u * K + v);
            const float wv[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
            for (int x = 0; x < 8; ++x)
#pragma unroll
              for (int oo = 0; oo < 4; ++oo) acc[x][oo] = fmaf(wv[oo], row[x + v], acc[x][oo]);
          }
        }
      }
    };
    const auto from_shared = [&](int c, int tap) { return ws4[((oc >> 2) * p.C + c) * KK + tap]; };
    const auto from_global = [&](int c, int tap) {
      const float* wc = wg + (oc * p.C + c) * KK + tap;  // weight [oc + oo][c][tap] at wc[oo * C * KK]
      const int step = p.C * KK;
      return make_float4(wc[0], oc + 1 < p.O ? wc[step] : 0.f, oc + 2 < p.O ? wc[2 * step] : 0.f,
                         oc + 3 < p.O ? wc[3 * step] : 0.f);
    };
    for (int cg = 0; cg < p.C; cg += p.CG) {
      if (!one_tile) {
        fp32_tile_release();
        __syncthreads();
        const unsigned long long t = fill_fp32_issue(p, pt, b, i0, j0, cg, min(p.CG, p.C - cg), pwp, sh);
        fill_fp32_wait(p, t);
        fill_fp32_finish(p, st, pt, i0, j0, cg, min(p.CG, p.C - cg), pwp, sh);
        __syncthreads();
      }
      for (int cl = 0; cl < min(p.CG, p.C - cg); ++cl) {
        if constexpr (KT > 0) channel(cl, cg + cl, from_shared);  // the plan gives global weights KT 0
        else if (p.w_global) channel(cl, cg + cl, from_global);
        else channel(cl, cg + cl, from_shared);
      }
    }
    if (i < p.S && !(kAblate & kAblateTileStores)) {
#pragma unroll
      for (int oo = 0; oo < 4; ++oo) {
        const int o = oc + oo;
        if (o >= p.O) break;
        const long long j = j0 + g0;
        float out[8];
#pragma unroll
        for (int x = 0; x < 8; ++x) out[x] = j + x <= i ? acc[x][oo] + bias_s[o] : 0.f;
        float* dst = y + ((static_cast<long long>(b) * p.O + o) * p.S + i) * p.S + j;
        if (j + 8 <= p.S && (reinterpret_cast<std::uintptr_t>(dst) & 15) == 0) {
          store_stream(dst, make_float4(out[0], out[1], out[2], out[3]));
          store_stream(dst + 4, make_float4(out[4], out[5], out[6], out[7]));
        } else {
          for (int x = 0; x < 8 && j + x < p.S; ++x) dst[x] = out[x];
        }
      }
    }
  }
  fp32_tile_release();
  __syncthreads();
}

}  // namespace mtabench::fused
