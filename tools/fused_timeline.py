#!/usr/bin/env python3
"""Reads the fused kernel's item timeline (a build with MTABENCH_FUSED_TIMELINE=1: one CSV per
workload, written by impls/fused/fused.cu's dump_timeline) and says where one launch's time went:
the launch ramp, how long until the blocks run conv items, item latencies by type and (few-heads
conv items) by phase, how busy the blocks' slots were over the launch (in bins), and the tail.

All times are %globaltimer ns from the first block's entry, stamped by thread 0 of each block
after a barrier; they come from the last launch of the run (a timed sample, after an L2 flush).
Where the plan has v82's statistics kernel (prestats=1), its blocks' entry and exit are rows of
type "prestats", from the same origin (before it: negative); the report says how many of the
main kernel's blocks entered while it ran.

The small-seq kernel (seq <= 256: its CSV starts "# small kernel", one row a block with thread
0's stamps at entry, its rows' loads arrived, probabilities written, weights staged, barrier
passed, convolution's sums, exit) gets its own report: the launch span, the entries' spread and
each phase's median, p90 and max over the blocks. So does the row kernel (seq <= 128 since v168, "# row
kernel"), whose convolution's sums come before its barrier (row_phases).

Usage: tools/fused_timeline.py CSV [CSV ...] [--bins N]
"""
import argparse
import csv
import statistics
import sys


def read(path):
    """The CSV's '#' header line (the plan) and its rows as dicts."""
    header, rows = "", []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                header = line[1:].strip()
            else:
                rows.append(line)
    return header, list(csv.DictReader(rows))


def load(path):
    items, blocks, prestats = [], [], []
    header, rows = read(path)
    for r in rows:
        rec = {k: (int(v) if k not in ("type",) else v) for k, v in r.items()}
        {"block": blocks, "prestats": prestats}.get(rec["type"], items).append(rec)
    return header, items, blocks, prestats


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))]


def us(ns):
    return ns / 1000.0


def overlap(a0, a1, b0, b1):
    """Length of [a0, a1) within [b0, b1), in ns."""
    return max(0, min(a1, b1) - max(a0, b0))


def busy_in(items, lo, hi, start="start"):
    """Sum of the items' overlap ([item[start], end)) with [lo, hi) in ns."""
    return sum(overlap(lo, hi, i[start], i["end"]) for i in items)


SMALL_PHASES = [("entry", "loads", "entry to its rows' loads arrived"),
                ("loads", "probs", "row statistics and probabilities"),
                ("probs", "weights", "weights and bias staged"),
                ("weights", "barrier", "the block barrier"),
                ("barrier", "conv", "convolution (to its sums)"),
                ("conv", "exit", "stores issued, exit")]
# The row kernel (v164, fused_row.cuh; its CSV starts "# row kernel") stamps the same words, but
# a warp's convolution ends before the block barrier and the channels' sums and stores follow it,
# and since v167 its weights are staged before the probabilities: its phases run between its
# words in the order of their median stamps, each named by the word that ends it.
ROW_PHASE_NAMES = {"loads": "entry to all its loads arrived",
                   "probs": "row statistics and probabilities",
                   "weights": "weights staged (its warp's)",
                   "conv": "its channel's taps (to its partial sums)",
                   "barrier": "the block barrier",
                   "exit": "channels' sums, stores issued, exit"}


def row_phases(blocks):
    """(start word, end word, name) of the row kernel's phases, in the order its blocks stamp."""
    words = sorted(ROW_PHASE_NAMES, key=lambda w: pct([b[w] - b["entry"] for b in blocks], 0.5))
    starts = ["entry"] + words[:-1]
    return [(a, b, ROW_PHASE_NAMES[b]) for a, b in zip(starts, words)]


def small_report(path, out):
    """The small-seq kernel's per-block phases (fused.cu's dump_small_timeline)."""
    header, rows = read(path)
    blocks = [{k: int(v) for k, v in r.items()} for r in rows]
    blocks = [b for b in blocks if all(b[k] >= 0 for k in ("entry", "loads", "probs", "weights", "barrier", "conv", "exit"))]
    if not blocks:
        raise SystemExit(f"{path}: no stamped blocks (was it written by a MTABENCH_FUSED_TIMELINE build?)")
    p = lambda *a: print(*a, file=out)
    entries = [b["entry"] for b in blocks]
    p(f"== {path}")
    p(f"plan: {header}")
    p(f"launch span (first block entry to last block exit): {us(max(b['exit'] for b in blocks)):.2f} us; "
      f"{len(blocks)} blocks stamped")
    p(f"block entries: last {us(max(entries)):.2f} us after the first (median {us(pct(entries, 0.5)):.2f})")
    p("phase (thread 0 of each block)                 median     p90     max  us")
    for a, b, name in row_phases(blocks) if header.startswith("row kernel") else SMALL_PHASES:
        d = [x[b] - x[a] for x in blocks]
        p(f"  {name:<44} {us(pct(d, 0.5)):6.2f}  {us(pct(d, 0.9)):6.2f}  {us(max(d)):6.2f}")
    d = [x["exit"] - x["entry"] for x in blocks]
    p(f"  {'a block, entry to exit':<44} {us(pct(d, 0.5)):6.2f}  {us(pct(d, 0.9)):6.2f}  {us(max(d)):6.2f}")


