#!/usr/bin/env python3
"""Summarise an Nsight Compute per-SASS-instruction CSV (tools/gpu-hotspots.sh): totals and the
stall reasons over the whole kernel, the hottest instructions by warp-stall samples and by
instructions executed, and the hot address windows with their instruction mix and main stall
reasons, so a profile can be read without the GUI. --list LO:HI prints every instruction of a
range with its share of the samples and its two main stall reasons (how v13's k-loop was read).
--roles splits the warp-specialised kernel's samples by role (see roles()).
Usage: sass_hotspots.py FILE.sass.csv[.gz] [TOP] [--window N] [--list LO:HI | --roles]"""
import argparse
import csv
import gzip
import signal


def rows(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        lines = list(csv.reader(f))
    head = next((i for i, r in enumerate(lines) if r and r[0] == "Address"), None)
    if head is None:
        raise ValueError("no Address header row")
    cols = lines[head]
    for r in lines[head + 1:]:
        if len(r) == len(cols):
            yield dict(zip(cols, r))


def num(x):
    try:
        return float(x)
    except ValueError:
        return 0.0


def stall_columns(r):
    """The per-reason sample columns (all samples, not the not-issued subset)."""
    return [c for c in r if c.startswith("stall_") and "Not Issued" not in c]


def reasons(rs, cols, tot, n):
    agg = {c: sum(num(r.get(c, 0)) for r in rs) for c in cols}
    top = sorted(agg.items(), key=lambda x: -x[1])[:n]
    return " ".join(f"{c[6:]}:{100 * v / tot:.1f}" for c, v in top if v > 0)


def opcode(r):
    words = r["Source"].split()
    if not words:
        return "?"
    op = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
    return op.split(".")[0]


def roles(ins, tot_s):
    """The warp-specialised kernel's samples by role, from its SASS markers (JOURNAL.md v41-v53
    read its profiles this way): the block set-up before the first USETMAXREG; the consumers
    from USETMAXREG.TRY_ALLOC to USETMAXREG.DEALLOC (their first to last HGMMA is the k-loop);
    the producer from there to the first unpredicated EXIT (with the few instructions all roles
    run after they join at the end). Code after that EXIT is out-of-line: each block
    a branch target (an mbarrier wait's slow path, a called routine), credited to the role
    whose branch leads there ("both roles" when both do). Rows: (label, lo, hi, % of samples)."""
    src = [r["Source"] for r in ins]
    alloc = next((i for i, t in enumerate(src) if "USETMAXREG.TRY_ALLOC" in t), None)
    dealloc = next((i for i, t in enumerate(src) if "USETMAXREG.DEALLOC" in t), None)
    if alloc is None or dealloc is None or dealloc < alloc:
        return None
    end = next((i for i in range(dealloc, len(src)) if src[i].split()[:1] == ["EXIT"]), len(src) - 1) + 1
    share = lambda lo, hi: 100 * sum(r["samples"] for r in ins[lo:hi]) / tot_s
    rows_ = [("set-up (before USETMAXREG)", 0, alloc), ("consumers", alloc, dealloc)]
    hg = [i for i in range(alloc, dealloc) if opcode(ins[i]) == "HGMMA"]
    if hg:
        rows_.append(("  of which first..last HGMMA", hg[0], hg[-1] + 1))
    rows_.append(("producer, then the common tail", dealloc, end))
    # Out-of-line blocks: branch and call targets past `end`, each up to the next target,
    # neighbours reached from the same role merged.
    at = {int(r["Address"], 16): i for i, r in enumerate(ins) if r["Address"].startswith("0x")}
    owner = {end: "nowhere found"}
    for lo, hi, who in ((0, alloc, "the set-up"), (alloc, dealloc, "the consumers"), (dealloc, end, "the producer")):
        for i in range(lo, hi):
            words = src[i].split()
            if {"BRA", "CALL"} & {w.split(".")[0] for w in words} and words[-1].startswith("0x"):
                t = at.get(int(words[-1], 16))
                if t is not None and t >= end:
                    owner[t] = who if owner.get(t, who) in (who, "nowhere found") else "both roles"
    starts = sorted(owner)
    merged = []
    for k, t in enumerate(starts):
        hi = starts[k + 1] if k + 1 < len(starts) else len(ins)
        if merged and merged[-1][0] == owner[t]:
            merged[-1][2] = hi
        elif hi > t:
            merged.append([owner[t], t, hi])
    rows_ += [(f"out-of-line, reached from {who}" if who != "nowhere found" else "out-of-line, no branch to it found",
               lo, hi) for who, lo, hi in merged]
    return [(label, lo, hi, share(lo, hi)) for label, lo, hi in rows_]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("path")
    ap.add_argument("top", nargs="?", type=int, default=25)
    ap.add_argument("--window", type=int, default=32, help="instructions per window (default 32)")
    ap.add_argument("--list", help="LO:HI, instruction indices to print one by one")
    ap.add_argument("--roles", action="store_true", help="the warp-specialised kernel's samples by role")
    args = ap.parse_args()
    try:
        ins = list(rows(args.path))
    except (OSError, ValueError) as e:
        raise SystemExit(f"{args.path}: not a per-instruction CSV of gpu-hotspots.sh ({e})")
    if not ins:
        raise SystemExit(f"{args.path}: no instruction rows")
    for i, r in enumerate(ins):
        r["i"] = i
        r["samples"] = num(r.get("Warp Stall Sampling (All Samples)", 0))
        r["exec"] = num(r.get("Instructions Executed", 0))
    cols = stall_columns(ins[0])
    tot_s = sum(r["samples"] for r in ins) or 1
    tot_e = sum(r["exec"] for r in ins) or 1
    print(f"{len(ins)} instructions, {tot_e:.4g} warp instructions executed, {tot_s:.0f} stall samples")
    print(f"stall reasons (% of samples): {reasons(ins, cols, tot_s, 10)}")
    if args.roles:
        split = roles(ins, tot_s)
        if split is None:
            raise SystemExit(f"{args.path}: no USETMAXREG.TRY_ALLOC ... DEALLOC: not the warp-specialised kernel")
        print("\nsamples by role (instruction index range, % of all samples; a role's share of its")
        print("warps' time is its % over its warps' share of the block, e.g. 8 of 12 consumers):")
        for label, lo, hi, pct in split:
            print(f"  {label:40s} [{lo:5d},{hi:5d}) {pct:5.1f}%")
        return
    if args.list:
        try:
            lo, hi = (int(x) for x in args.list.split(":"))
        except ValueError:
            raise SystemExit(f"--list {args.list}: expected LO:HI, two instruction indices")
        print(f"\ninstructions {lo}-{hi} (samples %, executed, main stall reasons as % of all samples):")
        for r in ins[lo:hi + 1]:
            print(f"  {r['i']:5d} {100 * r['samples'] / tot_s:5.1f}% {r['exec']:10.0f}  "
                  f"{r['Source'].strip()[:64]:64s} {reasons([r], cols, tot_s, 2)}")
        return
    win = args.window
    sums = [(sum(r["samples"] for r in ins[k:k + win]), k) for k in range(0, len(ins), win)]
    print(f"\nhottest {win}-instruction windows (samples %, executed %, mix, main stall reasons):")
    for s, k in sorted(sums, reverse=True)[:12]:
        seg = ins[k:k + win]
        e = sum(r["exec"] for r in seg)
        ops = {}
        for r in seg:
            ops[opcode(r)] = ops.get(opcode(r), 0) + 1
        mix = " ".join(f"{o}:{n}" for o, n in sorted(ops.items(), key=lambda x: -x[1])[:8])
        print(f"  [{k:5d}-{k + win - 1:5d}] {100 * s / tot_s:5.1f}% {100 * e / tot_e:5.1f}%  {mix} | "
              f"{reasons(seg, cols, tot_s, 3)}")
    top = args.top
    print(f"\ntop {top} instructions by stall samples:")
    for r in sorted(ins, key=lambda r: -r["samples"])[:top]:
        print(f"  {r['i']:5d} {100 * r['samples'] / tot_s:5.1f}% exec {r['exec']:10.0f}  {r['Source'].strip()[:90]}")
    print(f"\ntop {top} instructions by executions:")
    for r in sorted(ins, key=lambda r: -r["exec"])[:top]:
        print(f"  {r['i']:5d} {100 * r['exec'] / tot_e:5.1f}% samples {100 * r['samples'] / tot_s:4.1f}%  {r['Source'].strip()[:90]}")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    main()
