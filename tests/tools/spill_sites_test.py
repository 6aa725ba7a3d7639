#!/usr/bin/env python3
"""tools/spill_sites.py on a made-up `nvdisasm -gi -c` listing: each STL/LDL gets the innermost
source line of the comment group before it (and the line it was inlined at), a position holds
until the next group and not past its kernel's section, predicated spills and nvdisasm's notes
are read, kernels are chosen by --kernel, and no match is exit status 2; an STL of a register
that a global load wrote (through a masking update that reads it too) is marked with that load,
and an STL of a computed register or of a load's register overwritten since is not.
Usage: spill_sites_test.py TOOLS/spill_sites.py"""
import re
import sys

from listing_tool import run_listing

A = "_ZN8mtabench5fused12fused_kernelI13__nv_bfloat16Lb1ELi1ELi0ELb0ELb0EEEvNS0_11FusedParamsE"
B = "_ZN8mtabench5fused18fused_small_kernelI13__nv_bfloat16Li3ELi1EEEvNS0_11SmallParamsE"
C = "_ZN8mtabench5fused21fused_prestats_kernelI13__nv_bfloat16EEvNS0_11FusedParamsE"
ROOT = "/src/./impls/fused/"

LISTING = f"""\t.section\t.text.{A},"ax",@progbits
\t//## File "{ROOT}fused_stats.cuh", line 152 inlined at "{ROOT}fused_kernel.cuh", line 164
\t//## File "{ROOT}fused_kernel.cuh", line 164
        /*0010*/                   IMAD R0, R1, R2, RZ ;
        /*0020*/                   STL [R1+0x8], R0                     (*"SpillRefill"*);
        /*0030*/                   LDL R3, [R1+0x8]                     (*"SpillRefill"*);
\t//## File "{ROOT}fused_mma.cuh", line 169
        /*0040*/               @P0 LDL.LU R4, [R1+0x4] ;
        /*0050*/                   LDG.E.128 R8, desc[UR4][R2.64] ;
\t.section\t.text.{B},"ax",@progbits
        /*0000*/                   STL [R1], R5 ;
\t//## File "{ROOT}fused_small.cuh", line 40
        /*0010*/                   LDS R6, [R7] ;
	.section	.text.{C},"ax",@progbits
        /*0000*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0010*/              @!P1 PRMT R5, R27, 0x7610, R5 ;
        /*0020*/                   IMAD R6, R0, R1, RZ ;
        /*0030*/                   STL [R1+0x4], R5 ;
        /*0040*/                   STL [R1+0x8], R6 ;
        /*0050*/                   STL.64 [R1+0x10], R6 ;
        /*0060*/                   STL [R1+0x18], R7 ;
"""


def run(tool, kernel=None):
    return run_listing(tool, LISTING, kernel)


def main():
    tool = sys.argv[1]
    fails = []
    rc, out = run(tool, "fused_kernel")
    sites = [l for l in out.splitlines() if l.startswith("  /*")]
    want = [("STL", "[R1+0x8], R0", "impls/fused/fused_stats.cuh:152", "impls/fused/fused_kernel.cuh:164"),
            ("LDL", "R3, [R1+0x8]", "impls/fused/fused_stats.cuh:152", "impls/fused/fused_kernel.cuh:164"),
            ("LDL.LU", "R4, [R1+0x4]", "impls/fused/fused_mma.cuh:169", None)]
    if rc != 0 or len(sites) != len(want):
        fails.append(f"kernel A: exit {rc}, {len(sites)} sites, wanted 0 and {len(want)}\n{out}")
    for line, (op, args, src, at) in zip(sites, want):
        if (f" {op} " not in line or args not in line or src not in line or "SpillRefill" in line
                or (at and f"(inlined at {at})" not in line) or (not at and "inlined" in line)):
            fails.append(f"site {line!r}: wanted {op} {args} at {src}" + (f" inlined at {at}" if at else ""))
    if "3 spill instruction(s), 1 STL, 2 LDL" not in out:
        fails.append(f"kernel A's counts should be 3 instructions, 1 STL, 2 LDL:\n{out}")
    if not re.search(r"^\s+2\s+impls/fused/fused_stats.cuh:152$", out, re.M):
        fails.append(f"the per-line count should give fused_stats.cuh:152 two sites:\n{out}")
    if "fused_small" in out:
        fails.append(f"--kernel fused_kernel listed the small kernel:\n{out}")
    rc, out = run(tool)
    small = [l for l in out.splitlines() if l.startswith("  /*0000*/")]
    if rc != 0 or len(small) != 1 or small[0].rstrip().endswith(".cuh:169") or "?" not in small[0]:
        fails.append(f"every kernel: the small kernel's STL (before any line comment of its section) "
                     f"should have no position, not kernel A's last:\n{out}")
    rc, out = run(tool, "prestats")
    marked = {l.split()[0]: "<- LDG /*0000*/" in l for l in out.splitlines() if l.startswith("  /*")}
    # 0030: R5 through the masking PRMT (which reads it); 0050: R7 of the pair; 0040: R6 computed.
    if marked != {"/*0030*/": True, "/*0040*/": False, "/*0050*/": True, "/*0060*/": True} \
            or "STLs of loaded values (each waits for its load): 3" not in out:
        fails.append(f"STLs of loaded values: 0030, 0050 and 0060 marked, 0040 not, 3 counted:\n{out}")
    rc, out = run(tool, "no_such_kernel")
    if rc != 2:
        fails.append(f"no matching kernel: exit {rc}, wanted 2\n{out}")
    if fails:
        print("\n".join(fails))
        return 1
    print("spill_sites.py: 5 runs as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
