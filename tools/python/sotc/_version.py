"""Versions shared with the C++ reader (compiler/frontend/TraceReader.h)."""

__version__ = "0.1.0"
# Bump together with kTraceFormatVersion in compiler/frontend/TraceReader.h.
TRACE_FORMAT_VERSION = 1
PRODUCER = f"sotc-tracer {__version__}"
