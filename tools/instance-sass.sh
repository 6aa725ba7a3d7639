#!/usr/bin/env bash
# The SASS of one kernel of one file of the fused kernel's instances (impls/fused/instances/NAME.cu),
# compiled for sm_90a as the build compiles it, without a GPU: where ptxas put the loads,
# shuffles and FMAs, before any device time is spent. The fifty-fifth session's v160 and v161 turned
# on this: ptxas held the small kernel to 32 registers and put a row's conversions between the
# two rows' DRAM loads (JOURNAL.md, "v159 measured; v160 ...").
# Needs cuobjdump: on PATH, in $CUOBJDUMP, or from NVIDIA's pip wheel where the CUDA install lacks
# it (a developer's machine, not the build):
#   pip download --no-deps -d /tmp/w nvidia-cuda-cuobjdump && unzip -qo /tmp/w/*.whl -d /tmp/w/x
#   CUOBJDUMP=$(find /tmp/w/x -name cuobjdump -type f) tools/instance-sass.sh small ...
# Prints one instruction a line (addresses and encodings dropped); with --summary, the line
# numbers of the global loads, the barriers and the shuffles' destination registers. Where a
# load waits for an earlier one: tools/spill-sites.sh (its load_waits.py report, with nvdisasm).
# Usage: tools/instance-sass.sh NAME MANGLED_KERNEL_NAME [TREE] [--summary]
#   e.g. tools/instance-sass.sh small _ZN8mtabench5fused18fused_small_kernelI13__nv_bfloat16Li3ELi1EEEvNS0_11SmallParamsE
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: tools/instance-sass.sh NAME MANGLED_KERNEL_NAME [TREE] [--summary]"
summary=0
args=()
for a in "$@"; do [ "$a" = --summary ] && summary=1 || args+=("$a"); done
name=${args[0]:?$usage}
kernel=${args[1]:?$usage}
tree=$(cd "${args[2]:-$here}" && pwd)
cuobjdump=${CUOBJDUMP:-$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)}
[ -x "$cuobjdump" ] || { echo "instance-sass.sh: no cuobjdump (see the header for NVIDIA's wheel)" >&2; exit 2; }
source "$here/tools/instance-lib.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
compile_instance "$tree" "$name" "$out/k.cubin" "$out/log"
"$cuobjdump" -sass -fun "$kernel" "$out/k.cubin" | grep -E '^\s+/\*[0-9a-f]+\*/' |
  sed 's|/\*[0-9a-f]*\*/||; s| ;.*||; s|^ *||' >"$out/k.sass"
[ -s "$out/k.sass" ] || { echo "instance-sass.sh: no kernel $kernel in $name.cu" >&2; exit 2; }
if [ "$summary" = 1 ]; then
  echo "$(wc -l <"$out/k.sass") instructions"
  echo "global loads at: $(grep -n 'LDG' "$out/k.sass" | cut -d: -f1 | tr '\n' ' ')"
  echo "barriers at: $(grep -n 'BAR\.' "$out/k.sass" | cut -d: -f1 | tr '\n' ' ')"
  echo "shuffles (line:destination): $(grep -n 'SHFL' "$out/k.sass" | sed -E 's/^([0-9]+):SHFL[^ ]* [^ ]+ ([^,]+),.*/\1:\2/' | tr '\n' ' ')"
else
  cat -n "$out/k.sass"
fi
