"""Compiled artifacts as Python callables, over the runtime's C API (runtime/include/sotc/runtime.h).

    f = sotc.load("k.so")            # or the manifest; a CPU artifact
    y = f(x, n=3)                    # numpy arrays in, the traced function's return value out

Parameters bind as the traced function's did (positionally, then by name); tensors are numpy
arrays or any CPU tensor that speaks DLPack or the array protocol, other values are compared
with what was traced. Results come back in
the function's own return structure (tuples, lists, dicts, constants) as numpy arrays that
the caller owns. A call whose inputs do not match what was compiled raises GuardError with
the runtime's explanation, or, with `fallback=fn`, runs `fn` instead and logs why.
"""

import ast
import ctypes
import json
import logging
import os

import numpy as np

_MAX_RANK = 8
_log = logging.getLogger("sotc")


class SotcError(RuntimeError):
    """The runtime refused an artifact or a run; `code` is its E8xxx code."""

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code


class GuardError(SotcError):
    """The inputs do not match what the artifact was compiled for (E8004); `mismatches` lists
    each parameter that does not (parameter, compiled_for, got, guard), and the message ends
    with them as a table."""

    def __init__(self, code, message, mismatches=()):
        self.mismatches = list(mismatches)
        rows = [("input", "compiled for", "got", "guard")] + [
            (m["parameter"], m["compiled_for"], m["got"], m["guard"]) for m in self.mismatches]
        widths = [max(len(r[c]) for r in rows) for c in range(4)]
        table = "\n".join("  " + "  ".join(r[c].ljust(widths[c]) for c in range(4)).rstrip()
                          for r in rows) if self.mismatches else ""
        super().__init__(code, message + ("\n" + table if table else ""))


class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_char * 8), ("message", ctypes.c_char * 1024)]


class _Mismatch(ctypes.Structure):
    _fields_ = [("parameter", ctypes.c_char_p), ("expected", ctypes.c_char_p),
                ("got", ctypes.c_char_p), ("guard", ctypes.c_char_p)]


class _Value(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("is_tensor", ctypes.c_int), ("data", ctypes.c_void_p),
                ("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * _MAX_RANK), ("repr", ctypes.c_char_p)]


def _library_path():
    if os.environ.get("SOTC_RUNTIME_LIBRARY"):
        return os.environ["SOTC_RUNTIME_LIBRARY"]
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.path.join(here, "libsotc_runtime.so")]
    root = here
    for _ in range(4):  # a checkout: <root>/tools/python/sotc
        root = os.path.dirname(root)
        candidates.append(os.path.join(root, "bazel-bin", "runtime", "libsotc_runtime.so"))
    for c in candidates:
        if os.path.exists(c):
            return c
    raise SotcError("E8001", "libsotc_runtime.so not found (bazel build //runtime:libsotc_runtime.so,"
                             " or set SOTC_RUNTIME_LIBRARY)")


_lib = None
_DTYPES = []  # sotc_dtype names by value, from the library (sotc_dtype_name)


def _runtime():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(_library_path())
        lib.sotc_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                                  ctypes.POINTER(_Error)]
        lib.sotc_close.argtypes = [ctypes.c_void_p]
        lib.sotc_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Value), ctypes.c_size_t,
                                 ctypes.POINTER(_Value), ctypes.POINTER(ctypes.c_size_t),
                                 ctypes.POINTER(_Error)]
        lib.sotc_num_mismatches.argtypes = [ctypes.c_void_p]
        lib.sotc_num_mismatches.restype = ctypes.c_size_t
        lib.sotc_mismatch.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(_Mismatch)]
        lib.sotc_dtype_name.argtypes = [ctypes.c_int]
        lib.sotc_dtype_name.restype = ctypes.c_char_p
        lib.sotc_last_segment.argtypes = [ctypes.c_void_p]
        lib.sotc_last_segment.restype = ctypes.c_int32
        i = 0
        while lib.sotc_dtype_name(i):
            _DTYPES.append(lib.sotc_dtype_name(i).decode())
            i += 1
        _lib = lib
    return _lib


def _raise(error, lib=None, handle=None):
    code, message = error.code.decode(), error.message.decode()
    if code != "E8004":
        raise SotcError(code, message)
    mismatches = []
    for i in range(lib.sotc_num_mismatches(handle) if lib else 0):
        m = _Mismatch()
        lib.sotc_mismatch(handle, i, ctypes.byref(m))
        mismatches.append({"parameter": m.parameter.decode(), "compiled_for": m.expected.decode(),
                           "got": m.got.decode(), "guard": m.guard.decode()})
    raise GuardError(code, message, mismatches)


