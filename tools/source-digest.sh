#!/usr/bin/env bash
# The source digest (records' provenance.harness.source_digest) of a commit, or of the working
# tree without an argument: which code a record was measured from, when its git fields cannot
# say (a dirty tree). Usage: tools/source-digest.sh [COMMIT]
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
if [ $# -eq 0 ]; then
  exec cmake -DSRC="$here" -DPRINT=1 -P cmake/SourceDigest.cmake
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git archive "$1" harness impls cmake CMakeLists.txt | tar -x -C "$tmp"
# The digest's definition is this checkout's; the files are the commit's.
cd "$tmp" && cmake -DSRC="$tmp" -DPRINT=1 -P "$here/cmake/SourceDigest.cmake"
