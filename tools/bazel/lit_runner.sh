#!/usr/bin/env bash
# Runs one lit test inside Bazel's runfiles tree, where the tools sit at their workspace paths.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
export SOTC_BAZEL_BIN="$root"
export SOTC_LIT_EXEC_ROOT="${TEST_TMPDIR}/lit"
cd "$root"
exec /usr/lib/llvm-22/bin/lit -sv "$1"
