#!/usr/bin/env python3
"""tools/fused_timeline.py on a made-up timeline whose answers are known: two blocks over 10 us;
block 0 runs a stats item (0-2 us) then a conv item (3-9 us, phases 1/2/2/1 us), block 1 a zero
item (1-3 us) then a conv item (4-8 us, no phase stamps); one ticket never stamped; block 1 alone
has start-up stamps; two blocks of v82's statistics kernel before them. Checks the statistics
kernel's lines (and, in a second file, main blocks entering beside it), the span, the start-up
line, the first conv start, the latencies, the phases, the gaps between a block's items, the slot
time, the tail and one bin; and that a file without stamps is an error, not a report. Then a
warp-specialised timeline (WS_ROWS: the producer's and the consumers' stamps apart): the phase
medians, the consumers' slot-time split and what their producer did while they waited.
Usage: fused_timeline_test.py TOOLS/fused_timeline.py"""
import os
import subprocess
import sys
import tempfile

US = 1000
ROWS = [
    # ticket,type,b,band,chunk,sm,block,start,stats,fill,mma,end
    (0, "stats", 0, 0, 0, 0, 0, 0, -1, -1, -1, 2 * US),
    (1, "zero", 0, 0, 0, 1, 1, 1 * US, -1, -1, -1, 3 * US),
    (2, "conv", 0, 0, 0, 0, 0, 3 * US, 4 * US, 6 * US, 8 * US, 9 * US),
    (3, "conv", 0, 1, 0, 1, 1, 4 * US, -1, -1, -1, 8 * US),
    (4, "conv", 0, 2, 0, 0, 0, -1, -1, -1, -1, -1),
]
# (block, entry, thread 0's set-up done, set-up barrier, exit); -1: not stamped (older timelines).
BLOCKS = [(0, 0, -1, -1, 10 * US), (1, 500, 700, 800, 9 * US)]


# The statistics kernel's blocks (block, entry, exit), before the main kernel's first entry.
PRESTATS = [(0, -3 * US, -2 * US), (1, -2500, -1 * US)]


# The warp-specialised kernel (fused_params.h's kTlWs* slots), one block, entry 0, set-up barrier
# 1 us, exit 20 us: conv (producer 1-4, consumers 3-7), zero (producer 4-8), conv (producer 8-11,
# consumers 10-14). ticket,type,b,band,chunk,sm,block,start,stats,fill,mma,end,
# ws_pair0,ws_take,ws_last,ws_mma.
WS_ROWS = [
    (0, "conv", 0, 0, 0, 0, 0, 1 * US, 2 * US, 2 * US, 4 * US, 7 * US, 3 * US, 3 * US, 4 * US, 6 * US),
    (1, "zero", 0, 0, 0, 0, 0, 4 * US, -1, -1, -1, 8 * US, -1, -1, -1, -1),
    (2, "conv", 0, 1, 0, 0, 0, 8 * US, 9 * US, 9 * US, 11 * US, 14 * US, 10 * US, 10 * US, 11 * US, 13 * US),
]

# The three stamps since the fiftieth session (ws_issued0, ws_take1, ws_end1): pair 0 issued
# 0.5 us after full[0] (so 0.5 us waiting for the last pair) in both conv items; the second group
# 0.25 us behind at the take and 0.75 us at the end in the first, 0.5 and 0.25 in the second
# (medians by the tool's nearest rank of two: the larger).
WS_SPLIT = [(3500, 3250, 7750), (-1, -1, -1), (10500, 10500, 14250)]


def write_ws(path):
    with open(path, "w") as f:
        f.write("# wgmma-ws made-up grid=1\n")
        f.write("ticket,type,b,band,chunk,sm,block,start,stats,fill,mma,end,ws_pair0,ws_take,ws_last,ws_mma,"
                "ws_issued0,ws_take1,ws_end1\n")
        for r, extra in zip(WS_ROWS, WS_SPLIT):
            f.write(",".join(str(x) for x in r + extra) + "\n")
        f.write(f"-1,block,0,0,0,0,0,0,0,{US},-1,{20 * US},-1,-1,-1,-1,-1,-1,-1\n")


def write(path, rows, blocks, prestats=()):
    with open(path, "w") as f:
        f.write("# mma R=8 TJ=128 made-up grid=2\n")
        f.write("ticket,type,b,band,chunk,sm,block,start,stats,fill,mma,end\n")
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")
        for b, s, setup, barrier, e in blocks:
            f.write(f"-1,block,0,0,0,0,{b},{s},{setup},{barrier},-1,{e}\n")
        for b, s, e in prestats:
            f.write(f"-1,prestats,0,0,0,0,{b},{s},-1,-1,-1,{e}\n")


