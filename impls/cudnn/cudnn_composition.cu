// The library composition: what PyTorch's eager path does for this operation, without Python.
//   1. masked_softmax: probabilities P in the workload dtype (fp32 math), exactly 0 above the
//      diagonal;
//   2. cuDNN's convolution forward (legacy API, cross-correlation, padding k/2, fp32 accumulation)
//      writing z into y;
//   3. bias_mask: y += bias on and below the diagonal, exact zeros above it.
// PyTorch runs two more passes (a masked_fill before the softmax, and the bias as its own add);
// fusing the first mask into the softmax and the bias into the last mask is what any library
// user would write, and keeps the comparison about the convolution.
#include "harness/cuda_check.h"
#include "harness/device_dtype.cuh"
#include "harness/device.h"
#include "impls/cudnn/cudnn_composition.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cudnn.h>
#include <fmt/core.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace mtabench::cudnn {

namespace {

// ---------------------------------------------------------------------------------------------
// Device code

// Merges two online-softmax partials (running max m, sum of exp(x - m) l). An empty partial
// has m = -inf; two of them must not produce exp(-inf - -inf) = NaN.
__device__ __forceinline__ void merge(float& m, float& l, float m2, float l2) {
  const float mn = fmaxf(m, m2);
  if (mn == -INFINITY) return;
  l = (m == -INFINITY ? 0.f : l * expf(m - mn)) + (m2 == -INFINITY ? 0.f : l2 * expf(m2 - mn));
  m = mn;
}

// One block per (b, c, i) row. The statistics take one read of j <= i (online max and sum); the
// second read of the same row is an L2 hit, since the block size grows with seq and keeps the
// rows in flight to a few MiB. The upper triangle is written as zeros and never read.
template <class T>
__global__ void masked_softmax(const T* __restrict__ scores, T* __restrict__ p, std::int64_t rows,
                               std::int64_t S) {
  __shared__ float sm[32], sl[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const std::int64_t i = row % S;
    const T* in = scores + row * S;
    T* out = p + row * S;
    float m = -INFINITY, l = 0.f;
    for (std::int64_t j = threadIdx.x; j <= i; j += blockDim.x) {
      const float x = to_f(in[j]);
      if (x > m) {
        l = l * expf(m - x) + 1.f;
        m = x;
      } else if (m != -INFINITY) {
        l += expf(x - m);
      }
    }
    for (int o = 16; o; o /= 2) {
      const float m2 = __shfl_xor_sync(0xffffffffu, m, o), l2 = __shfl_xor_sync(0xffffffffu, l, o);
      merge(m, l, m2, l2);
    }
    if (lane == 0) sm[warp] = m, sl[warp] = l;
    __syncthreads();
    if (warp == 0) {
      m = lane < warps ? sm[lane] : -INFINITY;
      l = lane < warps ? sl[lane] : 0.f;
      for (int o = 16; o; o /= 2) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o), l2 = __shfl_xor_sync(0xffffffffu, l, o);
        merge(m, l, m2, l2);
      }
      if (lane == 0) sm[0] = m, sl[0] = l;
    }
    __syncthreads();
    const float row_max = sm[0], inv_sum = 1.f / sl[0];
    // sm/sl are rewritten by the next row's reduction.
    __syncthreads();
    for (std::int64_t j = threadIdx.x; j < S; j += blockDim.x)
      out[j] = j <= i ? from_f<T>(expf(to_f(in[j]) - row_max) * inv_sum) : from_f<T>(0.f);
  }
}

// y holds cuDNN's z in the workload dtype. The convolution also wrote the upper triangle (output
// row i reads probability row i+1), so it must be overwritten with exact zeros.
template <class T>
__global__ void bias_mask(T* __restrict__ y, const T* __restrict__ bias, std::int64_t rows, std::int64_t S,
                          std::int64_t O) {
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const std::int64_t i = row % S;
    const float b = to_f(bias[(row / S) % O]);
    T* out = y + row * S;
    for (std::int64_t j = threadIdx.x; j < S; j += blockDim.x)
      out[j] = j <= i ? from_f<T>(to_f(out[j]) + b) : from_f<T>(0.f);
  }
}

