#include "harness/leaderboard/svg_plot.h"

#include "harness/leaderboard/format.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace mtabench::leaderboard {

using json = nlohmann::json;

const char* series_colour(std::size_t i) {
  // Tableau-like colours that stay apart for colour-blind readers; markers differ too.
  static const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                   "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
  return kColours[i % (sizeof kColours / sizeof *kColours)];
}

namespace {

constexpr double kWidth = 820, kHeight = 440;
constexpr double kLeft = 84, kRight = 290, kTop = 40, kBottom = 64;

// "1 ns", "20 µs", "500 µs", "1 ms"
std::string time_label(double s) {
  static const char* kUnits[] = {"ps", "ns", "µs", "ms", "s"};
  const int e = static_cast<int>(std::floor(std::log10(s) + 1e-9));
  const int unit = std::clamp((e + 12) / 3, 0, 4);
  return fmt::format("{:g} {}", s / std::pow(10.0, unit * 3 - 12), kUnits[unit]);
}

// Ticks of a log axis: the decades inside [lo, hi] (log10 units), with 2x and 5x between them when
// the axis spans under two decades (else a short axis would show one label or none).
std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> ticks;
  const std::vector<double> mantissas = hi - lo < 2 ? std::vector<double>{1, 2, 5} : std::vector<double>{1};
  for (int e = static_cast<int>(std::floor(lo)); e <= static_cast<int>(std::ceil(hi)); ++e)
    for (double m : mantissas) {
      const double v = m * std::pow(10.0, e);
      if (std::log10(v) >= lo - 1e-9 && std::log10(v) <= hi + 1e-9) ticks.push_back(v);
    }
  return ticks;
}

struct Axes {
  double x0, x1, y0, y1;  // log10 domain
  double px(double seq) const {
    return kLeft + (std::log10(seq) - x0) / (x1 - x0) * (kWidth - kLeft - kRight);
  }
  double py(double s) const {
    return kHeight - kBottom - (std::log10(s) - y0) / (y1 - y0) * (kHeight - kTop - kBottom);
  }
};

// A marker shape per series index, so lines stay apart without colour too.
std::string marker(std::size_t i, double x, double y, const char* colour, bool hollow) {
  const std::string fill = hollow ? "#ffffff" : colour;
  if (i % 3 == 1)
    return fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"8\" height=\"8\" fill=\"{}\" stroke=\"{}\" "
        "stroke-width=\"1.5\"/>",
        x - 4, y - 4, fill, colour);
  if (i % 3 == 2)
    return fmt::format(
        "<path d=\"M{:.1f},{:.1f} l5,9 h-10 z\" fill=\"{}\" stroke=\"{}\" stroke-width=\"1.5\"/>", x, y - 5,
        fill, colour);
  return fmt::format(
      "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"{}\" stroke=\"{}\" stroke-width=\"1.5\"/>", x, y,
      fill, colour);
}

}  // namespace

