#pragma once
// The wgmma (sm_90a) contraction for many heads (design: JOURNAL.md, "Next for many heads"). Both
// operands come from shared memory through matrix descriptors, no swizzle:
//   A (64 positions x 16 of (tap, channel)): the probability tile stored channel-chunk-major,
//     [c / 8][row][column] x 16 bytes (fill_channels<T, true>), so 8 consecutive columns at one
//     tap are one 128-byte core matrix; the tap's im2col shift is the descriptor's start
//     address, the next 8 positions are SBO = 128 bytes on, the k-step's second 8 channels
//     LBO = p.cstride on.
//   B (16 of (tap, channel) x N heads): core matrices of 8 heads x 8 k, [k-step][k half]
//     [n-tile][head][k], written once per block (load_weight_cores); SBO = 128 (next 8 heads),
//     LBO = NT * 128 (the k-step's second half).
// A block's two warp groups take 8 tile rows each (one m64 tile per row, TJ = 64), MT rows at a
// time; each issues every k-step's wgmma for its MT tiles, then waits once, and stores its
// accumulators straight to y (the register-A instances through the tile's space since v29).
// Compiled only where the target has the sm_90a features; the plan selects it only then.
#include "impls/fused/fused_mma.cuh"

namespace mtabench::fused {

// ---- descriptors and instructions ------------------------------------------------------------
// Matrix descriptor (PTX ISA, asynchronous warpgroup matrix descriptor): start address, leading
// and stride byte offsets, each >> 4 in 14 bits; base offset 0 and swizzle mode 0 (none). Built
// as two 32-bit words: the low one (start address and LBO) is what the k-loop adds offsets to
// (in 16-byte units; shared addresses stay below 2^18, so the start's 14 bits never carry into
// the LBO), the high one (SBO >> 4) is constant. Kept in 32-bit values that every thread of a
// warp holds alike, ptxas computes them in uniform registers (v13: v12 loaded each k-step's
// offset from shared memory and moved the descriptors into uniform registers one by one; that
// load was 12% of the stall samples at k 7 heads 32).
__device__ __forceinline__ unsigned smem_desc_lo(unsigned addr, unsigned lbo) {
  return ((addr >> 4) & 0x3FFFu) | ((lbo >> 4) & 0x3FFFu) << 16;
}
__device__ __forceinline__ unsigned long long desc_of(unsigned lo, unsigned hi) {
  return static_cast<unsigned long long>(hi) << 32 | lo;
}

// D += A * B for one m64nNk16 step of a warp group, fp32 accumulators (N / 2 per thread).
template <class T, int N>
__device__ __forceinline__ void wgmma_m64k16(float (&d)[N / 2], unsigned long long a, unsigned long long b);

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// The accumulator operands of an m64nN wgmma: N / 2 floats, as asm outputs and as the register
// list of the instruction's text.
#define MTABENCH_D8 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define MTABENCH_D16                                                                                       \
  MTABENCH_D8, "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),     \
      "+f"(d[15])
#define MTABENCH_D32                                                                                       \
  MTABENCH_D16, "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]),  \
      "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),\
      "+f"(d[31])
#define MTABENCH_R8 "%0,%1,%2,%3,%4,%5,%6,%7"
#define MTABENCH_R16 MTABENCH_R8 ",%8,%9,%10,%11,%12,%13,%14,%15"
#define MTABENCH_R32 MTABENCH_R16 ",%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
// Both operands by descriptor (operands A, B and the scale-d flag follow the accumulators: IA,
// IB, IS); scale-d is a predicate set from the flag.
#define MTABENCH_WGMMA_SS(TYPE, PTX, N, RLIST, IA, IB, IS, ...)                                          \
  template <>                                                                                             \
  __device__ __forceinline__ void wgmma_m64k16<TYPE, N>(float (&d)[N / 2], unsigned long long a,          \
                                                        unsigned long long b) {                           \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" IS ", 0;\n"                                         \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTX "." PTX " {" RLIST "}, %" IA ", %" IB \
                 ", p, 1, 1, 0, 0;\n}\n"                                                                     \
                 : __VA_ARGS__                                                                            \
                 : "l"(a), "l"(b), "r"(1));                                                               \
  }
