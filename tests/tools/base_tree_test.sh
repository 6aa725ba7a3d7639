#!/usr/bin/env bash
# CPU test of tools/base-tree.sh in a made-up repository: the base tree leaves out results/, the
# journal, the candidates and (without --with-tests) tests/; it refuses a non-empty DIR and a ref
# that is not a commit; a working tree over 64 MiB is exit status 1.
# Usage: base_tree_test.sh TOOLS_DIR
set -u
tools=${1:?usage: base_tree_test.sh TOOLS_DIR}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
repo=$dir/repo
mkdir -p "$repo/tools" "$repo/results" "$repo/tests" "$repo/impls/fused/candidates" "$repo/harness"
cp "$tools/base-tree.sh" "$repo/tools/"
echo "project(x)" >"$repo/CMakeLists.txt"
echo "record" >"$repo/results/r.jsonl"
echo "test" >"$repo/tests/t.cpp"
echo "journal" >"$repo/impls/fused/JOURNAL.md"
echo "patch" >"$repo/impls/fused/candidates/v1.patch"
echo "kernel" >"$repo/impls/fused/fused.cu"
echo "core" >"$repo/harness/core.cpp"
(cd "$repo" && git init -q -b main && git add -A && git -c user.name=t -c user.email=t@t commit -qm init) || exit 1
failures=0
fail() { echo "FAIL: $*"; cat "$dir/log"; failures=$((failures + 1)); }
run() { (cd "$repo" && bash tools/base-tree.sh "$@") >"$dir/log" 2>&1; }

run ab/b || fail "exit status $? on a small repository"
for p in CMakeLists.txt impls/fused/fused.cu harness/core.cpp tools/base-tree.sh; do
  [ -f "$repo/ab/b/$p" ] || fail "ab/b lacks $p"
done
for p in results tests impls/fused/JOURNAL.md impls/fused/candidates; do
  [ ! -e "$repo/ab/b/$p" ] || fail "ab/b holds $p"
done
grep -q "without tests/); the working tree the device copies: [0-9]* of 67108864 bytes" "$dir/log" || fail "no size line"
run ab/c main --with-tests || fail "exit status $? with --with-tests"
[ -f "$repo/ab/c/tests/t.cpp" ] || fail "--with-tests left tests/ out"
run ab/b && fail "a non-empty DIR accepted"
grep -q "exists and is not empty" "$dir/log" || fail "a non-empty DIR not named"
run ab/d no-such-ref && fail "a ref that is not a commit accepted"
# 65 MiB of untracked, not ignored files: over the limit.
truncate -s 65M "$repo/big.bin"
run ab/e && fail "a working tree over 64 MiB passed"
grep -q "over the device's limit" "$dir/log" || fail "the limit not said"

[ "$failures" -eq 0 ] || exit 1
echo "base-tree.sh: lean and --with-tests trees, a non-empty DIR, a bad ref and a tree over 64 MiB"
