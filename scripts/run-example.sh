#!/usr/bin/env bash
# The main job on a shipped example: trace testdata/programs/22_relu_sin.py (relu(sin(x)) on a
# 64-element tensor) with the Python tracer, let sotc translate, decompose, fuse and schedule
# it, compile it for the CPU (a shared library and its manifest), run the kernel from Python
# through its C ABI against numpy and the whole artifact through the runtime (sotc run); then
# compile it for CUDA (one fatbin with SASS for
# sm_80 and sm_90 and PTX) and inspect that.
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
bazel-bin/tools/sotc/sotc compile build/example/relu_sin.pb --target cpu -o build/example/relu_sin.so
bazel-bin/tools/sotc/sotc inspect build/example/relu_sin.so
python3 - <<'PY'
import ctypes, json
import numpy as np
manifest = json.load(open("build/example/relu_sin.manifest.json"))
step = manifest["segments"][0]["steps"][0]
print("guards:", manifest["guard_lambda"])
print("kernel:", step["symbol"], "grid", step["grid"], "outputs", step["outputs"], "inputs", step["inputs"])
kernel = getattr(ctypes.CDLL("build/example/relu_sin.so"), step["symbol"])
kernel.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
x = np.linspace(-3, 3, 64, dtype=np.float32)
y = np.empty_like(x)
kernel(0, step["grid"], y.ctypes.data, x.ctypes.data)
print("max |sotc - numpy| =", float(np.abs(y - np.maximum(np.sin(x), 0)).max()))
PY
bazel-bin/tools/sotc/sotc run build/example/relu_sin.so --input x=random   # through the runtime
bazel-bin/tools/sotc/sotc compile build/example/relu_sin.pb -o build/example/relu_sin.fatbin
bazel-bin/tools/sotc/sotc inspect build/example/relu_sin.fatbin
