#!/usr/bin/env bash
# compute-sanitizer over `mtabench verify` of small cases of the fused kernel (and the reference).
# Usage: sanitize.sh TOOL MTABENCH WORKLOADS. Exit 77 (ctest: skipped) without a GPU or the tool.
set -u
tool=$1 mtabench=$2 workloads=$3
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if ! nvidia-smi -L >/dev/null 2>&1 || [ ! -x "$san" ]; then
  echo "SKIPPED: no GPU or no compute-sanitizer"
  exit 77
fi
exec timeout 600 "$san" --tool "$tool" --error-exitcode 1 "$mtabench" verify "$workloads" --impl fused --no-isolate --quiet
