#!/usr/bin/env bash
# Builds the trace-reader fuzzer with clang-22 (libFuzzer + AddressSanitizer) and runs it.
#   tools/fuzz/run.sh [SECONDS]      (default 60; the corpus in tools/fuzz/corpus grows)
# Each corpus file is one selector byte (even: binary, odd: text) followed by a trace.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-60}"
out=build/fuzz
mkdir -p "$out" tools/fuzz/corpus
protoc --cpp_out="$out" compiler/frontend/trace.proto
# The dialects' ODS-generated .inc files come from Bazel.
bazel build //dialects/sir:sir_inc //dialects/sir:passes_inc //dialects/sched:sched_inc \
  //dialects/mapexpr:mapexpr_inc //dialects/mapexpr:passes_inc \
  //compiler/conversion/SirToMapExpr:passes_inc //compiler/conversion/MapExprToLoops:passes_inc \
  //compiler/target/cpu:passes_inc //dialects/sir:prim_enum_td >/dev/null 2>&1
gen="$(bazel info bazel-genfiles 2>/dev/null)"
llvm=/usr/lib/llvm-22
clang++-22 -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -I. -I"$out" -I"$gen" \
  -I"$llvm/include" -Wno-deprecated-declarations \
  tools/fuzz/TraceFuzzer.cpp compiler/frontend/*.cpp compiler/support/*.cpp $(ls compiler/ops/*.cpp | grep -v OpsCatalog) \
  dialects/sir/IR/*.cpp dialects/sir/Transforms/*.cpp dialects/sched/IR/*.cpp \
  dialects/sched/Utils/*.cpp dialects/mapexpr/Utils/*.cpp dialects/mapexpr/IR/*.cpp \
  dialects/mapexpr/Transforms/*.cpp compiler/conversion/SirToMapExpr/*.cpp \
  compiler/conversion/MapExprToLoops/*.cpp compiler/target/cpu/KernelAbi.cpp \
  compiler/target/cpu/ApproximateMath.cpp compiler/target/cpu/ExpandArith.cpp \
  compiler/target/cuda/CudaTarget.cpp \
  compiler/pipelines/*.cpp \
  "$out/compiler/frontend/trace.pb.cc" -lprotobuf -L"$llvm/lib" -Wl,-rpath,"$llvm/lib" \
  -lMLIR -lLLVM -o "$out/trace_fuzzer"
# Seed with the committed traces (binary) and the hand-written text inputs.
for t in testdata/traces/*.pb; do
  seed="tools/fuzz/corpus/seed-$(basename "$t" .pb)"
  [ -e "$seed" ] || { printf '\0' > "$seed"; cat "$t" >> "$seed"; }
done
# ... and the same programs traced by the other supported CPythons (their decoders).
for version in 3.12 3.13; do
  py="$(bash scripts/find-python.sh "$version")" || continue
  traces="$out/traces-$version"
  "$py" tools/python/tests/dis_reference.py "$traces" >/dev/null
  for t in "$traces"/*.pb; do
    seed="tools/fuzz/corpus/seed-py${version/./}-$(basename "$t" .pb)"
    [ -e "$seed" ] || { printf '\0' > "$seed"; cat "$t" >> "$seed"; }
  done
done
for t in tools/sotc/test/Inputs/*.pbtxt; do
  seed="tools/fuzz/corpus/seed-text-$(basename "$t" .pbtxt)"
  [ -e "$seed" ] || { printf '\1' > "$seed"; cat "$t" >> "$seed"; }
done
# libMLIR.so is not instrumented: LLVM's allocators poison memory from our instrumented inline
# code that the library then hands out, so manual poisoning gives false reports.
ASAN_OPTIONS=allow_user_poisoning=0 "$out/trace_fuzzer" -max_total_time="$seconds" -max_len=16384 -timeout=10 \
  -print_final_stats=1 tools/fuzz/corpus
# Before committing the grown corpus, minimise it:
#   build/fuzz/trace_fuzzer -merge=1 -max_len=16384 NEW_DIR tools/fuzz/corpus
