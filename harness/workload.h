#pragma once
// Workload descriptors: loading, validation (errors name the file, JSON pointer and reason),
// sweeps, and the identity hash of SPEC §1.
#include "harness/dtype.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mtabench {

inline constexpr const char* kSemantics = "liger-mta-fwd-v1";
inline constexpr int kMaxK = 31;

struct Workload {
  std::string name;
  std::string semantics = kSemantics;
  int k = 3;
  std::int64_t seq = 1, batch = 1, heads_in = 1, heads_out = 1;
  DType dtype = DType::bf16;
  std::optional<std::uint64_t> seed;  // input seed; the run's --seed when absent
  double scale = 3.0;                 // scores ~ N(0,1) * scale
  std::vector<std::string> tags;
  std::string description;
  std::string source;  // file it came from (not part of the identity)

  int r() const { return k / 2; }
  std::int64_t scores_elems() const { return batch * heads_in * seq * seq; }
  std::int64_t y_elems() const { return batch * heads_out * seq * seq; }
  std::int64_t weight_elems() const { return heads_out * heads_in * k * k; }
  std::int64_t bias_elems() const { return heads_out; }
  // Elements on or below the diagonal of one seq x seq plane.
  std::int64_t causal_elems_per_plane() const { return seq * (seq + 1) / 2; }

  // {semantics, k, seq, batch, heads_in, heads_out, dtype}: what the identity hash covers.
  nlohmann::json identity_json() const;
  std::string identity() const;  // sha256 hex of the canonical identity JSON
  std::string shape_string() const;  // "k3 seq32 b2 h4/4 bf16"
  nlohmann::json to_json() const;    // every field, for records
};

// Loads one file (a workload or a suite) or every *.json in a folder (sorted). Throws
// InputError on the first problem.
std::vector<Workload> load_workloads(const std::filesystem::path& path);
std::vector<Workload> load_workloads(const std::vector<std::string>& paths);
// Parses an already-read document; `file` names it in errors.
std::vector<Workload> workloads_from_json(const nlohmann::json& doc, const std::string& file);
// The checks on one resolved workload (also used on workloads rebuilt from records).
void validate_workload(const Workload& w, const std::string& file, const std::string& pointer);

}  // namespace mtabench
