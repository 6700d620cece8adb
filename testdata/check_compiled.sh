#!/usr/bin/env bash
# Bazel wrapper: the sotc_compile outputs go to check_compiled.py.
exec /usr/bin/python3 "$(dirname "$0")/check_compiled.py" "$@"
