// The test build's registry: every shipped implementation, then the cheats, one line each.
#include "tests/adversarial/adversarial.h"

namespace mtabench::adversarial {

const Registry& registry() {
  static const Registry reg = [] {
    Registry r = builtin_registry();
    const Registry cheats = {
        // Device cheats: SPEC §4's list, in its order.
        {"adv-nowrite", &make_nowrite},
        {"adv-cache-ptr", &make_cache_ptr},
        {"adv-cache-hash", &make_cache_hash},
        {"adv-zero-inputs", &make_zero_inputs},
        {"adv-other-stream", &make_other_stream},
        {"adv-upper-garbage", &make_upper_garbage},
        {"adv-fp16-accum", &make_fp16_accum},
        {"adv-seed-only", &make_seed_only},
        {"adv-spin", &make_spin},
        {"adv-oob", &make_oob},
        // Beyond SPEC §4's list: the quieter variant of adv-other-stream.
        {"adv-fork-nojoin", &make_fork_nojoin},
        // Host analogues of those that make sense on a CPU.
        {"adv-host-nowrite", &make_host_nowrite},
        {"adv-host-cache-ptr", &make_host_cache_ptr},
        {"adv-host-cache-hash", &make_host_cache_hash},
        {"adv-host-zero-inputs", &make_host_zero_inputs},
        {"adv-host-upper-garbage", &make_host_upper_garbage},
        {"adv-host-fp16-accum", &make_host_fp16_accum},
        {"adv-host-seed-only", &make_host_seed_only},
        {"adv-host-crash", &make_host_crash},
        {"adv-host-hang", &make_host_hang},
    };
    r.insert(r.end(), cheats.begin(), cheats.end());
    return r;
  }();
  return reg;
}

} // namespace mtabench::adversarial
