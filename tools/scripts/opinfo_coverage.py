#!/usr/bin/env python3
"""How much of PyTorch's operator test database (OpInfo) sotc compiles and gets right.

    python opinfo_coverage.py [--samples N] [--ops a,b] [--show ok|miss|all] [--jobs J]
                              [--family torch|functional|method]

Run with the reference environment's python (scripts/reference-env.sh: torch, expecttest).
OpInfo (`torch.testing._internal.common_methods_invocations.op_db`) is read as data: for
every entry that names a public torch function (`torch.NAME`: no variant, no leading
underscore) and has float32
CPU samples (`--family functional`: every `torch.nn.functional.NAME` entry, each variant
measured on its own as `nn.functional.NAME.VARIANT`, e.g. pad's modes; `--family method`:
every entry with a `torch.Tensor.NAME` method, called as `input.NAME(...)`), the first N samples that can be written as a Python call
`torch.NAME(tensors, literals, kw=literals)` become a small function in a temporary file;
each is traced by sotc, compiled (`sotc compile --target cpu`), loaded and called on the
sample's values, and compared with torch eager (only shapes and dtypes where torch's result
is uninitialized memory: empty_like). An op counts when all its samples match.

Outcomes: ok; mismatch (compiled and ran, numbers differ); E#### (a coded error of the
trace, compile or run, with its message); crash (no coded error: a signal, a hang, an
uncaught exception). Prints one line per op (with --show), the totals, and the share."""

import argparse
import collections
import concurrent.futures
import math
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))

CODE = re.compile(r"\b(E\d{4})\b")
# Ops whose result is uninitialized memory in torch: only its shape and dtype are compared.
UNINITIALIZED = {"empty_like", "empty", "new_empty", "empty_strided"}
TIMEOUT_S = 120


def _literal(value):
    """Python source for a sample argument that is a literal; None when it is not one."""
    import torch
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    if isinstance(value, torch.dtype):
        return str(value)  # torch.float32
    if isinstance(value, (tuple, list)):
        items = [_literal(v) for v in value]
        if any(i is None for i in items):
            return None
        body = ", ".join(items) + ("," if isinstance(value, tuple) and len(items) == 1 else "")
        return f"({body})" if isinstance(value, tuple) else f"[{body}]"
    return None


class _Call:
    """A sample as source text over named tensor parameters."""

    def __init__(self):
        self.tensors = []

    def arg(self, value):
        import torch
        if isinstance(value, torch.Tensor):
            if value.dtype not in (torch.float32, torch.float64, torch.int64, torch.int32,
                                   torch.bool, torch.uint8, torch.int8, torch.int16):
                return None
            self.tensors.append(value.detach().contiguous().clone())
            return f"t{len(self.tensors) - 1}"
        if isinstance(value, (tuple, list)) and any(isinstance(v, torch.Tensor) for v in value):
            items = [self.arg(v) for v in value]
            if any(i is None for i in items):
                return None
            return ("(" if isinstance(value, tuple) else "[") + ", ".join(items) + \
                (",)" if isinstance(value, tuple) and len(items) == 1 else
                 ")" if isinstance(value, tuple) else "]")
        return _literal(value)


def expressible(op_name, sample, method=False):
    """(source, tensors) of `torch.NAME(...)` for the sample (`input.NAME(...)` for a
    method), or None."""
    call = _Call()
    parts = [call.arg(sample.input)]
    parts += [call.arg(a) for a in sample.args]
    parts += [None if (s := call.arg(v)) is None else f"{k}={s}" for k, v in sample.kwargs.items()]
    if any(p is None for p in parts) or not call.tensors:
        return None
    if method and not re.fullmatch(r"t\d+", parts[0]):
        return None
    params = ", ".join(f"t{i}" for i in range(len(call.tensors)))
    callee = f"{parts.pop(0)}.{op_name}" if method else f"torch.{op_name}"
    source = (f"import torch\n\n\ndef f({params}):\n"
              f"    return {callee}({', '.join(parts)})\n")
    return source, call.tensors


FUNCTIONAL = "nn.functional."


def _measured_name(op, family):
    """The name an OpInfo entry is measured under in `family`, or None when it is not one of
    the family's public functions."""
    import torch
    if family == "method":
        if (op.variant_test_name or op.name.startswith("_") or "." in op.name
                or op.method_variant is None or not hasattr(torch.Tensor, op.name)):
            return None
        return op.name
    if family == "functional":
        short = op.name[len(FUNCTIONAL):]
        if (not op.name.startswith(FUNCTIONAL) or "." in short or short.startswith("_")
                or not hasattr(torch.nn.functional, short)):
            return None
        return op.name + ("." + op.variant_test_name if op.variant_test_name else "")
    if (op.variant_test_name or op.name.startswith("_") or "." in op.name
            or not hasattr(torch, op.name)):
        return None
    return op.name


def short_name(measured):
    """What a coded error names: `pad` for nn.functional.pad.reflect, `add` for add."""
    return measured[len(FUNCTIONAL):].split(".")[0] if measured.startswith(FUNCTIONAL) else measured


def candidates(max_samples, only=None, family="torch"):
    """{op name: [(source, tensors)]} for the public functions OpInfo has float32 samples of."""
    import torch
    from torch.testing._internal.common_methods_invocations import op_db
    out = {}
    for op in op_db:
        name = _measured_name(op, family)
        if name is None:
            continue
        if only and name not in only:
            continue
        if torch.float32 not in op.supported_dtypes("cpu"):
            continue
        calls = []
        try:
            for sample in op.sample_inputs("cpu", torch.float32, requires_grad=False):
                c = expressible(op.name, sample, method=family == "method")
                if c:
                    calls.append(c)
                if len(calls) == max_samples:
                    break
        except Exception:  # noqa: BLE001 - a sample generator that fails here is not measured
            continue
        if calls:
            out.setdefault(name, calls)
    return out