def is_small(path):
    with open(path) as f:
        return f.readline().startswith(("# small kernel", "# row kernel"))


def report(path, bins, out):
    if is_small(path):
        small_report(path, out)
        return
    header, items, blocks, prestats = load(path)
    done = [i for i in items if i["start"] >= 0 and i["end"] >= i["start"]]
    missing = len(items) - len(done)
    grid = len(blocks)
    if not done or not grid:
        raise SystemExit(f"{path}: no stamped items (was it written by a MTABENCH_FUSED_TIMELINE build?)")
    span = max(b["end"] for b in blocks)
    entries = sorted(b["start"] for b in blocks)
    p = lambda *a: print(*a, file=out)
    p(f"== {path}")
    p(f"plan: {header}")
    p(f"launch span (first block entry to last block exit): {us(span):.2f} us; {len(done)} items stamped"
      + (f", {missing} NOT stamped" if missing else ""))
    p(f"block entries: last {us(entries[-1]):.2f} us after the first (median {us(pct(entries, 0.5)):.2f})")
    # v82's statistics kernel, launched before the main one: its blocks' entry and exit from the
    # same origin (the main kernel's first block entry), so mostly negative.
    pre = [b for b in prestats if b["start"] != -1 and b["end"] != -1]
    if pre:
        p(f"statistics kernel: {len(pre)} blocks from {us(min(b['start'] for b in pre)):.2f} to "
          f"{us(max(b['end'] for b in pre)):.2f} us (block time median {us(pct([b['end'] - b['start'] for b in pre], .5)):.2f})")
        # Whether the main kernel's blocks really entered beside it (programmatic dependent launch):
        # v86's did not, none before the first statistics block left, because an SM changes its
        # L1 / shared-memory split only while idle (JOURNAL.md v86-v88).
        first_exit, last_exit = min(b["end"] for b in pre), max(b["end"] for b in pre)
        p(f"main blocks entered while the statistics kernel ran: {sum(e < last_exit for e in entries)} of {grid} "
          f"(before its first block's exit: {sum(e < first_exit for e in entries)})")
    # Start-up stamps of the blocks (entry, thread 0's set-up done, the set-up's barrier): in the
    # 'stats' and 'fill' columns of the block rows; -1 in timelines written before they existed.
    firsts = {}
    for i in done:
        if i["block"] not in firsts or i["start"] < firsts[i["block"]]:
            firsts[i["block"]] = i["start"]
    staged = [b for b in blocks if b["stats"] >= 0 and b["fill"] >= 0 and b["block"] in firsts]
    if staged:
        sp = lambda xs: f"{us(pct(xs, .5)):.2f} [{us(min(xs)):.2f}-{us(max(xs)):.2f}]"
        p("a block's start-up, median [min-max] us: set-up (thread 0) "
          + sp([b["stats"] - b["start"] for b in staged]) + ", to the set-up's barrier "
          + sp([b["fill"] - b["start"] for b in staged]) + ", barrier to the first item "
          + sp([firsts[b["block"]] - b["fill"] for b in staged]))
    by_type = {}
    for i in done:
        by_type.setdefault(i["type"], []).append(i)
    first_conv = min((i["start"] for i in by_type.get("conv", [])), default=-1)
    p(f"first item starts at {us(min(i['start'] for i in done)):.2f} us; first conv item at {us(first_conv):.2f} us")
    p("item latency (end - start), us:      count   p10   median   p90    max   share of slot time")
    total_busy = sum(i["end"] - i["start"] for i in done)
    for t in ("stats", "conv", "zero"):
        xs = [i["end"] - i["start"] for i in by_type.get(t, [])]
        if xs:
            p(f"  {t:6s}                             {len(xs):6d} {us(pct(xs, .1)):6.2f} {us(pct(xs, .5)):7.2f} "
              f"{us(pct(xs, .9)):6.2f} {us(max(xs)):6.2f}   {100 * sum(xs) / total_busy:5.1f}%")
    ws = [i for i in by_type.get("conv", []) if i.get("ws_take", -1) >= 0]
    if ws:
        ws_report(p, ws, by_type.get("zero", []), blocks, grid, span, bins)
        return span
    phased = [i for i in by_type.get("conv", []) if min(i["stats"], i["fill"], i["mma"]) >= 0]
    if phased:
        p("conv item phases (medians, us; p90 in brackets):")
        for name, a, b in (("ticket to statistics in (waits + loads)", "start", "stats"), ("fill", "stats", "fill"),
                           ("contraction", "fill", "mma"), ("y stores to end", "mma", "end")):
            xs = [i[b] - i[a] for i in phased]
            p(f"  {name:42s} {us(pct(xs, .5)):7.2f} [{us(pct(xs, .9)):.2f}]")
    # Between items: a block's end of one item to its start of the next (ticket handover).
    per_block = {}
    for i in done:
        per_block.setdefault(i["block"], []).append(i)
    gaps = []
    for lst in per_block.values():
        lst.sort(key=lambda i: i["start"])
        gaps += [b["start"] - a["end"] for a, b in zip(lst, lst[1:])]
    if gaps:
        p(f"between a block's items (us): median {us(pct(gaps, .5)):.2f}, p90 {us(pct(gaps, .9)):.2f}, "
          f"sum {100 * sum(gaps) / (grid * span):.1f}% of slot time")
    p(f"slots busy with items over the launch: {100 * total_busy / (grid * span):.1f}% "
      f"({grid} blocks x {us(span):.2f} us)")
    last_start = max(i["start"] for i in done)
    p(f"tail: the last item starts at {us(last_start):.2f} us, {us(span - last_start):.2f} us before the end; "
      f"slots busy after it: {100 * busy_in(done, last_start, span) / (grid * max(1, span - last_start)):.1f}%")
    # Slot time lost at the start and the end: slot-us not busy before the first moment 90% of the
    # slots are busy, and after the last such moment.
    w = span / bins
    p(f"by time ({bins} bins of {us(w):.2f} us): share of the {grid} slots busy, by item type")
    p("  bin  from(us)   all   stats   conv   zero")
    for k in range(bins):
        lo, hi = k * w, (k + 1) * w
        parts = {t: busy_in(by_type.get(t, []), lo, hi) / (grid * w) for t in ("stats", "conv", "zero")}
        p(f"  {k:3d} {us(lo):8.2f} {100 * sum(parts.values()):5.1f}% {100 * parts['stats']:6.1f}% "
          f"{100 * parts['conv']:5.1f}% {100 * parts['zero']:5.1f}%")
    return span


