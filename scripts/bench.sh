#!/usr/bin/env bash
# The benchmark suite: sotc against numpy, jax.jit, torch eager and torch.compile on
# bench/workloads.py, next to the machine's memory limit (bench/stream). Installs what is
# missing (the peers into their own environment, $SOTC_BENCH_ENV, default
# ~/.cache/sotc/bench-env), then writes bench/results/latest.json, bench/results/chart.png and
# the table in docs/benchmarks.md; then whole models (bench/models.py: bench/results/models.json
# and the model table); then the same kind of models against ONNX Runtime and OpenVINO
# (bench/peers.py: bench/results/peers.json and its table); then the models' GEMMs (bench/gemm.py: bench/results/gemm.json and the
# GEMM table); then half precision (bench/half.py: bench/results/half.json and the half table);
# then small calls (bench/latency.py: bench/results/latency.json and the latency table);
# then a dynamic batch against static shapes (bench/dynamic.py: bench/results/dynamic.json and
# its table); then a detector's threshold and nms against torch eager (bench/counted.py, in the
# reference environment: its table);
# then calls per second of one artifact shared by 1-8 threads
# (bench/concurrent_calls.cpp, docs/runtime.md). Takes about 15 minutes on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bazel build //tools/sotc //runtime:libsotc_runtime.so //bench:stream //bench:concurrent_calls \
  //bench:fma_peak \
  >build-bench.log 2>&1 ||
  { tail -30 build-bench.log; exit 1; }
rm -f build-bench.log
env="${SOTC_BENCH_ENV:-$HOME/.cache/sotc/bench-env}"
if [ ! -x "$env/bin/python" ] || ! cmp -s bench/requirements.txt "$env/.sotc-requirements"; then
  echo "bench: installing the peers into $env (once)" >&2
  rm -rf "$env"
  python3 -m venv "$env"
  "$env/bin/python" -m pip install -q --disable-pip-version-check -r bench/requirements.txt
  cp bench/requirements.txt "$env/.sotc-requirements"
fi
SOTC_RUNTIME_LIBRARY="$PWD/bazel-bin/runtime/libsotc_runtime.so" "$env/bin/python" bench/run.py
# Whole models; paddle eager runs in the reference environment (scripts/reference-env.sh).
reference="$HOME/.cache/sotc/reference-env/bin/python"
bash scripts/reference-env.sh >/dev/null 2>&1 || echo "bench: no reference environment: paddle eager is skipped" >&2
paddle_args=()
[ -x "$reference" ] && paddle_args=(--paddle-python "$reference")
SOTC_RUNTIME_LIBRARY="$PWD/bazel-bin/runtime/libsotc_runtime.so" "$env/bin/python" bench/models.py \
  "${paddle_args[@]}"
# The CPU runtimes users deploy on: ONNX Runtime and OpenVINO (float32 and its default).
SOTC_RUNTIME_LIBRARY="$PWD/bazel-bin/runtime/libsotc_runtime.so" "$env/bin/python" bench/peers.py
# The models' GEMMs against torch's matmul and the machine's FMA peak.
SOTC_RUNTIME_LIBRARY="$PWD/bazel-bin/runtime/libsotc_runtime.so" "$env/bin/python" bench/gemm.py
# float16 and bfloat16 workloads against torch eager in half and in float32.
SOTC_RUNTIME_LIBRARY="$PWD/bazel-bin/runtime/libsotc_runtime.so" "$env/bin/python" bench/half.py
# Small calls: the time around microsecond kernels, against torch eager and torch.compile.
SOTC_RUNTIME_LIBRARY="$PWD/bazel-bin/runtime/libsotc_runtime.so" "$env/bin/python" bench/latency.py
# A dynamic batch: one artifact for every batch against one per batch.
SOTC_RUNTIME_LIBRARY="$PWD/bazel-bin/runtime/libsotc_runtime.so" "$env/bin/python" bench/dynamic.py
# Sizes a kernel counts: a score threshold and batched_nms against torch eager (torchvision).
[ -x "$reference" ] && SOTC_REFERENCE_PYTHON="$reference" "$env/bin/python" bench/counted.py
# One artifact, many callers: the transformer block of the testdata models.
mkdir -p build/bench
bazel-bin/tools/sotc/sotc compile testdata/traces/models/transformer_torch.pb --target cpu \
  -o build/bench/block.so
lscpu | sed -n 's/^Model name: *//p'
bazel-bin/bench/concurrent_calls build/bench/block.so 3
