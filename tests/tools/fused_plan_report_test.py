#!/usr/bin/env python3
"""fused-plan-report on made-up records: one row per work-queue run of `fused` (not the small-seq
kernel's, not other implementations'), each row's item counts adding up, its shares in order and
about half of its spread zero chunks before half of its tiles;
a plan string that is not the host's reads "no"; a record without a field it needs, a line that
is not JSON and a missing file are exit status 1 with the file and line named.
Usage: fused_plan_report_test.py FUSED_PLAN_REPORT"""
import json
import os
import subprocess
import sys
import tempfile


def record(name, seq, grid, plan="not this plan", impl="fused", path="tensor-core work queue"):
    cfg = {"grid": grid, "path": path}
    if plan is not None:
        cfg["plan"] = plan
    return {"implementation": {"name": impl, "configuration": cfg},
            "workload": {"name": name, "k": 3, "seq": seq, "batch": 2, "heads_in": 4, "heads_out": 4,
                         "dtype": "bf16"},
            "provenance": {"device": {"smem_per_block_optin": 232448, "compute_capability": "9.0"},
                           "harness": {"cuda_architectures": "90a"}}}


def run(tool, lines):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "runs.jsonl")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        r = subprocess.run([tool, path], capture_output=True, text=True)
        return r.returncode, r.stdout, r.stderr, path


def main():
    tool = sys.argv[1]
    fails = []
    windows = {"w2048": 1056, "w4096": 528}
    good = [json.dumps(record("w2048", 2048, windows["w2048"])), json.dumps(record("w4096", 4096, windows["w4096"])),
            json.dumps(record("small", 32, 64, plan=None, path="small-seq")),
            json.dumps(record("other", 4096, 1056, impl="cudnn"))]
    rc, out, err, _ = run(tool, good)
    rows = [l.split() for l in out.splitlines() if len(l.split()) > 1 and l.split()[1].isdigit()]
    if rc != 0 or [r[0] for r in rows] != ["w2048", "w4096"]:
        fails.append(f"good records: exit {rc}, rows {[r[0] for r in rows]}, wanted 0 and w2048, w4096\n{out}{err}")
    for r in rows:
        items, stats, conv, zero = (int(x) for x in r[2:6])
        within1, within2 = float(r[7].rstrip("%")), float(r[8].rstrip("%"))
        zero_first = float(r[9].rstrip("%"))
        if stats + conv + zero != items:
            fails.append(f"{r[0]}: stats + conv + zero = {stats + conv + zero}, items {items}")
        if not 0 <= within1 <= within2 <= 100:
            fails.append(f"{r[0]}: shares {within1}% and {within2}% out of order")
        # The plan spreads the zero chunks evenly among the tiles (v75) but keeps the last
        # min(zeros / 2, window / 4) for the end (v81; the plan's own unit test
        # ZeroChunksSpreadEvenlyAmongTheTilesAndSomeKeptForTheEnd guards both): about half of the
        # spread ones before half of the tiles. Band order gave 74-87% (seq 2048-8192), and a
        # column that never counts gives 0.
        held = min(zero // 2, windows[r[0]] // 4)
        want = 50.0 * (zero - held) / zero
        if not want - 10 <= zero_first <= want + 10:
            fails.append(f"{r[0]}: {zero_first}% of the zero chunks before half of the tiles, wanted {want:.0f} +- 10%")
        if r[-1] != "(no)":
            fails.append(f"{r[0]}: a made-up plan string should not match the host's: {r[-1]}")
    bad = record("bad", 2048, 1056)
    del bad["workload"]["k"]
    for what, lines in (("a record without workload.k", good[:1] + [json.dumps(bad)]),
                        ("a line that is not JSON", good[:1] + ["{not json"])):
        rc, out, err, path = run(tool, lines)
        if rc != 1 or f"{path}:2" not in err:
            fails.append(f"{what}: exit {rc}, wanted 1 with '{path}:2' named\n{err}")
    r = subprocess.run([tool, "/nonexistent/runs.jsonl"], capture_output=True, text=True)
    if r.returncode != 1 or "/nonexistent/runs.jsonl" not in r.stderr:
        fails.append(f"a missing file: exit {r.returncode}\n{r.stderr}")
    if fails:
        print("\n".join(fails))
        return 1
    print("fused-plan-report: 4 runs as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