MTABENCH_WGMMA_SS(__nv_bfloat16, "bf16", 16, MTABENCH_R8, "8", "9", "10", MTABENCH_D8)
MTABENCH_WGMMA_SS(__nv_bfloat16, "bf16", 32, MTABENCH_R16, "16", "17", "18", MTABENCH_D16)
MTABENCH_WGMMA_SS(__nv_bfloat16, "bf16", 64, MTABENCH_R32, "32", "33", "34", MTABENCH_D32)
MTABENCH_WGMMA_SS(__half, "f16", 16, MTABENCH_R8, "8", "9", "10", MTABENCH_D8)
MTABENCH_WGMMA_SS(__half, "f16", 32, MTABENCH_R16, "16", "17", "18", MTABENCH_D16)
MTABENCH_WGMMA_SS(__half, "f16", 64, MTABENCH_R32, "32", "33", "34", MTABENCH_D32)
#undef MTABENCH_WGMMA_SS
#endif

// D += A * B with A (64 x 16) from registers: this thread's four 32-bit words of the warp's
// 16 x 16 slice in mma.sync's A layout (ldmatrix.x4), B through its descriptor.
template <class T, int N>
__device__ __forceinline__ void wgmma_rs_m64k16(float (&d)[N / 2], const unsigned (&a)[4], unsigned long long b);

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// A's four registers (ALIST) and B's descriptor (IB) follow the accumulators.
#define MTABENCH_WGMMA_RS(TYPE, PTX, N, RLIST, ALIST, IB, ...)                                           \
  template <>                                                                                             \
  __device__ __forceinline__ void wgmma_rs_m64k16<TYPE, N>(float (&d)[N / 2], const unsigned (&a)[4],     \
                                                           unsigned long long b) {                        \
    asm volatile("wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTX "." PTX " {" RLIST "}, {" ALIST     \
                 "}, %" IB ", 1, 1, 1, 0;\n"                                                               \
                 : __VA_ARGS__                                                                            \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));                                   \
  }
MTABENCH_WGMMA_RS(__nv_bfloat16, "bf16", 16, MTABENCH_R8, "%8,%9,%10,%11", "12", MTABENCH_D8)
MTABENCH_WGMMA_RS(__nv_bfloat16, "bf16", 32, MTABENCH_R16, "%16,%17,%18,%19", "20", MTABENCH_D16)
MTABENCH_WGMMA_RS(__half, "f16", 16, MTABENCH_R8, "%8,%9,%10,%11", "12", MTABENCH_D8)
MTABENCH_WGMMA_RS(__half, "f16", 32, MTABENCH_R16, "%16,%17,%18,%19", "20", MTABENCH_D16)
#undef MTABENCH_WGMMA_RS
#undef MTABENCH_D8
#undef MTABENCH_D16
#undef MTABENCH_D32
#undef MTABENCH_R8
#undef MTABENCH_R16
#undef MTABENCH_R32
#endif

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most PENDING of this warp group's commit groups are still running.
template <int PENDING>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory"); }
// Keeps the compiler from moving accumulator reads or writes across the asynchronous wgmmas.
template <int N>
__device__ __forceinline__ void fence_acc(float (&d)[N]) {
#pragma unroll
  for (int x = 0; x < N; ++x) asm volatile("" : "+f"(d[x])::"memory");
}

// ---- block set-up ------------------------------------------------------------------------------
// The weights as B core matrices (wgmma_b_offset, fused_contraction.h), written once per block,
// every (k index, head) of the weights' space exactly once (a weight or a zero: padding heads
// and channels; the wgmma path has Cp a multiple of 16, so its k-steps are exactly K K Cp / 16
// and none is padding), so no barrier is needed before the kernel's own.
// v51: a warp takes one head n and 32 consecutive channels c, and walks the K K taps uv: k index
// uv Cp + c (split_k's order), so its 2-byte shared stores fill four 16-byte core-matrix rows
// (4 wavefronts), and its loads, 32 (head, channel) rows of K K weights, come from L1 after the
// first tap of each 32-byte sector. Until v50 a thread gathered one core-matrix row's 8 channels
// (8 loads K K elements apart, every one its own sector: ~50,000 L2 sector reads a block at k 7
// heads 32, all blocks at once), ~3.6% of all samples before the first item (v50's profile;
// four rows in flight a thread, v49, changed nothing: not latency but L2 requests).
template <class T>
__device__ void load_weight_cores(const FusedParams& p, char* smem) {
  char* wc = smem + p.sm_w;
  const int KK = p.K * p.K, N = p.NT * 8, cblocks = (p.Cp + 31) >> 5;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const unsigned short* weight = static_cast<const unsigned short*>(p.weight);  // T's bits
  #pragma unroll 1
  for (int task = warp; task < N * cblocks; task += kThreads / 32) {
    const int n = task / cblocks, c = (task - n * cblocks) * 32 + lane;
    if (c >= p.Cp) continue;
    const bool real = n < p.O && c < p.C;
    const unsigned short* w = weight + (static_cast<long long>(n) * p.C + c) * KK;
    #pragma unroll 7
    for (int uv = 0; uv < KK; ++uv) {
      const int kk = uv * p.Cp + c;
      *reinterpret_cast<unsigned short*>(wc + wgmma_b_offset(p, kk >> 4, kk & 15, n)) = real ? __ldg(w + uv) : 0;
    }
  }
}

// ---- conv item: the parts both contractions share ----------------------------------------------
// The item's probability tile: statistics, then the fill. The tile (and, before the first item,
// the weights) were written by ordinary stores; the wgmmas read them through the async proxy.
template <class T>
__device__ __forceinline__ void fill_wgmma_tile(const FusedParams& p, char* smem, int b, long long i0, long long j0) {
  fill_channel_tile<T, true>(p, smem, b, i0, j0);
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
}

// The warp group's index broadcast from lane 0, so the compiler knows it is the same in every
// lane and keeps what derives from it (the descriptors) in uniform registers.
__device__ __forceinline__ int warp_group() { return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x >> 7), 0); }

