// Every implementation mtabench ships, one line each. To add one: a folder under impls/ with a
// factory, and a line here (README: "Adding an implementation").
#include "impls/cudnn/cudnn_composition.h"
#include "impls/fused/fused.h"
#include "impls/impl.h"
#include "impls/reference/reference_gpu.h"

namespace mtabench {

const Registry& builtin_registry() {
  static const Registry registry = {
      {"reference-cpu", &reference::make_cpu},
      {"reference", &reference::make_gpu},
#if MTABENCH_HAVE_CUDNN
      {"cudnn", &cudnn::make},
#endif
      {"fused", &fused::make},
  };
  return registry;
}

const RegistryEntry* find_impl(const Registry& reg, const std::string& name) {
  for (const auto& e : reg)
    if (name == e.name) return &e;
  return nullptr;
}

nlohmann::json ImplInfo::to_json() const {
  return {{"name", name},       {"version", version},
          {"language", language}, {"license", license},
          {"source", source},   {"description", description},
          {"location", location == Location::host ? "host" : "device"},
          {"tf32", tf32}};
}

}  // namespace mtabench
