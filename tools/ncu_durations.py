#!/usr/bin/env python3
"""Compares two builds by the GPU duration of their kernels under Nsight Compute.

Reads ncu CSV reports (`ncu --csv --print-units base --metrics gpu__time_duration.sum ...`), each
named SIDE+ROUND=PATH with SIDE a (the candidate) or b (the base), pools each side's durations
per kernel (its name without its parameter list, and its grid), and prints per kernel: n, median and
p20-p80 of each side, the ratio of medians A/B, each round's ratio, a two-sided Mann-Whitney U p
(normal approximation with tie correction) over the pooled launches and a verdict: faster or
slower where p < 0.05, the ratio is beyond the threshold and every round's ratio is on the same
side of 1 (pooled launches of separate processes are not independent samples where a process
carries an offset of its own), same within the threshold, unsure otherwise. A report without
ncu's header (a profile that failed or timed out) is left out with a warning.

Why: at the seed (~4.4 us between CUDA events, ~3.2 us of it the kernel's GPU duration) two
builds of identical code measured 2-4% apart by events; the duration leaves out the launch
path, which no kernel change moves, and each launch is a sample. It spreads too (the seed:
p20-p80 3200-3360 ns in 32 ns steps; the fifty-seventh session, impls/fused/JOURNAL.md, "The
seed's GPU duration under Nsight Compute"), hence the test over many launches.

--kernel's regular expression is searched in the full demangled name and in the bare one
("fused_row_kernel", no namespace, template arguments or parameters), so "^fused_row" works as
it does for ncu's -k.
Usage: tools/ncu_durations.py [--threshold PCT] [--kernel REGEX] a1=CSV b1=CSV [a2=CSV ...]
"""
import argparse
import csv
import math
import re
import statistics
import sys


def durations(path, kernel_re):
    """{(kernel, grid): [ns, ...]} of gpu__time_duration.sum rows in one ncu CSV."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if len(r) > 5]
    head = next((r for r in rows if "Metric Name" in r and "Kernel Name" in r), None)
    if head is None:
        return None
    k, m, v = head.index("Kernel Name"), head.index("Metric Name"), head.index("Metric Value")
    g = head.index("Grid Size") if "Grid Size" in head else None
    out = {}
    for r in rows[rows.index(head) + 1:]:
        if r[m] != "gpu__time_duration.sum" or not (re.search(kernel_re, r[k]) or re.search(kernel_re, bare_name(r[k]))):
            continue
        try:
            ns = float(r[v].replace(",", ""))
        except ValueError:
            continue
        # "void ns::kernel<T, 1>(ns::Params)" -> "ns::kernel<T, 1>"; an anonymous namespace's
        # parentheses are not the parameter list.
        name = re.sub(r"^void\s+", "", r[k]).replace("(anonymous namespace)", "{anonymous}").split("(")[0].strip()
        out.setdefault((name, r[g] if g is not None else ""), []).append(ns)
    return out


def bare_name(full):
    """'void ns::kernel<T, 1>(ns::Params)' -> 'kernel'."""
    name = re.sub(r"^void\s+", "", full).replace("(anonymous namespace)", "{anonymous}").split("(")[0]
    depth, out = 0, ""
    for ch in name:  # drop template arguments, nested ones too
        depth += ch == "<"
        if depth == 0:
            out += ch
        depth -= ch == ">"
    return out.split("::")[-1].strip()


def mann_whitney_p(x, y):
    """Two-sided p of the Mann-Whitney U test, normal approximation with tie correction."""
    n1, n2 = len(x), len(y)
    pooled = sorted([(a, 0) for a in x] + [(b, 1) for b in y])
    ranks, ties, i = [0.0] * len(pooled), 0.0, 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for t in range(i, j + 1):
            ranks[t] = (i + j) / 2 + 1
        c = j - i + 1
        ties += c ** 3 - c
        i = j + 1
    r1 = sum(r for r, (_, side) in zip(ranks, pooled) if side == 0)
    u = r1 - n1 * (n1 + 1) / 2
    n = n1 + n2
    var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return 1.0  # every value the same
    z = (abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(var)
    return math.erfc(max(z, 0) / math.sqrt(2))


def pct(v, q):
    s = sorted(v)
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threshold", type=float, default=1.0, help="percent (default 1)")
    ap.add_argument("--kernel", default=".", help="regular expression on the kernel's name")
    ap.add_argument("reports", nargs="+", help="SIDE ROUND=CSV, SIDE a or b")
    args = ap.parse_args(argv)
    sides = {"a": {}, "b": {}}
    by_round = {"a": {}, "b": {}}  # side -> round -> key -> durations
    for spec in args.reports:
        label, sep, path = spec.partition("=")
        if not sep or not label or label[0] not in sides:
            raise SystemExit(f"ncu_durations.py: '{spec}' is not aN=CSV or bN=CSV")
        got = durations(path, args.kernel)
        if got is None:
            print(f"ncu_durations.py: {path}: no ncu CSV header (Kernel Name, Metric Name): left out "
                  f"(a profile that failed or timed out?)", file=sys.stderr)
            continue
        for key, v in got.items():
            sides[label[0]].setdefault(key, []).extend(v)
            by_round[label[0]].setdefault(label[1:], {}).setdefault(key, []).extend(v)
    keys = sorted(set(sides["a"]) | set(sides["b"]))
    if not keys:
        raise SystemExit("ncu_durations.py: no gpu__time_duration.sum of a matching kernel in the reports")
    print(f"GPU duration under Nsight Compute (gpu__time_duration.sum), A = candidate, B = base; "
          f"threshold {args.threshold:g}%, Mann-Whitney U at 0.05")
    print(f"{'kernel':<56} {'grid':<12} {'n B':>4} {'B median ns':>12} {'B p20-p80':>13} {'n A':>4} "
          f"{'A median ns':>12} {'A p20-p80':>13} {'A/B':>7} {'p':>8}  verdict (rounds' A/B)")
    for key in keys:
        a, b = sides["a"].get(key, []), sides["b"].get(key, [])
        if not a or not b:
            print(f"{key[0][:56]:<56} {key[1]:<12} {len(b):>4} {'':>12} {'':>13} {len(a):>4} {'':>12} {'':>13} "
                  f"{'':>7} {'':>8}  only in {'A' if a else 'B'}")
            continue
        ratio = statistics.median(a) / statistics.median(b)
        p = mann_whitney_p(a, b)
        off = abs(ratio - 1) * 100 > args.threshold
        rounds = [statistics.median(by_round["a"][r][key]) / statistics.median(by_round["b"][r][key])
                  for r in sorted(set(by_round["a"]) & set(by_round["b"]), key=lambda r: (len(r), r))
                  if key in by_round["a"][r] and key in by_round["b"][r]]
        agree = all((x < 1) == (ratio < 1) and x != 1 for x in rounds)
        verdict = ("faster" if ratio < 1 else "slower") if off and p < 0.05 and agree else ("unsure" if off else "same")
        verdict += " (" + " ".join(f"{x:.4f}" for x in rounds) + ")"
        print(f"{key[0][:56]:<56} {key[1]:<12} {len(b):>4} {statistics.median(b):>12.0f} "
              f"{pct(b, .2):>6.0f}-{pct(b, .8):<6.0f} {len(a):>4} {statistics.median(a):>12.0f} "
              f"{pct(a, .2):>6.0f}-{pct(a, .8):<6.0f} {ratio:>7.4f} {p:>8.2g}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