// About 8 elements of a row per thread, a whole number of warps, at most 1024.
unsigned row_block(std::int64_t S) {
  unsigned t = 32;
  while (t < 1024 && static_cast<std::int64_t>(t) * 8 < S) t *= 2;
  return t;
}
unsigned row_grid(std::int64_t rows) { return static_cast<unsigned>(std::min<std::int64_t>(rows, INT_MAX)); }

template <class T>
void launch_softmax(const void* scores, void* p, std::int64_t rows, std::int64_t S, cudaStream_t s) {
  masked_softmax<T><<<row_grid(rows), row_block(S), 0, s>>>(static_cast<const T*>(scores), static_cast<T*>(p), rows, S);
}
template <class T>
void launch_bias_mask(void* y, const void* bias, std::int64_t rows, std::int64_t S, std::int64_t O, cudaStream_t s) {
  bias_mask<T><<<row_grid(rows), row_block(S), 0, s>>>(static_cast<T*>(y), static_cast<const T*>(bias), rows, S, O);
}

// ---------------------------------------------------------------------------------------------
// cuDNN plumbing

[[noreturn]] void throw_cudnn_error(cudnnStatus_t s, const char* call, const char* file, int line) {
  throw std::runtime_error(fmt::format("{}:{}: {} failed: {}", file, line, call, cudnnGetErrorString(s)));
}

#define MTABENCH_CUDNN_CALL(call)                                                         \
  do {                                                                                    \
    const cudnnStatus_t mtabench_st_ = (call);                                            \
    if (mtabench_st_ != CUDNN_STATUS_SUCCESS)                                             \
      throw_cudnn_error(mtabench_st_, #call, __FILE__, __LINE__);                         \
  } while (false)

cudnnDataType_t cudnn_type(DType t) {
  switch (t) {
    case DType::bf16: return CUDNN_DATA_BFLOAT16;
    case DType::fp16: return CUDNN_DATA_HALF;
    case DType::fp32: return CUDNN_DATA_FLOAT;
  }
  return CUDNN_DATA_FLOAT;
}

const char* algo_name(cudnnConvolutionFwdAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "?";
  }
}

// FFT and Winograd trade accuracy for arithmetic through their transforms; this convolution is
// memory-bound (heads_in*k*k multiply-adds per element read and written), so they buy nothing
// here and would only put the fp32 tolerance (1e-5) at risk. They are a last resort.
bool exact_arithmetic(cudnnConvolutionFwdAlgo_t a) {
  return a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
}

// The math mode the descriptor is created with: tensor cores (fp32 accumulation) for the
// 16-bit types; plain FMA for fp32, because CUDNN_DEFAULT_MATH lets cuDNN use TF32 on Ampere
// and later, and this implementation does not declare TF32.
cudnnMathType_t requested_math(DType t) { return t == DType::fp32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH; }

// Whether an algorithm result can be used: it ran (or would run), and for fp32 not on tensor
// cores. The math type it is run with is its own for 16-bit types and always FMA for fp32 (what
// PyTorch does with allow_tf32 off).
bool usable(const cudnnConvolutionFwdAlgoPerf_t& r, DType t) {
  if (r.status != CUDNN_STATUS_SUCCESS) return false;
  if (t == DType::fp32)
    return r.mathType != CUDNN_TENSOR_OP_MATH && r.mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
  return true;
}
cudnnMathType_t run_math(const cudnnConvolutionFwdAlgoPerf_t& r, DType t) {
  return t == DType::fp32 ? CUDNN_FMA_MATH : r.mathType;
}

