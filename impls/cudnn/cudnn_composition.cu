// PLACEHOLDER while issue 6 is in progress: replaced by the real composition.
#include "harness/device.h"
#include "impls/cudnn/cudnn_composition.h"

namespace mtabench::cudnn {
namespace {
class Placeholder final : public Implementation {
 public:
  ImplInfo info() const override {
    ImplInfo i;
    i.name = "cudnn";
    i.version = "0";
    i.language = "cuda";
    i.license = "Apache-2.0";
    i.source = "impls/cudnn/cudnn_composition.cu";
    i.description = "not built yet";
    return i;
  }
  Support check_support(const Workload&, const DeviceInfo*) const override { return Support::no("not built yet"); }
  void run(const TensorArgs&, cudaStream_t) override {}
};
}  // namespace
std::unique_ptr<Implementation> make() { return std::make_unique<Placeholder>(); }
}  // namespace mtabench::cudnn