// This thread's heads' biases: head nt * 8 + 2 t + h (t = lane & 3).
template <int NT>
__device__ __forceinline__ void load_bias_pairs(const FusedParams& p, const char* smem, float (&bias_r)[NT][2]) {
  const float* bias_s = reinterpret_cast<const float*>(smem + p.sm_bias);
  const int t = threadIdx.x & 3;
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int h = 0; h < 2; ++h) bias_r[nt][h] = bias_s[nt * 8 + 2 * t + h];
}
// v118: a register-A item's accumulators start at their heads' biases (accumulator x of n-tile
// nt is head nt * 8 + 2 t + (x & 1)), so its epilogue adds nothing (16 FADD a row at N 32).
template <int ROWS, int NT>
__device__ __forceinline__ void bias_acc(float (&acc)[ROWS][NT * 4], const float (&bias_r)[NT][2]) {
#pragma unroll
  for (int r = 0; r < ROWS; ++r)
#pragma unroll
    for (int x = 0; x < NT * 4; ++x) acc[r][x] = bias_r[x >> 2][x & 1];
}

// Output rows i_first .. i_first + ROWS - 1 (columns j0 .. j0 + 63) from the accumulators,
// straight to y. Accumulator x of n-tile nt: position 16 w + g + 8 (x >> 1 & 1), head
// nt * 8 + 2 t + (x & 1).
template <class T, int NT, int ROWS>
__device__ __forceinline__ void store_wgmma_rows(const FusedParams& p, float (&acc)[ROWS][NT * 4],
                                                 const float (&bias_r)[NT][2], int b, long long i_first, long long j0) {
#pragma unroll
  for (int r = 0; r < ROWS; ++r) fence_acc(acc[r]);
  const int w = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  T* y = static_cast<T*>(p.y);
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    const long long i = i_first + r;
    if (i >= p.S) break;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        const long long j = j0 + 16 * w + g + 8 * ((x >> 1) & 1);
        const int o = nt * 8 + 2 * t + (x & 1);
        if (o < p.O && j < p.S)
          y[((static_cast<long long>(b) * p.O + o) * p.S + i) * p.S + j] =
              from_f<T>(j <= i ? acc[r][nt * 4 + x] + bias_r[nt][x & 1] : 0.f);
      }
  }
}

