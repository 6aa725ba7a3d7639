#pragma once
// The library composition (what PyTorch does, without Python): a mask+softmax kernel writing
// probabilities in the workload dtype, cuDNN's convolution (padding k/2, stride 1), and a kernel
// that adds the bias and zeroes the future positions.
#include "impls/impl.h"

#include <memory>

namespace mtabench::cudnn {
std::unique_ptr<Implementation> make();
}  // namespace mtabench::cudnn
