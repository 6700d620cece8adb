"""sotc's Python package: the tracer (records a function's bytecode and example-input specs
for `sotc`) and the runtime binding (compiled artifacts as callables)."""

import os as _os

from ._specs import SpecError, parse_input, parse_tensor_spec
from ._stubs import stub_missing_frameworks
from ._tracer import Trace, TraceError, trace
from ._tracer import load as _load_trace
from ._version import TRACE_FORMAT_VERSION, __version__


def load(path, fallback=None, device=None, globals=None, params=None, strict=True):
    """A trace (`.pb`, `.pbtxt`) as a Trace, or a compiled artifact (`k.so`, `k.fatbin`, or its
    `k.manifest.json`) as a callable with the traced function's parameters; `fallback=fn` runs
    `fn` instead when the inputs do not match what was compiled; `device` ("cuda:1") picks
    the GPU of a CUDA artifact; guards on the function's globals are checked against
    `globals` (default: the fallback's). A compiled model runs with the weights compiled
    beside it, or with `params` (a state dict of the same shapes) bound in their place: all of
    them, unless `strict=False` keeps the compiled values of those it does not name."""
    if _os.fspath(path).endswith((".pb", ".pbtxt")):
        return _load_trace(path)
    from ._runtime import Compiled  # numpy and the runtime library only when needed
    return Compiled(path, fallback=fallback, device=device, globals=globals, params=params,
                    strict=strict)


def __getattr__(name):  # the runtime's errors, without importing numpy for the tracer
    if name in ("SotcError", "GuardError"):
        from . import _runtime
        return getattr(_runtime, name)
    raise AttributeError(name)


__all__ = ["trace", "load", "Trace", "TraceError", "SpecError", "parse_input",
           "parse_tensor_spec", "stub_missing_frameworks", "TRACE_FORMAT_VERSION",
           "SotcError", "GuardError", "__version__"]