// The convolution of one batch chunk: x = P [nb, C, S, S], w [O, C, k, k], y [nb, O, S, S].
struct Descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

  Descriptors() = default;
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  ~Descriptors() { reset(); }
  void reset() {
    // Destruction only fails on a null or invalid descriptor: nothing to report.
    if (x) (void)cudnnDestroyTensorDescriptor(x);
    if (y) (void)cudnnDestroyTensorDescriptor(y);
    if (w) (void)cudnnDestroyFilterDescriptor(w);
    if (conv) (void)cudnnDestroyConvolutionDescriptor(conv);
    x = y = nullptr, w = nullptr, conv = nullptr;
  }

  // Empty when cuDNN accepted the shape; otherwise which step it refused and cuDNN's reason.
  // Callers have checked that every dimension and product fits an int.
  std::string set(const Workload& wl, int nb) {
    reset();
    const cudnnDataType_t t = cudnn_type(wl.dtype);
    const int S = static_cast<int>(wl.seq), C = static_cast<int>(wl.heads_in), O = static_cast<int>(wl.heads_out);
    const int r = wl.r();
    auto refuse = [](const char* what, cudnnStatus_t s) {
      return fmt::format("cuDNN refused {}: {}", what, cudnnGetErrorString(s));
    };
    cudnnStatus_t s;
    if ((s = cudnnCreateTensorDescriptor(&x)) != CUDNN_STATUS_SUCCESS) return refuse("a tensor descriptor", s);
    if ((s = cudnnCreateTensorDescriptor(&y)) != CUDNN_STATUS_SUCCESS) return refuse("a tensor descriptor", s);
    if ((s = cudnnCreateFilterDescriptor(&w)) != CUDNN_STATUS_SUCCESS) return refuse("a filter descriptor", s);
    if ((s = cudnnCreateConvolutionDescriptor(&conv)) != CUDNN_STATUS_SUCCESS)
      return refuse("a convolution descriptor", s);
    if ((s = cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, t, nb, C, S, S)) != CUDNN_STATUS_SUCCESS)
      return refuse(fmt::format("the probabilities [{}, {}, {}, {}]", nb, C, S, S).c_str(), s);
    if ((s = cudnnSetFilter4dDescriptor(w, t, CUDNN_TENSOR_NCHW, O, C, wl.k, wl.k)) != CUDNN_STATUS_SUCCESS)
      return refuse(fmt::format("the weight [{}, {}, {}, {}]", O, C, wl.k, wl.k).c_str(), s);
    // PyTorch's conv2d is cross-correlation, as is SPEC §1's formula (weight[u, v] meets p[i+u-r, j+v-r]).
    if ((s = cudnnSetConvolution2dDescriptor(conv, r, r, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)) !=
        CUDNN_STATUS_SUCCESS)
      return refuse(fmt::format("the convolution (padding {}, stride 1, fp32 accumulation)", r).c_str(), s);
    if ((s = cudnnSetConvolutionMathType(conv, requested_math(wl.dtype))) != CUDNN_STATUS_SUCCESS)
      return refuse("the math type", s);
    int n = 0, c = 0, h = 0, wd = 0;
    if ((s = cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &c, &h, &wd)) != CUDNN_STATUS_SUCCESS)
      return refuse("the output shape", s);
    if (n != nb || c != O || h != S || wd != S)
      return fmt::format("cuDNN's output shape [{}, {}, {}, {}] is not [{}, {}, {}, {}]", n, c, h, wd, nb, O, S, S);
    if ((s = cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, t, nb, O, S, S)) != CUDNN_STATUS_SUCCESS)
      return refuse(fmt::format("the output [{}, {}, {}, {}]", nb, O, S, S).c_str(), s);
    return {};
  }
};

std::vector<cudnnConvolutionFwdAlgoPerf_t> heuristics(cudnnHandle_t h, const Descriptors& d, cudnnStatus_t* st) {
  std::vector<cudnnConvolutionFwdAlgoPerf_t> r(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
  int n = 0;
  *st = cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, static_cast<int>(r.size()), &n, r.data());
  r.resize(*st == CUDNN_STATUS_SUCCESS ? static_cast<std::size_t>(n) : 0);
  return r;
}

bool listed_in(const std::vector<cudnnConvolutionFwdAlgoPerf_t>& rs, cudnnConvolutionFwdAlgo_t a) {
  return std::any_of(rs.begin(), rs.end(), [a](const auto& r) { return r.algo == a; });
}

std::string describe(const std::vector<cudnnConvolutionFwdAlgoPerf_t>& rs) {
  std::string s;
  for (const auto& r : rs)
    s += fmt::format("{}{} {}", s.empty() ? "" : ", ", algo_name(r.algo), cudnnGetErrorString(r.status));
  return s.empty() ? "none returned" : s;
}

std::int64_t round_up(std::int64_t v, std::int64_t to) { return (v + to - 1) / to * to; }

