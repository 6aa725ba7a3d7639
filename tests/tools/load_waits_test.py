#!/usr/bin/env python3
"""tools/load_waits.py on a made-up `nvdisasm -gi -c` listing: a load issued after a predicated
instruction that reads an earlier load's register is "held" (and the predicate noted); so is
one after an instruction that overwrites it (a load into it too), or after a store of it; a
load whose address comes from the earlier load is "dependent"; loads issued before any wait, or
after a label or a branch (a new straight run), are not listed; --kernel chooses kernels and no
match is exit status 2.
Usage: load_waits_test.py TOOLS/load_waits.py"""
import sys

from listing_tool import run_listing

A = "_ZN8mtabench5fused21fused_prestats_kernelI13__nv_bfloat16Lb1EEEvNS0_11FusedParamsE"
B = "_ZN8mtabench5fused18fused_small_kernelI13__nv_bfloat16Li3ELi1EEEvNS0_11SmallParamsE"
ROOT = "/src/./impls/fused/"

LISTING = f"""\t.section\t.text.{A},"ax",@progbits
\t//## File "{ROOT}fused_prestats.cuh", line 45
        /*0000*/                   LDG.E.128 R16, desc[UR6][R22.64] ;
        /*0010*/                   LDG.E.128 R8, desc[UR6][R22.64+0x200] ;
\t//## File "{ROOT}fused_prestats.cuh", line 50
        /*0020*/              @!P0 LOP3.LUT R5, R16, 0xffff, RZ, 0xc0, !PT ;
\t//## File "{ROOT}fused_prestats.cuh", line 45
        /*0030*/               @P6 LDG.E.128 R4, desc[UR6][R22.64+0x600] ;
        /*0040*/                   BRA 0x60 ;
.L_x_1:
        /*0050*/                   LDG.E R30, desc[UR6][R2.64] ;
        /*0060*/                   MOV R30, RZ ;
        /*0070*/                   LDG.E R31, desc[UR6][R2.64+0x4] ;
        /*0080*/                   FADD R0, R31, R31 ;
.L_x_2:
        /*0090*/                   LDG.E R40, desc[UR6][R2.64+0x8] ;
        /*00a0*/                   LDG.E.64 R42, desc[UR6][R40.64] ;
        /*00b0*/                   EXIT ;
\t.section\t.text.{B},"ax",@progbits
        /*0000*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0010*/                   STG.E.128 desc[UR4][R8.64], R4 ;
        /*0020*/                   LDG.E R12, desc[UR4][R2.64+0x10] ;
        /*0030*/                   LDG.E R13, desc[UR4][R2.64+0x20] ;
        /*0040*/                   FADD R14, R12, R13 ;
.L_x_9:
        /*0050*/                   LDG.E R60, desc[UR4][R2.64+0x30] ;
        /*0060*/                   LDG.E R60, desc[UR4][R2.64+0x40] ;
"""


def run(tool, kernel=None):
    return run_listing(tool, LISTING, kernel)


def entries(out):
    """[(tag, later load's address, wait's address, earlier load's address, predicated note)]."""
    lines, found = out.splitlines(), []
    for i, line in enumerate(lines):
        if line.startswith(("  held:", "  dependent:")):
            tag = line.split(":")[0].strip()
            later = line.split("/*")[1].split("*/")[0]
            wait = lines[i + 1].split("/*")[1].split("*/")[0]
            earlier = lines[i + 2].split("/*")[1].split("*/")[0]
            found.append((tag, later, wait, earlier, "predicated" in lines[i + 1]))
    return found


def main():
    tool = sys.argv[1]
    fails = []
    rc, out = run(tool, "prestats")
    got = sorted(entries(out))
    want = sorted([
        ("held", "0030", "0020", "0000", True),  # the predicated mask of R16 holds the third load
        ("held", "0070", "0060", "0050", False),  # overwriting R30 waits for its load
        ("dependent", "00a0", "00a0", "0090", False),  # the address is the loaded value
    ])
    if rc != 0 or got != want:
        fails.append(f"prestats kernel: exit {rc}, entries {got}, wanted {want}\n{out}")
    if "7 global load(s); 2 held behind an earlier load's wait, 1 dependent on it" not in out:
        fails.append(f"prestats kernel's counts should be 7 loads, 2 held, 1 dependent:\n{out}")
    if "[impls/fused/fused_prestats.cuh:50]" not in out or "fused_small" in out:
        fails.append(f"the wait's source line, or only the chosen kernel:\n{out}")
    rc, out = run(tool, "small")
    got = entries(out)
    want = [("held", "0020", "0010", "0000", False), ("held", "0060", "0060", "0050", False)]
    if rc != 0 or sorted(got) != want:
        fails.append(f"small kernel: a 128-bit store of the loaded R4-R7 holds the next load, and a load into "
                     f"a loaded register waits for it (held, not dependent); exit {rc}, {got}\n{out}")
    rc, out = run(tool, "no_such_kernel")
    if rc != 2:
        fails.append(f"no kernel matched: exit {rc}, wanted 2\n{out}")
    for f in fails:
        print("FAIL:", f)
    if fails:
        return 1
    print("load_waits.py: 3 runs as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
