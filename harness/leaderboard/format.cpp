#include "harness/leaderboard/format.h"

#include <fmt/core.h>

#include <cmath>
#include <cstdio>

namespace mtabench::leaderboard {

std::string format_seconds(double s) {
  if (!std::isfinite(s)) return "—";
  const double a = std::fabs(s);
  // Four significant digits: 9.000, 10.45, 246.8 (the public page prints 17.4 and 246.8).
  auto scaled = [](double v, const char* unit) {
    return fmt::format(v < 10 ? "{:.3f} {}" : v < 100 ? "{:.2f} {}" : "{:.1f} {}", v, unit);
  };
  if (a < 1e-6) return fmt::format("{:.1f} ns", s * 1e9);
  if (a < 1e-3) return scaled(s * 1e6, "µs");
  if (a < 1) return scaled(s * 1e3, "ms");
  return fmt::format("{:.2f} s", s);
}

std::string format_ratio(double r) {
  if (!std::isfinite(r)) return "—";
  return fmt::format(r >= 100 ? "{:.1f}×" : "{:.2f}×", r);
}

std::string format_signed_pct(double fraction) { return fmt::format("{:+.1f}%", fraction * 100); }
std::string format_pct(double fraction) { return fmt::format("{:.1f}%", fraction * 100); }

namespace {
// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}
}  // namespace

std::optional<std::int64_t> parse_utc(const std::string& text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char tail = 0;
  if (text.size() == 10) {
    if (std::sscanf(text.c_str(), "%4d-%2d-%2d%c", &y, &mo, &d, &tail) != 3) return std::nullopt;
  } else if (text.size() == 20) {
    if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &tail) != 7 ||
        tail != 'Z')
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  return days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 + h * 3600 +
         mi * 60 + s;
}

std::string date_part(const std::string& timestamp) { return timestamp.substr(0, 10); }

double round_sig(double x, int digits) {
  if (x == 0 || !std::isfinite(x)) return x;
  // Through decimal text: exact to the digits asked, unlike scaling by a power of ten.
  return std::stod(fmt::format("{:.{}e}", x, digits - 1));
}

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string short_hash(const std::string& sha256) {
  return sha256.size() > 12 ? sha256.substr(0, 12) + "…" : sha256;
}

std::string workload_names(const std::set<std::string>& names) {
  std::string name;
  for (const auto& n : names) name += (name.empty() ? "" : " / ") + n;
  return name;
}

}  // namespace mtabench::leaderboard
