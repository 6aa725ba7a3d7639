// `mtabench seal IN.json... --out FILE.jsonl`: validates hand-written records (reported records
// copied from a source, test fixtures) and seals them: schema, schema_version and record_sha256
// are added, the workload identity is computed (or checked), and each sealed record must pass the
// same schema and hash checks every reader applies.
//
// The sha256 guards against corruption and accidental edits (a reader rejects a record whose
// content no longer matches it). It is not a signature: anyone can edit a record and seal it
// again, so trust comes from the trust block and its cited source, not from the hash.
#include "harness/cli/commands.h"
#include "harness/device.h"
#include "harness/json_strict.h"
#include "harness/record.h"
#include "harness/runner.h"
#include "harness/storage.h"
#include "harness/workload.h"

#include <fmt/core.h>

namespace mtabench::cli {

namespace {

struct SealArgs {
  std::vector<std::string> inputs;
  std::string out;
  bool datasheet_floor = false, reseal = false;
};

Workload workload_of(const nlohmann::json& record, const std::string& where) {
  if (!record.contains("workload") || !record["workload"].is_object())
    throw InputError(where, "/workload", "a record needs a workload object");
  nlohmann::json w = record["workload"];
  w.erase("identity");
  w.erase("source");
  return workloads_from_json(w, where).at(0);
}

// The identity is computed from the workload's fields; a stated one must agree.
void settle_identity(nlohmann::json& record, const Workload& w, const std::string& where) {
  nlohmann::json& wl = record["workload"];
  if (wl.contains("identity") && wl["identity"] != w.identity())
    throw InputError(where, "/workload/identity",
                     "does not match the workload's fields (sha256 of " + w.identity_json().dump() + " is " +
                         w.identity() + ")");
  wl["identity"] = w.identity();
}

// headroom-v1/-v2 from the datasheet table for the record's GPU: how reported records get their
// floor (no ceilings were measured, so time_over_floor stays null and impossible false).
void fill_datasheet_floor(nlohmann::json& record, const Workload& w) {
  if (!record["floor"].is_null()) return;
  const auto& dev = record["provenance"].value("device", nlohmann::json());
  if (!dev.is_object() || !dev.contains("name")) return;
  DeviceInfo d;
  d.name = dev["name"].get<std::string>();
  std::optional<double> median;
  if (record["timing"].is_object()) median = record["timing"]["device"]["median_s"].get<double>();
  record["floor"] = floor_block(w, record["implementation"].value("tf32", false), d, std::nullopt, median);
  if (record["floor"]["datasheet_id"].is_null()) record["floor"] = nullptr;  // not in the table
}

int execute(const SealArgs& a) {
  std::vector<std::string> lines, errors;
  for (const auto& file : a.inputs) {
    try {
      const nlohmann::json doc = read_json_file_strict(file);
      const nlohmann::json items = doc.is_array() ? doc : nlohmann::json::array({doc});
      for (std::size_t i = 0; i < items.size(); ++i) {
        const std::string where = doc.is_array() ? fmt::format("{}[{}]", file, i) : file;
        nlohmann::json r = items[i];
        if (r.contains("record_sha256") && !a.reseal) {
          const std::string bad = check_record_hash(r);
          if (!bad.empty())
            throw InputError(where, "/record_sha256", bad + " (--reseal seals the edited content)");
        }
        const Workload w = workload_of(r, where);
        settle_identity(r, w, where);
        if (a.datasheet_floor && r.contains("floor")) fill_datasheet_floor(r, w);
        r = seal_record(std::move(r));
        const auto errs = validate_record(r);
        for (const auto& e : errs) errors.push_back(where + ": " + e);
        if (errs.empty()) lines.push_back(r.dump());
      }
    } catch (const InputError& e) {
      errors.push_back(e.what());
    }
  }
  for (const auto& e : errors) fmt::print(stderr, "mtabench seal: {}\n", e);
  if (!errors.empty()) {
    fmt::print(stderr, "mtabench seal: {} problem(s); nothing written\n", errors.size());
    return 2;
  }
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  atomic_write_file(a.out, text);
  fmt::print("sealed {} record(s) into {}\n", lines.size(), a.out);
  return 0;
}

}  // namespace

void add_seal(CLI::App& app, AppContext& ctx) {
  auto a = std::make_shared<SealArgs>();
  auto* sub = app.add_subcommand("seal", "Validate hand-written records and seal them with their sha256");
  sub->footer(
      "For reported records and test fixtures: computes (or checks) the workload identity, adds schema, "
      "schema_version and record_sha256, and validates each record as every reader does; writes one JSONL "
      "file, all or nothing. The sha256 detects corruption and edits; it is not a signature: trust rests on "
      "the record's cited source.");
  sub->add_option("inputs", a->inputs, "Record files (.json): one record or an array of records")->required();
  sub->add_option("--out", a->out, "The sealed JSONL file (written atomically; replaced)")->required();
  sub->add_flag("--datasheet-floor", a->datasheet_floor,
                "Fill a null floor with headroom-v1/-v2 from the datasheet table for provenance.device.name");
  sub->add_flag("--reseal", a->reseal,
                "Seal records whose existing record_sha256 no longer matches (after an edit)");
  sub->callback([&ctx, a] { ctx.rc = execute(*a); });
}

}  // namespace mtabench::cli
