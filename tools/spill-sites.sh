#!/usr/bin/env bash
# Where one instance file's kernels spill: compiles impls/fused/instances/NAME.cu for sm_90a as
# the build does, with -lineinfo, disassembles it with nvdisasm -gi and lists every STL/LDL of
# the kernels matching KERNEL_RE with its source line (tools/spill_sites.py; an STL of a value
# straight from a global load, which waits for the load, is marked "<- LDG"). Runs where nvcc
# is (no GPU needed); the companion of tools/instance-spills.sh (how many bytes) for where. Then
# the other way loads lose their overlap (tools/load_waits.py): a load issued after an
# instruction, predicated or not, that waits for an earlier load (JOURNAL.md v92).
# nvdisasm: $NVDISASM, else PATH, else the CUDA install's bin; where the toolkit lacks it, the
# `nvidia-cuda-nvdisasm` wheel has it (pip download it, unzip, point NVDISASM at its bin/nvdisasm).
# Usage: [KERNEL_RE=REGEX] tools/spill-sites.sh NAME   e.g. tools/spill-sites.sh mma_bf16
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
name=${1:?usage: tools/spill-sites.sh NAME}
source "$here/tools/instance-lib.sh"
kernel_re=$(default_kernel_re "$name")
nvdisasm=${NVDISASM:-$(command -v nvdisasm || echo "$(dirname "$nvcc")/nvdisasm")}
[ -x "$nvdisasm" ] || { echo "spill-sites.sh: no nvdisasm ($nvdisasm); set NVDISASM (see the header)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
compile_instance "$here" "$name" "$out/$name.cubin" "$out/nvcc.log" -lineinfo
"$nvdisasm" -gi -c "$out/$name.cubin" >"$out/$name.sass"
python3 "$here/tools/spill_sites.py" "$out/$name.sass" --kernel "$kernel_re"
echo
python3 "$here/tools/load_waits.py" "$out/$name.sass" --kernel "$kernel_re"
