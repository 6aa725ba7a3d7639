// Records and storage (issue 5, SPEC §6, harness/record.h, harness/storage.h): sealing and the
// hash check (golden value computed with Python), tamper and truncation detection in JSONL
// history, atomic whole-file writes, durable line appends, and the record schema's checks.
// The records used are real ones: the CPU implementation run through run_case (no GPU needed).
#include "harness/record.h"
#include "harness/runner.h"
#include "harness/storage.h"
#include "impls/impl.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace mtabench {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// A fresh folder per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            (std::string("mtabench-test-") + info->test_suite_name() + "-" + info->name() + "-" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
void spit(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << s;
}
std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> v;
  for (const auto& e : fs::directory_iterator(dir)) v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}

Workload small(const std::string& name, std::int64_t seq, DType t) {
  Workload w;
  w.name = name;
  w.k = 3;
  w.seq = seq;
  w.batch = 1;
  w.heads_in = 2;
  w.heads_out = 2;
  w.dtype = t;
  w.source = "record_storage_test";
  return w;
}

// A real record: reference-cpu through the whole case (gate, then a short timing run).
json real_record(const Workload& w, bool timed = true) {
  const RegistryEntry* e = find_impl(builtin_registry(), "reference-cpu");
  EXPECT_NE(e, nullptr);
  RunOptions opt;
  opt.verify_only = !timed;
  opt.timing.stop.max_time_s = 0.2;
  opt.timing.stop.min_time_s = 0.01;
  opt.timing.min_warmup_s = 0.0;
  opt.run_id = "unit-test-run";
  opt.command_line = "mtabench_unit_tests";
  CaseContext ctx;  // no device: host implementations only
  const CaseResult cr = run_case(w, *e, opt, ctx);
  EXPECT_FALSE(cr.context_lost);
  return cr.record;
}

// ---------------------------------------------------------------------------------------------
// Sealing

TEST(Record, SealGoldenHash) {
  // python3: r = {"x": 1, "y": "é", "z": [1.5, 1e-05, None, True], "schema": "mtabench-record",
  //   "schema_version": 1}; hashlib.sha256(json.dumps(r, sort_keys=True, separators=(",", ":"),
  //   ensure_ascii=False).encode()).hexdigest()
  const json sealed = seal_record(json{{"x", 1}, {"y", "\xc3\xa9"}, {"z", {1.5, 1e-05, nullptr, true}}});
  EXPECT_EQ(sealed["schema"], kRecordSchema);
  EXPECT_EQ(sealed["schema_version"], kRecordSchemaVersion);
  EXPECT_EQ(canonical_json(json{{"b", 1}, {"a", {{"d", 2}, {"c", 3}}}}), R"({"a":{"c":3,"d":2},"b":1})");
  EXPECT_EQ(sealed["record_sha256"], "193d41ed6d0dc70b1146eabca2ddb94da2d90814b723857affd87d8eae7999c6");
  EXPECT_EQ(check_record_hash(sealed), "");
}

TEST(Record, SealCheckRoundTripAndResealIsStable) {
  const json r = seal_record(json{{"run_id", "r"}, {"value", 3.25}});
  EXPECT_EQ(check_record_hash(r), "");
  EXPECT_EQ(seal_record(r), r);  // sealing a sealed record changes nothing
  // Through text and back (what history files do).
  EXPECT_EQ(check_record_hash(json::parse(r.dump())), "");
  EXPECT_EQ(check_record_hash(json::parse(r.dump(2))), "");  // whitespace is not content
}

TEST(Record, AnyChangeBreaksTheHash) {
  const json r = seal_record(json{{"run_id", "r"}, {"value", 3.25}, {"nested", {{"a", "b"}}}});
  json t = r;
  t["value"] = 3.5;
  EXPECT_NE(check_record_hash(t).find("altered"), std::string::npos);
  t = r;
  t["nested"]["a"] = "c";
  EXPECT_NE(check_record_hash(t), "");
  t = r;
  t["extra"] = 1;
  EXPECT_NE(check_record_hash(t), "");
  t = r;
  t.erase("record_sha256");
  EXPECT_EQ(check_record_hash(t), "no record_sha256");
  EXPECT_EQ(check_record_hash(json::array()), "not a JSON object");
}

