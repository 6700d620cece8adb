"""sotc's Python tracer: records a function's bytecode and example-input specs for `sotc`."""

from ._specs import SpecError, parse_input, parse_tensor_spec
from ._stubs import stub_missing_frameworks
from ._tracer import Trace, TraceError, load, trace
from ._version import TRACE_FORMAT_VERSION, __version__

__all__ = ["trace", "load", "Trace", "TraceError", "SpecError", "parse_input",
           "parse_tensor_spec", "stub_missing_frameworks", "TRACE_FORMAT_VERSION",
           "__version__"]