// Sizes that follow from the workload alone.
struct Plan {
  int nb = 1;                      // batch items per cuDNN call
  std::int64_t chunks = 1;         // cuDNN calls per run
  std::int64_t p_chunk_bytes = 0;  // stride of one chunk in the P buffer (kept 256-byte aligned)
  std::int64_t y_chunk_bytes = 0;
  std::int64_t p_bytes = 0;        // the P buffer
  std::int64_t tensor_bytes = 0;   // scores + weight + bias + y, which the harness allocates
};

// The legacy descriptors take int dimensions and cuDNN indexes a tensor with 32 bits, so the
// batch is split into equal chunks of at most INT_MAX elements (PyTorch splits the same way).
// Returns why not when even one batch item is too large, else an empty string.
std::string make_plan(const Workload& w, Plan* plan) {
  const std::int64_t plane = w.seq * w.seq, es = static_cast<std::int64_t>(dtype_size(w.dtype));
  const std::int64_t item = std::max(w.heads_in, w.heads_out) * plane;
  if (item > INT_MAX)
    return fmt::format("one batch item of the probabilities or of y has {} elements; cuDNN's legacy convolution "
                       "indexes a tensor with 32-bit ints (at most {})", item, INT_MAX);
  if (w.weight_elems() > INT_MAX) return fmt::format("the weight has {} elements, over cuDNN's 32-bit limit", w.weight_elems());
  std::int64_t nb = w.batch;
  while (nb > 1 && (w.batch % nb != 0 || nb * item > INT_MAX)) --nb;
  plan->nb = static_cast<int>(nb);
  plan->chunks = w.batch / nb;
  plan->p_chunk_bytes = round_up(nb * w.heads_in * plane * es, 256);
  plan->y_chunk_bytes = nb * w.heads_out * plane * es;
  plan->p_bytes = plan->chunks * plan->p_chunk_bytes;
  plan->tensor_bytes = (w.scores_elems() + w.y_elems() + w.weight_elems() + w.bias_elems()) * es;
  return {};
}

constexpr double kMemoryFraction = 0.8;
double mib(double bytes) { return bytes / (1 << 20); }

// The most workspace the convolution may have: what is left of the memory share after P and the
// tensors, and at most room for cuDNN to change the layout of one chunk's input and output (its
// tensor-core paths work in NHWC) plus 256 MiB. That excludes materialising an im2col matrix
// (heads_in*k*k times P), never the fast choice for a memory-bound convolution, and leaves room
// for the harness's own checker buffers, which it allocates after initialize().
double workspace_cap(const Plan& plan, double device_bytes) {
  const double left = kMemoryFraction * device_bytes - static_cast<double>(plan.p_bytes + plan.tensor_bytes);
  const double layout = 2.0 * static_cast<double>(plan.p_chunk_bytes + plan.y_chunk_bytes) + 256.0 * (1 << 20);
  return std::min(left, layout);
}

// ---------------------------------------------------------------------------------------------

class CudnnComposition final : public Implementation {
 public:
  ImplInfo info() const override {
    ImplInfo i;
    i.name = "cudnn";
    i.version = "1";
    i.language = "cuda";
    i.license = "Apache-2.0";
    i.source = "impls/cudnn/cudnn_composition.cu";
    i.description =
        "masked-softmax kernel -> P in the workload dtype -> cuDNN convolution forward (legacy API, fastest "
        "GEMM-family algorithm by cudnnFind, fp32 accumulation; bf16/fp16 tensor-op math, fp32 FMA math, no TF32) "
        "-> bias + causal-mask kernel";
    i.tf32 = false;
    return i;
  }

