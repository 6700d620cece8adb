#!/usr/bin/env python3
"""Traces every model in testdata/models into testdata/traces/models/<name>.pb.

Models need the real frameworks, so this runs in the reference environment
(scripts/reference-env.sh). Each model file's first line says what to trace:
    # sotc-model: FACTORY NAME=SPEC ...
where FACTORY is a zero-argument function that returns the model in eval mode with seeded
weights; its weights go beside the trace (NAME.safetensors), committed when under 1 MiB
(ResNet-18's 45 MB are not: .gitignore lists them, and the tests trace afresh). `--check`
fails if a committed trace or weights file is stale."""

import argparse
import filecmp
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))

from sotc import trace  # noqa: E402
from sotc.__main__ import _parse_inputs, load_function, model_or_function  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_traces  # noqa: E402  (the header line's reader)

MODELS = os.path.join(ROOT, "testdata", "models")
TRACES = os.path.join(ROOT, "testdata", "traces", "models")
HEADER = "# sotc-model:"
COMMITTED_WEIGHTS = 1 << 20  # larger weights files are regenerated, not committed


def models():
    return sorted(f[:-3] for f in os.listdir(MODELS) if f.endswith(".py"))


def header(name):
    """(factory, [NAME=SPEC, ...]) from the model file's first line."""
    return make_traces.header(os.path.join(MODELS, name + ".py"), HEADER, "FACTORY")


def make_model(name):
    factory, _ = header(name)
    return model_or_function(load_function(f"testdata/models/{name}.py:{factory}"))


def trace_model(name, out_dir):
    """Traces the model into OUT_DIR/NAME.pb (and NAME.safetensors); returns the trace path."""
    _, inputs = header(name)
    cwd = os.getcwd()
    os.chdir(ROOT)  # model paths are recorded relative to the repository root
    try:
        result = trace(make_model(name), sotc_root=ROOT, **_parse_inputs(inputs))
    finally:
        os.chdir(cwd)
    return result.save(os.path.join(out_dir, name + ".pb"))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true",
                        help="fail if a committed trace is stale instead of rewriting it")
    args = parser.parse_args()
    if not args.check:
        os.makedirs(TRACES, exist_ok=True)
        for name in models():
            print(trace_model(name, TRACES))
        return 0
    stale = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in models():
            trace_model(name, tmp)
            files = [name + ".pb"]
            if os.path.getsize(os.path.join(tmp, name + ".safetensors")) <= COMMITTED_WEIGHTS:
                files.append(name + ".safetensors")
            stale += [f for f in files if not os.path.exists(os.path.join(TRACES, f)) or
                      not filecmp.cmp(os.path.join(tmp, f), os.path.join(TRACES, f),
                                      shallow=False)]
    for f in stale:
        print(f"stale: testdata/traces/models/{f} (run testdata/make_model_traces.py in the "
              "reference environment)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
