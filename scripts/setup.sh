#!/usr/bin/env bash
# Installs every system and Python package sotc needs. Idempotent and quiet when all is there.
set -euo pipefail

APT_PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22
  bazel-bootstrap
  libcli11-dev libspdlog-dev nlohmann-json3-dev catch2
  libprotobuf-dev protobuf-compiler
  lld-22 liblld-22-dev zlib1g-dev libzstd-dev
  libopenblas-dev libssl-dev libdnnl2 libdnnl-dev
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
if ! python3 -c "import google.protobuf, numpy, pytest, jsonschema, auditwheel" 2>/dev/null; then
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

# The OpenBLAS that GEMM steps run on: PyPI's scipy-openblas32 (OpenBLAS 0.3.34, every x86
# kernel family in one library, picked for the CPU at load). Debian's 0.3.21 does not know
# CPUs newer than itself and falls back to generic kernels, several times slower. Installed
# where the dynamic loader finds it (/usr/local/lib), which is where the runtime looks first.
OPENBLAS_WHEEL=scipy_openblas32-0.3.34.481.3-py3-none-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl
OPENBLAS_WHEEL_SHA256=0595f94cd58c1f8a0d90c975621f4587337a003916b1979e834ebdf2cb5d9504
OPENBLAS_SO_SHA256=b396d74f12ab4319e6713b3287104d64245c76c60e5bd9eaeb4b447eda66a561
openblas_so=/usr/local/lib/libscipy_openblas.so
if [ "$(uname -m)" = x86_64 ] &&
   ! echo "$OPENBLAS_SO_SHA256  $openblas_so" | sha256sum --status -c - 2>/dev/null; then
  echo "setup: installing OpenBLAS 0.3.34 (scipy-openblas32) into /usr/local/lib"
  wheel_dir="$(mktemp -d)"
  python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$wheel_dir" "scipy-openblas32==0.3.34.481.3"
  echo "$OPENBLAS_WHEEL_SHA256  $wheel_dir/$OPENBLAS_WHEEL" | sha256sum --status -c - ||
    { echo "setup: error: $OPENBLAS_WHEEL does not have the expected sha256" >&2; exit 1; }
  python3 -m zipfile -e "$wheel_dir/$OPENBLAS_WHEEL" "$wheel_dir/x"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO install -D -m 644 "$wheel_dir/x/scipy_openblas32/lib/libscipy_openblas.so" "$openblas_so"
  $SUDO install -D -m 644 -t /usr/local/share/doc/scipy-openblas32 \
    "$wheel_dir"/x/scipy_openblas32-*.dist-info/licenses/*
  $SUDO ldconfig
  rm -rf "$wheel_dir"
fi
