// Workload descriptors (issue 2): every shipped file loads, every malformed file in
// tests/data/malformed/ is rejected with the file, JSON pointer and reason it deserves, and the
// identity hash matches golden values computed independently (Python's hashlib).
#include "harness/json_strict.h"
#include "harness/workload.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace mtabench {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = MTABENCH_SOURCE_DIR;
const fs::path kData = MTABENCH_TEST_DATA;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::vector<std::string> names_of(const std::vector<Workload>& ws) {
  std::vector<std::string> n;
  for (const auto& w : ws) n.push_back(w.name);
  return n;
}

// ---------------------------------------------------------------------------------------------
// Shipped workloads

TEST(WorkloadFiles, SeedIsTheLeaderboardWorkload) {
  const auto ws = load_workloads(kSource / "workloads/seed.json");
  ASSERT_EQ(ws.size(), 1u);
  const Workload& w = ws[0];
  EXPECT_EQ(w.name, "seed");
  EXPECT_EQ(w.semantics, "liger-mta-fwd-v1");
  EXPECT_EQ(w.k, 3);
  EXPECT_EQ(w.seq, 32);
  EXPECT_EQ(w.batch, 2);
  EXPECT_EQ(w.heads_in, 4);
  EXPECT_EQ(w.heads_out, 4);
  EXPECT_EQ(w.dtype, DType::bf16);
  EXPECT_EQ(w.identity(), "e305de269d67eefc0d58892244d35b35e55910f6b64bac03256e43d2c4b25d3e");
  EXPECT_TRUE(ends_with(w.source, "seed.json"));
}

TEST(WorkloadFiles, SeqSweepExpandsToElevenWorkloads) {
  const auto ws = load_workloads(kSource / "workloads/seq-sweep.json");
  ASSERT_EQ(ws.size(), 11u);
  const std::vector<std::int64_t> want_seq = {32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 1000, 3000};
  std::set<std::string> names, identities;
  for (std::size_t i = 0; i < ws.size(); ++i) {
    SCOPED_TRACE(ws[i].name);
    EXPECT_EQ(ws[i].seq, want_seq[i]);
    EXPECT_EQ(ws[i].name, "sweep-seq" + std::to_string(want_seq[i]));
    EXPECT_EQ(ws[i].k, 3);
    EXPECT_EQ(ws[i].batch, 2);
    EXPECT_EQ(ws[i].heads_in, 4);
    EXPECT_EQ(ws[i].heads_out, 4);
    EXPECT_EQ(ws[i].dtype, DType::bf16);
    EXPECT_EQ(ws[i].semantics, kSemantics);
    names.insert(ws[i].name);
    identities.insert(ws[i].identity());
  }
  EXPECT_EQ(names.size(), 11u);
  EXPECT_EQ(identities.size(), 11u);
  // The entry's own tags replace the defaults' tags.
  EXPECT_EQ(ws[0].tags, std::vector<std::string>{"seq-sweep"});
  EXPECT_EQ(ws[9].tags, (std::vector<std::string>{"seq-sweep", "non-power-of-two"}));
  // The seq-32 point of the sweep is the seed workload: same identity, other name.
  EXPECT_EQ(ws[0].identity(), "e305de269d67eefc0d58892244d35b35e55910f6b64bac03256e43d2c4b25d3e");
}

TEST(WorkloadFiles, ShapesHasTheIssueShapes) {
  const auto ws = load_workloads(kSource / "workloads/shapes.json");
  ASSERT_EQ(ws.size(), 6u);
  EXPECT_EQ(names_of(ws), (std::vector<std::string>{"k5-h16-b4-seq2048", "k7-h32-b1-seq4096", "fp32-seq4096",
                                                    "fp16-seq4096", "fp32-seq1024", "k5-h8x12-b3-seq777-fp16"}));
  EXPECT_EQ(ws[0].shape_string(), "k5 seq2048 b4 h16/16 bf16");
  EXPECT_EQ(ws[1].shape_string(), "k7 seq4096 b1 h32/32 bf16");
  EXPECT_EQ(ws[2].dtype, DType::fp32);
  EXPECT_EQ(ws[3].dtype, DType::fp16);
  EXPECT_EQ(ws[5].heads_in, 8);
  EXPECT_EQ(ws[5].heads_out, 12);
}

