#!/usr/bin/env bash
# Installs every system and Python package sotc needs. Idempotent and quiet when all is there.
set -euo pipefail

APT_PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22
  bazel-bootstrap
  libcli11-dev libspdlog-dev nlohmann-json3-dev catch2
  libprotobuf-dev protobuf-compiler
  lld-22 liblld-22-dev zlib1g-dev libzstd-dev
  libopenblas-dev libssl-dev
)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -x /usr/local/cuda/bin/ptxas ]; then
  echo "setup: warning: the CUDA toolkit is not at /usr/local/cuda (needed from the lowering stage on)" >&2
fi

here="$(cd "$(dirname "$0")/.." && pwd)"
if ! python3 -c "import google.protobuf, numpy, pytest, jsonschema" 2>/dev/null; then
  echo "setup: installing Python packages"
  python3 -m pip install -q --disable-pip-version-check -r "$here/tools/python/requirements-dev.txt"
fi

# The other CPython versions sotc reads traces from (pyenv's 3.12 and 3.13 on these machines):
# the tracer and the tests run under each, so each gets the same packages.
for version in 3.12 3.13; do
  py="$(bash "$here/scripts/find-python.sh" "$version" || true)"
  [ -n "$py" ] || { echo "setup: warning: no CPython $version found" >&2; continue; }
  if ! "$py" -c "import google.protobuf, numpy, pytest" 2>/dev/null; then
    echo "setup: installing Python packages for $py"
    "$py" -m pip install -q --disable-pip-version-check -r "$here/tools/python/requirements-dev.txt"
  fi
done
