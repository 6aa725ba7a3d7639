# Sourced by tools/instance-spills.sh, tools/spill-sites.sh and tools/instance-sass.sh: one file of
# the fused kernel's instances (impls/fused/instances/NAME.cu) compiled for sm_90a as the build
# compiles it there (cuDNN found, wgmma built), to a cubin, and the kernels a report watches by
# default; no GPU needed.
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}

# Usage: compile_instance TREE NAME CUBIN LOG [NVCC_FLAG ...]; exits 2 when it does not compile.
compile_instance() {
  local tree=$1 name=$2 cubin=$3 log=$4 src
  shift 4
  src="$tree/impls/fused/instances/$name.cu"
  [ -f "$src" ] || { echo "$(basename "$0"): no $src" >&2; exit 2; }
  (cd "$tree" && "$nvcc" -DMTABENCH_HAVE_CUDNN=1 -DMTABENCH_WGMMA=1 -I. -O3 -DNDEBUG -std=c++17 \
     -gencode=arch=compute_90a,code=sm_90a "$@" -cubin -o "$cubin" "$src") >"$log" 2>&1 ||
    { tail -20 "$log" >&2; echo "$(basename "$0"): $tree: $name.cu did not compile" >&2; exit 2; }
}

# The kernels a report on NAME.cu watches: $KERNEL_RE, else the few-heads instance in the mma
# files (fused_kernel<T, true, 1, 0, 0, false>) and every kernel in the others.
# Usage: kernel_re=$(default_kernel_re NAME)
default_kernel_re() {
  case $1 in
    mma_*) echo "${KERNEL_RE:-fused_kernel<[^,]+, true, 1, 0, 0, false>}" ;;
    *) echo "${KERNEL_RE:-.}" ;;
  esac
}
