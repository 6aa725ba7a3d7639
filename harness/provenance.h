#pragma once
// Provenance of a record (SPEC §6): harness build, CUDA, cuDNN, device, host, time, command.
#include <nlohmann/json.hpp>

#include <string>

namespace mtabench {

struct DeviceInfo;

nlohmann::json harness_provenance();            // version, git commit + dirty, build type, flags, compilers
nlohmann::json host_provenance();               // OS, kernel, hostname, CPU model, cores
std::string cudnn_version_string();             // "9.14.0" or "not built with cuDNN"
std::string utc_timestamp();                    // 2026-11-29T16:34:10Z
std::string host_hardware_key();                // for records of host implementations
double host_memory_bytes();                     // physical memory of this machine; 0 if unknown
std::string new_run_id();                       // 20261129T163410Z-<8 hex>

}  // namespace mtabench