// Regression (was a bug): canonical_json formats doubles with nlohmann's Grisu2, which is
// not the shortest correctly rounded form in every case and switches to exponent notation at
// 1e15 (Python: 1e16). Python's json.dumps (repr) writes other digits for the same double, so a
// record's sha256 cannot be recomputed by an independent reader (e.g. the Python peers runner or
// tests/e2e), and a C++ reader rejects a record a Python writer sealed. Seen on the H200: an fp32
// record's correctness max_abs = 2^-25 = 2.98023223876953125e-08 (a tie in the 17th digit) is
// written 2.9802322387695313e-08; Python writes ...312e-08. About 0.3% of random doubles differ,
// plus every value in [1e15, 1e16) (B200's 2.25e15 FLOP/s in the floor terms).
TEST(Record, CanonicalNumbersMatchPythonJsonDumps) {
  EXPECT_EQ(canonical_json(json(std::ldexp(1.0, -25))), "2.9802322387695312e-08");
  EXPECT_EQ(canonical_json(json(2.25e15)), "2250000000000000.0");
  EXPECT_EQ(canonical_json(json(4.1752050594835004e+78)), "4.1752050594835e+78");
  // python3: r = {"max_abs": 2**-25, "rate_per_s": 2.25e15, "schema": "mtabench-record",
  //   "schema_version": 1}; sha256(json.dumps(r, sort_keys=True, separators=(",", ":"),
  //   ensure_ascii=False).encode()).hexdigest()
  const json sealed = seal_record(json{{"max_abs", std::ldexp(1.0, -25)}, {"rate_per_s", 2.25e15}});
  EXPECT_EQ(sealed["record_sha256"], "0cbb99fcba6718bdaa6e0bb29c079d9c74a94049ff6f67ae4564b31234b7504f");
  // Values whose formatting agrees already (kept as a regression guard for a fix).
  EXPECT_EQ(canonical_json(json(1e-05)), "1e-05");
  EXPECT_EQ(canonical_json(json(1e16)), "1e+16");
  EXPECT_EQ(canonical_json(json(100.0)), "100.0");
  EXPECT_EQ(canonical_json(json(0.1)), "0.1");
}

TEST(Record, RealRecordIsSealedAndValid) {
  const json r = real_record(small("rec-seq8", 8, DType::bf16));
  EXPECT_EQ(r["outcome"], kPassed) << r["reason"];
  EXPECT_EQ(check_record_hash(r), "");
  const auto errs = validate_record(r);
  EXPECT_TRUE(errs.empty()) << errs.front();
  EXPECT_EQ(r["workload"]["identity"], small("x", 8, DType::bf16).identity());
  EXPECT_EQ(r["trust"]["level"], "measured");
  EXPECT_EQ(r["timing"]["mode"], "host-wall");
  EXPECT_GE(r["timing"]["device"]["n"].get<std::int64_t>(), 10);
}

// ---------------------------------------------------------------------------------------------
// The schema's checks (validate_record), each on a resealed record so only the schema speaks.

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += e + "\n";
  return s;
}

TEST(ValidateRecord, WrongSchemaVersion) {
  json r = real_record(small("v", 4, DType::fp32), false);
  ASSERT_TRUE(validate_record(r).empty());
  r["schema_version"] = 2;
  r["record_sha256"] = record_hash(r);  // a consistent hash: the version alone is wrong
  const auto errs = validate_record(r);
  ASSERT_FALSE(errs.empty());
  EXPECT_NE(joined(errs).find("/schema_version"), std::string::npos) << joined(errs);
  EXPECT_EQ(joined(errs).find("/record_sha256"), std::string::npos) << joined(errs);
}

TEST(ValidateRecord, WrongSchemaName) {
  json r = real_record(small("v", 4, DType::fp32), false);
  r["schema"] = "something-else";
  r["record_sha256"] = record_hash(r);
  EXPECT_NE(joined(validate_record(r)).find("/schema"), std::string::npos);
}

TEST(ValidateRecord, MissingRequiredField) {
  json r = real_record(small("v", 4, DType::fp32), false);
  r.erase("trust");
  r = seal_record(r);
  const std::string e = joined(validate_record(r));
  EXPECT_NE(e.find("missing required \"trust\""), std::string::npos) << e;
}

