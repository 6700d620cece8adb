#!/usr/bin/env bash
# Bazel wrapper: every package's sources go to check_layering.py.
exec /usr/bin/python3 "$(dirname "$0")/check_layering.py" "$@"