def _flatten(value):
    import torch
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flatten(v)]
    return [value]


def run_one(name, source, tensors, sotc_bin, tmp):
    """(outcome, message) of one sample: traced, compiled, run, compared with eager."""
    import numpy as np
    import torch

    import sotc
    folder = tempfile.mkdtemp(dir=tmp)
    path = os.path.join(folder, f"op_{re.sub(r'[^A-Za-z0-9_]', '_', name)}.py")
    with open(path, "w") as f:
        f.write(source)
    namespace = {"__name__": "opinfo_case", "__file__": path}
    exec(compile(source, path, "exec"), namespace)
    fn = namespace["f"]
    try:
        expected = fn(*[t.clone() for t in tensors])
    except Exception as exc:  # noqa: BLE001 - eager itself refuses the sample
        return "skip", f"eager: {exc}"
    try:
        traced = sotc.trace(fn, *tensors, sotc_root=folder)
    except Exception as exc:  # noqa: BLE001
        m = CODE.search(str(exc))
        return (m.group(1) if m else "crash"), f"trace: {str(exc).splitlines()[0]}"
    trace_path = os.path.join(folder, "t.pb")
    traced.save(trace_path)
    artifact = os.path.join(folder, "k.so")
    try:
        r = subprocess.run([sotc_bin, "compile", trace_path, "--target", "cpu", "-o", artifact],
                           capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return "crash", "compile: timed out"
    if r.returncode != 0:
        line = (r.stderr.strip().splitlines() or ["(no message)"])[-1]
        m = CODE.search(line)
        return (m.group(1) if m and r.returncode > 0 else "crash"), f"compile: {line}"
    try:
        got = sotc.load(artifact)(*[t.numpy() for t in tensors])
    except Exception as exc:  # noqa: BLE001
        m = CODE.search(str(exc))
        return (m.group(1) if m else "crash"), f"run: {str(exc).splitlines()[0]}"
    want, have = _flatten(expected), _flatten(got)
    if len(want) != len(have):
        return "mismatch", f"{len(have)} results, eager has {len(want)}"
    for w, h in zip(want, have):
        if not isinstance(w, torch.Tensor):
            if w != h:
                return "mismatch", f"{h!r} != {w!r}"
            continue
        h = np.array(h)
        # numpy has no bfloat16: sotc.load gives ml_dtypes' (its bits), which torch reads as such
        h = (torch.from_numpy(h.view(np.uint16)).view(torch.bfloat16)
             if h.dtype.name == "bfloat16" else torch.from_numpy(h))
        if short_name(name) in UNINITIALIZED:
            if h.shape != w.shape or h.dtype != w.dtype:
                return "mismatch", f"{h.dtype}{list(h.shape)} != {w.dtype}{list(w.shape)}"
            continue
        try:
            torch.testing.assert_close(h, w, equal_nan=True, check_stride=False)
        except AssertionError as exc:
            return "mismatch", " ".join(str(exc).split())[:200]
    return "ok", ""


def _run_op(args):
    name, calls, sotc_bin, tmp = args
    results = []
    for source, tensors in calls:
        try:
            results.append(run_one(name, source, tensors, sotc_bin, tmp))
        except Exception as exc:  # noqa: BLE001 - the harness's own failure is a crash
            results.append(("crash", f"harness: {exc!r}"))
    measured = [r for r in results if r[0] != "skip"]
    if not measured:
        return name, None, calls
    bad = next((r for r in measured if r[0] != "ok"), None)
    return name, bad or ("ok", ""), [c[0] for c in calls]


def measure(max_samples=1, only=None, jobs=2, sotc_bin=None, family="torch"):
    """{op: (outcome, message)} over OpInfo's callable public functions of `family`."""
    sotc_bin = sotc_bin or os.environ.get(
        "SOTC_BIN", os.path.join(ROOT, "bazel-bin", "tools", "sotc", "sotc"))
    ops = candidates(max_samples, only, family)
    out = {}
    # Workers are spawned, not forked: a fork of a process that runs torch's and the
    # runtime's threads can inherit a held lock.
    context = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context) as pool:
        for name, outcome, _ in pool.map(_run_op, [(n, c, sotc_bin, tmp)
                                                   for n, c in sorted(ops.items())]):
            if outcome is not None:
                out[name] = outcome
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--ops", default="")
    parser.add_argument("--show", default="miss", choices=("ok", "miss", "all", "none"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--sotc", default=None)
    parser.add_argument("--family", default="torch", choices=("torch", "functional", "method"))
    a = parser.parse_args()
    results = measure(a.samples, set(filter(None, a.ops.split(","))), a.jobs, a.sotc, a.family)
    totals = collections.Counter(r[0] for r in results.values())
    for name, (outcome, message) in sorted(results.items()):
        if a.show == "all" or (a.show == "ok") == (outcome == "ok") and a.show != "none":
            print(f"{name:36} {outcome:9} {message}")
    print(", ".join(f"{k}: {v}" for k, v in totals.most_common()))
    ok = totals["ok"]
    print(f"OpInfo: {ok} of {len(results)} callable ops compile and match "
          f"({100.0 * ok / max(1, len(results)):.1f}%)")


if __name__ == "__main__":
    main()
