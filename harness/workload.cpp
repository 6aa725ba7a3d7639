#include "harness/workload.h"

#include "harness/json_strict.h"
#include "harness/sha256.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace mtabench {

using json = nlohmann::json;

json Workload::identity_json() const {
  return json{{"semantics", semantics}, {"k", k},         {"seq", seq},
              {"batch", batch},         {"heads_in", heads_in}, {"heads_out", heads_out},
              {"dtype", dtype_name(dtype)}};
}

// nlohmann's object is a std::map, so dump() without indent is the canonical form: sorted keys,
// no whitespace.
std::string Workload::identity() const { return sha256_hex(identity_json().dump()); }

std::string Workload::shape_string() const {
  return fmt::format("k{} seq{} b{} h{}/{} {}", k, seq, batch, heads_in, heads_out,
                     dtype_name(dtype));
}

json Workload::to_json() const {
  json j = identity_json();
  j["name"] = name;
  if (seed) j["seed"] = *seed;
  j["scale"] = scale;
  j["tags"] = tags;
  if (!description.empty()) j["description"] = description;
  return j;
}

namespace {

const std::set<std::string> kWorkloadKeys = {"name", "semantics", "k",     "seq",  "batch",
                                             "heads_in", "heads_out", "dtype", "seed", "scale",
                                             "tags", "description", "$schema"};
const std::set<std::string> kSuiteKeys = {"suite", "description", "defaults", "workloads",
                                          "$schema"};
// Fields that a suite entry may sweep, in the order the expansion nests them.
const std::vector<std::string> kSweepable = {"k", "seq", "batch", "heads_in", "heads_out", "dtype"};
constexpr std::int64_t kMaxDim = std::numeric_limits<std::int32_t>::max();

const char* type_name(const json& v) { return v.type_name(); }

struct Ctx {
  const std::string& file;
};

[[noreturn]] void fail(const Ctx& c, const std::string& ptr, const std::string& reason) {
  throw InputError(c.file, ptr, reason);
}

std::int64_t get_int(const Ctx& c, const json& v, const std::string& ptr, std::int64_t lo,
                     std::int64_t hi) {
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::floor(d) != d) fail(c, ptr, fmt::format("must be an integer, got {}", v.dump()));
    fail(c, ptr, fmt::format("must be an integer literal, got the float {}", v.dump()));
  }
  if (!v.is_number_integer())
    fail(c, ptr, fmt::format("must be an integer, got {}", type_name(v)));
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
    fail(c, ptr, fmt::format("must be at most {}, got {}", hi, v.dump()));
  const std::int64_t x = v.get<std::int64_t>();
  if (x < lo) fail(c, ptr, fmt::format("must be at least {}, got {}", lo, x));
  if (x > hi) fail(c, ptr, fmt::format("must be at most {}, got {}", hi, x));
  return x;
}

// Applies one (non-swept) field of a workload object.
void apply_field(const Ctx& c, Workload& w, const std::string& key, const json& v,
                 const std::string& ptr) {
  if (key == "$schema") {
    if (!v.is_string()) fail(c, ptr, "must be a string");
  } else if (key == "name") {
    if (!v.is_string() || v.get<std::string>().empty())
      fail(c, ptr, "must be a non-empty string");
    w.name = v.get<std::string>();
  } else if (key == "description") {
    if (!v.is_string()) fail(c, ptr, fmt::format("must be a string, got {}", type_name(v)));
    w.description = v.get<std::string>();
  } else if (key == "semantics") {
    if (!v.is_string()) fail(c, ptr, fmt::format("must be a string, got {}", type_name(v)));
    if (v.get<std::string>() != kSemantics)
      fail(c, ptr, fmt::format("unknown semantics \"{}\" (this harness implements \"{}\")",
                               v.get<std::string>(), kSemantics));
    w.semantics = v.get<std::string>();
  } else if (key == "k") {
    const auto k = get_int(c, v, ptr, 1, kMaxK);
    if (k % 2 == 0)
      fail(c, ptr, fmt::format("k must be odd (k={} would not give a seq x seq output)", k));
    w.k = static_cast<int>(k);
  } else if (key == "seq") {
    w.seq = get_int(c, v, ptr, 1, kMaxDim);
  } else if (key == "batch") {
    w.batch = get_int(c, v, ptr, 1, kMaxDim);
  } else if (key == "heads_in") {
    w.heads_in = get_int(c, v, ptr, 1, kMaxDim);
  } else if (key == "heads_out") {
    w.heads_out = get_int(c, v, ptr, 1, kMaxDim);
  } else if (key == "dtype") {
    if (!v.is_string()) fail(c, ptr, fmt::format("must be a string, got {}", type_name(v)));
    const auto t = parse_dtype(v.get<std::string>());
    if (!t)
      fail(c, ptr, fmt::format("unknown dtype \"{}\" (one of bf16, fp16, fp32)",
                               v.get<std::string>()));
    w.dtype = *t;
  } else if (key == "seed") {
    if (!v.is_number_integer())
      fail(c, ptr, fmt::format("must be a non-negative integer, got {}", type_name(v)));
    if (v.is_number_unsigned()) w.seed = v.get<std::uint64_t>();
    else if (v.get<std::int64_t>() < 0) fail(c, ptr, "must be a non-negative integer");
    else w.seed = static_cast<std::uint64_t>(v.get<std::int64_t>());
  } else if (key == "scale") {
    if (!v.is_number()) fail(c, ptr, fmt::format("must be a number, got {}", type_name(v)));
    const double s = v.get<double>();
    if (!(s > 0) || !std::isfinite(s) || s > 1e4)
      fail(c, ptr, fmt::format("must be a finite number in (0, 1e4], got {}", v.dump()));
    w.scale = s;
  } else if (key == "tags") {
    if (!v.is_array()) fail(c, ptr, fmt::format("must be an array of strings, got {}", type_name(v)));
    w.tags.clear();
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string())
        fail(c, ptr + "/" + std::to_string(i), "tags must be strings");
      w.tags.push_back(v[i].get<std::string>());
    }
  } else {
    fail(c, ptr, fmt::format("unknown key \"{}\" (allowed: name, semantics, k, seq, batch, "
                             "heads_in, heads_out, dtype, seed, scale, tags, description)",
                             key));
  }
}