TEST(WorkloadFiles, SmokeIsSmall) {
  const auto ws = load_workloads(kSource / "workloads/smoke.json");
  ASSERT_EQ(ws.size(), 5u);
  EXPECT_EQ(names_of(ws), (std::vector<std::string>{"smoke-seed", "smoke-seq1", "smoke-k1", "smoke-k5-fp32",
                                                    "smoke-seq100"}));
  for (const auto& w : ws) {
    // "Small cases a CPU finishes in seconds": keep every one under 1e7 multiply-adds.
    const double macs = static_cast<double>(w.batch) * w.heads_out * w.heads_in * w.k * w.k *
                        (static_cast<double>(w.seq) * (w.seq + 1) / 2);
    EXPECT_LT(macs, 1e7) << w.name;
  }
}

TEST(WorkloadFiles, FolderLoadsEveryFileSorted) {
  const auto ws = load_workloads(kSource / "workloads");
  // The folder is every *.json in name order: seed.json, seq-sweep.json, shapes.json, smoke.json
  // (and whatever is added later), each expanded as on its own.
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kSource / "workloads"))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<std::string> want;
  for (const auto& f : files)
    for (const auto& w : load_workloads(f)) want.push_back(w.name + "@" + f.filename().string());
  std::vector<std::string> got;
  for (const auto& w : ws) got.push_back(w.name + "@" + fs::path(w.source).filename().string());
  EXPECT_EQ(got, want);
  EXPECT_GE(ws.size(), 1u + 11u + 6u + 5u);
  for (const char* f : {"seed.json", "seq-sweep.json", "shapes.json", "smoke.json"})
    EXPECT_NE(std::find(files.begin(), files.end(), kSource / "workloads" / f), files.end()) << f;
  // Every shipped workload is valid on its own.
  for (const auto& w : ws) EXPECT_NO_THROW(validate_workload(w, w.source, ""));
}

TEST(WorkloadFiles, ListOfPathsConcatenates) {
  const auto ws = load_workloads(std::vector<std::string>{(kSource / "workloads/smoke.json").string(),
                                                          (kSource / "workloads/seed.json").string()});
  ASSERT_EQ(ws.size(), 6u);
  EXPECT_EQ(ws.front().name, "smoke-seed");
  EXPECT_EQ(ws.back().name, "seed");
}

TEST(WorkloadFiles, MissingFileIsAnInputError) {
  const fs::path missing = kData / "no-such-workload.json";
  try {
    load_workloads(missing);
    FAIL() << "loading a missing file did not throw";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), missing.string());
    EXPECT_EQ(e.pointer(), "");
    EXPECT_NE(e.reason().find("no such file"), std::string::npos) << e.reason();
  }
}

TEST(WorkloadFiles, FolderWithoutJsonIsAnInputError) {
  const fs::path dir = fs::temp_directory_path() / ("mtabench-test-empty-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  try {
    load_workloads(dir);
    ADD_FAILURE() << "an empty folder did not throw";
  } catch (const InputError& e) {
    EXPECT_NE(e.reason().find("no *.json"), std::string::npos) << e.reason();
  }
  fs::remove_all(dir);
}

TEST(WorkloadFiles, FolderOfMalformedFilesFailsOnTheFirstInNameOrder) {
  // The loader reads a folder's files sorted; the first malformed one stops it.
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kData / "malformed"))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  try {
    load_workloads(kData / "malformed");
    FAIL() << "a folder of malformed files loaded";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), files.front().string());
  }
}

// ---------------------------------------------------------------------------------------------
// Malformed files: one row per file, {file, pointer, reason substring}.

