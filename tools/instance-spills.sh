#!/usr/bin/env bash
# Registers and spills of one file of the fused kernel's instances (impls/fused/instances/NAME.cu),
# compiled for sm_90a as the build does, with `ptxas -v`; with BASE_TREE, the same file of that
# tree too, and the change (tools/ptxas_spills.py --against). Runs where nvcc is (no GPU needed):
# the check to make before spending device time on a candidate (JOURNAL.md, sixteenth session).
# The exit status watches KERNEL_RE (default: the few-heads instance, fused_kernel<T, true, 1, 0,
# 0, false>, whose 64 registers make its spills move): 1 when it spills more than in BASE_TREE.
# Usage: tools/instance-spills.sh NAME [BASE_TREE]   e.g. tools/instance-spills.sh mma_bf16 /tmp/main
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
name=${1:?usage: tools/instance-spills.sh NAME [BASE_TREE]}
base=${2:-}
source "$here/tools/instance-lib.sh"
kernel_re=$(default_kernel_re "$name")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

compile() {  # TREE LOG: ptxas -v's figures into LOG
  compile_instance "$1" "$name" "$out/$(basename "$2").cubin" "$2" -Xptxas -v
}

compile "$here" "$out/new.log" &
pid=$!
[ -n "$base" ] && compile "$(cd "$base" && pwd)" "$out/base.log"
wait "$pid"
if [ -n "$base" ]; then
  python3 "$here/tools/ptxas_spills.py" "$out/new.log" --against "$out/base.log" --kernel "$kernel_re"
else
  python3 "$here/tools/ptxas_spills.py" "$out/new.log" --kernel "$kernel_re"
fi
