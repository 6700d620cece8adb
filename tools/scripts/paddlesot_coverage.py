#!/usr/bin/env python3
"""How much of PaddleSOT's own test functions sotc translates: a gap finder, not a test.

    python paddlesot_coverage.py PADDLESOT_CHECKOUT [--sotc BIN] [--show CODE|ok|all]

Runs every tests/test_*.py of a PaddleSOT checkout (needs paddle: run it with the reference
environment's python, scripts/reference-env.sh) with `test_case_base.TestCaseBase` and the
`sot` package replaced: each `assert_results(fn, *inputs)` (and the side-effect variants)
traces `fn` with sotc and runs `sotc explain --allow-host-callbacks` on it. Prints one line
per case (file, function, outcome: ok, or the error code and message) and the totals by
outcome. Nothing of PaddleSOT is copied; the checkout is read where it lies."""

import argparse
import collections
import importlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import types
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))

RESULTS = []  # (file, function, outcome, message)


def _identity_decorator(*args, **kwargs):
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda fn: fn


class _Anything(types.ModuleType):
    """A stand-in for any part of the `sot` package a test imports."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _identity_decorator


def _install_fakes(sotc_bin, tmp):
    import sotc

    class SotFinder:
        """Every `sot.*` module a test imports is an _Anything."""

        def find_spec(self, name, path=None, target=None):
            if name != "sot" and not name.startswith("sot."):
                return None
            return importlib.util.spec_from_loader(name, self)

        def create_module(self, spec):
            module = _Anything(spec.name)
            module.__path__ = []
            if spec.name == "sot.psdb":
                # PaddleSOT's forced graph break, as an installed library function: sotc
                # records it by name and `--break-on=sot.psdb.breakgraph` breaks there.
                # fallback() (run the rest in Python) is a host boundary as well.
                code = compile("def breakgraph():\n    pass\n\ndef fallback():\n    pass\n",
                               "/site-packages/sot/psdb.py", "exec")
                scope = {"__name__": "sot.psdb"}
                exec(code, scope)
                module.breakgraph, module.fallback = scope["breakgraph"], scope["fallback"]
            return module

        def exec_module(self, module):
            pass

    sys.meta_path.insert(0, SotFinder())

    def record(fn, inputs):
        frame = sys._getframe(2)
        where = os.path.basename(frame.f_code.co_filename)
        name = getattr(fn, "__name__", repr(fn))
        try:
            traced = sotc.trace(fn, *inputs)
            path = traced.save(os.path.join(tmp, "case.pb"))
        except Exception as e:  # noqa: BLE001 - a gap finder reports every failure
            RESULTS.append((where, name, "trace", f"{type(e).__name__}: {e}"[:160]))
            return
        run = subprocess.run([sotc_bin, "explain", "--allow-host-callbacks",
                              "--break-on=sot.psdb.breakgraph", "--break-on=sot.psdb.fallback",
                              path],
                             capture_output=True, text=True)
        if run.returncode == 0:
            RESULTS.append((where, name, "ok", ""))
        else:
            message = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "?"
            code = message.split("error ")[1].split(":")[0] if "error E" in message else "crash"
            RESULTS.append((where, name, code, message[:200]))

    base = _Anything("test_case_base")

    class TestCaseBase(unittest.TestCase):
        def assert_results(self, fn, *inputs):
            record(fn, inputs)

        def assert_results_with_side_effects(self, fn, *inputs):
            record(fn, inputs)

        def assert_results_with_global_check(self, fn, global_keys, *inputs):
            record(fn, inputs)

        def assert_nest_match(self, x, y):
            pass

    base.TestCaseBase = TestCaseBase
    base.test_instruction_translator_cache_context = _identity_decorator
    sys.modules["test_case_base"] = base


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout")
    parser.add_argument("--sotc", default=os.path.join(ROOT, "bazel-bin", "tools", "sotc", "sotc"))
    parser.add_argument("--show", default="all", help="which cases to list: all, ok, or a code")
    args = parser.parse_args()
    tests = os.path.join(os.path.abspath(args.checkout), "tests")
    sys.path.insert(0, tests)
    with tempfile.TemporaryDirectory() as tmp:
        _install_fakes(args.sotc, tmp)
        for file in sorted(f for f in os.listdir(tests) if f.startswith("test_") and f.endswith(".py")):
            if file == "test_case_base.py":
                continue
            try:
                module = importlib.import_module(file[:-3])
            except Exception as e:  # noqa: BLE001
                RESULTS.append((file, "<import>", "import", f"{type(e).__name__}: {e}"[:160]))
                continue
            suite = unittest.defaultTestLoader.loadTestsFromModule(module)
            unittest.TextTestRunner(stream=open(os.devnull, "w"), verbosity=0).run(suite)
    for file, name, outcome, message in RESULTS:
        if args.show in ("all", outcome):
            print(f"{file:34} {name:40} {outcome:6} {message}")
    counts = collections.Counter(outcome for _, _, outcome, _ in RESULTS)
    cases = sum(n for o, n in counts.items() if o != "import")
    print(f"\n{counts['ok']} of {cases} cases translate ({100 * counts['ok'] / max(cases, 1):.0f}%); "
          + ", ".join(f"{o}: {n}" for o, n in counts.most_common() if o != "ok"))


if __name__ == "__main__":
    main()