TEST(ValidateRecord, MissingNestedField) {
  json r = real_record(small("v", 4, DType::fp32), false);
  r["workload"].erase("identity");
  r = seal_record(r);
  const std::string e = joined(validate_record(r));
  EXPECT_NE(e.find("/workload: missing required \"identity\""), std::string::npos) << e;
}

TEST(ValidateRecord, UnknownTopLevelKey) {
  json r = real_record(small("v", 4, DType::fp32), false);
  r["surprise"] = true;
  r = seal_record(r);
  const std::string e = joined(validate_record(r));
  EXPECT_NE(e.find("unknown key \"surprise\""), std::string::npos) << e;
}

TEST(ValidateRecord, WrongOutcomeAndBadIdentity) {
  json r = real_record(small("v", 4, DType::fp32), false);
  r["outcome"] = "fast";
  r["workload"]["identity"] = "not-a-hash";
  r = seal_record(r);
  const std::string e = joined(validate_record(r));
  EXPECT_NE(e.find("/outcome"), std::string::npos) << e;
  EXPECT_NE(e.find("/workload/identity"), std::string::npos) << e;
}

TEST(ValidateRecord, TamperedRecordNamesTheHash) {
  json r = real_record(small("v", 4, DType::fp32), false);
  r["reason"] = "edited by hand";
  const std::string e = joined(validate_record(r));
  EXPECT_NE(e.find("/record_sha256"), std::string::npos) << e;
}

// ---------------------------------------------------------------------------------------------
// Atomic whole-file writes and durable appends

TEST(Storage, AtomicWriteCreatesReplacesAndLeavesNoTemporaries) {
  TempDir d;
  const fs::path p = d.path() / "sub" / "dir" / "file.json";  // parents are created
  atomic_write_file(p, "first\n");
  EXPECT_EQ(slurp(p), "first\n");
  atomic_write_file(p, "second, longer content\n");
  EXPECT_EQ(slurp(p), "second, longer content\n");
  atomic_write_file(p, "");
  EXPECT_EQ(slurp(p), "");
  EXPECT_EQ(entries(p.parent_path()), std::vector<std::string>{"file.json"});
}

TEST(Storage, AtomicWriteNeverShowsAPartialFile) {
  TempDir d;
  const fs::path p = d.path() / "big.txt";
  const std::string a(1 << 20, 'a'), b(1 << 21, 'b');
  atomic_write_file(p, a);
  // Replace many times; the content read in between is always one whole version.
  for (int i = 0; i < 5; ++i) {
    atomic_write_file(p, i % 2 ? a : b);
    const std::string now = slurp(p);
    EXPECT_TRUE(now == a || now == b);
  }
  EXPECT_EQ(entries(d.path()), std::vector<std::string>{"big.txt"});
}

TEST(Storage, AtomicWriteIntoAMissingUnwritableFolderThrows) {
  EXPECT_THROW(atomic_write_file("/proc/mtabench-no/such/file", "x"), std::exception);
}

TEST(Storage, AppendLineDurableAppendsWholeLines) {
  TempDir d;
  const fs::path p = d.path() / "h" / "history.jsonl";
  append_line_durable(p, "{\"a\":1}");
  append_line_durable(p, "{\"b\":2}");
  append_line_durable(p, "");
  append_line_durable(p, "{\"c\":3}");
  EXPECT_EQ(slurp(p), "{\"a\":1}\n{\"b\":2}\n\n{\"c\":3}\n");
  EXPECT_THROW(append_line_durable(p, "two\nlines"), std::logic_error);
  EXPECT_EQ(slurp(p), "{\"a\":1}\n{\"b\":2}\n\n{\"c\":3}\n");  // nothing written by the refused call
  EXPECT_EQ(entries(p.parent_path()), std::vector<std::string>{"history.jsonl"});
}

// ---------------------------------------------------------------------------------------------
// Reading records back: tamper and truncation