def run(tool, path, *extra):
    r = subprocess.run([sys.executable, tool, path, *extra], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    tool = sys.argv[1]
    fails = []

    def expect(cond, what, out):
        if not cond:
            fails.append(f"{what}\n--- output ---\n{out}")

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.csv")
        write(path, ROWS, BLOCKS, PRESTATS)
        rc, out = run(tool, path, "--bins", "5")
        # The statistics kernel's rows are reported apart and counted in nothing else (the
        # checks below are the figures without them): -3 to -1 us, block times 1.0 and 1.5 us.
        expect("statistics kernel: 2 blocks from -3.00 to -1.00 us (block time median 1.50)" in out,
               "the statistics kernel's line", out)
        expect("main blocks entered while the statistics kernel ran: 0 of 2 (before its first block's exit: 0)" in out,
               "no main block beside the statistics kernel", out)
        expect(rc == 0, f"exit status {rc} on a good file", out)
        expect("launch span (first block entry to last block exit): 10.00 us; 4 items stamped, 1 NOT stamped" in out,
               "span and the unstamped ticket", out)
        expect("block entries: last 0.50 us after the first" in out, "entry spread", out)
        expect("first conv item at 3.00 us" in out, "first conv start", out)
        # Only block 1 has start-up stamps: set-up 0.2 us after entry, barrier 0.3, first item 0.2 later.
        expect("a block's start-up, median [min-max] us: set-up (thread 0) 0.20 [0.20-0.20], to the set-up's barrier "
               "0.30 [0.30-0.30], barrier to the first item 0.20 [0.20-0.20]" in out, "start-up line", out)
        # Slot time busy: 2 + 2 + 6 + 4 = 14 of 2 x 10 = 70%.
        expect("slots busy with items over the launch: 70.0% (2 blocks x 10.00 us)" in out, "slot time", out)
        # The conv share of busy time: 10 of 14 = 71.4%; its median latency of (6, 4) by the tool's
        # nearest-rank rule is 6.
        expect(any(l.split()[:2] == ["conv", "2"] and l.rstrip().endswith("71.4%") for l in out.splitlines()),
               "conv row (count 2, 71.4% of slot time)", out)
        expect("  fill                                          2.00 [2.00]" in out, "fill phase 2 us", out)
        expect("  ticket to statistics in (waits + loads)       1.00 [1.00]" in out, "statistics phase 1 us", out)
        # Gaps: block 0 2 -> 3 (1 us), block 1 3 -> 4 (1 us): 2 us of 20 = 10%.
        expect("between a block's items (us): median 1.00, p90 1.00, sum 10.0% of slot time" in out, "gaps", out)
        # Tail: the last start is 4 us; after it, busy 5 (block 0 4-9) + 4 (block 1 4-8) of 2 x 6.
        expect("tail: the last item starts at 4.00 us, 6.00 us before the end; slots busy after it: 75.0%" in out,
               "tail", out)
        # Bin 0 (0-2 us): stats 2 us, zero 1 us of 2 x 2 us: 75% all, 50% stats, 25% zero.
        expect("    0     0.00  75.0%   50.0%   0.0%  25.0%" in out, "first bin", out)

        # Statistics blocks leaving at 0.2 and 1.0 us: block 0 (entry 0) came in before the first
        # exit, block 1 (0.5) before the last.
        overlap = os.path.join(d, "overlap.csv")
        write(overlap, ROWS, BLOCKS, [(0, -3 * US, 200), (1, -2500, 1 * US)])
        rc, out = run(tool, overlap)
        expect("main blocks entered while the statistics kernel ran: 2 of 2 (before its first block's exit: 1)" in out,
               "main blocks beside the statistics kernel", out)

        empty = os.path.join(d, "empty.csv")
        write(empty, [(0, "conv", 0, 0, 0, 0, 0, -1, -1, -1, -1, -1)], BLOCKS)
        rc, out = run(tool, empty)
        expect(rc != 0 and "no stamped items" in out, "a file without stamps is an error", out)

        ws = os.path.join(d, "ws.csv")
        write_ws(ws)
        rc, out = run(tool, ws, "--bins", "2")
        expect(rc == 0, f"exit status {rc} on a warp-specialised file", out)
        expect("    statistics (ticket taken to statistics in)        1.00 [1.00-1.00]" in out, "ws statistics 1 us", out)
        expect("    zero item (producer only)                         4.00 [4.00-4.00]   (1 items)" in out, "ws zero item", out)
        expect("    y stores                                          1.00 [1.00-1.00]" in out, "ws stores 1 us", out)
        # Consumers: items 4 + 4 us, before the first 3 - 1 = 2 us, between 10 - 7 = 3 us, after
        # the last 20 - 14 = 6 us, of 20.
        expect("consumers' slot time (1 blocks x 20.00 us): items 40.0% (their own waits on later pairs included), "
               "waiting before the first item 10.0%, between items 15.0%, after the last 30.0%" in out, "ws slot split", out)
        # The wait 7-10 us: the zero item until 8, the statistics 8-9, pair 0's fill 9-10.
        expect("zero item 33.3%, statistics 33.3%, empty wait 0.0%, fill pair 0 33.3%, producer loop 0.0%, other 0.0%" in out,
               "ws wait causes", out)
        expect("waits after a zero item           1 items, median 3.00 us" in out, "ws waits after a zero item", out)
        expect("  consumers, split (2 items):" in out, "ws split header", out)
        expect("    full[0] to pair 0's wgmmas issued                 0.50 [0.50-0.50]" in out, "ws pair 0 issue", out)
        expect("    pair 0 issued to the last pair's full passed      0.50 [0.50-0.50]" in out, "ws wait for the last pair", out)
        expect("    second group's full[0] after the first's          0.50 [0.25-0.50]" in out, "ws second group's take", out)
        expect("    second group's stores done after the first's      0.75 [0.25-0.75]" in out, "ws second group's end", out)

        # The small-seq kernel: three blocks (entry, loads, probs, weights, barrier, conv, exit);
        # block 2 has no exit stamp and is left out. Phases of blocks 0 and 1: loads 0.7 and 0.6,
        # probabilities 0.5 and 0.7, weights 0.2 and 0.2, barrier 0.1 and 0.0, conv 0.4 and 0.5,
        # exit 0.2 and 0.3 us; the tool's nearest-rank median of two is the larger.
        small = os.path.join(d, "small.csv")
        with open(small, "w") as f:
            f.write("# small kernel, grid=3 RB=1 NCOL=1 G=4\n")
            f.write("block,sm,entry,loads,probs,weights,barrier,conv,exit\n")
            f.write("0,10,0,700,1200,1400,1500,1900,2100\n")
            f.write("1,11,100,700,1400,1600,1600,2100,2400\n")
            f.write("2,12,50,800,1300,1500,1550,2000,-1\n")
        rc, out = run(tool, small)
        expect(rc == 0, f"exit status {rc} on a small-kernel file", out)
        expect("launch span (first block entry to last block exit): 2.40 us; 2 blocks stamped" in out, "small span", out)
        expect("block entries: last 0.10 us after the first" in out, "small entries", out)
        expect("  entry to its rows' loads arrived               0.70    0.70    0.70" in out, "small loads", out)
        expect("  row statistics and probabilities               0.70    0.70    0.70" in out, "small probabilities", out)
        expect("  convolution (to its sums)                      0.50    0.50    0.50" in out, "small conv", out)
        expect("  a block, entry to exit                         2.30    2.30    2.30" in out, "small block", out)
        nostamp = os.path.join(d, "small-empty.csv")
        with open(nostamp, "w") as f:
            f.write("# small kernel, grid=1 RB=1 NCOL=1 G=4\nblock,sm,entry,loads,probs,weights,barrier,conv,exit\n"
                    "0,1,-1,-1,-1,-1,-1,-1,-1\n")
        rc, out = run(tool, nostamp)
        expect(rc != 0 and "no stamped blocks" in out, "a small file without stamps is an error", out)
        # The row kernel: its conv stamp comes before its barrier stamp. Block 0: loads 0.7,
        # probabilities 0.3, weights 0.2, taps 0.2, barrier 0.1, sums and exit 0.2 us.
        row = os.path.join(d, "row.csv")
        with open(row, "w") as f:
            f.write("# row kernel, grid=1 threads=128\nblock,sm,entry,loads,probs,weights,barrier,conv,exit\n"
                    "0,5,0,700,1000,1200,1500,1400,1700\n")
        rc, out = run(tool, row)
        expect(rc == 0, f"exit status {rc} on a row-kernel file", out)
        expect("  its channel's taps (to its partial sums)       0.20    0.20    0.20" in out, "row taps", out)
        expect("  the block barrier                              0.10    0.10    0.10" in out, "row barrier", out)
        expect("  channels' sums, stores issued, exit            0.20    0.20    0.20" in out, "row exit", out)
        # v167's order: the weights staged (0.1 us) before the probabilities (0.3 us).
        with open(row, "w") as f:
            f.write("# row kernel, grid=1 threads=128\nblock,sm,entry,loads,probs,weights,barrier,conv,exit\n"
                    "0,5,0,700,1100,800,1400,1300,1600\n")
        rc, out = run(tool, row)
        lines = [l for l in out.splitlines() if l.startswith("  ")]
        expect(rc == 0 and [l[:46].strip() for l in lines[:3]] ==
               ["entry to all its loads arrived", "weights staged (its warp's)", "row statistics and probabilities"],
               "v167's row phases in the order stamped", out)
        expect("  weights staged (its warp's)                    0.10    0.10    0.10" in out, "v167 weights", out)
        expect("  row statistics and probabilities               0.30    0.30    0.30" in out, "v167 probabilities", out)

    for f in fails:
        print("FAIL:", f)
    print(f"{'ok' if not fails else 'FAILED'}: fused_timeline")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
