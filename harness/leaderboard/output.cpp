#include "harness/leaderboard/output.h"

#include "harness/leaderboard/html.h"
#include "harness/leaderboard/markdown.h"
#include "harness/leaderboard/svg_plot.h"
#include "harness/storage.h"

#include <set>

namespace mtabench::leaderboard {

namespace fs = std::filesystem;

std::vector<fs::path> write_leaderboard_outputs(const fs::path& dir, const nlohmann::json& doc) {
  std::vector<fs::path> written;
  auto put = [&](const fs::path& p, const std::string& text) {
    atomic_write_file(p, text);
    written.push_back(p);
  };
  put(dir / "leaderboard.json", doc.dump(2) + "\n");
  put(dir / "LEADERBOARD.md", leaderboard_markdown(doc));
  put(dir / "index.html", leaderboard_html(doc));
  std::set<std::string> plots;
  for (const auto& g : doc["scaling"]) {
    if (g["seqs"].size() < 2) continue;  // the pages show a table only
    const std::string name = g["id"].get<std::string>() + ".svg";
    plots.insert(name);
    put(dir / "plots" / name, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + scaling_svg(g));
  }
  // Plots of an earlier run that this one no longer has would be linked by nothing but stay
  // misleading beside the new ones: remove them.
  std::error_code ec;
  if (fs::is_directory(dir / "plots", ec))
    for (const auto& e : fs::directory_iterator(dir / "plots"))
      if (e.path().extension() == ".svg" && !plots.count(e.path().filename().string()))
        fs::remove(e.path(), ec);
  return written;
}

}  // namespace mtabench::leaderboard
