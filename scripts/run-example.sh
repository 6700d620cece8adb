#!/usr/bin/env bash
# The main job on a shipped example: trace testdata/programs/22_relu_sin.py (relu(sin(x)) on a
# 64-element tensor) with the Python tracer, then let sotc translate, decompose, fuse and
# schedule it. Until the compile stage lands, the furthest sotc goes is the fused kernels
# (`dump --map-expr`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bazel build //tools/sotc >build-example.log 2>&1 || { tail -30 build-example.log; exit 1; }
rm -f build-example.log
mkdir -p build/example
PYTHONPATH=tools/python python3 -m sotc trace testdata/programs/22_relu_sin.py:fn \
  --input x=float32[64] -o build/example/relu_sin.pb
bazel-bin/tools/sotc/sotc dump --bytecode build/example/relu_sin.pb
bazel-bin/tools/sotc/sotc explain build/example/relu_sin.pb
bazel-bin/tools/sotc/sotc dump --mlir build/example/relu_sin.pb
bazel-bin/tools/sotc/sotc dump --map-expr build/example/relu_sin.pb
