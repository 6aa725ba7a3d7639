#!/usr/bin/env python3
"""index.html in a real browser: headless Chromium renders the golden leaderboard; the test asserts
that the rendered DOM has the record tables and the scaling plot, and that the screenshot is a
page, not a blank (it counts non-white pixels and colours, and finds the plot's line colours).

Exit 0: passed; 1: failed; 77: skipped (no Chromium, and MTABENCH_REQUIRE_BROWSER is not 1).
Standard library only: the PNG is decoded here (zlib + the five PNG filters)."""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import zlib

SKIP = 77


def find_chromium():
    for name in (os.environ.get("MTABENCH_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def read_png(path):
    """Returns (width, height, rows) with rows as lists of (r, g, b) tuples."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif f == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 0xFF
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def near(c, target, tol=12):
    return all(abs(a - b) <= tol for a, b in zip(c, target))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mtabench", required=True)
    ap.add_argument("--records", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()

    chromium = find_chromium()
    if not chromium:
        if os.environ.get("MTABENCH_REQUIRE_BROWSER") == "1":
            print("FAIL: no chromium on PATH and MTABENCH_REQUIRE_BROWSER=1 (apt-get install chromium)")
            return 1
        print("SKIP: no chromium on PATH (set MTABENCH_REQUIRE_BROWSER=1 to make this a failure)")
        return SKIP

    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    out = os.path.join(args.work, "site")
    subprocess.run([args.mtabench, "leaderboard", args.records, "--out", out, "--now", "2025-06-01", "--baseline",
                    "cudnn"], check=True)
    page = os.path.join(out, "index.html")
    html = open(page, encoding="utf-8").read()
    failures = []
    # Self-contained: no scripts, no stylesheets or images from elsewhere.
    for bad in ("<script", "<link", "src=\"http", "@import", "url("):
        if bad in html:
            failures.append(f"index.html is not self-contained: it has {bad!r}")

    url = "file://" + os.path.abspath(page)
    base = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--user-data-dir={os.path.join(args.work, 'profile')}"]
    dom = subprocess.run(base + ["--dump-dom", url], capture_output=True, text=True, timeout=180).stdout
    for needle, what in (('<table class="records"', "the current-records table"),
                         ('<table class="entries"', "an entries table"),
                         ('<table class="history"', "a record-history table"),
                         ('<table class="scaling"', "a scaling table"),
                         ("<svg", "the scaling plot"),
                         ('class="series"', "a plotted series"),
                         ('class="floor"', "the floor curve"),
                         ("How records are decided", "the rules")):
        if needle not in dom:
            failures.append(f"rendered DOM lacks {what} ({needle!r})")

    shot = os.path.join(args.work, "screenshot.png")
    subprocess.run(base + [f"--screenshot={shot}", "--window-size=1280,2000", url], capture_output=True, timeout=180)
    if not os.path.exists(shot):
        failures.append("chromium wrote no screenshot")
    else:
        width, height, rows = read_png(shot)
        pixels = [c for row in rows for c in row]
        non_white = sum(1 for c in pixels if sum(c) < 735)
        colours = len(set(pixels))
        blue = sum(1 for c in pixels if near(c, (0x1F, 0x77, 0xB4)))  # the first series
        red = sum(1 for c in pixels if near(c, (0xD6, 0x27, 0x28)))   # the second series
        print(f"screenshot {width}x{height}: {non_white / len(pixels):.1%} non-white, {colours} colours, "
              f"{blue} blue and {red} red plot pixels")
        if non_white < 0.02 * len(pixels):
            failures.append(f"the screenshot is nearly blank ({non_white} non-white pixels)")
        if colours < 50:
            failures.append(f"the screenshot has only {colours} colours")
        if blue < 100 or red < 100:
            failures.append("the screenshot shows no plot lines (too few pixels of the series colours)")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("PASS: tables and plot rendered;", shot)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