struct Bad {
  const char* file;
  const char* pointer;
  const char* reason;
};

const Bad kMalformed[] = {
    // unknown keys
    {"unknown_key_top.json", "/stride", "unknown key \"stride\""},
    {"unknown_key_defaults.json", "/defaults/padding", "unknown key \"padding\""},
    {"unknown_key_entry.json", "/workloads/1/dilation", "unknown key \"dilation\""},
    {"unknown_key_suite.json", "/owner", "unknown key \"owner\" in a suite"},
    // duplicate keys: nlohmann would keep the last silently
    {"duplicate_key_top.json", "/k", "duplicate key \"k\""},
    {"duplicate_key_entry.json", "/workloads/1/seq", "duplicate key \"seq\""},
    {"duplicate_key_defaults.json", "/defaults/dtype", "duplicate key \"dtype\""},
    // wrong types
    {"k_string.json", "/k", "must be an integer, got string"},
    {"k_bool.json", "/k", "must be an integer, got boolean"},
    {"seq_float.json", "/seq", "must be an integer literal, got the float 32.0"},
    {"seq_fraction.json", "/seq", "must be an integer, got 32.5"},
    {"dtype_array_single.json", "/dtype", "a sweep (array) is allowed only in a suite's workloads"},
    {"tags_not_strings.json", "/tags/1", "tags must be strings"},
    {"entry_not_object.json", "/workloads/0", "a workload must be an object, got string"},
    // out of range
    {"k_even.json", "/k", "k must be odd"},
    {"k_zero.json", "/k", "must be at least 1, got 0"},
    {"k_33.json", "/k", "must be at most 31, got 33"},
    {"seq_zero.json", "/seq", "must be at least 1, got 0"},
    {"batch_negative.json", "/batch", "must be at least 1, got -1"},
    {"heads_in_zero.json", "/heads_in", "must be at least 1, got 0"},
    {"heads_out_over_int32.json", "/heads_out", "must be at most 2147483647"},
    {"batch_uint64_max.json", "/batch", "must be at most 2147483647, got 18446744073709551615"},
    {"scale_negative.json", "/scale", "must be a finite number in (0, 1e4]"},
    {"seed_negative.json", "/seed", "must be a non-negative integer"},
    {"name_empty.json", "/name", "must be a non-empty string"},
    // vocabulary
    {"dtype_unknown.json", "/dtype", "unknown dtype \"fp8\""},
    {"semantics_unknown.json", "/semantics", "unknown semantics \"liger-mta-fwd-v2\""},
    // missing fields
    {"semantics_missing.json", "/semantics", "missing \"semantics\""},
    {"semantics_missing_suite.json", "/workloads/0", "no \"semantics\""},
    {"field_missing.json", "/heads_out", "missing \"heads_out\""},
    // sizes whose element or byte counts overflow int64
    {"overflow_scores.json", "", "scores [batch 2, heads_in 4, seq 2147483647, seq] overflows 64-bit sizes"},
    {"overflow_y_in_suite.json", "/workloads/1", "y [batch 1, heads_out 3, seq 2147483647, seq] overflows"},
    {"overflow_fp32_bytes.json", "", "overflows 64-bit sizes"},
    // suites
    {"suite_no_workloads.json", "/workloads", "a suite with no workloads"},
    {"suite_workloads_not_array.json", "/workloads", "must be an array, got object"},
    {"suite_without_name.json", "/suite", "a suite needs a non-empty string \"suite\""},
    {"sweep_empty.json", "/workloads/0/seq", "a sweep needs at least one value"},
    {"sweep_nested_array.json", "/workloads/0/seq/1", "sweep values must not be arrays"},
    {"sweep_bad_value.json", "/workloads/0/dtype/1", "unknown dtype \"fp8\""},
    {"sweep_even_k.json", "/workloads/0/k/2", "k must be odd"},
    {"sweep_in_defaults.json", "/defaults/seq", "defaults cannot sweep"},
    {"name_in_defaults.json", "/defaults/name", "defaults cannot set a name"},
    {"duplicate_names.json", "/workloads", "two workloads are named \"a\""},
    {"duplicate_names_sweep.json", "/workloads", "two workloads are named \"a-seq32\""},
    {"duplicate_names_unnamed.json", "/workloads", "two workloads are named \"k3-seq32-b2-h4x4-bf16\""},
    // not a workload document at all
    {"not_json.json", "", "not valid JSON"},
    {"truncated.json", "", "not valid JSON"},
    {"trailing_comma.json", "", "not valid JSON"},
    {"empty.json", "", "not valid JSON"},
    {"top_level_array.json", "", "a workload file holds an object (a workload or a suite), got array"},
};