class Compiled:
    """A compiled artifact, callable like the traced function."""

    def __init__(self, path, fallback=None):
        self._lib = _runtime()
        self._fallback = fallback
        path = os.fspath(path)
        manifest = path if path.endswith(".json") else os.path.splitext(path)[0] + ".manifest.json"
        handle, error = ctypes.c_void_p(), _Error()
        if self._lib.sotc_open(path.encode(), ctypes.byref(handle), ctypes.byref(error)):
            _raise(error)
        self._handle = handle
        with open(manifest) as f:
            self._manifest = json.load(f)
        self.parameters = [p["name"] for p in self._manifest["entry"]["inputs"]]
        self._specs = {p["name"]: p for p in self._manifest["entry"]["inputs"]}

    def close(self):
        if self._handle:
            self._lib.sotc_close(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _bind(self, args, kwargs):
        if len(args) > len(self.parameters):
            raise TypeError(f"takes {len(self.parameters)} arguments, {len(args)} given")
        bound = dict(zip(self.parameters, args))
        for name, value in kwargs.items():
            if name not in self._specs:
                raise TypeError(f"unexpected argument {name!r}")
            if name in bound:
                raise TypeError(f"argument {name!r} given twice")
            bound[name] = value
        for name in self.parameters:
            if name not in bound:
                if self._specs[name]["kind"] == "tensor":
                    raise TypeError(f"missing argument {name!r}")
                bound[name] = ast.literal_eval(self._specs[name]["value"])
        return bound

    def __call__(self, *args, **kwargs):
        bound = self._bind(args, kwargs)
        values = (_Value * max(len(self.parameters), 1))()
        keep = []
        for i, name in enumerate(self.parameters):
            value, v = bound[name], values[i]
            if not isinstance(value, np.ndarray) and self._specs[name]["kind"] == "tensor" and (
                    hasattr(value, "__dlpack__") or hasattr(value, "__array__")):
                # A CPU tensor of another framework (torch, paddle, jax): viewed, not copied.
                value = np.from_dlpack(value) if hasattr(value, "__dlpack__") else np.asarray(value)
            if isinstance(value, np.ndarray):
                array = np.ascontiguousarray(value)
                keep.append(array)
                v.is_tensor, v.data = 1, array.ctypes.data
                v.dtype = _DTYPES.index(str(array.dtype)) if str(array.dtype) in _DTYPES else -1
                if array.ndim > _MAX_RANK:
                    raise ValueError(f"{name}: more than {_MAX_RANK} dimensions")
                v.rank = array.ndim
                for d, size in enumerate(array.shape):
                    v.shape[d] = size
            else:
                text = repr(value).encode()
                keep.append(text)
                v.repr = text
        outputs = (_Value * 64)()
        count, error = ctypes.c_size_t(64), _Error()
        if self._lib.sotc_run(self._handle, values, len(self.parameters), outputs,
                              ctypes.byref(count), ctypes.byref(error)):
            if self._fallback is not None and error.code.decode() == "E8004":
                _log.warning("sotc: running the original function: %s", error.message.decode())
                return self._fallback(*args, **kwargs)
            _raise(error, self._lib, self._handle)
        tensors = {}
        for i in range(count.value):
            o = outputs[i]
            dtype = np.dtype(_DTYPES[o.dtype] if _DTYPES[o.dtype] != "bfloat16" else "uint16")
            shape = tuple(o.shape[d] for d in range(o.rank))
            size = int(np.prod(shape)) * dtype.itemsize
            buffer = (ctypes.c_char * size).from_address(o.data) if size else b""
            tensors[o.name.decode()] = np.frombuffer(bytes(buffer), dtype=dtype).reshape(shape)
        segment = self._manifest["segments"][self._lib.sotc_last_segment(self._handle)]
        result = segment["end"].get("result")
        return None if result is None else _rebuild(result, tensors)


def _rebuild(r, tensors):
    if "tensor" in r:
        return tensors[r["tensor"]].copy()
    if "constant" in r:
        return ast.literal_eval(r["constant"])
    if "tuple" in r:
        return tuple(_rebuild(item, tensors) for item in r["tuple"])
    if "list" in r:
        return [_rebuild(item, tensors) for item in r["list"]]
    if "dict" in r:
        return {_rebuild(k, tensors): _rebuild(v, tensors) for k, v in r["dict"]}
    raise SotcError("E8005", f"a result the host computes ({r.get('host')}) is not rebuilt yet")
