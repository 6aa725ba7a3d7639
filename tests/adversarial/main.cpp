// mtabench_adversarial: the whole mtabench command line, with the adversarial implementations
// registered beside the shipped ones. `run` re-executes /proc/self/exe for each case, so the
// children see the same registry.
#include "harness/app.h"
#include "tests/adversarial/adversarial.h"

int main(int argc, char** argv) {
  return mtabench::run_app(argc, argv, mtabench::adversarial::registry());
}
