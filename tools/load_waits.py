#!/usr/bin/env python3
"""Global loads that go out only after an earlier load has arrived: in an `nvdisasm -gi -c`
listing, each LDG whose issue follows, in the same straight run of code, an instruction that
reads or overwrites an earlier LDG's registers (the "wait"), with both loads' source lines.

Why: an instruction waits at issue for the loads whose registers it uses, and a predicated-off
one waits too (the wait is in its scheduling bits, the predicate is read later), so a masking
step between two loads holds the second load one round trip (JOURNAL.md v92: v89's statistics
fold masked its vectors by words with predicated instructions between the loads; the fourth load
went out after the first three had arrived, seq 1000-1024 +7%). ptxas_spills.py and
spill_sites.py find the other way loads get serialised, a spill of a loaded register.

A straight run ends at a label (a branch target) or a branch, exit or barrier. A later load whose
address uses the earlier load's registers is a real dependence and is listed apart. A heuristic
over address order, for reading the listing, not a proof; wait instructions of loops show up too.

Usage: load_waits.py LISTING [--kernel REGEX] [--max N]
Exit status 2 when no kernel matches; otherwise 0 (the count is the finding, not a failure).
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spill_sites import NO_DEST, choose, parse_full, width, written  # noqa: E402

RUN_END = ("BRA", "BRX", "JMP", "EXIT", "RET", "CALL", "BAR", "BSYNC", "WARPSYNC")


def address(load):
    """The registers of a load's address operand (everything after its destination)."""
    return {int(r) for r in re.findall(r"\bR(\d+)\b", load.args.split(",", 1)[1])} if "," in load.args else set()


def read(insn):
    """The registers an instruction reads: a .64 operand's pair, a store's data register and the
    ones after it (its width), single registers otherwise."""
    store = insn.op.startswith(("ST", "RED", "ATOM"))
    if insn.op.startswith(NO_DEST) or not written(insn.op, insn.args):
        src = insn.args
    else:
        src = insn.args.split(",", 1)[1] if "," in insn.args else ""
    out = set()
    for m in re.finditer(r"(\[[^\]]*\])|\bR(\d+)(\.64)?\b", src):
        if m.group(1):  # an address: its registers (pairs where .64)
            for r, wide in re.findall(r"\bR(\d+)(\.64)?\b", m.group(1)):
                out |= {int(r), int(r) + 1} if wide else {int(r)}
        else:
            n = 2 if m.group(3) else width(insn.op) if store else 1
            out |= set(range(int(m.group(2)), int(m.group(2)) + n))
    return out


def is_load(insn):
    return insn.op.startswith("LDG") and bool(written(insn.op, insn.args))


def held_loads(insns):
    """[(earlier load, its wait, later load, dependent)] over every straight run."""
    found, run = [], []
    for insn in insns + [None]:
        if insn is None or insn.label or insn.op.startswith(RUN_END):
            found += held_in_run(run)
            run = []
        if insn is not None and not insn.op.startswith(RUN_END):
            run.append(insn)
    return found


def held_in_run(run):
    found = []
    for i, load in enumerate(run):
        if not is_load(load):
            continue
        dest = set(written(load.op, load.args))
        for j in range(i + 1, len(run)):
            w = run[j]
            if not (read(w) & dest or set(written(w.op, w.args)) & dest):
                continue
            if is_load(w):  # the wait is itself a load: of an address the earlier one loaded, or of its registers
                found.append((load, w, w, bool(address(w) & dest)))
                break
            later = next((x for x in run[j + 1:] if is_load(x)), None)
            if later is not None:
                found.append((load, w, later, bool(address(later) & dest)))
            break
    return found


def show(insn):
    return f"/*{insn.addr}*/ {(insn.pred + ' ') if insn.pred else ''}{insn.op} {insn.args}  [{insn.src}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("listing", help="nvdisasm -gi -c output")
    ap.add_argument("--kernel", default="", help="regex on the demangled name")
    ap.add_argument("--max", type=int, default=40, help="at most this many listed a kernel")
    a = ap.parse_args()
    full = parse_full(a.listing)
    pretty, chosen = choose(full, a.kernel, a.listing, "load_waits.py")
    if chosen is None:
        return 2
    for k in chosen:
        held = held_loads(full[k])
        free = [h for h in held if not h[3]]
        print(f"{pretty[k]}: {sum(is_load(i) for i in full[k])} global load(s); {len(free)} held behind an "
              f"earlier load's wait, {len(held) - len(free)} dependent on it")
        for load, w, later, dep in sorted(held, key=lambda h: h[3])[:a.max]:
            tag = "dependent" if dep else "held"
            note = "  (predicated: waits all the same)" if w.pred else ""
            print(f"  {tag}: {show(later)}\n    after {show(w)}{note}\n    which waits for {show(load)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