class Malformed : public ::testing::TestWithParam<Bad> {};

TEST_P(Malformed, IsRejectedWithFilePointerAndReason) {
  const Bad& b = GetParam();
  const fs::path path = kData / "malformed" / b.file;
  ASSERT_TRUE(fs::exists(path)) << path;
  try {
    const auto ws = load_workloads(path);
    FAIL() << b.file << " loaded " << ws.size() << " workload(s) instead of failing";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path.string());
    EXPECT_EQ(e.pointer(), b.pointer) << e.what();
    EXPECT_NE(e.reason().find(b.reason), std::string::npos)
        << "reason \"" << e.reason() << "\" lacks \"" << b.reason << "\"";
    // The printed message names all three: "file: pointer: reason".
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(path.string() + ": " + (b.pointer[0] ? b.pointer : "/") + ": ", 0), 0u) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Files, Malformed, ::testing::ValuesIn(kMalformed),
                         [](const ::testing::TestParamInfo<Bad>& i) {
                           std::string n = i.param.file;
                           n = n.substr(0, n.find('.'));
                           return n;
                         });

TEST(MalformedFolder, EveryFileHasARowAndThereAreAtLeastTwenty) {
  std::set<std::string> listed;
  for (const Bad& b : kMalformed) listed.insert(b.file);
  std::set<std::string> present;
  for (const auto& e : fs::directory_iterator(kData / "malformed")) present.insert(e.path().filename().string());
  EXPECT_GE(present.size(), 20u);
  EXPECT_EQ(listed, present) << "every file in tests/data/malformed/ needs its expected error in kMalformed";
}

// ---------------------------------------------------------------------------------------------
// In-memory documents

std::vector<Workload> from_text(const std::string& text) {
  return workloads_from_json(parse_json_strict(text, "<test>"), "<test>");
}

TEST(WorkloadSweep, CartesianProductInFieldOrder) {
  const auto ws = from_text(R"({"suite": "s", "defaults": {"semantics": "liger-mta-fwd-v1", "batch": 1,
      "heads_in": 2, "heads_out": 2}, "workloads": [{"name": "x", "dtype": ["bf16", "fp32"], "seq": [8, 16],
      "k": [1, 3]}]})");
  ASSERT_EQ(ws.size(), 8u);
  // k outermost, then seq, then dtype (kSweepable order), whatever the order in the file.
  EXPECT_EQ(ws[0].name, "x-k1-seq8-dtypebf16");
  EXPECT_EQ(ws[1].name, "x-k1-seq8-dtypefp32");
  EXPECT_EQ(ws[2].name, "x-k1-seq16-dtypebf16");
  EXPECT_EQ(ws[7].name, "x-k3-seq16-dtypefp32");
  EXPECT_EQ(ws[7].k, 3);
  EXPECT_EQ(ws[7].seq, 16);
  EXPECT_EQ(ws[7].dtype, DType::fp32);
  for (const auto& w : ws) EXPECT_EQ(w.source, "<test>");
}