class History : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    lines_ = new std::vector<std::string>;
    for (const auto& [name, seq, t] : std::vector<std::tuple<std::string, std::int64_t, DType>>{
             {"h1", 3, DType::bf16}, {"h2", 5, DType::fp16}, {"h3", 7, DType::fp32}, {"h4", 2, DType::bf16}})
      lines_->push_back(real_record(small(name, seq, t)).dump());
  }
  static void TearDownTestSuite() {
    delete lines_;
    lines_ = nullptr;
  }
  static std::vector<std::string>* lines_;
  TempDir dir_;
  fs::path write(const std::string& name, const std::string& text) {
    const fs::path p = dir_.path() / name;
    spit(p, text);
    return p;
  }
  std::string all_lines() const {
    std::string s;
    for (const auto& l : *lines_) s += l + "\n";
    return s;
  }
};
std::vector<std::string>* History::lines_ = nullptr;

TEST_F(History, IntactFileLoadsEveryRecordInOrder) {
  const fs::path p = write("run.jsonl", all_lines());
  const RecordSet rs = read_records({p.string()});
  EXPECT_TRUE(rs.problems.empty()) << rs.problems.front().to_string();
  ASSERT_EQ(rs.records.size(), 4u);
  EXPECT_EQ(rs.records[0]["workload"]["name"], "h1");
  EXPECT_EQ(rs.records[3]["workload"]["name"], "h4");
  EXPECT_EQ(rs.origins[2], p.string() + ":3");
}

TEST_F(History, OneFlippedByteFailsTheHashAndTheOtherLinesStillLoad) {
  std::string text = all_lines();
  // Flip one byte inside line 2's workload name ("h2" -> "h3"): still valid JSON, still valid
  // against the schema, only the hash can tell.
  const std::size_t line2 = text.find('\n') + 1;
  const std::size_t at = text.find("\"name\":\"h2\"", line2);
  ASSERT_NE(at, std::string::npos);
  text[at + 9] ^= 0x01;  // '2' (0x32) -> '3' (0x33)
  ASSERT_EQ(text.substr(at, 11), "\"name\":\"h3\"");
  const fs::path p = write("run.jsonl", text);
  const RecordSet rs = read_records({p.string()});
  ASSERT_EQ(rs.records.size(), 3u);
  EXPECT_EQ(rs.records[0]["workload"]["name"], "h1");
  EXPECT_EQ(rs.records[1]["workload"]["name"], "h3");
  EXPECT_EQ(rs.records[2]["workload"]["name"], "h4");
  ASSERT_EQ(rs.problems.size(), 1u);
  EXPECT_EQ(rs.problems[0].line, 2);
  EXPECT_NE(rs.problems[0].reason.find("record_sha256"), std::string::npos) << rs.problems[0].reason;
  EXPECT_NE(rs.problems[0].to_string().find(p.string() + ":2:"), std::string::npos);
}

TEST_F(History, FlippedByteInANumberFailsTheHash) {
  std::string text = all_lines();
  const std::size_t at = text.find("\"seq\":5");
  ASSERT_NE(at, std::string::npos);
  text[at + 6] = '6';
  const RecordSet rs = read_records({write("run.jsonl", text).string()});
  EXPECT_EQ(rs.records.size(), 3u);
  ASSERT_EQ(rs.problems.size(), 1u);
  EXPECT_EQ(rs.problems[0].line, 2);
}

TEST_F(History, TruncatedLastLineIsReportedAndSkipped) {
  std::string text = all_lines();
  text += (*lines_)[0].substr(0, (*lines_)[0].size() / 2);  // a torn append: no newline
  const fs::path p = write("run.jsonl", text);
  const RecordSet rs = read_records({p.string()});
  EXPECT_EQ(rs.records.size(), 4u);
  ASSERT_EQ(rs.problems.size(), 1u);
  EXPECT_EQ(rs.problems[0].line, 5);
  EXPECT_NE(rs.problems[0].reason.find("truncated"), std::string::npos) << rs.problems[0].reason;
}