// v29 (register-A path): the same rows into the staging tile ys (wgmma_staged_offset; the
// tile's space, dead once every warp's ldmatrix reads are done), for
// store_staging to write as coalesced 16-byte vectors: 16 a thread at k 7 heads 32 instead of
// 128 2-byte stores that each touched 4 half-used sectors (~10% of v25's stall samples there;
// v28c, the same through a split team's tile: -3.7%). Rows at or past seq are staged but not
// stored; columns past the diagonal are staged as zeros, like store_wgmma_rows.
template <class T, int NT, int ROWS>
__device__ __forceinline__ void stage_wgmma_rows(const FusedParams& p, float (&acc)[ROWS][NT * 4], T* ys, int r0,
                                                 long long i_first, long long j0) {
#pragma unroll
  for (int r = 0; r < ROWS; ++r) fence_acc(acc[r]);
  const int w = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  // Row r keeps column 16 w + g + 8 h where 16 w + g + 8 h <= i_first - j0 + r (the diagonal).
  const int diag = static_cast<int>(i_first - j0) - 16 * w - g;
  T* const base = ys + wgmma_staged_offset(2 * t, r0, 16 * w + g);
  // v118: the biases are in the accumulators (bias_acc), and a band wholly below the diagonal
  // keeps every position without a test.
  const auto rows = [&](auto all_kept) {
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int x = 0; x < 4; ++x) {
          const int h = (x >> 1) & 1, o = nt * 8 + 2 * t + (x & 1);
          if (o < p.O)
            base[wgmma_staged_offset(nt * 8 + (x & 1), r, 8 * h)] =
                from_f<T>(decltype(all_kept)::value || 8 * h <= diag + r ? acc[r][nt * 4 + x] : 0.f);
        }
  };
  if (i_first - j0 >= kWgmmaTJ - 1)
    rows(std::true_type{});
  else
    rows(std::false_type{});
}

// ---- conv item, both operands in shared memory (v12-v13) ------------------------------------------
// Tile rows per warp group and pass: the accumulators of MT m64 tiles (MT * 4 NT registers).
template <int NT>
struct WgmmaRows {
  static constexpr int value = NT <= 2 ? 8 : NT == 4 ? 4 : 2;
};

