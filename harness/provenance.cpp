#include "harness/provenance.h"

#include "harness/build_info.h"
#include "harness/sha256.h"

#include <fmt/core.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <ctime>
#include <fstream>
#include <random>
#include <thread>

#if MTABENCH_HAVE_CUDNN
#include <cudnn.h>
#endif

namespace mtabench {

nlohmann::json harness_provenance() {
  return {{"name", "mtabench"},
          {"version", build_info::version()},
          {"git_commit", build_info::git_commit()},
          {"git_dirty", build_info::git_dirty()},
          {"source_digest", build_info::source_digest()},
          {"build_type", build_info::build_type()},
          {"cxx_flags", build_info::cxx_flags()},
          {"cuda_flags", build_info::cuda_flags()},
          {"cuda_architectures", build_info::cuda_architectures()},
          {"cxx_compiler", build_info::cxx_compiler()},
          {"cuda_compiler", build_info::cuda_compiler()}};
}

namespace {
std::string os_release_name() {
  std::ifstream f("/etc/os-release");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      std::string v = line.substr(12);
      if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
      return v;
    }
  return "unknown";
}
std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      const auto p = line.find(':');
      if (p != std::string::npos) return line.substr(p + 2);
    }
  return "unknown";
}
}  // namespace

nlohmann::json host_provenance() {
  utsname u{};
  uname(&u);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return {{"os", os_release_name()},
          {"kernel", fmt::format("{} {} {}", u.sysname, u.release, u.machine)},
          {"hostname", host},
          {"cpu", cpu_model()},
          {"cpu_threads", std::thread::hardware_concurrency()}};
}

double host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

std::string host_hardware_key() {
  std::string key = "cpu-";
  for (char c : cpu_model()) {
    if (std::isalnum(static_cast<unsigned char>(c))) key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (key.back() != '-') key += '-';
  }
  while (key.back() == '-') key.pop_back();
  return fmt::format("{}-{}t", key, std::thread::hardware_concurrency());
}

std::string cudnn_version_string() {
#if MTABENCH_HAVE_CUDNN
  const size_t v = cudnnGetVersion();
  return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
#else
  return "not built with cuDNN";
#endif
}

std::string utc_timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string new_run_id() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  std::random_device rd;
  return fmt::format("{}-{:08x}", buf, rd());
}

}  // namespace mtabench
