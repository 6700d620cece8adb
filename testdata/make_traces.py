#!/usr/bin/env python3
"""Traces every program in testdata/programs into testdata/traces/<name>.pb.

Each program's first line says what to trace:  # sotc-trace: FUNC NAME=SPEC ...
`--check` regenerates into a temporary folder and fails if any committed trace differs
(tests call it so a stale trace cannot go unnoticed)."""

import argparse
import filecmp
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))

from sotc.__main__ import _parse_inputs, load_function  # noqa: E402
from sotc import trace  # noqa: E402

PROGRAMS = os.path.join(ROOT, "testdata", "programs")
TRACES = os.path.join(ROOT, "testdata", "traces")
HEADER = "# sotc-trace:"


def programs():
    return sorted(f for f in os.listdir(PROGRAMS) if f.endswith(".py"))


def header(path, prefix=HEADER, what="FUNC"):
    """(function name, [NAME=SPEC, ...]) from the file's first line, `prefix WHAT NAME=SPEC ...`
    (a program's; testdata/make_model_traces.py reads a model's)."""
    with open(path) as f:
        first = f.readline()
    if not first.startswith(prefix):
        raise SystemExit(f"{path}: first line must be '{prefix} {what} NAME=SPEC ...'")
    func, *inputs = first[len(prefix):].split()
    return func, inputs


def trace_program(name, out_dir):
    path = os.path.join(PROGRAMS, name)
    func, inputs = header(path)
    rel = os.path.relpath(path, ROOT)
    fn = load_function(f"{rel}:{func}")
    result = trace(fn, sotc_root=ROOT, **_parse_inputs(inputs))
    return result.save(os.path.join(out_dir, name[:-3] + ".pb"))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true",
                        help="fail if a committed trace is stale instead of rewriting it")
    args = parser.parse_args()
    os.chdir(ROOT)  # program paths are recorded relative to the repository root
    if not args.check:
        os.makedirs(TRACES, exist_ok=True)
        for name in programs():
            print(trace_program(name, TRACES))
        return 0
    stale = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in programs():
            fresh = trace_program(name, tmp)
            committed = os.path.join(TRACES, os.path.basename(fresh))
            if not os.path.exists(committed) or not filecmp.cmp(fresh, committed, shallow=False):
                stale.append(os.path.relpath(committed, ROOT))
    for path in stale:
        print(f"stale trace: {path} (run: python3 testdata/make_traces.py)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
