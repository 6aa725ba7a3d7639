#!/usr/bin/env python3
"""Where each kernel's spills are: every STL/LDL (local-memory store/load) of an `nvdisasm -gi -c`
listing with the source line it belongs to, and a count per source line.

Why: ptxas_spills.py says how many bytes a kernel spills; this says where, which is what decides
whether a spill costs anything (once an item at a phase's start, or in a loop that runs per batch).
JOURNAL.md v73: the few-heads instance's 26 spill instructions were all outside the stats items'
batch loop. The listing needs line information (compile with -lineinfo; tools/spill-sites.sh).

Usage: spill_sites.py LISTING [--kernel REGEX]
One block per kernel whose demangled name (c++filt where it is on PATH) matches REGEX (default:
every kernel): its STL/LDL in address order, each with its innermost source line and the line
it was inlined at, then the count per source line. Exit status 2 when no kernel matches.
"""
import argparse
import os
import re
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ptxas_spills import demangle  # noqa: E402  (the same short names as ptxas_spills.py prints)

SECTION = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)")
LINE = re.compile(r'//## File "([^"]+)", line (\d+)(?: inlined at "([^"]+)", line (\d+))?')
SPILL = re.compile(r"/\*([0-9a-f]+)\*/\s+(?:@!?U?P\w+\s+)?((?:STL|LDL)(?:\.[\w.]+)?)\s+([^;]*);")


def short_path(path):
    """The path from the repository's top folder (impls/, harness/, ...) where it has one."""
    path = path.replace("/./", "/")
    m = re.search(r"(?:^|/)((?:impls|harness|tests|tools)/.*)$", path)
    return m.group(1) if m else path


def parse(path):
    """{mangled kernel: [(address, opcode, operands, 'file:line', 'inlined at file:line' or '')]}.

    nvdisasm -gi puts before an instruction a group of '//## File' comments when its source
    position changes: the first names the innermost line (with the line it was inlined at); the
    position holds for the instructions after it until the next group."""
    kernels, kernel, where = {}, None, ("?", "")
    prev_was_line = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = SECTION.match(line)
            if m:
                kernel = m.group(1)
                kernels[kernel] = []
                where = ("?", "")
                prev_was_line = False
                continue
            m = LINE.search(line)
            if m:
                if not prev_was_line:  # the group's first comment: the innermost position
                    at = f"{short_path(m.group(3))}:{m.group(4)}" if m.group(3) else ""
                    where = (f"{short_path(m.group(1))}:{m.group(2)}", at)
                prev_was_line = True
                continue
            prev_was_line = False
            m = SPILL.search(line)
            if m and kernel is not None:
                args = re.sub(r"\s*\(\*.*?\*\)", "", m.group(3)).strip()  # nvdisasm's (*"SpillRefill"*) notes
                kernels[kernel].append((m.group(1), m.group(2), args, where[0], where[1]))
    return kernels


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("listing", help="nvdisasm -gi -c output")
    ap.add_argument("--kernel", default="", help="regex on the demangled name")
    a = ap.parse_args()
    kernels = parse(a.listing)
    pretty = demangle(sorted(kernels))
    watch = re.compile(a.kernel)
    chosen = [k for k in sorted(kernels) if watch.search(pretty[k])]
    if not chosen:
        print(f"spill_sites.py: no kernel in {a.listing} matches {a.kernel!r} "
              f"({len(kernels)} kernel(s); was it disassembled with nvdisasm -c?)", file=sys.stderr)
        return 2
    for k in chosen:
        sites = kernels[k]
        stores = sum(1 for s in sites if s[1].startswith("STL"))
        print(f"{pretty[k]}: {len(sites)} spill instruction(s), {stores} STL, {len(sites) - stores} LDL")
        for addr, op, args, src, at in sites:
            print(f"  /*{addr}*/ {op:<8} {args:<22} {src}" + (f"  (inlined at {at})" if at else ""))
        if sites:
            print("  per source line:")
            for src, n in sorted(Counter(s[3] for s in sites).items(), key=lambda x: (-x[1], x[0])):
                print(f"    {n:3d}  {src}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