TEST(WorkloadSweep, UnnamedEntriesGetShapeNames) {
  const auto ws = from_text(R"({"suite": "s", "defaults": {"semantics": "liger-mta-fwd-v1", "k": 5, "batch": 3,
      "heads_in": 8, "heads_out": 12, "dtype": "fp16"}, "workloads": [{"seq": [7, 9]}]})");
  ASSERT_EQ(ws.size(), 2u);
  EXPECT_EQ(ws[0].name, "k5-seq7-b3-h8x12-fp16");
  EXPECT_EQ(ws[1].name, "k5-seq9-b3-h8x12-fp16");
}

TEST(WorkloadSweep, EntryOverridesDefaults) {
  const auto ws = from_text(R"({"suite": "s", "defaults": {"semantics": "liger-mta-fwd-v1", "k": 5, "seq": 64,
      "batch": 3, "heads_in": 8, "heads_out": 8, "dtype": "fp16", "scale": 2.0, "seed": 9},
      "workloads": [{"name": "a", "k": 3, "dtype": "fp32"}]})");
  ASSERT_EQ(ws.size(), 1u);
  EXPECT_EQ(ws[0].k, 3);
  EXPECT_EQ(ws[0].dtype, DType::fp32);
  EXPECT_EQ(ws[0].seq, 64);
  EXPECT_EQ(ws[0].scale, 2.0);
  ASSERT_TRUE(ws[0].seed.has_value());
  EXPECT_EQ(*ws[0].seed, 9u);
}

TEST(WorkloadJson, RoundTripsThroughToJson) {
  const auto ws = load_workloads(kSource / "workloads/shapes.json");
  for (const auto& w : ws) {
    const auto again = from_text(w.to_json().dump());
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0].identity(), w.identity());
    EXPECT_EQ(again[0].name, w.name);
    EXPECT_EQ(again[0].tags, w.tags);
  }
}

// ---------------------------------------------------------------------------------------------
// Identity hash (SPEC §1): sha256 of {semantics, k, seq, batch, heads_in, heads_out, dtype} as
// canonical JSON. The goldens were computed outside mtabench:
//   python3 -c 'import hashlib, json; d = {...}; print(hashlib.sha256(json.dumps(d, sort_keys=True,
//               separators=(",", ":")).encode()).hexdigest())'

Workload shape(int k, std::int64_t seq, std::int64_t b, std::int64_t hin, std::int64_t hout, DType t) {
  Workload w;
  w.k = k;
  w.seq = seq;
  w.batch = b;
  w.heads_in = hin;
  w.heads_out = hout;
  w.dtype = t;
  return w;
}

TEST(Identity, GoldenValues) {
  const Workload seed = shape(3, 32, 2, 4, 4, DType::bf16);
  EXPECT_EQ(seed.identity_json().dump(),
            R"({"batch":2,"dtype":"bf16","heads_in":4,"heads_out":4,"k":3,"semantics":"liger-mta-fwd-v1","seq":32})");
  EXPECT_EQ(seed.identity(), "e305de269d67eefc0d58892244d35b35e55910f6b64bac03256e43d2c4b25d3e");
  // {"batch":1,"dtype":"bf16","heads_in":32,"heads_out":32,"k":7,"semantics":"liger-mta-fwd-v1","seq":4096}
  EXPECT_EQ(shape(7, 4096, 1, 32, 32, DType::bf16).identity(),
            "0944443e3201d9e06e35bfbdc74b70a3dd352deec7a71509c54eba35bad93450");
  // {"batch":3,"dtype":"fp16","heads_in":8,"heads_out":12,"k":5,"semantics":"liger-mta-fwd-v1","seq":777}
  EXPECT_EQ(shape(5, 777, 3, 8, 12, DType::fp16).identity(),
            "bf3d6fb9a7c7164b6b871c0ecd1e9dac1194b67cd821b09edf7cb0c9fbe0b01d");
  // {"batch":2,"dtype":"fp32","heads_in":4,"heads_out":4,"k":3,"semantics":"liger-mta-fwd-v1","seq":4096}
  EXPECT_EQ(shape(3, 4096, 2, 4, 4, DType::fp32).identity(),
            "94b0b2188de8180ac7e620b07277b7f1208c66c65ce644254067ecd328222ed4");
}

