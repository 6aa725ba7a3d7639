#include "gpu_test_util.h"
TEST(GpuPlaceholder, Skips) { MTABENCH_REQUIRE_GPU(); }
