// Device cheats that return a result computed by an earlier call: leaderboards that call a kernel
// again and again on the same inputs reward them with impossible times.
#include "impls/reference/reference_gpu.h"
#include "tests/adversarial/adversarial.h"
#include "tests/adversarial/device_common.cuh"

namespace mtabench::adversarial {

namespace {

constexpr const char* kSource = "tests/adversarial/device_cache.cu";

// adv-cache-ptr: computes correctly (the GPU reference) and keeps a copy of y; when the next call
// comes with the same four pointers it only copies that copy back into y (a device-to-device copy on
// the harness's stream: no host synchronization, fast, and y is written).
// Caught by: inputs that change contents (not only pointers) between calls. The gate's unchecked
// warm-up call fills the cache; the "first call" reuses the buffers with new contents, gets the
// warm-up's answer back, and fails on "relative L2 error ... over the tolerance".
class CachePtr final : public Cheat {
public:
  CachePtr() : Cheat("adv-cache-ptr", "caches its output by input pointers", Location::device, kSource) {}
  ~CachePtr() override {
    if (scratch_) MTABENCH_CUDA_CALL_NOTHROW(cudaFree(scratch_));
    if (cache_) MTABENCH_CUDA_CALL_NOTHROW(cudaFree(cache_));
  }
  void initialize(const Workload& w, const DeviceInfo*, cudaStream_t) override {
    w_ = w;
    MTABENCH_CUDA_CALL(cudaMalloc(&scratch_, reference::scratch_bytes(w)));
    MTABENCH_CUDA_CALL(cudaMalloc(&cache_, dev::y_bytes(w)));
  }
  void run(const TensorArgs& t, cudaStream_t s) override {
    const bool hit = have_ && t.scores == last_.scores && t.weight == last_.weight && t.bias == last_.bias &&
                     t.y == last_.y;
    if (hit) {
      MTABENCH_CUDA_CALL(cudaMemcpyAsync(t.y, cache_, dev::y_bytes(w_), cudaMemcpyDeviceToDevice, s));
      return;
    }
    reference::run_gpu(w_, t, scratch_, /*out_fp32=*/false, s);
    MTABENCH_CUDA_CALL(cudaMemcpyAsync(cache_, t.y, dev::y_bytes(w_), cudaMemcpyDeviceToDevice, s));
    last_ = t;
    have_ = true;
  }

private:
  Workload w_;
  void* scratch_ = nullptr;
  void* cache_ = nullptr;
  TensorArgs last_{};
  bool have_ = false;
};

// The first bytes of scores are the cache key (a "hash of a few input values").
constexpr int kKeyBytes = 16;
struct HashKey {
  int valid;
  unsigned char bytes[kKeyBytes];
};

// Sets *hit when the key matches the previous call's, then stores the new key. One thread: it is
// a few bytes, and it runs in stream order before the compute kernel that reads *hit.
__global__ void hash_probe_kernel(const unsigned char* scores, int n, HashKey* key, int* hit) {
  bool same = key->valid != 0;
  for (int k = 0; k < n; ++k) {
    same = same && key->bytes[k] == scores[k];
    key->bytes[k] = scores[k];
  }
  key->valid = 1;
  *hit = same ? 1 : 0;
}

// After the (possibly skipped) compute: on a hit, the cached y goes to y; on a miss, y is cached.
__global__ void cache_sync_kernel(unsigned short* y, unsigned short* cache, std::int64_t n, const int* hit) {
  const bool h = *hit != 0;
  ADV_GRID_STRIDE(x, n) {
    if (h)
      y[x] = cache[x];
    else
      cache[x] = y[x];
  }
}

// adv-cache-hash: keys its cache on the first 16 bytes of scores, compared on the device (no host
// synchronization, as a real cheat would do it): on a match it skips the compute kernel and copies
// the cached y. A benchmark that changes only some inputs, or changes none, rewards it.
// Caught by: the gate's second call, "weights changed, scores unchanged": same scores (so the key
// matches), new weight and bias, and the stale y fails on "relative L2 error ... over the tolerance".
class CacheHash final : public Cheat {
public:
  CacheHash()
      : Cheat("adv-cache-hash", "caches its output keyed by the first few score values", Location::device,
              kSource) {}
  ~CacheHash() override {
    if (key_) MTABENCH_CUDA_CALL_NOTHROW(cudaFree(key_));
    if (cache_) MTABENCH_CUDA_CALL_NOTHROW(cudaFree(cache_));
  }
  void initialize(const Workload& w, const DeviceInfo*, cudaStream_t s) override {
    w_ = w;
    MTABENCH_CUDA_CALL(cudaMalloc(&key_, sizeof(HashKey) + sizeof(int)));
    MTABENCH_CUDA_CALL(cudaMemsetAsync(key_, 0, sizeof(HashKey) + sizeof(int), s));
    MTABENCH_CUDA_CALL(cudaMalloc(&cache_, dev::y_bytes(w)));
    MTABENCH_CUDA_CALL(cudaStreamSynchronize(s));
  }
  void run(const TensorArgs& t, cudaStream_t s) override {
    auto* key = static_cast<HashKey*>(key_);
    int* hit = reinterpret_cast<int*>(static_cast<char*>(key_) + sizeof(HashKey));
    const auto key_bytes = static_cast<int>(std::min<std::int64_t>(
        kKeyBytes, w_.scores_elems() * static_cast<std::int64_t>(dtype_size(w_.dtype))));
    hash_probe_kernel<<<1, 1, 0, s>>>(static_cast<const unsigned char*>(t.scores), key_bytes, key, hit);
    MTABENCH_CUDA_CHECK_LAUNCH();
    dev::dispatch(w_.dtype, [&](auto tag) { dev::launch_naive<decltype(tag)>(w_, t, hit, s); });
    const auto n = static_cast<std::int64_t>(dev::y_bytes(w_) / sizeof(unsigned short));
    cache_sync_kernel<<<dev::blocks_for(n), 256, 0, s>>>(static_cast<unsigned short*>(t.y),
                                                         static_cast<unsigned short*>(cache_), n, hit);
    MTABENCH_CUDA_CHECK_LAUNCH();
  }

private:
  Workload w_;
  void* key_ = nullptr; // HashKey, then the hit flag
  void* cache_ = nullptr;
};

} // namespace

std::unique_ptr<Implementation> make_cache_ptr() {
  return std::make_unique<CachePtr>();
}
std::unique_ptr<Implementation> make_cache_hash() {
  return std::make_unique<CacheHash>();
}

} // namespace mtabench::adversarial
