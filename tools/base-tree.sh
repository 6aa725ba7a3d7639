#!/usr/bin/env bash
# Unpacks a commit (default main) into DIR as the base tree B of a device A/B call
# (tools/gpu-abba.sh, tools/gpu-duration.sh), leaving out what no build reads: results/, the
# fused kernel's journal and candidate patches, and, unless --with-tests (tools/gpu-ab.sh builds
# its other trees with tests), tests/. Then says how the whole working tree, which the device
# copies, stands against the device's 64 MiB limit.
# Why: the device copies the checkout's tracked and untracked files; with results/ at ~62 MiB
# (every record twice: results/runs and results/history), a full `git archive main` base tree
# (~2.4 MB) no longer fit after the fifty-seventh session's two records.
# Usage: tools/base-tree.sh DIR [REF] [--with-tests]
set -euo pipefail
usage="usage: tools/base-tree.sh DIR [REF] [--with-tests]"
dir=${1:?$usage}
shift
ref=main tests=0
for a in "$@"; do
  case "$a" in
    --with-tests) tests=1 ;;
    -*) echo "$usage" >&2; exit 2 ;;
    *) ref=$a ;;
  esac
done
cd "$(dirname "$0")/.."
git rev-parse --verify -q "$ref^{commit}" >/dev/null || { echo "base-tree.sh: '$ref' is not a commit here" >&2; exit 2; }
if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
  echo "base-tree.sh: $dir exists and is not empty (remove it first: a stale tree would be measured)" >&2
  exit 2
fi
mkdir -p "$dir"
excludes=(--exclude=results --exclude=impls/fused/JOURNAL.md --exclude=impls/fused/candidates)
[ "$tests" = 1 ] || excludes+=(--exclude=tests)
git archive "$ref" | tar -x -C "$dir" "${excludes[@]}"
tree_bytes=$(du -sb "$dir" | cut -f1)
# What the device copies: tracked files and untracked files git does not ignore (DIR among them).
total=$( { git ls-files -z; git ls-files -z --others --exclude-standard; } | xargs -0 -r du -cb 2>/dev/null | awk '/\ttotal$/ { s += $1 } END { print s + 0 }')
limit=$((64 * 1024 * 1024))
echo "base-tree.sh: $ref unpacked into $dir ($tree_bytes bytes$([ "$tests" = 1 ] || echo ", without tests/")); the working tree the device copies: $total of $limit bytes"
[ "$total" -le "$limit" ] || { echo "base-tree.sh: over the device's limit: the call would be refused" >&2; exit 1; }
