"""Command line: python3 -m sotc trace FILE.py:FUNC --input NAME=SPEC ... -o OUT.pb;
python3 -m sotc doctor; and the compiler's commands (compile, dump, explain, inspect, run,
bench, ops), which run the sotc compiler (the sotc-compiler package's, or a checkout's build)."""

import argparse
import importlib.util
import inspect
import os
import sys
import types

from ._specs import SpecError, parse_input
from ._stubs import stub_missing_frameworks
from ._tracer import TraceError, _layer_framework, trace
from ._version import __version__


def load_function(target):
    """Imports FILE.py (with stubs for missing frameworks) and returns its FUNC."""
    path, sep, func_name = target.rpartition(":")
    if not sep or not path or not func_name:
        raise TraceError(f"expected FILE.py:FUNC, got '{target}'")
    if not os.path.isfile(path):
        raise TraceError(f"no such file: '{path}'")
    module_name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(module_name, os.path.abspath(path))
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    sys.modules[module_name] = module
    try:
        with stub_missing_frameworks():
            spec.loader.exec_module(module)
    except Exception as exc:
        raise TraceError(f"importing '{path}' failed: {type(exc).__name__}: {exc}") from exc
    finally:
        sys.path.pop(0)
    obj = module
    for part in func_name.split("."):
        if not hasattr(obj, part):
            raise TraceError(f"'{path}' has no function '{func_name}'")
        obj = getattr(obj, part)
    return obj


def model_or_function(obj):
    """A zero-argument factory that returns a model (paddle.nn.Layer, torch.nn.Module) stands
    for the model it makes; anything else is traced as it is."""
    if isinstance(obj, types.FunctionType) and not inspect.signature(obj).parameters:
        try:
            made = obj()
        except Exception as exc:
            raise TraceError(f"calling the factory {obj.__qualname__}() failed: "
                             f"{type(exc).__name__}: {exc}") from exc
        if _layer_framework(made):
            return made
    return obj


def _parse_inputs(items):
    named = {}
    for item in items:
        name, sep, spec = item.partition("=")
        if not sep or not name.isidentifier():
            raise SpecError(f"expected --input NAME=SPEC, got '{item}'")
        if name in named:
            raise SpecError(f"input '{name}' given twice")
        named[name] = parse_input(spec)
    return named


# What the sotc binary does (tools/sotc/sotc.cpp).
COMPILER_COMMANDS = ("compile", "dump", "explain", "inspect", "run", "bench", "ops")


def run_compiler(argv):
    """Runs the sotc compiler on argv; its exit status."""
    from ._doctor import compiler_binary
    binary = compiler_binary()
    if binary is None:
        print(f"sotc {argv[0]}: error: the compiler is not installed (pip install sotc-compiler; "
              "from a checkout: bazel build //tools/sotc)", file=sys.stderr)
        return 2
    sys.stdout.flush()
    os.execv(binary, [binary] + list(argv))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] and argv[0] in COMPILER_COMMANDS:
        return run_compiler(argv)
    parser = argparse.ArgumentParser(prog="python3 -m sotc", description=__doc__)
    parser.add_argument("--version", action="version", version=f"sotc-tracer {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("trace", help="trace FILE.py:FUNC into a .pb or .pbtxt trace (a model's "
                                     "weights go beside it, into OUT.safetensors)")
    t.add_argument("target", metavar="FILE.py:FUNC",
                   help="a function, a model, or a zero-argument function that makes a model")
    t.add_argument("--input", "-i", action="append", default=[], metavar="NAME=SPEC",
                   help="a tensor spec such as float32[64,?] (add !grad for stop_gradient="
                        "False) or a Python literal such as 3, True, None, (1, 2)")
    t.add_argument("-o", "--output", required=True, metavar="OUT.pb")
    t.add_argument("--root", default=None,
                   help="record file paths relative to this directory (default: cwd)")
    t.add_argument("--framework", choices=("torch", "paddle"), default=None,
                   help="whose semantics tensor methods have (default: that of the framework "
                        "the code names; needed when it names neither or both)")
    sub.add_parser("doctor", help="what this machine has for sotc: CPU and kernels, GEMM "
                                  "library, CUDA driver and toolkit, versions")
    for command in COMPILER_COMMANDS:
        sub.add_parser(command, help=f"sotc {command} (the compiler's; its --help says more)")
    args = parser.parse_args(argv)
    if args.command == "doctor":
        from ._doctor import main as doctor
        return doctor()
    try:
        fn = model_or_function(load_function(args.target))
        result = trace(fn, sotc_root=args.root, sotc_framework=args.framework,
                       **_parse_inputs(args.input))
        result.save(args.output)
    except (TraceError, SpecError) as exc:
        print(f"sotc trace: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