bool is_sweepable(const std::string& key) {
  return std::find(kSweepable.begin(), kSweepable.end(), key) != kSweepable.end();
}

std::string auto_name(const Workload& w) {
  return fmt::format("k{}-seq{}-b{}-h{}x{}-{}", w.k, w.seq, w.batch, w.heads_in, w.heads_out,
                     dtype_name(w.dtype));
}

// Expands one entry (object) on top of `base`; arrays in sweepable fields multiply out.
void expand_entry(const Ctx& c, const Workload& base, const json& entry, const std::string& ptr,
                  bool allow_sweep, std::vector<Workload>& out) {
  if (!entry.is_object())
    fail(c, ptr, fmt::format("a workload must be an object, got {}", type_name(entry)));
  Workload w = base;
  bool named = false;
  std::vector<std::pair<std::string, const json*>> sweeps;
  for (const auto& [key, v] : entry.items()) {
    const std::string kp = ptr + "/" + json_pointer_token(key);
    if (!kWorkloadKeys.count(key)) apply_field(c, w, key, v, kp);  // throws "unknown key"
    if (v.is_array() && is_sweepable(key)) {
      if (!allow_sweep) fail(c, kp, "a sweep (array) is allowed only in a suite's workloads");
      if (v.empty()) fail(c, kp, "a sweep needs at least one value");
      sweeps.emplace_back(key, &v);
      continue;
    }
    apply_field(c, w, key, v, kp);
    if (key == "name") named = true;
  }
  // Cartesian product in kSweepable order.
  std::sort(sweeps.begin(), sweeps.end(), [](const auto& a, const auto& b) {
    return std::find(kSweepable.begin(), kSweepable.end(), a.first) <
           std::find(kSweepable.begin(), kSweepable.end(), b.first);
  });
  std::vector<Workload> acc{w};
  for (const auto& [key, arr] : sweeps) {
    std::vector<Workload> next;
    for (const Workload& partial : acc) {
      for (std::size_t i = 0; i < arr->size(); ++i) {
        Workload x = partial;
        const std::string ip = ptr + "/" + key + "/" + std::to_string(i);
        if ((*arr)[i].is_array()) fail(c, ip, "sweep values must not be arrays");
        apply_field(c, x, key, (*arr)[i], ip);
        if (named)
          x.name += "-" + key + ((*arr)[i].is_string() ? (*arr)[i].get<std::string>()
                                                        : (*arr)[i].dump());
        next.push_back(std::move(x));
      }
    }
    acc = std::move(next);
  }
  for (Workload& x : acc) {
    if (!named) x.name = auto_name(x);
    validate_workload(x, c.file, ptr);
    out.push_back(std::move(x));
  }
}

// Multiplies with overflow detection.
bool mul_ok(std::int64_t a, std::int64_t b, std::int64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

}  // namespace

