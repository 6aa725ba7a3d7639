#pragma once
// Child processes for isolation (SPEC §4): a CUDA error such as an illegal address poisons the
// whole process's context, and a kernel that never returns hangs it, so each case runs in a
// child of its own with a time limit; the parent writes whatever the child could not.
#include <string>
#include <vector>

namespace mtabench {

struct ChildResult {
  int exit_code = -1;     // when it exited
  int signal = 0;         // when a signal ended it
  bool timed_out = false; // killed by us at the limit
  double seconds = 0;
  std::string describe() const;  // "exit code 1", "killed by SIGSEGV", "killed after 30 s (time limit)"
};

// Runs this executable (/proc/self/exe) with args in its own process group; kills the group
// with SIGKILL after timeout_s. stdout and stderr are inherited.
ChildResult run_self(const std::vector<std::string>& args, double timeout_s);

std::string self_executable();

}  // namespace mtabench