TEST_F(History, TornLineInTheMiddleIsReportedAsNotJson) {
  // A torn line followed by more appends (e.g. a crash, then a later run appending).
  const std::string text = (*lines_)[0] + "\n" + (*lines_)[1].substr(0, 100) + "\n" + (*lines_)[2] + "\n";
  const RecordSet rs = read_records({write("run.jsonl", text).string()});
  EXPECT_EQ(rs.records.size(), 2u);
  ASSERT_EQ(rs.problems.size(), 1u);
  EXPECT_EQ(rs.problems[0].line, 2);
  EXPECT_NE(rs.problems[0].reason.find("not a JSON record"), std::string::npos) << rs.problems[0].reason;
}

TEST_F(History, BlankLinesAreSkippedSilently) {
  const std::string text = (*lines_)[0] + "\n\n" + (*lines_)[1] + "\n";
  const RecordSet rs = read_records({write("run.jsonl", text).string()});
  EXPECT_EQ(rs.records.size(), 2u);
  EXPECT_TRUE(rs.problems.empty());
}

TEST_F(History, FoldersAreReadRecursivelyJsonFilesOnlyWhenNamed) {
  fs::create_directories(dir_.path() / "runs");
  fs::create_directories(dir_.path() / "history");
  write("runs/a.jsonl", (*lines_)[0] + "\n" + (*lines_)[1] + "\n");
  write("history/b.jsonl", (*lines_)[2] + "\n");
  const fs::path one = write("one.json", (*lines_)[3]);
  const fs::path array = write("array.json", "[" + (*lines_)[0] + "," + (*lines_)[1] + "]");
  write("notes.txt", "not a record file: ignored");
  write("source.json", "{\"not\": \"a record\"}");  // unsealed sources may sit in a folder
  // A folder: its *.jsonl files, recursively.
  RecordSet rs = read_records({dir_.path().string()});
  EXPECT_TRUE(rs.problems.empty()) << rs.problems.front().to_string();
  EXPECT_EQ(rs.records.size(), 2u + 1u);
  // *.json files when named: one record, or an array of records.
  rs = read_records({one.string(), array.string()});
  EXPECT_TRUE(rs.problems.empty()) << rs.problems.front().to_string();
  EXPECT_EQ(rs.records.size(), 1u + 2u);
  EXPECT_EQ(rs.origins[1], array.string() + "[0]");
}

TEST_F(History, MissingPathIsAProblemNotACrash) {
  const RecordSet rs = read_records({(dir_.path() / "nope.jsonl").string()});
  EXPECT_TRUE(rs.records.empty());
  ASSERT_EQ(rs.problems.size(), 1u);
  EXPECT_NE(rs.problems[0].reason.find("no such file"), std::string::npos);
}

// Regression (was a bug): a crash can leave a history file ending in a torn line (no
// newline). append_line_durable then writes the next record straight after the torn bytes, so
// the next run's first record shares a line with the garbage and is rejected as "not a JSON
// record": a record that was appended and fsync'ed successfully is lost. The torn line must
// stay the only casualty (e.g. append "\n" first when the file does not end with one).
TEST_F(History, AppendAfterATornLineKeepsTheNewRecord) {
  const fs::path p = dir_.path() / "history.jsonl";
  spit(p, (*lines_)[0] + "\n" + (*lines_)[1].substr(0, 200));  // a kill mid-append
  append_line_durable(p, (*lines_)[2]);                      // the next run appends
  const RecordSet rs = read_records({p.string()});
  ASSERT_EQ(rs.records.size(), 2u) << "the record appended after the torn line was lost";
  EXPECT_EQ(rs.records[1]["record_sha256"], json::parse((*lines_)[2])["record_sha256"]);
  EXPECT_EQ(rs.problems.size(), 1u);
}

TEST_F(History, DuplicateKeyInARecordLineIsRejected) {
  // Someone appends a hand-edited record with a second "outcome": a plain JSON reader would
  // keep the last one. The strict reader refuses the line.
  std::string line = (*lines_)[0];
  line.insert(1, "\"outcome\":\"passed\",");
  const RecordSet rs = read_records({write("run.jsonl", line + "\n" + (*lines_)[1] + "\n").string()});
  EXPECT_EQ(rs.records.size(), 1u);
  ASSERT_EQ(rs.problems.size(), 1u);
  EXPECT_NE(rs.problems[0].reason.find("duplicate key"), std::string::npos) << rs.problems[0].reason;
}

}  // namespace
}  // namespace mtabench