void validate_workload(const Workload& w, const std::string& file, const std::string& ptr) {
  const Ctx c{file};
  if (w.semantics != kSemantics) fail(c, ptr, "unknown semantics \"" + w.semantics + "\"");
  if (w.k < 1 || w.k > kMaxK || w.k % 2 == 0)
    fail(c, ptr, fmt::format("k must be odd and in [1, {}], got {}", kMaxK, w.k));
  for (auto [n, v] : {std::pair{"seq", w.seq}, {"batch", w.batch}, {"heads_in", w.heads_in},
                      {"heads_out", w.heads_out}})
    if (v < 1 || v > kMaxDim) fail(c, ptr, fmt::format("{} must be in [1, {}], got {}", n, kMaxDim, v));
  // Every element count and byte count in 64 bits, checked: seq^2 * batch * heads * 4 bytes.
  std::int64_t plane, s, y, wt, bytes;
  const std::int64_t esize = static_cast<std::int64_t>(dtype_size(w.dtype));
  if (!mul_ok(w.seq, w.seq, plane) || !mul_ok(plane, w.batch, s) || !mul_ok(s, w.heads_in, s) ||
      !mul_ok(s, esize, bytes))
    fail(c, ptr, fmt::format("scores [batch {}, heads_in {}, seq {}, seq] overflows 64-bit sizes",
                             w.batch, w.heads_in, w.seq));
  if (!mul_ok(plane, w.batch, y) || !mul_ok(y, w.heads_out, y) || !mul_ok(y, esize, bytes))
    fail(c, ptr, fmt::format("y [batch {}, heads_out {}, seq {}, seq] overflows 64-bit sizes",
                             w.batch, w.heads_out, w.seq));
  if (!mul_ok(w.heads_out, w.heads_in, wt) || !mul_ok(wt, w.k * w.k, wt))
    fail(c, ptr, "weight [heads_out, heads_in, k, k] overflows 64-bit sizes");
}

std::vector<Workload> workloads_from_json(const json& doc, const std::string& file) {
  const Ctx c{file};
  std::vector<Workload> out;
  if (!doc.is_object())
    fail(c, "", fmt::format("a workload file holds an object (a workload or a suite), got {}",
                            type_name(doc)));
  if (doc.contains("suite") || doc.contains("workloads")) {
    for (const auto& [key, v] : doc.items())
      if (!kSuiteKeys.count(key))
        fail(c, "/" + json_pointer_token(key),
             fmt::format("unknown key \"{}\" in a suite (allowed: suite, description, defaults, "
                         "workloads)",
                         key));
    if (!doc.contains("suite") || !doc["suite"].is_string() || doc["suite"].get<std::string>().empty())
      fail(c, "/suite", "a suite needs a non-empty string \"suite\" (its name)");
    if (doc.contains("description") && !doc["description"].is_string())
      fail(c, "/description", "must be a string");
    Workload base;
    base.semantics.clear();  // must come from defaults or each entry
    if (doc.contains("defaults")) {
      const json& d = doc["defaults"];
      if (!d.is_object()) fail(c, "/defaults", fmt::format("must be an object, got {}", type_name(d)));
      for (const auto& [key, v] : d.items()) {
        const std::string kp = "/defaults/" + json_pointer_token(key);
        if (key == "name") fail(c, kp, "defaults cannot set a name");
        if (v.is_array() && is_sweepable(key)) fail(c, kp, "defaults cannot sweep; sweep in an entry");
        apply_field(c, base, key, v, kp);
      }
    }
    if (!doc.contains("workloads")) fail(c, "/workloads", "a suite needs \"workloads\"");
    const json& ws = doc["workloads"];
    if (!ws.is_array()) fail(c, "/workloads", fmt::format("must be an array, got {}", type_name(ws)));
    if (ws.empty()) fail(c, "/workloads", "a suite with no workloads");
    for (std::size_t i = 0; i < ws.size(); ++i) {
      const std::string ip = "/workloads/" + std::to_string(i);
      const std::size_t before = out.size();
      Workload b = base;
      if (b.semantics.empty() && !(ws[i].is_object() && ws[i].contains("semantics")))
        fail(c, ip, "no \"semantics\" (set it in the suite's defaults or in the entry)");
      expand_entry(c, b, ws[i], ip, /*allow_sweep=*/true, out);
      (void)before;
    }
  } else {
    if (!doc.contains("semantics"))
      fail(c, "/semantics", "missing \"semantics\" (\"liger-mta-fwd-v1\")");
    for (const char* req : {"k", "seq", "batch", "heads_in", "heads_out", "dtype"})
      if (!doc.contains(req)) fail(c, std::string("/") + req, std::string("missing \"") + req + "\"");
    expand_entry(c, Workload{}, doc, "", /*allow_sweep=*/false, out);
  }
  // Names identify workloads in tables and records: they must be unique within a file.
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].source = file;
    if (!seen.emplace(out[i].name, i).second)
      fail(c, "/workloads", fmt::format("two workloads are named \"{}\"", out[i].name));
  }
  return out;
}

std::vector<Workload> load_workloads(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(path))
      if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw InputError(path.string(), "", "folder holds no *.json workload files");
    std::vector<Workload> all;
    for (const auto& f : files) {
      auto ws = load_workloads(f);
      all.insert(all.end(), ws.begin(), ws.end());
    }
    return all;
  }
  if (!fs::exists(path, ec)) throw InputError(path.string(), "", "no such file or folder");
  return workloads_from_json(read_json_file_strict(path), path.string());
}

std::vector<Workload> load_workloads(const std::vector<std::string>& paths) {
  std::vector<Workload> all;
  for (const auto& p : paths) {
    auto ws = load_workloads(std::filesystem::path(p));
    all.insert(all.end(), ws.begin(), ws.end());
  }
  return all;
}

}  // namespace mtabench
