// The leaderboard and compare outputs against golden files (STYLE.md item 7), the committed
// record sets against their generator, leaderboard.json against its schema, and merging.
#include "golden_records.h"
#include "golden_util.h"

#include "harness/leaderboard/compare.h"
#include "harness/leaderboard/html.h"
#include "harness/leaderboard/markdown.h"
#include "harness/leaderboard/merge.h"
#include "harness/leaderboard/model.h"
#include "harness/mini_schema.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace mtabench::golden {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string jsonl(const std::vector<json>& records) {
  std::string s;
  for (const auto& r : records) s += r.dump() + "\n";
  return s;
}

leaderboard::Rules golden_rules() {
  leaderboard::Rules r;
  r.now_utc = kGoldenNow;
  r.baseline = "cudnn";
  return r;
}

json golden_leaderboard(const std::vector<std::string>& paths) {
  return leaderboard::build_leaderboard(leaderboard::read_and_merge(paths), golden_rules());
}

std::string records_dir() { return (golden_dir() / "records").string(); }

TEST(GoldenRecords, CommittedFilesAreCurrent) {
  expect_golden("records/leaderboard.jsonl", jsonl(leaderboard_records()));
  expect_golden("compare/base.jsonl", jsonl(compare_base()));
  expect_golden("compare/new.jsonl", jsonl(compare_new()));
}

TEST(GoldenRecords, ReadBackValid) {
  const RecordSet rs = read_records({records_dir(), (golden_dir() / "compare").string()});
  EXPECT_TRUE(rs.problems.empty()) << rs.problems.front().to_string();
  EXPECT_EQ(rs.records.size(), leaderboard_records().size() + compare_base().size() + compare_new().size());
}

TEST(GoldenLeaderboard, JsonMarkdownHtml) {
  const json doc = golden_leaderboard({records_dir()});
  expect_golden("expected/leaderboard.json", doc.dump(2) + "\n");
  expect_golden("expected/LEADERBOARD.md", leaderboard::leaderboard_markdown(doc));
  expect_golden("expected/index.html", leaderboard::leaderboard_html(doc));
}

TEST(GoldenLeaderboard, ValidatesAgainstItsSchema) {
  const MiniSchema schema(
      read_json_file_strict(fs::path(MTABENCH_SOURCE_DIR) / "schemas" / "leaderboard.schema.json"));
  for (const json& doc : {golden_leaderboard({records_dir()}), golden_leaderboard({}),
                          golden_leaderboard({(golden_dir() / "compare").string()})}) {
    const auto errs = schema.validate(doc);
    EXPECT_TRUE(errs.empty()) << errs.size() << " error(s), first: " << errs.front();
  }
}

// Shards of one suite, merged: reading the same records twice, or in another order, or split
// over files, changes nothing but the count of duplicates merged.
TEST(GoldenLeaderboard, MergingTwiceChangesNothing) {
  const json once = golden_leaderboard({records_dir()});
  const json twice = golden_leaderboard({records_dir(), records_dir()});
  EXPECT_EQ(once["boards"], twice["boards"]);
  EXPECT_EQ(once["scaling"], twice["scaling"]);
  EXPECT_EQ(twice["inputs"]["unique_records"], once["inputs"]["unique_records"]);
  EXPECT_EQ(twice["inputs"]["duplicates_merged"], once["inputs"]["unique_records"]);

  const fs::path dir = fs::temp_directory_path() / ("mtabench-merge-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto records = leaderboard_records();
  std::vector<std::string> shards;
  for (int s = 0; s < 3; ++s) {
    std::vector<json> part;
    for (std::size_t i = static_cast<std::size_t>(s); i < records.size(); i += 3) part.push_back(records[i]);
    shards.push_back((dir / ("shard-" + std::to_string(s)) / "history.jsonl").string());
    atomic_write_file(shards.back(), jsonl(part));
  }
  const json merged = golden_leaderboard({shards[2], shards[0], shards[1], shards[0]});
  EXPECT_EQ(once["boards"], merged["boards"]);
  EXPECT_EQ(once["scaling"], merged["scaling"]);
  fs::remove_all(dir);
}

TEST(GoldenCompare, MarkdownAndJson) {
  leaderboard::CompareOptions opt;
  opt.base_paths = {"compare/base.jsonl"};
  opt.new_paths = {"compare/new.jsonl"};
  const json doc = leaderboard::compare_records(
      leaderboard::read_and_merge({(golden_dir() / "compare/base.jsonl").string()}),
      leaderboard::read_and_merge({(golden_dir() / "compare/new.jsonl").string()}), opt);
  expect_golden("expected/compare.md", leaderboard::compare_markdown(doc));
  expect_golden("expected/compare.json", doc.dump(2) + "\n");
  EXPECT_EQ(leaderboard::compare_exit_code(doc), 1);
}

}  // namespace
}  // namespace mtabench::golden
