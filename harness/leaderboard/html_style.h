#pragma once
// The page's stylesheet, inlined into index.html.
namespace mtabench::leaderboard {

inline constexpr const char* kLeaderboardCss = R"css(
:root { --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --bg-alt: #f6f8fa; --accent: #0b5cad; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1240px; padding: 24px 28px 64px; color: var(--fg); background: #fff;
       font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 0 0 6px; }
p { margin: 6px 0; }
a { color: var(--accent); text-decoration: none; }
code { font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; background: var(--bg-alt); padding: 1px 4px;
       border-radius: 4px; }
.sub, .muted { color: var(--muted); }
table { border-collapse: collapse; width: 100%; margin: 8px 0 14px; font-size: 13px; }
th, td { border: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: var(--bg-alt); font-weight: 600; }
.scroll { overflow-x: auto; }
td { overflow-wrap: break-word; }
td.range { text-align: right; font-variant-numeric: tabular-nums; }
.small { font-size: 11px; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.record td { background: #eef6ee; }
tr.ineligible td { color: var(--muted); }
.board { border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin: 16px 0; }
.facts { display: flex; flex-wrap: wrap; gap: 10px; margin: 10px 0; }
.fact { flex: 1 1 260px; background: var(--bg-alt); border-radius: 6px; padding: 8px 10px; }
.fact b { display: block; font-size: 12px; color: var(--muted); font-weight: 600; text-transform: uppercase;
          letter-spacing: .03em; }
.big { font-size: 22px; font-weight: 700; }
.badge { display: inline-block; font-size: 11px; font-weight: 600; padding: 1px 7px; border-radius: 10px;
         border: 1px solid; margin-left: 4px; white-space: nowrap; }
.badge.measured { color: #0a5e2a; border-color: #7cc295; background: #eaf7ee; }
.badge.reproduced { color: #0a4d8c; border-color: #7fb0e0; background: #e8f1fb; }
.badge.reported { color: #7a4b00; border-color: #e0b45c; background: #fdf4e2; }
.badge.stale { color: #8c1d18; border-color: #e39a96; background: #fdecec; }
.badge.ineligible { color: var(--muted); border-color: var(--line); background: #fff; }
figure { margin: 10px 0; }
figcaption { color: var(--muted); font-size: 12px; }
svg.plot { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; }
ul.rules li { margin: 4px 0; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
)css";

}  // namespace mtabench::leaderboard