template <class T, int NT>
__device__ void conv_item_wgmma(const FusedParams& p, char* smem, int b, int q, int tile) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int N = NT * 8, MT = WgmmaRows<NT>::value;
  const long long i0 = static_cast<long long>(q) * p.R, j0 = static_cast<long long>(tile) * p.TJ;
  fill_wgmma_tile<T>(p, smem, b, i0, j0);
  const int wg = warp_group();
  const unsigned tile_addr = static_cast<unsigned>(__cvta_generic_to_shared(smem + p.sm_p));
  const unsigned w_addr = static_cast<unsigned>(__cvta_generic_to_shared(smem + p.sm_w));
  const unsigned b_lo0 = smem_desc_lo(w_addr, wgmma_b_lbo(p)), hi = kWgmmaSbo >> 4;
  const unsigned a_lo0 = smem_desc_lo(tile_addr, wgmma_a_lbo(p));
  // In 16-byte units: the next row, a window column, a chunk pair, and the B core matrices of
  // one k-step (wgmma_row_offset, wgmma_tap_offset, wgmma_b_start).
  const int G2 = p.Cp >> 4, pw = p.PW, pair = p.cstride >> 3, bstep = p.NT << 4;
  float bias_r[NT][2];
  load_bias_pairs<NT>(p, smem, bias_r);
  #pragma unroll 1
  for (int r0 = wg * 8; r0 < wg * 8 + 8; r0 += MT) {
    float acc[MT][N / 2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int x = 0; x < N / 2; ++x) acc[mt][x] = 0.f;
    wgmma_fence();
    const unsigned a_row = a_lo0 + static_cast<unsigned>(wgmma_row_offset(p, r0) >> 4);
    // One loop over the k-steps s = (u K + v) G2 + gp, walking (u, v, gp) alongside: a_k is
    // wgmma_tap_offset(u, v, gp) / 16. (Three nested loops made ptxas serialize the wgmmas.)
    unsigned a_k = 0, b_lo = b_lo0;
    int v = 0, gp = 0;
    #pragma unroll 1
    for (int s = 0; s < p.ksteps; ++s) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
        wgmma_m64k16<T, N>(acc[mt], desc_of(a_row + a_k + mt * pw, hi), desc_of(b_lo, hi));
      b_lo += bstep;
      a_k += pair;
      if (++gp == G2) {
        gp = 0;
        a_k += 1 - G2 * pair;
        if (++v == p.K) {
          v = 0;
          a_k += pw - p.K;
        }
      }
    }
    wgmma_commit();
    wgmma_wait<0>();
    store_wgmma_rows<T, NT, MT>(p, acc, bias_r, b, i0 + r0, j0);
  }
  __syncthreads();  // the tile is refilled by the next item
#else
  __trap();  // never planned without sm_90a (make_plan's wgmma_ok)
#endif
}

// ---- conv item, A from registers (v14) -----------------------------------------------------------
// NV consecutive window columns v .. v + NV - 1 at chunk pair gp of the contraction below: A
// fragments from a_vg (this lane's ldmatrix row at tile row r0 and column v; the next tile row
// row_b bytes on, the next column 16), the tap (u, v + c) weights' descriptor b_vg + c b_c + u b_u.
// Tile row rr's fragments go into set (SET0 + rr) % NS of a (NV of its NA columns). With DRAIN it
// returns with every wgmma done; without, group TR - 1 may still run, and the next call must start
// at SET0 + TR (mod NS), whose first NS - 1 - W sets are free (rs_window_row), and someone waits for
// all.
// v48: four fragment sets, and tile row rr + 2's ldmatrix goes into group rr - 2's set (free
// since the last wait), so it need not follow the wait for group rr - 1; ptxas issues it after
// the next wgmma.fence (SASS: DEPBAR, ARRIVE, LDSM, HGMMAs). With three sets it had to follow the
// wait, and the fence (WARPGROUP.ARRIVE, which waits for every register write before it) waited
// for it: ~7% of all samples at k 7 heads 32 (v47's profile, short scoreboard on the 14 ARRIVEs
// of each column).
// v114: NV 2 puts two columns' wgmmas in each commit group (2-14 HGMMAs at k 7 instead of 1-7,
// each group waited on one tile row later) and halves the drains at the end of a call.
// v115: no drain between calls: the sets rotate on from one call to the next.
// v117: NS sets, NS - 2 tile rows loaded ahead. Three sets (one row ahead) free the registers for
// NV 3, whose commit groups (3-21 HGMMAs, >= 48 tensor cycles) outlast the ldmatrix the next
// fence waits for; v47's three sets stalled on it behind groups of one HGMMA.
// W (the forty-ninth session's knob; 1 before it): commit groups left in flight after each wait,
// the rest of the sets (D = NS - 1 - W) the tile rows loaded ahead. W 2 at four sets keeps three
// groups in flight behind one row loaded ahead: the small groups at a window's edge rows (1-3
// HGMMAs a column) then no longer drain the pipe while the next waits (v153's reading; the
// register-A k-loop's largest stall at k 5 heads 16 is this wait, thirty-fourth session). Without
// DRAIN a call returns with groups TR - W .. TR - 1 still running, and the next call's first
// NS - 1 - W sets are free.
template <class T, int NT, int KT, int NV, int SET0, bool DRAIN, int W = 1, int NS, int NA>
__device__ __forceinline__ void rs_window_columns(float (&acc)[8][NT * 4], unsigned (&a)[NS][NA][4], unsigned a_vg,
                                                  unsigned row_b, unsigned b_vg, unsigned b_c, unsigned b_u,
                                                  unsigned hi) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int N = NT * 8, ROWS = 8, TR = ROWS + KT - 1;
  static_assert(NV <= NA, "the fragment sets hold NA columns");
  static_assert(W >= 1, "at least the group just committed may run on");
  // Tile rows loaded ahead of the one contracted: group rr + D - NS = rr - 1 - W's set is free
  // after the last iteration's wait (groups up to rr - 1 - W done).
  constexpr int D = NS - 1 - W;
  static_assert(D >= 1, "NS - 1 - W >= 1: a tile row loaded ahead");
  // v52: B's descriptor base is the same in every lane; broadcast from lane 0, ptxas knows it is
  // warp-uniform and builds the descriptors in uniform registers (two R2UR per HGMMA before:
  // neutral in v47 behind the fence's ldmatrix wait, which v48 removed).
  b_vg = __shfl_sync(0xffffffffu, b_vg, 0);
  b_c = __shfl_sync(0xffffffffu, b_c, 0);
  b_u = __shfl_sync(0xffffffffu, b_u, 0);
