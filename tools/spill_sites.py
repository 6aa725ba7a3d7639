#!/usr/bin/env python3
"""Where each kernel's spills are: every STL/LDL (local-memory store/load) of an `nvdisasm -gi -c`
listing with the source line it belongs to, and a count per source line.

Why: ptxas_spills.py says how many bytes a kernel spills; this says where, which is what decides
whether a spill costs anything (once an item at a phase's start, or in a loop that runs per batch).
JOURNAL.md v73: the few-heads instance's 26 spill instructions were all outside the stats items'
batch loop. The listing needs line information (compile with -lineinfo; tools/spill-sites.sh).

An STL that stores a register holding a value straight from a global load is marked
"<- LDG /*ADDR*/": the store waits for that load, so loads meant to be in flight together go one
round trip after another (JOURNAL.md v88: the statistics kernel at 32 registers spilled each
loaded vector so, ~3 us a row). Found by walking back in address order (not control flow) to the
register's last writer, passing over writers that also read it (masking PRMTs, predicated
updates); a heuristic, for reading the listing, not a proof.

Usage: spill_sites.py LISTING [--kernel REGEX]
One block per kernel whose demangled name (c++filt where it is on PATH) matches REGEX (default:
every kernel): its STL/LDL in address order, each with its innermost source line and the line
it was inlined at, then the count per source line and of STLs of loaded values. Exit status 2
when no kernel matches.
"""
import argparse
import os
import re
import sys
from collections import Counter, namedtuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ptxas_spills import demangle  # noqa: E402  (the same short names as ptxas_spills.py prints)

SECTION = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)")
LINE = re.compile(r'//## File "([^"]+)", line (\d+)(?: inlined at "([^"]+)", line (\d+))?')
INSN = re.compile(r"/\*([0-9a-f]+)\*/\s+(?:@!?U?P\w+\s+)?([A-Z][\w.]*)\s*([^;]*);")
REG = re.compile(r"^R(\d+)$")
NO_DEST = ("ST", "RED", "BRA", "BAR", "CALL", "RET", "EXIT", "ISETP", "FSETP", "CCTL", "WARPSYNC", "BSYNC", "BSSY")
WALK_BACK = 200  # instructions searched for a register's last writer


def width(opcode):
    return 4 if ".128" in opcode else 2 if ".64" in opcode else 1


def written(opcode, operands):
    """The registers an instruction writes: its first operand, where that is a register."""
    if opcode.startswith(NO_DEST):
        return []
    m = REG.match(operands.split(",")[0].strip())
    return list(range(int(m.group(1)), int(m.group(1)) + width(opcode))) if m else []


def loaded_stores(insns):
    """{STL address: LDG address} for the STLs that store a register last written by a global load."""
    found = {}
    for k, insn in enumerate(insns):
        addr, op, args = insn.addr, insn.op, insn.args
        if not op.startswith("STL"):
            continue
        m = re.search(r"\],\s*R(\d+)", args)
        if not m:
            continue
        for r in range(int(m.group(1)), int(m.group(1)) + width(op)):
            for j in range(k - 1, max(-1, k - 1 - WALK_BACK), -1):
                a2, op2, args2 = insns[j].addr, insns[j].op, insns[j].args
                if r not in written(op2, args2):
                    continue
                if op2.startswith("LDG"):
                    found[addr] = a2
                    break
                if re.search(rf"\bR{r}\b", args2.split(",", 1)[1] if "," in args2 else ""):
                    continue  # it reads r too: an update of the value, not a new one
                break
            if addr in found:
                break
    return found


def short_path(path):
    """The path from the repository's top folder (impls/, harness/, ...) where it has one."""
    path = path.replace("/./", "/")
    m = re.search(r"(?:^|/)((?:impls|harness|tests|tools)/.*)$", path)
    return m.group(1) if m else path


Insn = namedtuple("Insn", "addr pred op args src at label")  # label: a branch target line came before it
LABEL = re.compile(r"^\s*\.L\w*:")
PRED = re.compile(r"/\*[0-9a-f]+\*/\s+(@!?U?P\w+)\s")


def parse_full(path):
    """{mangled kernel: [Insn]}: every instruction of an nvdisasm listing with its predicate ('' when
    none), its source position and whether a label (a branch target) came before it.

    nvdisasm -gi puts before an instruction a group of '//## File' comments when its source
    position changes: the first names the innermost line (with the line it was inlined at); the
    position holds for the instructions after it until the next group."""
    insns, kernel, where = {}, None, ("?", "")
    prev_was_line = label = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = SECTION.match(line)
            if m:
                kernel = m.group(1)
                insns[kernel] = []
                where = ("?", "")
                prev_was_line = label = False
                continue
            m = LINE.search(line)
            if m:
                if not prev_was_line:  # the group's first comment: the innermost position
                    at = f"{short_path(m.group(3))}:{m.group(4)}" if m.group(3) else ""
                    where = (f"{short_path(m.group(1))}:{m.group(2)}", at)
                prev_was_line = True
                continue
            prev_was_line = False
            if LABEL.match(line):
                label = True
                continue
            m = INSN.search(line)
            if m and kernel is not None:
                args = re.sub(r"\s*\(\*.*?\*\)", "", m.group(3)).strip()  # nvdisasm's (*"SpillRefill"*) notes
                p = PRED.search(line)
                insns[kernel].append(Insn(m.group(1), p.group(1) if p else "", m.group(2), args, where[0], where[1], label))
                label = False
    return insns


def choose(kernels, pattern, listing, tool):
    """(demangled names, the kernels whose demangled name matches pattern); the message and None
    for the caller's exit status 2 when none does."""
    pretty = demangle(sorted(kernels))
    watch = re.compile(pattern)
    chosen = [k for k in sorted(kernels) if watch.search(pretty[k])]
    if not chosen:
        print(f"{tool}: no kernel in {listing} matches {pattern!r} "
              f"({len(kernels)} kernel(s); was it disassembled with nvdisasm -c?)", file=sys.stderr)
        return pretty, None
    return pretty, chosen


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("listing", help="nvdisasm -gi -c output")
    ap.add_argument("--kernel", default="", help="regex on the demangled name")
    a = ap.parse_args()
    insns = parse_full(a.listing)
    pretty, chosen = choose(insns, a.kernel, a.listing, "spill_sites.py")
    if chosen is None:
        return 2
    for k in chosen:
        sites = [i for i in insns[k] if i.op.startswith(("STL", "LDL"))]
        loaded = loaded_stores(insns[k])
        stores = sum(1 for i in sites if i.op.startswith("STL"))
        print(f"{pretty[k]}: {len(sites)} spill instruction(s), {stores} STL, {len(sites) - stores} LDL")
        for i in sites:
            print(f"  /*{i.addr}*/ {i.op:<8} {i.args:<22} {i.src}" + (f"  (inlined at {i.at})" if i.at else "")
                  + (f"  <- LDG /*{loaded[i.addr]}*/" if i.addr in loaded else ""))
        if sites:
            print("  per source line:")
            for src, n in sorted(Counter(i.src for i in sites).items(), key=lambda x: (-x[1], x[0])):
                print(f"    {n:3d}  {src}")
            print(f"  STLs of loaded values (each waits for its load): {len(loaded)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
