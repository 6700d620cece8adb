#!/usr/bin/env bash
# Passes when a generated file ($1) and its checked-in copy ($2) are equal; prints the diff.
if diff -u "$2" "$1"; then
  echo "PASSED: $2 is up to date"
else
  echo "FAILED: $2 differs from the generated file; regenerate it (see docs/BUILD.bazel)"
  exit 1
fi