std::string scaling_svg(const json& g) {
  double xmin = std::numeric_limits<double>::infinity(), xmax = 0, ymin = xmin, ymax = 0;
  auto see_y = [&](double s) {
    if (s > 0) ymin = std::min(ymin, s), ymax = std::max(ymax, s);
  };
  for (const auto& s : g["seqs"]) {
    xmin = std::min(xmin, s.get<double>());
    xmax = std::max(xmax, s.get<double>());
  }
  for (const auto& f : g["floor"]) see_y(f["seconds"].get<double>());
  for (const auto& s : g["series"])
    for (const auto& p : s["points"]) see_y(p["median_s"].get<double>());
  if (!(ymax > 0)) ymin = 1e-6, ymax = 1e-3;
  // A margin around the data on both axes (log units), and at least one decade of y.
  Axes ax{std::log10(xmin) - 0.1, std::log10(xmax) + 0.1, std::log10(ymin) - 0.15, std::log10(ymax) + 0.15};
  if (ax.y1 - ax.y0 < 1) {
    const double mid = (ax.y0 + ax.y1) / 2;
    ax.y0 = mid - 0.5, ax.y1 = mid + 0.5;
  }

  const std::string title = fmt::format("Scaling by seq: {} on {}", g["family"]["label"].get<std::string>(),
                                        g["hardware"]["label"].get<std::string>());
  std::string o = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 "
      "{0} {1}\" role=\"img\" aria-label=\"{2}\" font-family=\"Helvetica, Arial, sans-serif\" "
      "font-size=\"12\">\n<title>{2}</title>\n<rect width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n",
      kWidth, kHeight, html_escape(title));
  o += fmt::format("<text x=\"{}\" y=\"22\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", kLeft,
                   html_escape(g["family"]["label"].get<std::string>() + " · " +
                               g["hardware"]["label"].get<std::string>()));
  const double plot_right = kWidth - kRight, plot_bottom = kHeight - kBottom;
  // Grid and ticks.
  for (const double tick : log_ticks(ax.y0, ax.y1)) {
    const double y = ax.py(tick);
    o += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#dddddd\"/>\n",
                     kLeft, y, plot_right, y);
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6, y + 4,
                     time_label(tick));
  }
  const std::size_t nseq = g["seqs"].size();
  const std::size_t step = nseq > 12 ? (nseq + 11) / 12 : 1;  // at most ~12 labels
  for (std::size_t i = 0; i < nseq; ++i) {
    const double seq = g["seqs"][i].get<double>();
    const double x = ax.px(seq);
    o += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#eeeeee\"/>\n",
                     x, kTop, x, plot_bottom);
    if (i % step == 0)
      o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x,
                       plot_bottom + 16, g["seqs"][i].dump());
  }
  o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333333\"/>\n",
                   kLeft, kTop, plot_right - kLeft, plot_bottom - kTop);
  o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">seq (log scale)</text>\n",
                   (kLeft + plot_right) / 2, kHeight - 18);
  o += fmt::format(
      "<text transform=\"translate(18 {:.1f}) rotate(-90)\" text-anchor=\"middle\">median time per call (log "
      "scale)</text>\n",
      (kTop + plot_bottom) / 2);

  // Floor curve, then one line per implementation.
  double legend_y = kTop + 8;
  const double lx = plot_right + 16;
  if (!g["floor"].empty()) {
    std::string pts, ticks;
    for (const auto& f : g["floor"]) {
      const double x = ax.px(f["seq"].get<double>()), y = ax.py(f["seconds"].get<double>());
      pts += fmt::format("{:.1f},{:.1f} ", x, y);
      // A short bar at each point: the floor of a single seq is visible too.
      ticks += fmt::format(
          "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#555555\" "
          "stroke-width=\"3\"/>",
          x - 9, y, x + 9, y);
    }
    o += fmt::format(
        "<polyline class=\"floor\" points=\"{}\" fill=\"none\" stroke=\"#555555\" stroke-width=\"2\" "
        "stroke-dasharray=\"6 4\"/>\n{}\n",
        pts, ticks);
    const auto& f0 = g["floor"][0];
    o += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#555555\" "
        "stroke-width=\"2\" stroke-dasharray=\"6 4\"/><text x=\"{3:.1f}\" y=\"{4:.1f}\">floor ({5}, {6} "
        "ceilings)</text>\n",
        lx, legend_y, lx + 24, lx + 30, legend_y + 4, f0["model"].get<std::string>(),
        f0["ceilings"].get<std::string>());
    legend_y += 20;
  }
  for (std::size_t i = 0; i < g["series"].size(); ++i) {
    const json& s = g["series"][i];
    const char* colour = series_colour(i);
    std::string pts, markers;
    bool any_reported = false;
    for (const auto& p : s["points"]) {
      const double x = ax.px(p["seq"].get<double>()), y = ax.py(p["median_s"].get<double>());
      const bool reported = p["status"] == "reported";
      any_reported = any_reported || reported;
      pts += fmt::format("{:.1f},{:.1f} ", x, y);
      markers += marker(i, x, y, colour, reported);
    }
    o += fmt::format(
        "<polyline class=\"series\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n{}\n",
        pts, colour, markers);
    o += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"{3}\" "
        "stroke-width=\"2\"/>{4}<text x=\"{5:.1f}\" y=\"{6:.1f}\">{7}</text>\n",
        lx, legend_y, lx + 24, colour, marker(i, lx + 12, legend_y, colour, any_reported), lx + 30,
        legend_y + 4,
        html_escape(s["implementation"].get<std::string>() + " (" + s["language"].get<std::string>() +
                    (any_reported ? ", reported" : "") + ")"));
    legend_y += 20;
  }
  o += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"#555555\">hollow marker: reported</text>\n",
      lx, legend_y + 4);
  o += "</svg>\n";
  return o;
}

}  // namespace mtabench::leaderboard