TEST(Identity, ShippedFilesCarryTheGoldenIdentities) {
  const auto shapes = load_workloads(kSource / "workloads/shapes.json");
  EXPECT_EQ(shapes[1].identity(), "0944443e3201d9e06e35bfbdc74b70a3dd352deec7a71509c54eba35bad93450");
  EXPECT_EQ(shapes[2].identity(), "94b0b2188de8180ac7e620b07277b7f1208c66c65ce644254067ecd328222ed4");
  EXPECT_EQ(shapes[5].identity(), "bf3d6fb9a7c7164b6b871c0ecd1e9dac1194b67cd821b09edf7cb0c9fbe0b01d");
}

TEST(Identity, NameSeedScaleTagsDescriptionSourceDoNotCount) {
  const Workload base = shape(3, 32, 2, 4, 4, DType::bf16);
  Workload w = base;
  w.name = "something else";
  w.seed = 12345;
  w.scale = 0.5;
  w.tags = {"a", "b"};
  w.description = "described";
  w.source = "elsewhere.json";
  EXPECT_EQ(w.identity(), base.identity());
}

TEST(Identity, EveryIdentityFieldCounts) {
  const Workload base = shape(3, 32, 2, 4, 4, DType::bf16);
  std::set<std::string> ids{base.identity()};
  Workload w = base;
  w.k = 5;
  ids.insert(w.identity());
  w = base;
  w.seq = 33;
  ids.insert(w.identity());
  w = base;
  w.batch = 3;
  ids.insert(w.identity());
  w = base;
  w.heads_in = 5;
  ids.insert(w.identity());
  w = base;
  w.heads_out = 5;
  ids.insert(w.identity());
  w = base;
  w.dtype = DType::fp16;
  ids.insert(w.identity());
  w = base;
  w.semantics = "liger-mta-fwd-v2";
  ids.insert(w.identity());
  EXPECT_EQ(ids.size(), 8u);
}

TEST(Identity, SameFromFileWhateverTheKeyOrderAndSpacing) {
  const auto a = from_text(R"({"semantics":"liger-mta-fwd-v1","k":3,"seq":32,"batch":2,"heads_in":4,"heads_out":4,"dtype":"bf16"})");
  const auto b = from_text(R"({ "dtype" : "bf16", "heads_out": 4, "heads_in": 4,
      "batch": 2, "seq": 32, "k": 3, "semantics": "liger-mta-fwd-v1", "name": "x", "seed": 7 })");
  EXPECT_EQ(a.at(0).identity(), b.at(0).identity());
  EXPECT_EQ(a.at(0).identity(), "e305de269d67eefc0d58892244d35b35e55910f6b64bac03256e43d2c4b25d3e");
}

// ---------------------------------------------------------------------------------------------
// The strict parser itself

TEST(StrictJson, DuplicateKeyDeepInsideArraysIsNamed) {
  try {
    parse_json_strict(R"({"a": [1, {"b": [{}, {"c": 1, "c": 2}]}]})", "f.json");
    FAIL() << "duplicate key accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/a/1/b/1/c");
    EXPECT_EQ(e.file(), "f.json");
  }
}

TEST(StrictJson, SameKeyInSiblingObjectsIsFine) {
  const auto j = parse_json_strict(R"({"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 3}, {"k": 4}]})", "f.json");
  EXPECT_EQ(j["c"][1]["k"], 4);
}

TEST(StrictJson, PointerTokensAreEscaped) {
  EXPECT_EQ(json_pointer_token("a/b~c"), "a~1b~0c");
  try {
    parse_json_strict(R"({"x/y": {"~": 1, "~": 2}})", "f.json");
    FAIL() << "duplicate key accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/x~1y/~0");
  }
}

}  // namespace
}  // namespace mtabench
