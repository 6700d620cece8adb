#!/usr/bin/env bash
# Builds the manifest fuzzer with clang-22 (libFuzzer + AddressSanitizer + UBSan) and runs it.
#   runtime/fuzz/run.sh [SECONDS]   (default 60; runtime/fuzz/corpus grows; minimise it with
#   build/fuzz/manifest_fuzzer -merge=1 NEWDIR runtime/fuzz/corpus before committing)
# The corpus starts from the manifests of a few compiled testdata programs.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-60}"
out=build/fuzz
mkdir -p "$out" runtime/fuzz/corpus
clang++-22 -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -I. -Iruntime/include \
  runtime/fuzz/ManifestFuzzer.cpp runtime/src/Artifact.cpp runtime/src/PlanCheck.cpp runtime/src/GemmPlan.cpp \
  -lcrypto -o "$out/manifest_fuzzer"
"$out/manifest_fuzzer" -max_total_time="$seconds" -max_len=65536 runtime/fuzz/corpus
