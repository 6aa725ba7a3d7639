"""Runs a listing reader (tools/spill_sites.py, tools/load_waits.py) on a made-up nvdisasm listing,
for the tests of both: the listing goes into a temporary file, the tool's exit status and output
(stdout, then stderr) come back."""
import os
import subprocess
import sys
import tempfile


def run_listing(tool, listing, kernel=None):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.sass")
        with open(path, "w") as f:
            f.write(listing)
        cmd = [sys.executable, tool, path] + (["--kernel", kernel] if kernel is not None else [])
        r = subprocess.run(cmd, capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr
