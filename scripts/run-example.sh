#!/usr/bin/env bash
# The main job on a shipped example: trace testdata/programs/22_relu_sin.py (relu(sin(x)) on a
# 64-element tensor) with the Python tracer, let sotc translate, decompose, fuse and schedule
# it (explain, the fused kernel as MapExpr), compile it for CUDA (one fatbin with SASS for
# sm_80 and sm_90 and PTX) and inspect that, compile it for the CPU (a shared library and its
# manifest), and end by running the compiled artifact: `sotc run` on the command line, then
# `sotc.load` from Python as a drop-in for the traced function, checked against numpy, and the
# CUDA fatbin run on the CUDA emulator (no GPU needed: docs/emulator.md). Then a model: the shipped trace of testdata/models/transformer_torch.py (a pre-norm transformer
# block with its seeded weights beside it), compiled for the CPU with its weights and run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bazel build //tools/sotc //runtime:libsotc_runtime.so >build-example.log 2>&1 ||
  { tail -30 build-example.log; exit 1; }
rm -f build-example.log
mkdir -p build/example
sotc=bazel-bin/tools/sotc/sotc
PYTHONPATH=tools/python python3 -m sotc trace testdata/programs/22_relu_sin.py:fn \
  --input x=float32[64] -o build/example/relu_sin.pb
$sotc explain build/example/relu_sin.pb
$sotc dump --map-expr build/example/relu_sin.pb
$sotc compile build/example/relu_sin.pb -o build/example/relu_sin.fatbin
$sotc inspect build/example/relu_sin.fatbin
$sotc compile build/example/relu_sin.pb --target cpu -o build/example/relu_sin.so
$sotc inspect build/example/relu_sin.so
python3 -c "import numpy as np; np.save('build/example/x.npy', np.linspace(-3, 3, 64, dtype=np.float32))"
$sotc run build/example/relu_sin.so --input x=@build/example/x.npy -o build/example/y.npz
PYTHONPATH=tools/python python3 - <<'PY'
import numpy as np
import sotc

f = sotc.load("build/example/relu_sin.so")       # the compiled artifact, called like fn(x)
x = np.load("build/example/x.npy")
y = f(x)
print("sotc.load:", f.parameters, "->", y.dtype, list(y.shape))
print("max |sotc - numpy| =", float(np.abs(y - np.maximum(np.sin(x), 0)).max()))
(saved,) = np.load("build/example/y.npz").values()    # what `sotc run -o` wrote
assert (y == saved).all(), "sotc run and sotc.load differ"
g = sotc.load("build/example/relu_sin.fatbin", device="emulator")  # the fatbin's own kernels
print("CUDA emulator: max |fatbin - numpy| =", float(np.abs(g(x) - np.maximum(np.sin(x), 0)).max()))
PY
# A model: explain (its weights, graphs, guards), compile (k.weights.safetensors beside k.so),
# run through the runtime, which loads the weights itself.
model=testdata/traces/models/transformer_torch.pb
$sotc explain $model | sed -n 1,3p
$sotc compile $model --target cpu -o build/example/block.so
$sotc run build/example/block.so --input x=random | cut -c1-120
