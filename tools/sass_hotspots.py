#!/usr/bin/env python3
"""Summarise an Nsight Compute per-SASS-instruction CSV (tools/gpu-hotspots.sh): totals, the
hottest instructions by warp-stall samples and by instructions executed, and the hot address
ranges (runs of instructions whose samples add up), so a profile can be read without the GUI.
Usage: sass_hotspots.py FILE.sass.csv[.gz] [TOP]"""
import csv
import gzip
import sys


def rows(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        lines = list(csv.reader(f))
    head = next(i for i, r in enumerate(lines) if r and r[0] == "Address")
    cols = lines[head]
    for r in lines[head + 1:]:
        if len(r) == len(cols):
            yield dict(zip(cols, r))


def num(x):
    try:
        return float(x)
    except ValueError:
        return 0.0


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    ins = list(rows(path))
    for i, r in enumerate(ins):
        r["i"] = i
        r["samples"] = num(r.get("Warp Stall Sampling (All Samples)", 0))
        r["exec"] = num(r.get("Instructions Executed", 0))
    tot_s = sum(r["samples"] for r in ins) or 1
    tot_e = sum(r["exec"] for r in ins) or 1
    print(f"{len(ins)} instructions, {tot_e:.4g} warp instructions executed, {tot_s:.0f} stall samples")
    # Hot regions: windows of 32 instructions, greedy by samples.
    win = 32
    sums = [(sum(r["samples"] for r in ins[k:k + win]), k) for k in range(0, len(ins), win)]
    print("\nhottest 32-instruction windows (samples %, executed %):")
    for s, k in sorted(sums, reverse=True)[:12]:
        e = sum(r["exec"] for r in ins[k:k + win])
        ops = {}
        for r in ins[k:k + win]:
            op = r["Source"].split()[0] if r["Source"].split() else "?"
            if op.startswith("@"):
                op = r["Source"].split()[1]
            ops[op.split(".")[0]] = ops.get(op.split(".")[0], 0) + 1
        mix = " ".join(f"{o}:{n}" for o, n in sorted(ops.items(), key=lambda x: -x[1])[:8])
        print(f"  [{k:5d}-{k + win - 1:5d}] {100 * s / tot_s:5.1f}% {100 * e / tot_e:5.1f}%  {mix}")
    print(f"\ntop {top} instructions by stall samples:")
    for r in sorted(ins, key=lambda r: -r["samples"])[:top]:
        print(f"  {r['i']:5d} {100 * r['samples'] / tot_s:5.1f}% exec {r['exec']:10.0f}  {r['Source'].strip()[:90]}")
    print(f"\ntop {top} instructions by executions:")
    for r in sorted(ins, key=lambda r: -r["exec"])[:top]:
        print(f"  {r['i']:5d} {100 * r['exec'] / tot_e:5.1f}% samples {100 * r['samples'] / tot_s:4.1f}%  {r['Source'].strip()[:90]}")


if __name__ == "__main__":
    main()
