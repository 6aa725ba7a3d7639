#!/usr/bin/env bash
# mtabench quick start: install what is missing (Debian/Ubuntu packages), configure, build, and
# run the default suite on the local GPU — or, where there is none, the announced CPU fallback
# on the smoke workloads.
#   tools/quickstart.sh               everything
#   tools/quickstart.sh --deps-only   only the packages (CI uses this)
#   tools/quickstart.sh --no-run      packages and build, no suite run
#   PRESET=ci tools/quickstart.sh     another CMake preset (default: dev)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ nlohmann-json3-dev libcli11-dev libfmt-dev libbenchmark-dev libgtest-dev
          libssl-dev python3 python3-jsonschema chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "quickstart: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
[ "${1:-}" = "--deps-only" ] && exit 0

if ! command -v nvcc >/dev/null; then
  [ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH
fi
command -v nvcc >/dev/null || { echo "quickstart: nvcc not found: install the CUDA toolkit first" >&2; exit 1; }

preset=${PRESET:-dev}
cmake --preset "$preset"
cmake --build --preset "$preset"
[ "${1:-}" = "--no-run" ] && exit 0
./build/mtabench run
