#!/usr/bin/env python3
"""End to end (issue 2): `mtabench run workloads/smoke.json --out TMP` writes records that an
independent validator (Debian's python3-jsonschema, Draft 2020-12) accepts, whose record_sha256
and workload identity Python recomputes; without a GPU, stderr carries the CPU-fallback notice.
`mtabench validate` accepts the records and rejects a tampered copy; each record's source digest
is the digest of the sources (recomputed here); `mtabench run` on a malformed
workload file exits non-zero with the file/pointer/reason message and writes nothing.

Exit 77 (skipped) when python3-jsonschema is missing, unless MTABENCH_REQUIRE_JSONSCHEMA=1 (CI),
which makes that a failure.
"""
import argparse
import glob
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import check, check_record, fail, require_validator, run, split_jsonl  # noqa: E402


def gpu_present():
    return any(os.path.exists(p) for p in glob.glob("/dev/nvidia[0-9]*"))


def source_digest(src):
    """cmake/SourceDigest.cmake, recomputed independently: sha256 over the sorted lines
    '<sha256 of file>  <path>' of every file under harness/, impls/, cmake/ and CMakeLists.txt."""
    import hashlib
    paths = ["CMakeLists.txt"]
    for top in ("harness", "impls", "cmake"):
        for d, _, files in os.walk(os.path.join(src, top)):
            paths += [os.path.relpath(os.path.join(d, f), src) for f in files]
    lines = ""
    for rel in sorted(paths):
        with open(os.path.join(src, rel), "rb") as fh:
            lines += "%s  %s\n" % (hashlib.sha256(fh.read()).hexdigest(), rel)
    return hashlib.sha256(lines.encode()).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mtabench", required=True)
    ap.add_argument("--source", required=True)
    a = ap.parse_args()
    validator = require_validator(a.source)
    tmp = tempfile.mkdtemp(prefix="mtabench-e2e-")
    env = dict(os.environ, TMPDIR=tmp)  # the run's scratch files land in our folder too
    try:
        out = os.path.join(tmp, "out")
        # --max-time bounds each case (the protocol's default is 10 s); the rule is unchanged.
        p = run([a.mtabench, "run", "workloads/smoke.json", "--out", out, "--max-time", "2"], a.source, env)
        check(p.returncode == 0, "mtabench run exited %d" % p.returncode)
        no_gpu = "no GPU" in p.stderr
        if not gpu_present():
            check(no_gpu, "no /dev/nvidia*: stderr should carry the CPU-fallback notice (\"no GPU\")")
        if no_gpu:
            notice = [l for l in p.stderr.splitlines() if "no GPU" in l]
            check(len(notice) == 1, "the CPU-fallback notice should be one line, got %r" % notice)
            check("CPU" in notice[0], "the notice should say the CPU implementations run: %r" % notice[0])

        runs = glob.glob(os.path.join(out, "runs", "*.jsonl"))
        check(len(runs) == 1, "expected one runs/*.jsonl, found %r" % runs)
        lines, partial = split_jsonl(runs[0])
        check(partial is None, "the run file ends with a partial line")
        records = []
        for n, line in enumerate(lines, 1):
            rec = json.loads(line)
            check_record(rec, "%s:%d" % (runs[0], n), validator, line)
            check(rec["outcome"] == "passed", "%s:%d: outcome %s (%s)" % (runs[0], n, rec["outcome"], rec["reason"]))
            check(rec["trust"]["level"] == "measured", "trust level %r" % rec["trust"])
            check(rec["timing"]["stop_reason"] in ("converged", "time_limit"), "stop reason %r" % rec["timing"])
            records.append(rec)
        names = sorted({r["workload"]["name"] for r in records})
        check(names == sorted(["smoke-seed", "smoke-seq1", "smoke-k1", "smoke-k5-fp32", "smoke-seq100"]),
              "workloads in the records: %r" % names)
        impls = sorted({r["implementation"]["name"] for r in records})
        if no_gpu:
            check(impls == ["reference-cpu"], "without a GPU only reference-cpu runs, got %r" % impls)
            check(len(records) == 5, "expected 5 records, got %d" % len(records))
        else:
            check(len(records) == 5 * len(impls), "%d records for %d implementations" % (len(records), len(impls)))
        check(len({r["run_id"] for r in records}) == 1, "one run id per run")
        # The code measured, whatever git says: the digest of the sources the binary was built from.
        digest = source_digest(a.source)
        for r in records:
            check(r["provenance"]["harness"]["source_digest"] == digest,
                  "provenance.harness.source_digest %r, sources %r (rebuild after editing?)"
                  % (r["provenance"]["harness"]["source_digest"], digest))

        # The same records, in the same order, in the hardware's append-only history.
        hist = glob.glob(os.path.join(out, "history", "*.jsonl"))
        check(len(hist) >= 1, "no history/*.jsonl")
        hist_hashes = []
        for h in sorted(hist):
            hl, hp = split_jsonl(h)
            check(hp is None, "%s ends with a partial line" % h)
            for n, line in enumerate(hl, 1):
                rec = json.loads(line)
                check_record(rec, "%s:%d" % (h, n), validator, line)
                hist_hashes.append(rec["record_sha256"])
        check(sorted(hist_hashes) == sorted(r["record_sha256"] for r in records),
              "history and run file hold different records")

        # mtabench's own validator agrees.
        v = run([a.mtabench, "validate", out], a.source, env)
        check(v.returncode == 0, "mtabench validate exited %d" % v.returncode)
        m = re.search(r"(\d+) valid record\(s\), (\d+) problem\(s\)", v.stdout)
        check(m is not None, "validate printed no summary")
        check(int(m.group(1)) == 2 * len(records) and m.group(2) == "0", "validate: %s" % m.group(0))

        # ... and rejects a copy with one byte flipped, naming the line.
        tampered = os.path.join(tmp, "tampered.jsonl")
        text = "\n".join(lines) + "\n"
        at = text.index('"name":"smoke-k1"')
        text = text[:at + 8] + "S" + text[at + 9:]  # "smoke-k1" -> "Smoke-k1"
        with open(tampered, "w", encoding="utf-8") as f:
            f.write(text)
        bad_line = text[:at].count("\n") + 1
        v = run([a.mtabench, "validate", tampered], a.source, env)
        check(v.returncode == 1, "validate of a tampered file exited %d" % v.returncode)
        check("%s:%d:" % (tampered, bad_line) in v.stdout and "record_sha256" in v.stdout,
              "validate did not name the tampered line %d" % bad_line)
        check("%d valid record(s), 1 problem(s)" % (len(records) - 1) in v.stdout, "other records not kept")

        # A malformed workload: non-zero exit, file + pointer + reason on stderr, nothing written.
        for bad, pointer, reason in [("k_even.json", "/k", "k must be odd"),
                                     ("duplicate_key_entry.json", "/workloads/1/seq", "duplicate key \"seq\"")]:
            out2 = os.path.join(tmp, "out-" + bad)
            path = os.path.join("tests", "data", "malformed", bad)
            for args in ([path], ["workloads/smoke.json", path]):  # also after a good file
                p = run([a.mtabench, "run"] + args + ["--out", out2], a.source, env)
                check(p.returncode != 0, "run on %s exited 0" % bad)
                want = "%s: %s: %s" % (path, pointer, reason)
                check(want in p.stderr, "stderr lacks %r" % want)
                check(not os.path.exists(out2), "run on %s wrote %s" % (bad, out2))
        print("PASS: %d records validated (schema, hash, identity) in %s and history" % (len(records), runs[0]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
