#pragma once
// The `mtabench` command line, parameterised by the implementation registry so that the test
// build can run the same CLI with its adversarial implementations added.
#include "impls/impl.h"

namespace mtabench {
int run_app(int argc, char** argv, const Registry& registry);
}  // namespace mtabench