  Support check_support(const Workload& w, const DeviceInfo* dev) const override {
    if (!dev) return Support::no("needs a CUDA device");
    Plan plan;
    if (std::string why = make_plan(w, &plan); !why.empty()) return Support::no(why);
    const double budget = kMemoryFraction * static_cast<double>(dev->memory_bytes);
    auto too_big = [&](double ws) {
      return Support::no(fmt::format(
          "needs {:.0f} MiB of device memory (P {:.0f} + cuDNN workspace {:.0f} + tensors {:.0f}), over {:.0f}% of "
          "the device's {:.0f} MiB",
          mib(plan.p_bytes + ws + plan.tensor_bytes), mib(plan.p_bytes), mib(ws), mib(plan.tensor_bytes),
          kMemoryFraction * 100, mib(dev->memory_bytes)));
    };
    if (plan.p_bytes + plan.tensor_bytes > budget) return too_big(0);

    Descriptors d;
    if (std::string why = d.set(w, plan.nb); !why.empty()) return Support::no(why);
    if (std::string why = ensure_handle(); !why.empty()) return Support::no(why);
    cudnnStatus_t st;
    const auto rs = heuristics(handle_, d, &st);
    if (st != CUDNN_STATUS_SUCCESS)
      return Support::no(fmt::format("cuDNN's algorithm heuristics refused the convolution: {}", cudnnGetErrorString(st)));
    double min_ws = -1;
    for (const auto& r : rs)
      if (usable(r, w.dtype) && (min_ws < 0 || static_cast<double>(r.memory) < min_ws)) min_ws = static_cast<double>(r.memory);
    if (min_ws < 0)
      return Support::no(fmt::format("cuDNN has no forward algorithm for this convolution{}: {}",
                                     w.dtype == DType::fp32 ? " without TF32" : "", describe(rs)));
    if (plan.p_bytes + min_ws + plan.tensor_bytes > budget) return too_big(min_ws);
    const double cap = workspace_cap(plan, static_cast<double>(dev->memory_bytes));
    if (min_ws > cap)
      return Support::no(fmt::format("cuDNN's algorithms need at least {:.0f} MiB of workspace; the cap is {:.0f} MiB",
                                     mib(min_ws), mib(cap)));
    return Support::yes();
  }

