#!/usr/bin/env python3
"""tools/sass_hotspots.py --roles on a made-up per-instruction CSV of a warp-specialised kernel:
each role's samples land in its row (set-up, consumers and their HGMMA span, producer with the
common tail, each out-of-line block credited to the role whose branch reaches it), and a kernel
without the role markers is refused. Usage: sass_hotspots_test.py TOOLS/sass_hotspots.py"""
import csv
import os
import subprocess
import sys
import tempfile

# (source, samples); addresses are 0x7000 + 16 i, so "A(i)" names instruction i's address.
KERNEL = [
    ("MOV R1, c[0x0][0x28]", 1),                 # 0  set-up
    ("BAR.SYNC.DEFER_BLOCKING 0x0", 1),          # 1
    ("USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xc8", 0),  # 2  consumers
    ("HGMMA.64x32x16.F32.BF16 R24, R152, gdesc[UR8], R24", 10),  # 3
    ("@!P0  BRA A(13)", 5),                      # 4  to the consumers' slow path
    ("HGMMA.64x32x16.F32.BF16 R40, R152, gdesc[UR8], R40, gsb0", 10),  # 5
    ("FADD R1, R2, R3", 4),                      # 6
    ("USETMAXREG.DEALLOC.CTAPOOL 0x68", 0),      # 7  producer
    ("FFMA R4, R5, R6, R7", 20),                 # 8
    ("@!P0  BRA A(12)", 3),                      # 9  to the producer's slow path
    ("@!P1  EXIT", 0),                           # 10 predicated: not the end
    ("EXIT", 1),                                 # 11 the end of the in-line code
    ("@!P0  NANOSLEEP.SYNCS 0x989680", 7),       # 12 producer's slow path
    ("@!P0  NANOSLEEP.SYNCS 0x989680", 2),       # 13 consumers' slow path
    ("BRA A(3)", 0),                             # 14
]


def write_csv(path, kernel):
    head = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Warp Stall Sampling (Not-issued Samples)",
            "Instructions Executed", "stall_long_sb"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["# made-up profile"])
        w.writerow(head)
        for i, (src, samples) in enumerate(kernel):
            for k in range(len(kernel)):
                src = src.replace(f"A({k})", hex(0x7000 + 16 * k))
            w.writerow([hex(0x7000 + 16 * i), "        " + src, samples, samples, 100, samples])


def run(tool, path):
    return subprocess.run([sys.executable, tool, path, "--roles"], capture_output=True, text=True)


def main():
    tool = sys.argv[1]
    total = sum(s for _, s in KERNEL)
    want = {  # label: (lo, hi, samples)
        "set-up (before USETMAXREG)": (0, 2, 2),
        "consumers": (2, 7, 29),
        "of which first..last HGMMA": (3, 6, 25),
        "producer, then the common tail": (7, 12, 24),
        "out-of-line, reached from the producer": (12, 13, 7),
        "out-of-line, reached from the consumers": (13, 15, 2),
    }
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ws.sass.csv")
        write_csv(path, KERNEL)
        r = run(tool, path)
        if r.returncode != 0:
            sys.exit(f"FAIL: --roles exited {r.returncode}: {r.stderr}")
        got = {}
        for line in r.stdout.splitlines():
            if "[" in line and line.rstrip().endswith("%"):
                label, rest = line.split("[", 1)
                lo, hi = (int(x) for x in rest.split(")")[0].split(","))
                got[label.strip()] = (lo, hi, float(rest.split(")")[1].strip().rstrip("%")))
        for label, (lo, hi, samples) in want.items():
            pct = round(100 * samples / total, 1)
            if got.get(label) != (lo, hi, pct):
                failures.append(f"{label}: want [{lo},{hi}) {pct}%, got {got.get(label)}")
        if set(got) - set(want):
            failures.append(f"unexpected rows: {sorted(set(got) - set(want))}")
        # A kernel without the role markers (the plain kernel) is refused, not split.
        plain = [(s, n) for s, n in KERNEL if "USETMAXREG" not in s]
        write_csv(path, plain)
        r = run(tool, path)
        if r.returncode == 0 or "not the warp-specialised kernel" not in r.stderr:
            failures.append(f"plain kernel: exit {r.returncode}, stderr {r.stderr!r}")
    for f in failures:
        print("FAIL:", f)
    print(f"sass_hotspots --roles: {len(want) + 1 - len(failures)} of {len(want) + 1} checks passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