#pragma unroll
  for (int d = 0; d < D; ++d)
#pragma unroll
    for (int c = 0; c < NV; ++c) ldmatrix_x4(a[(SET0 + d) % NS][c], a_vg + d * row_b + c * 16);
#pragma unroll
  for (int rr = 0; rr < TR; ++rr) {
    wgmma_fence();  // the fragments were written by ldmatrix
#pragma unroll
    for (int c = 0; c < NV; ++c)
#pragma unroll
      for (int u = 0; u < KT; ++u)
        if (rr - u >= 0 && rr - u < ROWS)
          wgmma_rs_m64k16<T, N>(acc[rr - u], a[(SET0 + rr) % NS][c], desc_of(b_vg + c * b_c + u * b_u, hi));
    wgmma_commit();
    if (rr + D < TR)
#pragma unroll
      for (int c = 0; c < NV; ++c)
        ldmatrix_x4(a[(SET0 + rr + D) % NS][c], a_vg + (rr + D) * row_b + c * 16);  // group rr - 1 - W's set
    wgmma_wait<W>();  // group rr - W is done: its set takes tile row rr - W + NS next time
  }
  if constexpr (DRAIN) wgmma_wait<0>();  // the next columns start again from set 0
#endif
}

// Window columns V .. KT - 1 at one chunk pair, NV at a time (a last odd column alone), each call
// starting where the last one's sets left off; a_vg and b_vg as for rs_window_columns at column 0.
// Unrolled, since the set offset must be known at compile time. Returns with the last call's
// groups TR - W .. TR - 1 still running only where the next chunk pair can start at set 0; else
// drains.
template <class T, int NT, int KT, int NV, int V, int SET0, int W = 1, int NS, int NA>
__device__ __forceinline__ void rs_window_row(float (&acc)[8][NT * 4], unsigned (&a)[NS][NA][4], unsigned a_vg,
                                              unsigned row_b, unsigned b_vg, unsigned b_c, unsigned b_u, unsigned hi) {
  if constexpr (V < KT) {
    constexpr int n = KT - V < NV ? KT - V : NV, TR = 8 + KT - 1;
    rs_window_columns<T, NT, KT, n, SET0, false, W>(acc, a, a_vg + V * 16, row_b, b_vg + V * b_c, b_c, b_u, hi);
    rs_window_row<T, NT, KT, NV, V + n, (SET0 + TR) % NS, W>(acc, a, a_vg, row_b, b_vg, b_c, b_u, hi);
  } else if constexpr (SET0 != 0) {
    wgmma_wait<0>();
  }
}

