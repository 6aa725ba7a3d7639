#!/usr/bin/env python3
"""leaderboard.json against schemas/leaderboard.schema.json with an independent validator
(python3-jsonschema, Draft 2020-12): the golden file, and a leaderboard the CLI writes now.

Exit 0: valid; 1: invalid; 77: skipped (no jsonschema, and MTABENCH_REQUIRE_JSONSCHEMA is not 1)."""
import argparse
import json
import os
import subprocess
import sys

SKIP = 77


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mtabench", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    try:
        import jsonschema
    except ImportError:
        if os.environ.get("MTABENCH_REQUIRE_JSONSCHEMA") == "1":
            print("FAIL: MTABENCH_REQUIRE_JSONSCHEMA=1 but python3-jsonschema is missing")
            return 1
        print("SKIP: python3-jsonschema is missing")
        return SKIP

    schema = json.load(open(os.path.join(args.source_dir, "schemas", "leaderboard.schema.json")))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    golden = os.path.join(args.source_dir, "tests", "golden", "leaderboard")
    out = os.path.join(args.work, "lb")
    subprocess.run([args.mtabench, "leaderboard", os.path.join(golden, "records"),
                    os.path.join(args.source_dir, "results", "reported", "rtx3090-leaderboard-page.jsonl"),
                    "--out", out], check=True, stdout=subprocess.DEVNULL)
    failures = 0
    for path in (os.path.join(golden, "expected", "leaderboard.json"), os.path.join(out, "leaderboard.json")):
        errors = list(validator.iter_errors(json.load(open(path))))
        for e in errors[:5]:
            print(f"FAIL: {path}: /{'/'.join(str(p) for p in e.absolute_path)}: {e.message}")
        failures += len(errors)
        if not errors:
            print(f"valid: {path}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
