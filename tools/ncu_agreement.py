#!/usr/bin/env python3
"""Figure 3 of the timing protocol: does mtabench's median agree with an independent timer?

For each (implementation, workload) it runs `mtabench run` (the protocol: events around one call,
L2 flushed before each sample) and, separately, the same case under Nsight Compute with
--cache-control all (caches flushed before every kernel) and --clock-control none (the clocks the
protocol sees), collecting gpu__time_duration of every kernel. Harness kernels (flush, probes,
input generation) delimit the calls; the kernels between two harness kernels are one call, and
their durations add up. Prints both medians and their ratio.

The two do not measure quite the same thing: the protocol's events also hold the launch latency
(about the empty kernel's 2-3 us), and ncu flushes between the kernels of a multi-kernel call.
Usage: tools/ncu_agreement.py MTABENCH WORKLOAD_FILE NAME_REGEX IMPL [IMPL...]
"""
import csv, io, json, pathlib, statistics, subprocess, sys, tempfile

HARNESS = ("empty_kernel", "generate_kernel", "fingerprint", "count_written", "clock_probe_kernel",
           "hold_kernel", "read_flush_kernel")
# The gate checks one timed sample with the GPU reference: its kernels are the harness's too,
# except when the reference is the implementation being timed.
CHECKER = ("row_stats", "probabilities", "convolve")


def protocol_median(mtabench, wfile, name, impl, tmp):
    out = pathlib.Path(tmp) / f"proto-{impl}"
    subprocess.run([mtabench, "run", wfile, "--filter", name, "--impl", impl, "--quiet", "--max-time", "2",
                    "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    recs = [json.loads(l) for f in (out / "runs").glob("*.jsonl") for l in open(f) if l.strip()]
    return {r["workload"]["name"]: r for r in recs if r["outcome"] == "passed"}


def ncu_calls(mtabench, wfile, name, impl):
    cmd = ["ncu", "--target-processes", "all", "--clock-control", "none", "--cache-control", "all",
           "--metrics", "gpu__time_duration.sum", "--csv", "--print-units", "base", "--launch-skip", "80",
           "--launch-count", "240", mtabench, "run", wfile, "--filter", name, "--impl", impl, "--quiet",
           "--no-isolate", "--no-records", "--max-time", "1", "--min-time", "0.1"]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = [r for r in csv.reader(io.StringIO(text[text.find('"ID"'):]))][1:]
    calls, cur = [], []
    for r in rows:
        kernel, value = r[4], float(r[-1].replace(",", "")) * 1e-3  # ns -> us
        if any(h in kernel for h in HARNESS) or (impl != "reference" and any(c in kernel for c in CHECKER)):
            if cur:
                calls.append(sum(cur))
            cur = []
        else:
            cur.append(value)
    return calls  # the last open group may be cut by --launch-count: not counted


def main():
    mtabench, wfile, name, impls = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    print("| workload | impl | protocol median (us) | ncu gpu__time_duration median (us) | calls | protocol / ncu |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for impl in impls:
            recs = protocol_median(mtabench, wfile, name, impl, tmp)
            for wname, rec in sorted(recs.items(), key=lambda kv: kv[1]["workload"]["seq"]):
                calls = ncu_calls(mtabench, wfile, f"^{wname}$", impl)
                proto = rec["timing"]["device"]["median_s"] * 1e6
                med = statistics.median(calls) if calls else float("nan")
                print(f"| {wname} | {impl} | {proto:.2f} | {med:.2f} | {len(calls)} | {proto / med:.3f} |", flush=True)


if __name__ == "__main__":
    main()