// The SS loop above reads A (2 KB) and B from shared memory for every wgmma and sits at the
// shared-memory bound (v13: 195 cycles per k-step of 8 m64n32k16 against 192 for the bytes).
// Here a warp group keeps all 8 of its output rows' accumulators and walks the tile rows
// r0 .. r0 + 7 + KT - 1: the A fragment of tile row rr at window column v and chunk pair gp is
// loaded once (ldmatrix.x4) and feeds output row rr - u with tap u's weights for every u that
// lands in the group, ~4 wgmmas per fragment at k 7 (8 x 7 over 14 rows). Fragments rotate
// through four register sets (three until v47): group rr's wgmmas are one commit group, and
// tile row rr + 2's fragment goes into group rr - 2's set.
template <class T, int NT, int KT>
__device__ void conv_item_wgmma_rs(const FusedParams& p, char* smem, int b, int q, int tile) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int N = NT * 8, ROWS = 8;
  const long long i0 = static_cast<long long>(q) * p.R, j0 = static_cast<long long>(tile) * p.TJ;
  fill_wgmma_tile<T>(p, smem, b, i0, j0);
  const int w = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
  const int r0 = warp_group() * ROWS;
  const unsigned tile_addr = static_cast<unsigned>(__cvta_generic_to_shared(smem + p.sm_p));
  const unsigned w_addr = static_cast<unsigned>(__cvta_generic_to_shared(smem + p.sm_w));
  const unsigned b_lo0 = smem_desc_lo(w_addr, wgmma_b_lbo(p)), hi = kWgmmaSbo >> 4;
  // This lane's ldmatrix row for tile row r0, window column 0, chunk pair 0; a tile row is
  // PW * 16 bytes on, a window column 16, a chunk pair 2 cstride (wgmma_rs_a_offset).
  const unsigned a_lane = tile_addr + static_cast<unsigned>(wgmma_rs_a_offset(p, r0, 0, 0, w, lane));
  const unsigned row_b = static_cast<unsigned>(p.PW) * 16u;
  const int G2 = p.Cp >> 4, bstep = p.NT << 4;
  const unsigned b_u = static_cast<unsigned>(KT * G2 * bstep);  // from tap (u, v) to (u + 1, v)
  float bias_r[NT][2];
  load_bias_pairs<NT>(p, smem, bias_r);

  float acc[ROWS][N / 2];
  bias_acc(acc, bias_r);
  // One column a commit group, every call drained: two columns a group (v114, as in ws_consume)
  // measured +3.7% at k 5 heads 16, and the sets rotating on without drains (v115) +1.3%.
  #pragma unroll 1
  for (int v = 0; v < KT; ++v)
    #pragma unroll 1
    for (int gp = 0; gp < G2; ++gp) {
      unsigned a[4][1][4];
      // Tap (u, v), chunk pair gp is k-step (u K + v) G2 + gp (wgmma_tap_offset's order).
      rs_window_columns<T, NT, KT, 1, 0, true, kRsWait>(acc, a, a_lane + static_cast<unsigned>(v * 16 + gp * 2 * p.cstride), row_b,
                                               b_lo0 + static_cast<unsigned>((v * G2 + gp) * bstep), 0u, b_u, hi);
    }
  T* ys = reinterpret_cast<T*>(smem + p.sm_y);  // the tile's space (v29)
  __syncthreads();  // every warp's ldmatrix reads of the tile are done
  stage_wgmma_rows<T, NT, ROWS>(p, acc, ys, r0, i0 + r0, j0);
  __syncthreads();
  store_staging<T>(p, ys, b, i0, j0);
  __syncthreads();  // the tile is refilled by the next item
#else
  __trap();  // never planned without sm_90a (make_plan's wgmma_ok)
#endif
}

}  // namespace mtabench::fused
