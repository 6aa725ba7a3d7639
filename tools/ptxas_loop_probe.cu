// ptxas-loop-probe: does this build's device compiler run a short clamped loop the right number
// of times? Found while debugging the fused kernel's row stream (impls/fused/JOURNAL.md, v107):
// each of 8 warps a block walks output rows i = i0 + w, i0 + w + 8, ... of its segments and, for
// each, rows m = max(i - 1, lo) .. min(i + 1, hi), adding a count to row m (the ring's release
// counts). With nvcc 13.0 for sm_90a at -O3 (and -Xptxas -O1) the loop's trip count came out
// wrong on an H200 (4,094 of 4,096 rows counted otherwise than by the same loops on the host);
// at -Xptxas -O0 it was right. The row-stream kernel (branch fused-v107) now writes such loops over the K taps,
// unrolled, each row behind a condition. This probe runs the loop as it was, in this build's
// flags, and compares every row's count with the host's.
// Prints one line; exit 0 when every count agrees, 1 when any differs, 2 without a GPU.
// Usage: ptxas-loop-probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

constexpr int kWarps = 8;  // warps a block, each taking every 8th output row

// Segment g = {batch, i0, i1}: output rows [i0, i1) of one batch; block g walks segments
// first[g] .. first[g + 1] - 1 (the row stream's plan layout).
__global__ void count_rows(const int4* segs, const int* first, int* counts, int S) {
  const int w = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  int outs = 0;
  for (int sg = first[blockIdx.x]; sg < first[blockIdx.x + 1]; ++sg) {
    const int4 seg = segs[sg];
    const int b = seg.x, i0 = seg.y, i1 = seg.z;
    const int lo = max(i0 - 1, 0), hi = min(i1, S - 1);
    for (int i = i0 + ((w - outs) % kWarps + kWarps) % kWarps; i < i1; i += kWarps) {
      const int a = max(i - 1, lo), z = min(i + 1, hi);
      __syncwarp();
      if (lane == 0)
        for (int m = a; m <= z; ++m) {
          const int fr = max(m - 1, i0), readers = min(m + 1, i1 - 1) - fr + 1;
          atomicAdd(&counts[b * S + m], i == fr ? 4 - readers : 1);
        }
    }
    outs += i1 - i0;
  }
}

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::printf("ptxas-loop-probe: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("ptxas-loop-probe: no GPU here\n");
    return 2;
  }
  // The seq 2048, batch 2 workload split into 132 blocks of equal row counts, a block's rows of
  // one batch one segment.
  const int S = 2048, B = 2, G = 132, rows = B * S;
  std::vector<int4> segs;
  std::vector<int> first(G + 1, 0);
  int cur = -1;
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < S; ++i) {
      const int g = static_cast<int>(static_cast<long long>(b * S + i) * G / rows);
      if (g != cur || i == 0) {
        segs.push_back(make_int4(b, i, i + 1, 0));
        for (int h = cur + 1; h <= g; ++h) first[h] = static_cast<int>(segs.size()) - 1;
        cur = g;
      } else {
        segs.back().z = i + 1;
      }
    }
  for (int h = cur + 1; h <= G; ++h) first[h] = static_cast<int>(segs.size());

  int4* d_segs = nullptr;
  int *d_first = nullptr, *d_counts = nullptr;
  if (!ok(cudaMalloc(&d_segs, segs.size() * sizeof(int4)), "cudaMalloc") ||
      !ok(cudaMalloc(&d_first, first.size() * sizeof(int)), "cudaMalloc") ||
      !ok(cudaMalloc(&d_counts, rows * sizeof(int)), "cudaMalloc") ||
      !ok(cudaMemcpy(d_segs, segs.data(), segs.size() * sizeof(int4), cudaMemcpyHostToDevice), "cudaMemcpy") ||
      !ok(cudaMemcpy(d_first, first.data(), first.size() * sizeof(int), cudaMemcpyHostToDevice), "cudaMemcpy") ||
      !ok(cudaMemset(d_counts, 0, rows * sizeof(int)), "cudaMemset"))
    return 1;
  count_rows<<<G, 32 * kWarps>>>(d_segs, d_first, d_counts, S);
  std::vector<int> got(rows);
  if (!ok(cudaGetLastError(), "launch") ||
      !ok(cudaMemcpy(got.data(), d_counts, rows * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy"))
    return 1;

  // The same loops on the host (a block's halo rows are counted by both neighbours).
  std::vector<int> want(rows, 0);
  for (int g = 0; g < G; ++g)
    for (int w = 0; w < kWarps; ++w) {
      int outs = 0;
      for (int sg = first[g]; sg < first[g + 1]; ++sg) {
        const int b = segs[sg].x, i0 = segs[sg].y, i1 = segs[sg].z;
        const int lo = std::max(i0 - 1, 0), hi = std::min(i1, S - 1);
        for (int i = i0 + ((w - outs) % kWarps + kWarps) % kWarps; i < i1; i += kWarps)
          for (int m = std::max(i - 1, lo); m <= std::min(i + 1, hi); ++m) {
            const int fr = std::max(m - 1, i0), readers = std::min(m + 1, i1 - 1) - fr + 1;
            want[b * S + m] += i == fr ? 4 - readers : 1;
          }
        outs += i1 - i0;
      }
    }
  int bad = 0, first_bad = -1;
  for (int x = 0; x < rows; ++x)
    if (got[x] != want[x] && bad++ == 0) first_bad = x;
  if (bad == 0) {
    std::printf("ptxas-loop-probe: all %d rows counted as on the host: this build runs the loop right\n", rows);
    return 0;
  }
  std::printf("ptxas-loop-probe: %d of %d rows counted otherwise than on the host (first: row %d, %d against %d): "
              "this build miscompiles the loop\n",
              bad, rows, first_bad, got[first_bad], want[first_bad]);
  return 1;
}
