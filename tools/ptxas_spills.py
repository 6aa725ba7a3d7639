#!/usr/bin/env python3
"""Registers and spills of each kernel in a `ptxas -v` log (nvcc -Xptxas -v), and with
--against, the change from a base log.

Why: the fused kernel's few-heads instance (fused_kernel<T, 1, 1, 0, 0, 0>, 4 blocks an SM, so
64 registers) spills, and any code change moves ptxas' spills there; reloads at the phase
starts cost 3-10% (JOURNAL.md, sixteenth session: v65's 12% fewer instructions measured 2.4%
slower for that reason). Read this before spending device time on a candidate.

Usage: ptxas_spills.py LOG [--against BASE_LOG] [--kernel REGEX]
Prints one row per kernel (demangled by c++filt where it is on PATH): registers, stack frame,
spill stores and loads (bytes). With --against, the base's figures and the change; the exit
status is 1 when a kernel matching --kernel (default: every kernel) spills more bytes (stores or
loads) than in the base, or is missing from the new log; 2 on a log with no kernels or a
--kernel that matches none.
"""
import argparse
import re
import shutil
import subprocess
import sys

ENTRY = re.compile(r"Compiling entry function '([^']+)'")
PROPS = re.compile(r"Function properties for (\S+)")
SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
REGS = re.compile(r"Used (\d+) registers")


def parse(path):
    """{mangled name: {regs, stack, stores, loads}} of the entry functions (kernels) in a log.

    ptxas prints, per entry function: 'Compiling entry function', then 'Function properties
    for' it with its stack and spills, then 'Used N registers'. Device functions it compiled
    separately have properties of their own (no 'Compiling entry' line): they are skipped."""
    kernels = {}
    entry = current = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = ENTRY.search(line)
            if m:
                entry = m.group(1)
                current = None
                continue
            m = PROPS.search(line)
            if m:
                current = m.group(1) if m.group(1) == entry else None
                continue
            m = SPILL.search(line)
            if m and current:
                kernels.setdefault(current, {})
                kernels[current].update(stack=int(m.group(1)), stores=int(m.group(2)), loads=int(m.group(3)))
                continue
            m = REGS.search(line)
            if m and entry:
                kernels.setdefault(entry, {"stack": 0, "stores": 0, "loads": 0})
                kernels[entry]["regs"] = int(m.group(1))
                entry = current = None
    return kernels


def demangle(names):
    if not names or not shutil.which("c++filt"):
        return {n: n for n in names}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.splitlines()
    if len(out) != len(names):
        return {n: n for n in names}
    # Drop the namespace and the parameter list: the template arguments are what tell instances apart.
    short = [re.sub(r"^void |\(.*\)$", "", o).replace("mtabench::fused::", "") for o in out]
    return dict(zip(names, short))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--against", help="the base tree's ptxas log")
    ap.add_argument("--kernel", default="", help="regex on the demangled name: the kernels the exit status watches")
    a = ap.parse_args()
    new = parse(a.log)
    if not new:
        print(f"ptxas_spills.py: no kernels in {a.log} (was it compiled with -Xptxas -v?)", file=sys.stderr)
        return 2
    base = parse(a.against) if a.against else None
    names = sorted(set(new) | set(base or {}))
    pretty = demangle(names)
    watch = re.compile(a.kernel)
    if not any(watch.search(pretty[n]) for n in names):
        # A watch that matches nothing would pass every change (the default of instance-spills.sh
        # named the few-heads instance's old template arguments from v72 to the fifty-fifth session).
        print(f"ptxas_spills.py: --kernel {a.kernel!r} matches no kernel in the log(s)", file=sys.stderr)
        return 2
    worse = []
    fmt = "{:<60} {:>5} {:>6} {:>7} {:>6}"
    head = fmt.format("kernel", "regs", "stack", "stores", "loads")
    print(head + ("   base regs/stores/loads" if base is not None else ""))
    for n in names:
        k = new.get(n)
        row = fmt.format(pretty[n][:60], *(k.get(x, "-") for x in ("regs", "stack", "stores", "loads"))) if k else \
            fmt.format(pretty[n][:60], "-", "-", "-", "-")
        if base is not None:
            b = base.get(n)
            row += "   " + (f"{b.get('regs', '-')}/{b['stores']}/{b['loads']}" if b else "(new)")
            if watch.search(pretty[n]) and b and (not k or k["stores"] > b["stores"] or k["loads"] > b["loads"]):
                worse.append(pretty[n])
                row += "   <- more spills" if k else "   <- missing"
        print(row)
    if worse:
        print(f"{len(worse)} kernel(s) spill more than the base (or are missing): " + "; ".join(worse))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
