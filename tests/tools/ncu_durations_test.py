#!/usr/bin/env python3
"""tools/ncu_durations.py on made-up ncu CSV reports: a kernel 5% faster in A over two rounds is
"faster" (p < 0.05), one that did not change is "same", one only B ran is reported as such; the
harness's kernels are left out by --kernel, which also matches the bare name ("^fused_row");
rows of other metrics are ignored; pooled launches 5% faster whose rounds disagree (one round
slower) are "unsure"; a report without ncu's header is left out with a warning; a label that is
not aN=/bN= is an error.
Usage: ncu_durations_test.py TOOLS/ncu_durations.py"""
import os
import subprocess
import sys
import tempfile

HEAD = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
        '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def report(rows):
    """An ncu CSV: ==PROF== noise first, as ncu prints it, then the header and the rows."""
    lines = ["==PROF== Connected to process 1", HEAD]
    for i, (kernel, grid, metric, value) in enumerate(rows):
        lines.append(f'"{i}","1","mtabench","h","{kernel}","1","7","(128, 1, 1)","{grid}","0","9.0",'
                     f'"Command line profiler metrics","{metric}","ns","{value}"')
    return "\n".join(lines) + "\n"


def main():
    tool = sys.argv[1]
    fails = []

    def expect(ok, what, out):
        if not ok:
            fails.append(f"{what}\n{out}")

    row = "void mtabench::fused::fused_row_kernel<__nv_bfloat16, 1>(mtabench::fused::SmallParams)"
    other = "void mtabench::fused::fused_small_kernel<__nv_bfloat16, 3, 8>(mtabench::fused::SmallParams)"
    only_b = "void mtabench::fused::fused_kernel<__nv_bfloat16, 2>(mtabench::fused::FusedParams)"
    empty = "(anonymous namespace)::empty_kernel()"
    with tempfile.TemporaryDirectory() as d:
        def write(name, rows):
            path = os.path.join(d, name)
            with open(path, "w") as f:
                f.write(report(rows))
            return path

        def side(row_ns, other_ns, with_only_b):
            rows = [(row, "(64, 1, 1)", "gpu__time_duration.sum", f"{v:,}") for v in row_ns]
            rows += [(row, "(64, 1, 1)", "sm__cycles_elapsed.max", "9999999")]
            rows += [(other, "(512, 1, 1)", "gpu__time_duration.sum", v) for v in other_ns]
            rows += [(empty, "(1, 1, 1)", "gpu__time_duration.sum", v) for v in (1536, 1536, 1632)]
            if with_only_b:
                rows += [(only_b, "(132, 1, 1)", "gpu__time_duration.sum", 9000)]
            return rows

        b_row = [3264, 3296, 3232, 3264, 3300, 3250, 3270, 3280]
        a_row = [round(v * 0.95) for v in b_row]
        flat = [7870, 7880, 7860, 7875, 7865, 7870, 7872, 7868]
        a1 = write("a1.csv", side(a_row, flat, False))
        a2 = write("a2.csv", side(a_row, flat, False))
        b1 = write("b1.csv", side(b_row, flat, True))
        b2 = write("b2.csv", side(b_row, flat, True))
        run = lambda *a: subprocess.run([sys.executable, tool, *a], capture_output=True, text=True)
        r = run("--kernel", "mtabench::fused", f"a1={a1}", f"b1={b1}", f"a2={a2}", f"b2={b2}")
        out = r.stdout + r.stderr
        expect(r.returncode == 0, f"exit status {r.returncode}", out)
        lines = {l.split()[0].split("::")[-1].split("<")[0]: l for l in out.splitlines() if "mtabench::fused" in l}
        row_line = lines.get("fused_row_kernel", "")
        expect(" faster (0.9500 0.9500)" in row_line and " 0.9500 " in row_line and " 16 " in row_line,
               "the row kernel: 16 launches a side, A/B 0.9500, faster", out)
        expect(" 3267 " in row_line, "the row kernel's B median (of 3232-3300, commas read)", out)
        expect(" same (" in lines.get("fused_small_kernel", ""), "an unchanged kernel is the same", out)
        expect(lines.get("fused_kernel", "").endswith("only in B"), "a kernel only B ran", out)
        expect("empty_kernel" not in out, "--kernel leaves the harness's kernels out", out)
        r = run(f"a1={a1}", f"b1={b1}")
        expect("empty_kernel" in r.stdout and "same" in r.stdout, "without --kernel, every kernel", r.stdout + r.stderr)
        bad = os.path.join(d, "bad.csv")
        with open(bad, "w") as f:
            f.write("==ERROR== the application returned an error code (1)\n")
        r = run(f"a1={a1}", f"b1={b1}", f"a2={a2}", f"b2={bad}")
        expect(r.returncode == 0 and "no ncu CSV header" in r.stderr and "left out" in r.stderr and
               " faster (0.9500)" in r.stdout, "a report without ncu's header is left out, its round too", r.stdout + r.stderr)
        r = run("--kernel", "^fused_row", f"a1={a1}", f"b1={b1}")
        expect(r.returncode == 0 and "fused_row_kernel" in r.stdout and "fused_small_kernel" not in r.stdout,
               "--kernel '^fused_row' matches the bare name", r.stdout + r.stderr)
        # Round 1 (24 launches of A) 8% faster, round 2 (8 launches) 3% slower: pooled, A is faster
        # beyond the threshold with p < 0.05, but the rounds disagree.
        a1_fast = write("a1fast.csv", side([round(v * 0.92) for v in b_row * 3], flat, False))
        a2_slow = write("a2slow.csv", side([round(v * 1.03) for v in b_row], flat, False))
        r = run("--kernel", "fused_row", f"a1={a1_fast}", f"b1={b1}", f"a2={a2_slow}", f"b2={b2}")
        line = next((l for l in r.stdout.splitlines() if "fused_row_kernel" in l), "")
        p = float(line.split()[-4]) if line else 1.0
        expect(r.returncode == 0 and p < 0.05 and " unsure (0.9200 1.0300)" in line,
               "rounds that disagree are unsure though the pooled test is significant", r.stdout + r.stderr)
        r = run(f"x1={a1}")
        expect(r.returncode != 0 and "is not aN=CSV" in r.stderr, "a label that is not a or b", r.stdout + r.stderr)

    for f in fails:
        print("FAIL:", f)
    print(f"{'ok' if not fails else 'FAILED'}: ncu_durations")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