def ws_report(p, conv, zeros, blocks, grid, span, bins):
    """The warp-specialised kernel (fused_ws.cuh; the slots in fused_params.h): the producer's
    and the consumers' time per item, and, for each wait of the consumers between two items, what
    their producer was doing then."""
    stamped = [i for i in conv if min(i["stats"], i["fill"], i["mma"], i["ws_pair0"], i["ws_last"], i["ws_mma"], i["end"]) >= 0]
    if len(stamped) < len(conv):
        p(f"warp-specialised: {len(conv) - len(stamped)} conv items without every stamp, left out")
    med = lambda xs: f"{us(pct(xs, .5)):7.2f} [{us(pct(xs, .1)):.2f}-{us(pct(xs, .9)):.2f}]"
    p("warp-specialised kernel, per conv item, median [p10-p90] us:")
    p("  producer (its thread 0):")
    for name, a, b in (("statistics (ticket taken to statistics in)", "start", "stats"),
                       ("wait for the consumers (pair 0's empty)", "stats", "fill"),
                       ("fill pair 0", "fill", "ws_pair0"), ("fill the other pairs (waits included)", "ws_pair0", "mma")):
        p(f"    {name:46s} {med([i[b] - i[a] for i in stamped])}")
    if zeros:
        zs = [z["end"] - z["start"] for z in zeros if z["start"] >= 0 and z["end"] >= 0]
        p(f"    {'zero item (producer only)':46s} {med(zs)}   ({len(zs)} items)")
    p("  consumers (the first consumer thread):")
    for name, a, b in (("pair 0 written (producer) to full[0] passed", "ws_pair0", "ws_take"),
                       ("full[0] to the last pair's full passed", "ws_take", "ws_last"),
                       ("last pair's full to wgmmas done", "ws_last", "ws_mma"), ("y stores", "ws_mma", "end")):
        p(f"    {name:46s} {med([i[b] - i[a] for i in stamped])}")
    # Since the fiftieth session (fused_params.h's kTlWsIssued0, kTlWsTake1, kTlWsEnd1; absent
    # from older files): the first pair split into its wgmmas' issue and the wait for the last
    # pair, and the second consumer group against the first.
    split = [i for i in stamped if min(i.get("ws_issued0", -1), i.get("ws_take1", -1), i.get("ws_end1", -1)) >= 0]
    if split:
        p(f"  consumers, split ({len(split)} items):")
        for name, a, b in (("full[0] to pair 0's wgmmas issued", "ws_take", "ws_issued0"),
                           ("pair 0 issued to the last pair's full passed", "ws_issued0", "ws_last"),
                           ("second group's full[0] after the first's", "ws_take", "ws_take1"),
                           ("second group's stores done after the first's", "end", "ws_end1")):
            p(f"    {name:46s} {med([i[b] - i[a] for i in split])}")
    # Per block: the consumers' time split into work and waits, and each wait's producer phase.
    setup = {b["block"]: b["fill"] if b["fill"] >= 0 else b["start"] for b in blocks}
    exits = {b["block"]: b["end"] for b in blocks}
    per_block, zero_of = {}, {}
    for i in stamped:
        per_block.setdefault(i["block"], []).append(i)
    zeros = [z for z in zeros if z["start"] >= 0 and z["end"] >= 0]
    for z in zeros:
        zero_of.setdefault(z["block"], []).append(z)
    acc = dict.fromkeys(("work", "wait_first", "wait_between", "after_last"), 0)
    cause = dict.fromkeys(("zero item", "statistics", "empty wait", "fill pair 0", "producer loop", "other"), 0)
    after_zero, plain = [], []
    for blk, lst in per_block.items():
        lst.sort(key=lambda i: i["ws_take"])
        zs = zero_of.get(blk, [])
        prev_end = setup.get(blk, lst[0]["start"])
        prev_mma = None
        for n, i in enumerate(lst):
            w0, w1 = prev_end, i["ws_take"]
            wait = max(0, w1 - w0)
            acc["wait_first" if n == 0 else "wait_between"] += wait
            acc["work"] += i["end"] - i["ws_take"]
            if n > 0:
                zo = busy_in(zs, w0, w1)
                ph = {"zero item": zo, "statistics": overlap(w0, w1, i["start"], i["stats"]),
                      "empty wait": overlap(w0, w1, i["stats"], i["fill"]), "fill pair 0": overlap(w0, w1, i["fill"], i["ws_pair0"])}
                loop = overlap(w0, w1, prev_mma, i["start"]) - zo if prev_mma is not None else 0
                ph["producer loop"] = max(0, loop)
                ph["other"] = max(0, wait - sum(ph.values()))
                for k, v in ph.items():
                    cause[k] += v
                (after_zero if zo > 0 else plain).append(wait)
            prev_end, prev_mma = i["end"], i["mma"]
        acc["after_last"] += max(0, exits.get(blk, prev_end) - prev_end)
    slot = grid * span
    p(f"  consumers' slot time ({grid} blocks x {us(span):.2f} us): items {100 * acc['work'] / slot:.1f}% "
      f"(their own waits on later pairs included), waiting before the first item {100 * acc['wait_first'] / slot:.1f}%, "
      f"between items {100 * acc['wait_between'] / slot:.1f}%, after the last {100 * acc['after_last'] / slot:.1f}%")
    tw = sum(cause.values()) or 1
    p("  what the producer did while its consumers waited between items (share of that wait): "
      + ", ".join(f"{k} {100 * v / tw:.1f}%" for k, v in cause.items()))
    for name, xs in (("after a zero item", after_zero), ("no zero item between", plain)):
        if xs:
            p(f"  waits {name:22s} {len(xs):6d} items, median {us(pct(xs, .5)):.2f} us, p90 {us(pct(xs, .9)):.2f}, "
              f"sum {100 * sum(xs) / slot:.1f}% of slot time")
    w = span / bins
    p(f"  by time ({bins} bins of {us(w):.2f} us): consumers in items, producers in zero items")
    for k in range(bins):
        lo, hi = k * w, (k + 1) * w
        c = busy_in(stamped, lo, hi, start="ws_take") / (grid * w)
        z = busy_in(zeros, lo, hi) / (grid * w)
        p(f"    {k:3d} {us(lo):8.2f} {100 * c:5.1f}% {100 * z:5.1f}%")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--bins", type=int, default=20)
    a = ap.parse_args()
    for path in a.csv:
        report(path, a.bins, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
