#pragma once
// The fused single-pass kernel: one launch reads the lower triangle of scores once and writes
// y once. See impls/fused/JOURNAL.md for its design and performance history.
#include "impls/impl.h"

#include <memory>

namespace mtabench::fused {
std::unique_ptr<Implementation> make();
}  // namespace mtabench::fused