  void initialize(const Workload& w, const DeviceInfo* dev, cudaStream_t stream) override {
    w_ = w;
    if (std::string why = make_plan(w, &plan_); !why.empty()) throw std::runtime_error(why);
    if (std::string why = ensure_handle(); !why.empty()) throw std::runtime_error(why);
    if (std::string why = desc_.set(w, plan_.nb); !why.empty()) throw std::runtime_error(why);
    MTABENCH_CUDNN_CALL(cudnnSetStream(handle_, stream));

    std::size_t total = 0, free_now = 0;
    MTABENCH_CUDA_CALL(cudaMemGetInfo(&free_now, &total));
    const double device_bytes = dev ? static_cast<double>(dev->memory_bytes) : static_cast<double>(total);
    const double ws_budget = workspace_cap(plan_, device_bytes);
    if (ws_budget < 0)
      throw std::runtime_error(fmt::format("P ({:.0f} MiB) and the tensors ({:.0f} MiB) do not fit in {:.0f}% of the device",
                                           mib(plan_.p_bytes), mib(plan_.tensor_bytes), kMemoryFraction * 100));
    auto fits = [&](std::size_t bytes) { return static_cast<double>(bytes) <= ws_budget; };

    MTABENCH_CUDA_CALL(cudaMalloc(&p_, static_cast<std::size_t>(plan_.p_bytes)));
    // cudnnFind runs on P: zeros rather than whatever the allocation held (NaN, denormals).
    MTABENCH_CUDA_CALL(cudaMemsetAsync(p_, 0, static_cast<std::size_t>(plan_.p_bytes), stream));

    cudnnStatus_t st;
    const auto heur = heuristics(handle_, desc_, &st);
    MTABENCH_CUDNN_CALL(st);
    // Enough workspace for Find to try every exact-arithmetic algorithm the heuristics allow
    // (FFT and Winograd only when nothing else can run: they may want far more).
    std::size_t find_ws = 0;
    for (int pass = 0; pass < 2 && find_ws == 0; ++pass)
      for (const auto& r : heur)
        if (usable(r, w.dtype) && fits(r.memory) && (pass == 1 || exact_arithmetic(r.algo)))
          find_ws = std::max(find_ws, r.memory);

    // Find measures on buffers of the real shape: P, and scratch for the weight and one chunk of y
    // (y itself is the harness's and does not exist yet).
    Scratch scratch;
    const std::size_t es = dtype_size(w.dtype);
    MTABENCH_CUDA_CALL(cudaMalloc(&scratch.y, static_cast<std::size_t>(plan_.y_chunk_bytes)));
    MTABENCH_CUDA_CALL(cudaMalloc(&scratch.w, static_cast<std::size_t>(w.weight_elems()) * es));
    MTABENCH_CUDA_CALL(cudaMemsetAsync(scratch.w, 0, static_cast<std::size_t>(w.weight_elems()) * es, stream));
    if (find_ws) MTABENCH_CUDA_CALL(cudaMalloc(&scratch.ws, find_ws));
    MTABENCH_CUDA_CALL(cudaStreamSynchronize(stream));

    std::vector<cudnnConvolutionFwdAlgoPerf_t> found(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
    int n_found = 0;
    const cudnnStatus_t fst = cudnnFindConvolutionForwardAlgorithmEx(
        handle_, desc_.x, p_, desc_.w, scratch.w, desc_.conv, desc_.y, scratch.y, static_cast<int>(found.size()),
        &n_found, found.data(), scratch.ws, find_ws);
    // Find sorts by measured time; if it fails, the heuristics' ranking (PyTorch's default,
    // cudnn.benchmark off) is the order to try.
    found.resize(fst == CUDNN_STATUS_SUCCESS ? static_cast<std::size_t>(n_found) : 0);
    if (scratch.ws) {
      MTABENCH_CUDA_CALL(cudaFree(scratch.ws));
      scratch.ws = nullptr;
    }

    // Exact-arithmetic algorithms before the others; within each, Find's order, then anything
    // only the heuristics offered.
    std::vector<cudnnConvolutionFwdAlgoPerf_t> order;
    const std::vector<cudnnConvolutionFwdAlgoPerf_t>* lists[] = {&found, &heur};
    for (int pass = 0; pass < 2; ++pass)
      for (const auto* list : lists)
        for (const auto& r : *list)
          if (usable(r, w.dtype) && fits(r.memory) && exact_arithmetic(r.algo) == (pass == 0) && !listed_in(order, r.algo))
            order.push_back(r);

    // The first candidate that cuDNN accepts with the math type it will run with, and that runs
    // once on the scratch buffers (which also moves any first-call setup out of the timed call).
    std::string tried;
    bool chosen = false;
    const float alpha = 1.f, beta = 0.f;
    for (const auto& r : order) {
      cudnnStatus_t s = cudnnSetConvolutionMathType(desc_.conv, run_math(r, w.dtype));
      std::size_t ws = 0;
      if (s == CUDNN_STATUS_SUCCESS) s = cudnnGetConvolutionForwardWorkspaceSize(handle_, desc_.x, desc_.w, desc_.conv, desc_.y, r.algo, &ws);
      if (s == CUDNN_STATUS_SUCCESS && !fits(ws)) {
        tried += fmt::format("{}{}: workspace {:.0f} MiB over the budget", tried.empty() ? "" : ", ", algo_name(r.algo), mib(ws));
        continue;
      }
      if (s == CUDNN_STATUS_SUCCESS && ws > ws_bytes_) {
        if (ws_) MTABENCH_CUDA_CALL(cudaFree(ws_));
        ws_ = nullptr, ws_bytes_ = 0;
        MTABENCH_CUDA_CALL(cudaMalloc(&ws_, ws));
        ws_bytes_ = ws;
      }
      if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnConvolutionForward(handle_, &alpha, desc_.x, p_, desc_.w, scratch.w, desc_.conv, r.algo, ws_, ws_bytes_,
                                    &beta, desc_.y, scratch.y);
      if (s == CUDNN_STATUS_SUCCESS) {
        algo_ = r.algo;
        math_ = run_math(r, w.dtype);
        found_by_ = listed_in(found, r.algo) ? "cudnnFindConvolutionForwardAlgorithmEx" : "cudnnGetConvolutionForwardAlgorithm_v7";
        MTABENCH_CUDA_CALL(cudaStreamSynchronize(stream));
        chosen = true;
        break;
      }
      tried += fmt::format("{}{}: {}", tried.empty() ? "" : ", ", algo_name(r.algo), cudnnGetErrorString(s));
    }
    if (!chosen)
      throw std::runtime_error(fmt::format(
          "cuDNN: no usable forward algorithm (find: {}; heuristics: {}; tried: {})",
          fst == CUDNN_STATUS_SUCCESS ? describe(found) : cudnnGetErrorString(fst), describe(heur),
          tried.empty() ? "none within the workspace budget" : tried));
  }

  nlohmann::json configuration() const override {
    const char* math = math_ == CUDNN_TENSOR_OP_MATH ? "CUDNN_TENSOR_OP_MATH"
                       : math_ == CUDNN_FMA_MATH     ? "CUDNN_FMA_MATH"
                                                     : "CUDNN_DEFAULT_MATH";
    return {{"cudnn_version", cudnnGetVersion()},
            {"algorithm", algo_name(algo_)},
            {"math_type", math},
            {"chosen_from", found_by_},
            {"workspace_bytes", ws_bytes_},
            {"convolution_calls", plan_.chunks}};
  }

  void run(const TensorArgs& t, cudaStream_t stream) override {
    const std::int64_t S = w_.seq, es = static_cast<std::int64_t>(dtype_size(w_.dtype));
    MTABENCH_CUDNN_CALL(cudnnSetStream(handle_, stream));
    // One chunk unless one cuDNN call would pass 2^31 elements (see make_plan).
    const std::int64_t rows = plan_.nb * w_.heads_in * S;
    const float alpha = 1.f, beta = 0.f;  // float for all three dtypes: the compute type is fp32
    for (std::int64_t c = 0; c < plan_.chunks; ++c) {
      const void* scores = static_cast<const char*>(t.scores) + c * rows * S * es;
      void* p = static_cast<char*>(p_) + c * plan_.p_chunk_bytes;
      switch (w_.dtype) {
        case DType::bf16: launch_softmax<__nv_bfloat16>(scores, p, rows, S, stream); break;
        case DType::fp16: launch_softmax<__half>(scores, p, rows, S, stream); break;
        case DType::fp32: launch_softmax<float>(scores, p, rows, S, stream); break;
      }
      MTABENCH_CUDA_CHECK_LAUNCH();
      MTABENCH_CUDNN_CALL(cudnnConvolutionForward(handle_, &alpha, desc_.x, p, desc_.w, t.weight, desc_.conv, algo_,
                                                  ws_, ws_bytes_, &beta, desc_.y,
                                                  static_cast<char*>(t.y) + c * plan_.y_chunk_bytes));
    }
    const std::int64_t y_rows = w_.batch * w_.heads_out * S;
    switch (w_.dtype) {
      case DType::bf16: launch_bias_mask<__nv_bfloat16>(t.y, t.bias, y_rows, S, w_.heads_out, stream); break;
      case DType::fp16: launch_bias_mask<__half>(t.y, t.bias, y_rows, S, w_.heads_out, stream); break;
      case DType::fp32: launch_bias_mask<float>(t.y, t.bias, y_rows, S, w_.heads_out, stream); break;
    }
    MTABENCH_CUDA_CHECK_LAUNCH();
  }

  ~CudnnComposition() override {
    if (p_) MTABENCH_CUDA_CALL_NOTHROW(cudaFree(p_));
    if (ws_) MTABENCH_CUDA_CALL_NOTHROW(cudaFree(ws_));
    desc_.reset();
    if (handle_) (void)cudnnDestroy(handle_);
  }

 private:
  // Temporary buffers of initialize(), freed however it ends.
  struct Scratch {
    void *y = nullptr, *w = nullptr, *ws = nullptr;
    Scratch() = default;
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    ~Scratch() {
      if (y) MTABENCH_CUDA_CALL_NOTHROW(cudaFree(y));
      if (w) MTABENCH_CUDA_CALL_NOTHROW(cudaFree(w));
      if (ws) MTABENCH_CUDA_CALL_NOTHROW(cudaFree(ws));
    }
  };

  // check_support is const but the handle it probes with is worth keeping: cudnnCreate loads
  // cuDNN's sub-libraries and takes a noticeable fraction of a second.
  std::string ensure_handle() const {
    if (handle_) return {};
    const cudnnStatus_t s = cudnnCreate(&handle_);
    if (s == CUDNN_STATUS_SUCCESS) return {};
    handle_ = nullptr;
    return fmt::format("cudnnCreate failed: {}", cudnnGetErrorString(s));
  }

  Workload w_;
  Plan plan_;
  mutable cudnnHandle_t handle_ = nullptr;
  Descriptors desc_;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  cudnnMathType_t math_ = CUDNN_DEFAULT_MATH;
  std::string found_by_;
  void* p_ = nullptr;
  void* ws_ = nullptr;
  std::size_t ws_bytes_ = 0;
};

}  // namespace

std::unique_ptr<Implementation> make() { return std::make_unique<CudnnComposition>(); }

}  // namespace mtabench::cudnn
