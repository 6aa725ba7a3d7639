"""Shared by the end-to-end tests: run mtabench, read JSONL records, recompute hashes in Python.

Everything here is independent of mtabench's own code: the record hash is recomputed with
Python's json and hashlib (SPEC §6: sha256 of the canonical JSON, sorted keys, no whitespace,
without record_sha256), the workload identity likewise (SPEC §1).
"""
import hashlib
import json
import os
import subprocess
import sys

SKIP = 77  # ctest SKIP_RETURN_CODE


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def run(cmd, cwd, env=None, timeout=600):
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    print(p.stdout, end="")
    print(p.stderr, end="", file=sys.stderr)
    print("(exit %d)" % p.returncode, flush=True)
    return p


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def record_hash(rec):
    body = {k: v for k, v in rec.items() if k != "record_sha256"}
    return hashlib.sha256(canonical(body).encode("utf-8")).hexdigest()


def identity(workload):
    keys = ("semantics", "k", "seq", "batch", "heads_in", "heads_out", "dtype")
    return hashlib.sha256(canonical({k: workload[k] for k in keys}).encode("utf-8")).hexdigest()


def split_jsonl(path):
    """(complete lines, trailing partial line or None) of a JSONL file, as text."""
    with open(path, "rb") as f:
        data = f.read().decode("utf-8", errors="replace")
    parts = data.split("\n")
    partial = parts.pop()  # after the last newline: "" when the file ends with one
    return [l for l in parts if l], (partial if partial else None)


def jsonl_files(folder):
    out = []
    for root, _dirs, files in os.walk(folder):
        out += [os.path.join(root, f) for f in files if f.endswith(".jsonl")]
    return sorted(out)


def load_validator(source):
    """A Draft 2020-12 validator for schemas/record.schema.json, or None if jsonschema is absent."""
    try:
        import jsonschema
        validator_cls = jsonschema.Draft202012Validator
    except (ImportError, AttributeError) as e:
        return None, "%s (python3-jsonschema >= 4 for %s)" % (e, sys.executable)
    with open(os.path.join(source, "schemas", "record.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    validator_cls.check_schema(schema)
    return validator_cls(schema, format_checker=jsonschema.FormatChecker()), None


def require_validator(source):
    v, why = load_validator(source)
    if v is not None:
        return v
    if os.environ.get("MTABENCH_REQUIRE_JSONSCHEMA") == "1":
        fail("MTABENCH_REQUIRE_JSONSCHEMA=1 but the independent validator is missing: %s. "
             "Install Debian's python3-jsonschema (apt-get install python3-jsonschema)." % why)
    print("SKIP: no independent JSON Schema validator: %s" % why, flush=True)
    sys.exit(SKIP)


def schema_errors(validator, rec):
    return ["%s: %s" % ("/" + "/".join(str(p) for p in e.absolute_path), e.message)
            for e in sorted(validator.iter_errors(rec), key=lambda e: list(map(str, e.absolute_path)))]


def number_format_differences(line):
    """Numbers in a record line that Python's json.dumps would write differently (the same double,
    other text): these make a hash computed by mtabench irreproducible from Python."""
    import re
    out = []
    for m in re.finditer(r'(?<=[:,\[])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?=[,\]}])', line):
        text = m.group(0)
        redone = json.dumps(json.loads(text))
        if redone != text:
            out.append("%s (Python: %s)" % (text, redone))
    return out


def check_record(rec, where, validator=None, line=None, hash_must_match=True):
    """Hash, identity and (if a validator is given) schema of one parsed record. `line`, the text
    the record came from, lets a hash mismatch name the numbers formatted differently."""
    check(isinstance(rec, dict), "%s: not a JSON object" % where)
    if rec.get("record_sha256") != record_hash(rec):
        msg = "%s: record_sha256 %s but Python computes %s" % (where, rec.get("record_sha256"), record_hash(rec))
        diffs = number_format_differences(line) if line else []
        if diffs:
            msg += ("; numbers mtabench formats unlike Python's json.dumps: %s (BUG: canonical_json's number "
                    "format, see the unit test Record.BUG_CanonicalNumbersMatchPythonJsonDumps)" % ", ".join(diffs))
        if hash_must_match:
            fail(msg)
        print("note: " + msg, flush=True)
    check(rec["workload"]["identity"] == identity(rec["workload"]),
          "%s: workload identity %s but Python computes %s" % (where, rec["workload"]["identity"],
                                                                 identity(rec["workload"])))
    if validator is not None:
        errs = schema_errors(validator, rec)
        check(not errs, "%s: schema errors:\n  %s" % (where, "\n  ".join(errs)))
