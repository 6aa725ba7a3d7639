#!/usr/bin/env python3
"""tools/ptxas_spills.py on made-up `ptxas -v` logs: each kernel's registers and spills are read
from its own block (a separately compiled device function's properties are not a kernel's),
and with --against the exit status is 1 exactly when a watched kernel spills more bytes than in
the base or is missing, 0 otherwise, 2 for a log without kernels or a watch matching none.
Usage: ptxas_spills_test.py TOOLS/ptxas_spills.py"""
import os
import subprocess
import sys
import tempfile

A = "_ZN8mtabench5fused12fused_kernelI13__nv_bfloat16Lb1ELi1ELi0ELb0ELb0EEEvNS0_11FusedParamsE"
B = "_ZN8mtabench5fused18fused_small_kernelI13__nv_bfloat16Li3ELi1EEEvNS0_11SmallParamsE"
HELPER = "_ZN8mtabench5fused9row_statsI13__nv_bfloat16EE6float2PKT_xx"


def log(a_spill, b_spill, with_a=True):
    """A ptxas -v log: the helper's own properties (with spills of its own), then kernels A, B."""
    lines = [
        f"ptxas info    : Function properties for {HELPER}",
        "    24 bytes stack frame, 99 bytes spill stores, 99 bytes spill loads",
    ]
    for name, (stores, loads), regs, present in ((A, a_spill, 64, with_a), (B, b_spill, 40, True)):
        if not present:
            continue
        lines += [
            f"ptxas info    : Compiling entry function '{name}' for 'sm_90a'",
            f"ptxas info    : Function properties for {name}",
            f"    {8 if stores else 0} bytes stack frame, {stores} bytes spill stores, {loads} bytes spill loads",
            f"ptxas info    : Used {regs} registers, used 1 barriers, 16 bytes smem",
        ]
    return "\n".join(lines) + "\n"


def run(tool, new, base=None, kernel=None):
    with tempfile.TemporaryDirectory() as d:
        pn, pb = os.path.join(d, "new.log"), os.path.join(d, "base.log")
        with open(pn, "w") as f:
            f.write(new)
        cmd = [sys.executable, tool, pn]
        if base is not None:
            with open(pb, "w") as f:
                f.write(base)
            cmd += ["--against", pb]
        if kernel:
            cmd += ["--kernel", kernel]
        r = subprocess.run(cmd, capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr


def main():
    tool = sys.argv[1]
    fails = []

    def check(what, got, want, out):
        if got != want:
            fails.append(f"{what}: exit {got}, wanted {want}\n{out}")

    rc, out = run(tool, log((48, 56), (0, 0)))
    check("one log", rc, 0, out)
    rows = [l for l in out.splitlines()[1:] if l.strip()]
    if len(rows) != 2:
        fails.append(f"one log: {len(rows)} rows, wanted 2 (the helper is not a kernel)\n{out}")
    a_row = next((l for l in rows if "fused_kernel" in l), "")
    if a_row.split()[-4:] != ["64", "8", "48", "56"]:
        fails.append(f"kernel A's row should read 64 registers, 8 stack, 48/56 spills: {a_row!r}")
    if "99" in out:
        fails.append(f"the helper's spills were counted: {out}")
    rc, out = run(tool, log((48, 56), (0, 0)), log((48, 56), (0, 0)), "fused_kernel")
    check("same spills", rc, 0, out)
    rc, out = run(tool, log((40, 48), (0, 0)), log((48, 56), (0, 0)), "fused_kernel")
    check("fewer spills", rc, 0, out)
    rc, out = run(tool, log((48, 200), (0, 0)), log((48, 56), (0, 0)), "fused_kernel")
    check("more spill loads in the watched kernel", rc, 1, out)
    rc, out = run(tool, log((88, 56), (0, 0)), log((48, 56), (0, 0)), "fused_kernel")
    check("more spill stores in the watched kernel", rc, 1, out)
    rc, out = run(tool, log((48, 56), (16, 16)), log((48, 56), (0, 0)), "fused_kernel")
    check("more spills in a kernel not watched", rc, 0, out)
    rc, out = run(tool, log((48, 56), (16, 16)), log((48, 56), (0, 0)))
    check("more spills, every kernel watched", rc, 1, out)
    rc, out = run(tool, log((48, 56), (0, 0), with_a=False), log((48, 56), (0, 0)), "fused_kernel")
    check("watched kernel missing", rc, 1, out)
    rc, out = run(tool, "ptxas info    : nothing compiled\n")
    check("no kernels", rc, 2, out)
    rc, out = run(tool, log((48, 56), (0, 0)), log((48, 56), (0, 0)), "fused_kernel<[^,]+, true, 9")
    check("a watch that matches no kernel", rc, 2, out)
    if fails:
        print("\n".join(fails))
        return 1
    print("ptxas_spills.py: 10 cases as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
