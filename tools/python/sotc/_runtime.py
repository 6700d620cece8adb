"""Compiled artifacts as Python callables, over the runtime's C API (runtime/include/sotc/runtime.h).

    f = sotc.load("k.so")            # or k.fatbin (CUDA), or the manifest
    y = f(x, n=3)                    # tensors in, the traced function's return value out
    f(x, n=3, out=(y,))              # the results written into the caller's buffers

Parameters bind as the traced function's did (positionally, then by name); tensors are numpy
arrays, CPU tensors of any framework that speaks DLPack or the array protocol, or (for a
CUDA artifact) CUDA tensors that speak __cuda_array_interface__ or DLPack (torch, cupy,
paddle, jax), passed without copies; other values are compared with what was traced.
Results come back in the function's own return structure (tuples, lists, dicts, constants,
a model's output record: its own class where its module is imported, else a sotc Record),
as tensors of the caller's: for torch or paddle CPU inputs, that framework's tensors (torch's
sharing the result's memory); for CUDA inputs, tensors of the same framework on the same
device (torch and cupy; numpy otherwise); numpy arrays for numpy arrays (float16 numpy's,
bfloat16 ml_dtypes'); always owned by the caller. `out=` takes buffers for the result's
tensors in the manifest's order, so that a loop of calls allocates nothing. A call whose
inputs do not match what was compiled raises GuardError with the runtime's explanation, or,
with `fallback=fn`, runs `fn` instead and logs why. Guards on the function's globals (a module
constant it read) are checked here in Python against `globals=` (default: the fallback's
`__globals__`); without either they cannot be checked, and the call trusts them.

Host callbacks (`print(x)`, `x.numpy()`, an API named by `--break-on`) run here in Python
between the compiled segments, on numpy copies of the tensors of that point; an API of
paddle or torch gets that framework's tensors and hands its tensors back to the next segment.
"""

import ast
import builtins
import collections
import ctypes
import importlib
import json
import logging
import os
import re
import sys
import threading
import types
import warnings

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
    each parameter that does not (parameter, compiled_for, got, guard, and the entry it was
    checked for: an artifact of several traces lists every entry's), and the message ends with
    them as a table."""

    def __init__(self, code, message, mismatches=()):
        self.mismatches = list(mismatches)
        rows = [("input", "compiled for", "got", "guard")] + [
            (m["parameter"], m["compiled_for"], m["got"], m["guard"]) for m in self.mismatches]
        if len({m.get("entry", 0) for m in self.mismatches}) > 1:  # an artifact of several traces
            rows = [("entry",) + rows[0]] + [(str(m["entry"]),) + r
                                            for m, r in zip(self.mismatches, rows[1:])]
        widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
        table = "\n".join("  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip()
                          for r in rows) if self.mismatches else ""
        super().__init__(code, message + ("\n" + table if table else ""))


class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_char * 8), ("message", ctypes.c_char * 1024)]


class _Mismatch(ctypes.Structure):
    _fields_ = [("parameter", ctypes.c_char_p), ("expected", ctypes.c_char_p),
                ("got", ctypes.c_char_p), ("guard", ctypes.c_char_p), ("entry", ctypes.c_int32)]


class _Value(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("is_tensor", ctypes.c_int), ("data", ctypes.c_void_p),
                ("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * _MAX_RANK), ("repr", ctypes.c_char_p),
                ("device", ctypes.c_int)]


class _HostCall(ctypes.Structure):
    _fields_ = [("segment", ctypes.c_int32), ("callee", ctypes.c_char_p),
                ("source", ctypes.c_char_p), ("num_args", ctypes.c_size_t),
                ("args", ctypes.POINTER(_Value)), ("num_results", ctypes.c_size_t),
                ("results", ctypes.POINTER(_Value))]


_HostHandler = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_HostCall),
                                ctypes.POINTER(_Error))


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
        lib.sotc_allow_entries.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int),
                                           ctypes.c_size_t]
        lib.sotc_set_host_handler.argtypes = [ctypes.c_void_p, _HostHandler, ctypes.c_void_p]
        lib.sotc_open_device.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                         ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_Error)]
        lib.sotc_target.argtypes = [ctypes.c_void_p]
        lib.sotc_target.restype = ctypes.c_char_p
        lib.sotc_manifest.argtypes = [ctypes.c_void_p]
        lib.sotc_manifest.restype = ctypes.c_char_p
        lib.sotc_parse_size.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64),
                                        ctypes.POINTER(ctypes.c_int32)]
        lib.sotc_gemm_implementation.argtypes = [ctypes.c_void_p]
        lib.sotc_gemm_implementation.restype = ctypes.c_char_p
        lib.sotc_kernel_cpu.argtypes = [ctypes.c_void_p]
        lib.sotc_kernel_cpu.restype = ctypes.c_char_p
        lib.sotc_run_into.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Value), ctypes.c_size_t,
                                      ctypes.POINTER(_Value), ctypes.c_size_t,
                                      ctypes.POINTER(_Error)]
        lib.sotc_set_weight.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(_Value),
                                        ctypes.POINTER(_Error)]
        lib.sotc_copy_out.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Value), ctypes.c_void_p,
                                      ctypes.c_int, ctypes.POINTER(_Error)]
        lib.sotc_state_reset.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                         ctypes.POINTER(_Error)]
        lib.sotc_state_new.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                       ctypes.POINTER(_Error)]
        lib.sotc_use_state.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(_Error)]
        lib.sotc_state_free.argtypes = [ctypes.c_void_p]
        lib.sotc_cache_positions.argtypes = [ctypes.c_void_p]
        lib.sotc_cache_positions.restype = ctypes.c_int64
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
                           "got": m.got.decode(), "guard": m.guard.decode(), "entry": m.entry})
    raise GuardError(code, message, mismatches)


class State:
    """A sequence state of a compiled model that keeps state (Compiled.new_state): its own
    values of the state weights. Freed by close(), or when collected."""

    def __init__(self, compiled, handle):
        self._compiled, self._handle = compiled, handle

    def reset(self):
        self._compiled.reset_state(self)

    def close(self):
        handle, self._handle = self._handle, None
        if handle:
            self._compiled._lib.sotc_state_free(handle)

    def __del__(self):
        self.close()


class _InCall:
    """A call of a Compiled artifact in progress (a plain context manager: this is on every
    call's path): the open handle, counted as in use so that close waits."""

    __slots__ = ("compiled", "handle")

    def __init__(self, compiled):
        self.compiled = compiled

    def __enter__(self):
        c = self.compiled
        with c._idle:
            self.handle = c._handle
            if not self.handle:
                raise SotcError("E8005", "the compiled artifact is closed")
            c._calls += 1
        c._local.in_call = getattr(c._local, "in_call", 0) + 1
        return self.handle

    def __exit__(self, *_):
        c = self.compiled
        c._local.in_call -= 1
        with c._idle:
            c._calls -= 1
            if not c._calls:
                c._idle.notify_all()


class Compiled:
    """A compiled artifact, callable like the traced function, from any number of threads at
    once; close() waits for the calls in flight, and a call after it raises E8005."""

    # What one call keeps for its host callbacks, per thread (calls may overlap).
    _host_results = property(lambda self: self._local.__dict__.setdefault("host_results", {}),
                             lambda self, v: setattr(self._local, "host_results", v))
    _host_error = property(lambda self: getattr(self._local, "host_error", None),
                           lambda self, v: setattr(self._local, "host_error", v))

    def __init__(self, path, fallback=None, device=None, globals=None, params=None,
                 strict=True):
        self._lib = _runtime()
        self._fallback = fallback
        self._local = threading.local()
        self._idle = threading.Condition()  # guards _handle and _calls
        self._calls = 0
        self._handle = None
        self._pool_lock = threading.Lock()  # guards _returned
        path = os.fspath(path)
        if device is not None and not isinstance(device, str):
            raise SotcError("E8005", f"device={device!r}: a device is 'cpu', 'cuda', 'cuda:N' or "
                             "'emulator'")
        handle, error = ctypes.c_void_p(), _Error()
        if self._lib.sotc_open_device(path.encode(), device.encode() if device else None,
                                      ctypes.byref(handle), ctypes.byref(error)):
            _raise(error)
        self._handle = handle
        self.target = self._lib.sotc_target(handle).decode()
        self._device = int(device.partition(":")[2] or 0) if device else 0
        # The manifest as the runtime read and checked it (the file may be gone since).
        self._manifest = json.loads(self._lib.sotc_manifest(handle))
        # The function's parameters (every entry has the same); the runtime's inputs add the
        # tensors of module globals.
        entries = self._manifest["entries"]
        inputs = entries[0]["inputs"]
        self._inputs = [p["name"] for p in inputs]
        self.parameters = [p["name"] for p in inputs if "global" not in p]
        self._specs = {p["name"]: p for p in inputs}
        self._fresh = _static_results(self._manifest) if self.target == "cpu" else None
        # Dynamic sizes (-1 - k in a shape for s_k): the input and the dimension of it that
        # give a call's s_k (its results' -1 - k), the first of the entry's tensors that has it.
        self._size_inputs = {}
        for p in inputs:
            for dim, d in enumerate(p["shape"] if p["kind"] == "tensor" else ()):
                factor, terms = _parsed_dim(d)  # "2*s1": a multiple of s1 (the program splits it)
                if terms:
                    self._size_inputs.setdefault(terms[0][0], (p["name"], dim, factor))
        # Sizes derived from those (x[:, 1:] of T: s2 = s1 - 1), keyed alike: (size, base,
        # offset). Entries that derive other sizes leave the results to the runtime.
        derived = [e.get("derived_sizes", []) for e in entries]
        self._derived_sizes = [(-1 - int(d["size"][1:]), -1 - int(d["base"][1:]), d["offset"])
                               for d in derived[0]]
        # Sizes a kernel counts (nonzero's rows) are known after the run only.
        if any(d != derived[0] for d in derived) or any(e.get("produced_sizes") for e in entries):
            self._fresh = None
        self._returned = []  # result arrays handed out, reused once nobody holds them
        self._globals = globals if globals is not None else getattr(fallback, "__globals__", None)
        # Per entry: (guard, reader of its value, the value it expects), parsed once.
        self._global_guards = [[
            (g, _reader(g["expression"]),
             ast.literal_eval(g["expected"]) if g["kind"] == "equal" else g["expected"])
            for g in e["guards"] if g["expression"].startswith("frame.f_globals")
            and g["kind"] != "tensor_meta"]  # global tensors are inputs: the runtime checks them
            for e in entries]
        if any(self._global_guards) and self._globals is None:
            names = sorted({re.sub(r"^frame\.f_globals\['([^']*)'\].*", r"\1", g["expression"])
                            for guards in self._global_guards for g, _, _ in guards})
            warnings.warn(f"sotc: {path} was compiled for the values its globals "
                          f"{', '.join(names)} had when it was traced; without globals= (the "
                          "function's module's globals) or fallback= nothing checks that they "
                          "still do", stacklevel=3)
        # Guards on the attributes of objects passed in, read from the call's arguments.
        objects = [p["name"] for p in inputs if p["kind"] == "object"]
        self._objects = objects
        self._object_guards = [[
            (g, _reader(g["expression"]),
             ast.literal_eval(g["expected"]) if g["kind"] == "equal" else g["expected"])
            for g in e["guards"] for name in objects
            if g["expression"].startswith(f"frame.f_locals[{name!r}]")] for e in entries]
        # Whether a call checks guards of its own before the runtime's (most artifacts have none).
        self._host_guarded = any(self._global_guards) or any(self._object_guards)
        # Per segment that returns: the names of the tensors its run returns, in order.
        self._returned_names = {}
        # this call's host callback results, by segment, and what a host callback raised
        # (re-raised by the call): per thread, in self._local
        self._host_calls = any(s["end"]["kind"] == "host_callback"
                               for s in self._manifest["segments"])
        if self._host_calls:
            self._handler = _HostHandler(self._host_call)  # kept alive with the artifact
            self._lib.sotc_set_host_handler(self._handle, self._handler, None)
        # A model's weights, by state-dict name (the runtime loaded them from the weights file).
        self.weights = [w["name"] for w in self._manifest.get("weights", {}).get("tensors", [])]
        # Those the program writes in place (a static KV cache): the runtime keeps their values
        # from call to call, as the model object would.
        self.state = [w["name"] for w in self._manifest.get("weights", {}).get("tensors", [])
                      if w.get("state")]
        # The positions its KV cache holds (0: none), as the runtime reads the manifest.
        self.cache_positions = self._lib.sotc_cache_positions(self._handle)
        if params is not None:
            self.set_weights(params, strict=strict)

    def info(self):
        """What the artifact runs on: its target, the CPU its kernels that run here were
        compiled for ("" on CUDA), and what its GEMM steps call ("" without any; the libraries
        and their kernels, with a warning when they are slow ones)."""
        with self._in_call() as handle:
            return {"target": self.target,
                    "kernels": self._lib.sotc_kernel_cpu(handle).decode(),
                    "gemm": self._lib.sotc_gemm_implementation(handle).decode()}

    def set_weights(self, state_dict, strict=True):
        """Binds new weights of the compiled model (a state dict: name -> tensor of the
        compiled dtype and shape; the runtime copies them), without recompiling. With
        `strict` (the default) it must give every weight; else the others stay as they are."""
        # A tied weight is one weight under two names (the first the tracer met): the other
        # names are the same tensor, bound with it.
        address = {n: _address(t) for n, t in state_dict.items()}
        known = {address[n] for n in state_dict if n in self.weights} - {None}
        state_dict = {n: t for n, t in state_dict.items()
                      if n in self.weights or address[n] is None or address[n] not in known}
        unknown = sorted(set(state_dict) - set(self.weights))
        if unknown:
            raise KeyError(f"the compiled model has no weights named {', '.join(unknown)} "
                           f"(it has {', '.join(self.weights) or 'none'})")
        missing = [n for n in self.weights if n not in state_dict]
        if strict and missing:
            raise KeyError(f"the state dict gives no {', '.join(missing)} (the compiled "
                           "model's weights; strict=False keeps the compiled values)")
        for name, tensor in state_dict.items():
            if hasattr(tensor, "detach"):  # a framework parameter (torch: requires grad)
                tensor = tensor.detach()
            value, keep, error = _Value(), [], _Error()
            _describe(tensor, value, keep, name)
            with self._in_call() as handle:
                if self._lib.sotc_set_weight(handle, name.encode(), ctypes.byref(value),
                                             ctypes.byref(error)):
                    _raise(error)

    def reset_state(self, state=None):
        """Sets the state weights (self.state) back to their initial values, the weights
        file's or the last set_weights' (a new sequence on a static KV cache): those of
        `state` (a new_state()), or the artifact's own."""
        error = _Error()
        with self._in_call() as handle:
            if self._lib.sotc_state_reset(handle, state and state._handle, ctypes.byref(error)):
                _raise(error)

    def new_state(self):
        """A sequence state of its own (the state weights at their initial values), for
        use_state: one artifact, many sequences."""
        error, state = _Error(), ctypes.c_void_p()
        with self._in_call() as handle:
            if self._lib.sotc_state_new(handle, ctypes.byref(state), ctypes.byref(error)):
                _raise(error)
        return State(self, state)

    def use_state(self, state):
        """The state the calling thread's later calls read and update: a new_state(), or None
        for the artifact's own."""
        error = _Error()
        with self._in_call() as handle:
            if self._lib.sotc_use_state(handle, state and state._handle, ctypes.byref(error)):
                _raise(error)
        self._local.state = state

    def generate(self, input_ids, max_new_tokens=32, do_sample=False, temperature=1.0,
                 top_k=None, top_p=1.0, eos_token_id=None, seed=None, attention_mask=None,
                 pad_token_id=None):
        """Generates text token by token on a compiled language model that keeps its KV
        cache as state (traced as forward(tokens[1, T], positions[T]) -> logits, compiled with
        a prefill and a one-token decode entry): the prompt `input_ids` then up to
        `max_new_tokens` new tokens, as transformers' generate returns them. Greedy, or with
        `do_sample` drawn at `temperature` among the `top_k` likeliest and the `top_p` nucleus,
        reproducibly for one `seed`; it stops after an `eos_token_id` (one or a list). Runs on a
        sequence state of its own: threads may generate at once. A batch of prompts [B, T],
        padded on the left with an `attention_mask` as transformers' tokenizers pad them, runs
        one sequence per prompt (one after another, not batched kernels) and returns the rows
        as transformers does (rows that stop early padded with `pad_token_id`)."""
        from ._generate import generate
        return generate(self, input_ids, attention_mask=attention_mask,
                        pad_token_id=pad_token_id, max_new_tokens=max_new_tokens,
                        do_sample=do_sample, temperature=temperature, top_k=top_k, top_p=top_p,
                        eos_token_id=eos_token_id, seed=seed)

    def sequence(self):
        """A sequence on the model's KV cache with a state of its own (sotc._generate.Sequence):
        append tokens, get the last one's logits, rewind to an earlier position, go on."""
        from ._generate import Sequence
        return Sequence(self)

    def generate_stream(self, input_ids, **options):
        """generate's new tokens as they come, one int at a time (the same options)."""
        from ._generate import stream
        return stream(self, input_ids, **options)

    def _host_call(self, _user, call, _error):
        """The runtime's host handler: rebuilds and runs the call that ends a segment."""
        try:
            call = call.contents
            end = self._manifest["segments"][call.segment]["end"]
            tensors = {}
            for i in range(call.num_args):
                v = call.args[i]
                tensors[v.name.decode()] = _array(v)
            args = [_rebuild(a, tensors, self._host_results) for a in end["args"]]
            kwargs = {k: _rebuild(v, tensors, self._host_results) for k, v in end["kwargs"]}
            result = _host_function(end["callee"])(*args, **kwargs)
            self._host_results[call.segment] = result
            _fill_results(end, result, [call.results[i] for i in range(call.num_results)])
            return 0
        except BaseException as e:  # raised again by __call__, after the runtime returns
            self._host_error = e
            return 1

    def close(self):
        """Closes the artifact once the calls in flight on other threads have returned."""
        if getattr(self._local, "in_call", 0):
            raise SotcError("E8005", "close() from inside a call of the same artifact")
        with self._idle:
            handle, self._handle = self._handle, None
            while self._calls:
                self._idle.wait()
        if handle:
            self._lib.sotc_close(handle)

    def _in_call(self):
        """The open handle, counted as in use (close waits) while the block runs."""
        return _InCall(self)

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
        for name in self._inputs[len(self.parameters):]:  # tensors read from module globals
            bound[name] = self._module_globals(f"reads the global tensor {name!r}")[
                self._specs[name]["global"]]
        return bound

    def _module_globals(self, why):
        if self._globals is None:
            raise TypeError(f"the compiled function {why}: load it with globals= (the "
                            "function's module's globals) or fallback= (the function)")
        return self._globals

    def _apply_side_effects(self, effects, tensors, bound):
        """What the function changed besides its result, done to the caller's objects: module
        globals assigned or deleted, list and dict arguments mutated in place (the state
        weights' new values stay in the runtime)."""
        for effect in effects:
            if "state" in effect:
                continue
            value = (_rebuild(effect["value"], tensors, self._host_results)
                     if "value" in effect else None)
            if "global" in effect:
                scope = self._module_globals(f"assigns the global {effect['global']!r}")
                if effect.get("deleted"):
                    scope.pop(effect["global"], None)
                else:
                    scope[effect["global"]] = value
            else:
                target = bound[effect["argument"]]
                if isinstance(target, list):
                    target[:] = value
                elif isinstance(target, dict):
                    target.clear()
                    target.update(value)
                else:  # a tensor the function assigned into (x[...] = v)
                    _assign_in_place(target, value)

    def __call__(self, *args, **kwargs):
        with self._in_call() as handle:
            return self._call(handle, args, kwargs)

    def _call(self, handle, args, kwargs):
        out = kwargs.pop("out") if "out" in kwargs and "out" not in self._specs else None
        bound = self._bind(args, kwargs)
        # The guards only the caller can check (globals, objects' attributes), entry by entry:
        # the runtime takes the first entry they hold for whose parameters match.
        stale = [[dict(m, entry=e) for m in
                  self._check_globals(e) or self._check(self._object_guards[e], bound)]
                 for e in range(len(self._global_guards))] if self._host_guarded else [[]]
        if all(stale):
            stale = [m for entry in stale for m in entry]
            message = "the inputs do not match what was compiled: " + "; ".join(
                f"{m['parameter']}: expected {m['compiled_for']}, got {m['got']} "
                f"(guard {m['guard']})" for m in stale)
            if self._fallback is not None:
                _log.warning("sotc: running the original function: %s", message)
                return self._run_fallback(args, kwargs)
            raise GuardError("E8004", message, stale)
        if len(stale) > 1:
            allowed = (ctypes.c_int * len(stale))(*[not entry for entry in stale])
            self._lib.sotc_allow_entries(handle, allowed, len(stale))
        for name in self._objects:  # a layer passed in: its weights as they are now
            if hasattr(bound[name], "state_dict") and self.weights:
                self.set_weights({k: v for k, v in bound[name].state_dict().items()
                                  if k in self.weights}, strict=False)
        values = (_Value * max(len(self._inputs), 1))()
        keep = []  # what the values point into, alive until the run returns
        cuda_input = None  # the first CUDA tensor: results come back in its framework
        host_input = None  # else the first torch or paddle CPU tensor: the same
        for i, name in enumerate(self._inputs):
            value = bound[name]
            if self._specs[name]["kind"] == "tensor" or _is_tensor(value):
                if _describe(value, values[i], keep, name):
                    cuda_input = value if cuda_input is None else cuda_input
                elif host_input is None and _framework_of_tensor(value) in ("torch", "paddle"):
                    host_input = value
            else:
                text = repr(value).encode()
                keep.append(text)
                values[i].repr = text
        if self._host_calls:
            self._host_results, self._host_error = {}, None
        error = _Error()
        fresh = out is None and self._fresh is not None
        sizes = {}
        if fresh and self._size_inputs:
            for d, (name, dim, factor) in self._size_inputs.items():
                shape = getattr(bound[name], "shape", ())
                if len(shape) > dim and shape[dim] > 0 and shape[dim] % factor == 0:
                    sizes[d] = shape[dim] // factor
            fresh = len(sizes) == len(self._size_inputs)  # else the runtime says what is wrong
            for size, base, offset in self._derived_sizes:
                sizes[size] = sizes.get(base, 0) + offset
                fresh = fresh and sizes[size] > 0
        if fresh:  # the caller's arrays from the start: the kernels write them, nothing is copied
            out = self._result_arrays(sizes)
        if out is not None:
            buffers = list(out) if isinstance(out, (tuple, list)) else [out]
            outputs = (_Value * max(len(buffers), 1))()
            for i, buffer in enumerate(buffers):
                _describe(buffer, outputs[i], keep, f"out[{i}]", writable=True,
                          bits_of=self._fresh[i][0] if fresh else None)
            failed = self._lib.sotc_run_into(handle, values, len(self._inputs), outputs,
                                             len(buffers), ctypes.byref(error))
        else:
            outputs = (_Value * 64)()
            count = ctypes.c_size_t(64)
            failed = self._lib.sotc_run(handle, values, len(self._inputs), outputs,
                                        ctypes.byref(count), ctypes.byref(error))
        if failed:
            if self._fallback is not None and error.code.decode() == "E8004":
                _log.warning("sotc: running the original function: %s", error.message.decode())
                return self._run_fallback(args, kwargs)
            if self._host_calls and self._host_error is not None:
                raise self._host_error
            if error.code.decode() == "E8008":
                raise self._raised(self._lib.sotc_last_segment(handle), error.message.decode())
            _raise(error, self._lib, handle)
        segment = self._lib.sotc_last_segment(handle)
        end = self._manifest["segments"][segment]["end"]
        result = end.get("result")
        if result is None:
            return None
        names = self._returned_names.get(segment)
        if names is None:
            names = self._returned_names[segment] = _result_names(end)
        if fresh:
            tensors = {name: _as_tensor_of(array, dtype, host_input)
                       for name, array, (dtype, _) in zip(names, buffers, self._fresh)}
        elif out is not None:
            tensors = dict(zip(names, buffers))
        else:
            tensors = {outputs[i].name.decode(): self._take(handle, outputs[i], cuda_input,
                                                            host_input)
                       for i in range(count.value)}
        if "side_effects" in end:
            self._apply_side_effects(end["side_effects"], tensors, bound)
        if "tensor" in result:  # the common case, without the general rebuild
            return tensors[result["tensor"]]
        return _rebuild(result, tensors, self._host_results if self._host_calls else {})

    def _run_fallback(self, args, kwargs):
        """The original function, on the framework's tensors where the caller gave numpy
        arrays (a paddle function cannot add numpy arrays with paddle's methods); its tensors
        come back as numpy arrays then, as the compiled artifact returns them."""
        framework = _framework_of(self._fallback)
        if framework is None or not any(isinstance(a, np.ndarray)
                                        for a in list(args) + list(kwargs.values())):
            return self._fallback(*args, **kwargs)
        module = sys.modules[framework]
        to_tensor = module.from_numpy if framework == "torch" else module.to_tensor
        convert = lambda a: to_tensor(a) if isinstance(a, np.ndarray) else a  # noqa: E731
        result = self._fallback(*[convert(a) for a in args],
                                **{k: convert(v) for k, v in kwargs.items()})
        return _to_numpy(result, framework)

    def _result_arrays(self, sizes):
        """Arrays for a call's results (`sizes`: the call's value of each dynamic size, by its
        dimension's -1 - k): ones an earlier call returned and nobody references any more (no
        page faults on memory that is already mapped), else new ones."""
        shapes = [tuple(_dim_at(d, sizes) for d in shape) for _, shape in self._fresh]
        with self._pool_lock:
            free = [i for i, group in enumerate(self._returned)
                    if all([sys.getrefcount(a) == _POOL_REFS for a in group])
                    and [a.shape for a in group] == shapes]
            if free:
                group = self._returned.pop(free[0])
            else:
                group = [np.empty(shape, _numpy_dtype(_DTYPES.index(dtype)))
                         for (dtype, _), shape in zip(self._fresh, shapes)]
            self._returned = self._returned[-(_POOL_SIZE - 1):] + [group]
            return list(group)

    def _raised(self, segment, message):
        """The exception the program raises where the run stopped (E8008): the builtin class
        (a traced subclass's builtin base) with the program's message."""
        end = self._manifest["segments"][segment]["end"] if segment >= 0 else {}
        cls = getattr(builtins, end.get("exception", ""), None)
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            return SotcError("E8008", message)
        exception = cls(end["message"]) if end["message"] else cls()
        if hasattr(exception, "add_note"):  # Python 3.11 on
            exception.add_note(f"sotc E8008: raised by the compiled program: {message}")
        return exception

    def _check_globals(self, entry):
        """The guards of an entry on the function's globals that no longer hold, as
        mismatches."""
        return ([] if self._globals is None
                else self._check(self._global_guards[entry], self._globals))

    @staticmethod
    def _check(guards, namespace):
        """The first of `guards` (guard, reader, expected) that `namespace` fails, as a
        mismatch row (later guards may read through it)."""
        stale = []
        for g, read, expected in guards:
            try:
                value = read(namespace)
                got = {"type": lambda: type(value).__name__,
                       "length": lambda: str(len(value)),
                       "keys": lambda: repr(list(value.keys()))}.get(g["kind"],
                                                                   lambda: repr(value))()
                holds = (value if g["kind"] == "equal" else got) == expected
            except Exception as e:  # noqa: BLE001 - a missing or changed global
                got, holds = f"{type(e).__name__}: {e}", False
            if not holds:
                name = re.sub(r"^frame\.f_globals\['([^']*)'\]", r"global \1", g["expression"])
                name = re.sub(r"^frame\.f_locals\['([^']*)'\]", r"\1", name)
                stale.append({"parameter": name, "compiled_for": g["expected"], "got": got,
                              "guard": f"{g['id']} ({g['source']})"})
                break  # later guards may read through this one
        return stale

    def _take(self, handle, v, like, host_like):
        """A result the caller owns: a device copy in the framework of the CUDA input `like`
        (torch, cupy), else a host copy as the host input `host_like` is (numpy, torch,
        paddle; the emulator's device results too)."""
        if v.device != _CUDA:
            return _as_tensor_of(_array(v), _DTYPES[v.dtype], host_like)
        shape, dtype = tuple(v.shape[d] for d in range(v.rank)), _numpy_dtype(v.dtype)
        target, where = None, _CPU
        module = _framework_of_tensor(like) if like is not None else ""
        if module == "torch":
            import torch
            target = torch.empty(shape, dtype=getattr(torch, _DTYPES[v.dtype]),
                                 device=f"cuda:{self._device}")
            pointer, where = target.data_ptr(), _CUDA
        elif module == "cupy":
            import cupy
            with cupy.cuda.Device(self._device):
                target = cupy.empty(shape, dtype)
            pointer, where = target.data.ptr, _CUDA
        else:
            target = np.empty(shape, dtype)
            pointer = target.ctypes.data
        error = _Error()
        if target.size and self._lib.sotc_copy_out(handle, ctypes.byref(v), pointer, where,
                                                   ctypes.byref(error)):
            _raise(error)
        return target if where == _CUDA else _as_tensor_of(target, _DTYPES[v.dtype], host_like)


_CPU, _CUDA = 0, 1  # sotc_device
# Result arrays Compiled keeps for reuse (its pool), and how many references to one mean
# "only the pool holds it", measured on this interpreter with the test _result_arrays makes.
_POOL_SIZE = 3


def _pool_only_refs():
    group = [np.empty(1)]
    return [sys.getrefcount(a) for a in group][0]


_POOL_REFS = _pool_only_refs()


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DL_CUDA = 2
_DL_TYPES = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
             (1, 8): "uint8", (2, 16): "float16", (2, 32): "float32", (2, 64): "float64",
             (4, 16): "bfloat16", (5, 64): "complex64", (5, 128): "complex128", (6, 8): "bool"}


def _framework_of(fn):
    """"torch" or "paddle" when `fn`'s code names that framework's module (or a submodule)
    through its globals, else None."""
    code, scope = getattr(fn, "__code__", None), getattr(fn, "__globals__", {})
    for name in code.co_names if code else ():
        module = getattr(scope.get(name), "__name__", "")
        if isinstance(scope.get(name), types.ModuleType) and module.split(".")[0] in (
                "torch", "paddle"):
            return module.split(".")[0]
    return None


def _to_numpy(value, framework):
    """`value` with the framework's tensors in it made numpy arrays (tuples, lists, dicts)."""
    if type(value).__module__.split(".")[0] == framework and hasattr(value, "numpy"):
        return (value.detach() if hasattr(value, "detach") else value).numpy()
    if isinstance(value, (tuple, list)):
        return type(value)(_to_numpy(v, framework) for v in value)
    if isinstance(value, dict):
        return {k: _to_numpy(v, framework) for k, v in value.items()}
    return value


def _framework_of_tensor(value):
    return type(value).__module__.split(".")[0]


def _as_tensor_of(array, dtype, like):
    """The CPU result `array` (of sotc's `dtype`) as a tensor of the framework the caller's
    input `like` belongs to: torch's shares the array's memory, paddle's is a copy; numpy
    arrays stay."""
    framework = _framework_of_tensor(like) if like is not None else ""
    if framework == "torch":
        torch = sys.modules["torch"]
        if dtype == "bfloat16":  # numpy has no bfloat16: torch views its bits
            return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
        return torch.from_numpy(array)
    if framework == "paddle":
        paddle = sys.modules["paddle"]
        if dtype == "bfloat16":  # paddle's bfloat16 numpy form is its bits, uint16
            return paddle.to_tensor(array.view(np.uint16), dtype="bfloat16")
        return paddle.to_tensor(array)
    return array


def _is_tensor(value):
    return isinstance(value, np.ndarray) or hasattr(value, "__cuda_array_interface__") or \
        hasattr(value, "__dlpack__")


def _cuda_view(value):
    """(pointer, dtype name, shape, contiguous, what keeps the memory alive) of a CUDA tensor,
    or None for anything else: through __cuda_array_interface__ (torch, cupy, numba), else
    DLPack (paddle, jax)."""
    if hasattr(value, "detach") and getattr(value, "is_cuda", False):
        value = value.detach()  # torch refuses the interface on tensors that require grad
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is not None:
        shape = tuple(interface["shape"])
        dtype = np.dtype(interface["typestr"])
        strides = interface.get("strides")
        dense = strides is None or tuple(strides) == tuple(
            int(np.prod(shape[d + 1:])) * dtype.itemsize for d in range(len(shape)))
        return interface["data"][0], dtype.name, shape, dense, value
    device = getattr(value, "__dlpack_device__", None)
    if device is None or device()[0] != _DL_CUDA:
        return None
    capsule = value.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    t = _DLTensor.from_address(get(capsule, b"dltensor"))  # DLManagedTensor starts with it
    shape = tuple(t.shape[d] for d in range(t.ndim))
    dense = not t.strides or all(
        t.strides[d] == int(np.prod(shape[d + 1:])) for d in range(t.ndim))
    dtype = _DL_TYPES.get((t.dtype.code, t.dtype.bits), "?")
    # The producer keeps the memory while the capsule lives.
    return t.data + t.byte_offset, dtype, shape, dense, capsule


# numpy and torch dtypes -> sotc_dtype, filled as they are met (the fast path of _describe).
_DTYPE_INDEX = {}


def _dense_host_view(value, writable):
    """(pointer, sotc_dtype, shape) of a numpy array or torch CPU tensor that the kernels can
    read (or, `writable`, write) in place, without conversion; None for anything else (then
    the general path of _describe decides). This is on every call's path."""
    if type(value) is np.ndarray:
        flags = value.flags
        if not (flags.c_contiguous and flags.aligned and (flags.writeable or not writable)):
            return None
        pointer = value.ctypes.data
    else:
        tensor = getattr(sys.modules.get("torch"), "Tensor", None)  # (a stub's is no type)
        if not isinstance(tensor, type) or not isinstance(value, tensor) or \
                value.device.type != "cpu" or not value.is_contiguous():
            return None
        pointer = value.data_ptr()
        if pointer % value.element_size():
            return None
    index = _DTYPE_INDEX.get(value.dtype)
    if index is None:
        name = str(value.dtype).replace("torch.", "")
        if name not in _DTYPES:
            return None
        index = _DTYPE_INDEX[value.dtype] = _DTYPES.index(name)
    return pointer, index, value.shape


def _describe(value, v, keep, name, writable=False, bits_of=None):
    """Fills the sotc_value `v` for a tensor argument; True when it is a CUDA tensor.
    `bits_of`: the dtype a uint16 array holds the bits of (bfloat16 without ml_dtypes)."""
    view = _dense_host_view(value, writable) if bits_of != "bfloat16" else None
    if view is not None and len(view[2]) <= _MAX_RANK:
        keep.append(value)
        v.is_tensor, v.data, v.dtype, v.rank = 1, view[0], view[1], len(view[2])
        v.shape[:len(view[2])] = tuple(view[2])
        return False
    cuda = _cuda_view(value)
    if cuda is not None:
        pointer, dtype, shape, dense, owner = cuda
        if not dense:
            raise ValueError(f"{name}: a non-contiguous CUDA tensor (make it contiguous first)")
        keep.append(owner)
        v.device = _CUDA
    else:
        bfloat16 = False
        if not isinstance(value, np.ndarray) and (hasattr(value, "__dlpack__")
                                                  or hasattr(value, "__array__")):
            # A CPU tensor of another framework (torch, paddle, jax): viewed, not copied; one
            # that requires grad is read without its autograd history.
            if getattr(value, "requires_grad", False) and hasattr(value, "detach"):
                value = value.detach()
            bfloat16 = str(getattr(value, "dtype", "")).endswith("bfloat16")
            framework = _framework_of_tensor(value)
            if bfloat16 and framework == "torch":
                value = value.view(sys.modules["torch"].int16)  # numpy has no bfloat16: its bits
            try:
                if bfloat16 and framework == "paddle":  # its numpy form: the bits, as uint16
                    value = value.numpy()
                value = (np.from_dlpack(value) if hasattr(value, "__dlpack__")
                         else np.asarray(value))
            except (BufferError, RuntimeError, TypeError, ValueError) as e:
                raise SotcError("E8005", f"{name}: a {getattr(value, 'dtype', '?')} tensor "
                                f"cannot be passed ({e})") from None
        if not isinstance(value, np.ndarray):
            raise TypeError(f"{name}: expected a tensor, got {type(value).__name__}")
        if writable and not (value.flags.c_contiguous and value.flags.writeable):
            raise ValueError(f"{name}: an output buffer must be a writable C-contiguous array")
        # Inputs: copied when not C-contiguous and aligned (the kernels' ABI); outputs as given.
        array = value if writable else np.require(value, requirements=["C", "A"])
        keep.append(array)
        pointer, dtype, shape = array.ctypes.data, str(array.dtype), array.shape
        if (bfloat16 and dtype in ("int16", "uint16")) or (bits_of == "bfloat16" and
                                                          dtype == "uint16"):
            dtype = "bfloat16"
    if len(shape) > _MAX_RANK:
        raise ValueError(f"{name}: more than {_MAX_RANK} dimensions")
    v.is_tensor, v.data, v.rank = 1, pointer, len(shape)
    v.dtype = _DTYPES.index(dtype) if dtype in _DTYPES else -1
    for d, size in enumerate(shape):
        v.shape[d] = size
    return cuda is not None


def _reader(expression):
    """A function of a namespace (the globals for frame.f_globals, the call's arguments for
    frame.f_locals) that reads what a guard's expression (frame.f_globals['A'][0].b) names:
    subscripts of constants and attributes only (the manifest is data, not code), parsed
    once."""
    def compile_(node):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id == "frame" and node.attr in ("f_globals", "f_locals"):
            return lambda namespace: namespace
        if isinstance(node, ast.Subscript):
            inner, key = compile_(node.value), ast.literal_eval(node.slice)
            return lambda namespace: inner(namespace)[key]
        if isinstance(node, ast.Attribute):
            inner, attribute = compile_(node.value), node.attr
            return lambda namespace: getattr(inner(namespace), attribute)
        raise ValueError(f"a guard expression sotc does not read: {expression}")
    try:
        return compile_(ast.parse(expression, mode="eval").body)
    except (SyntaxError, ValueError) as e:  # the call reports it as that guard's mismatch
        def unreadable(_namespace, error=e):
            raise error
        return unreadable


def _address(tensor):
    """(data address, shape) of a framework tensor or numpy array; None when unknown."""
    try:
        if hasattr(tensor, "data_ptr"):
            return tensor.data_ptr(), tuple(tensor.shape)
        if hasattr(tensor, "__array_interface__"):
            return tensor.__array_interface__["data"][0], tuple(tensor.shape)
    except (TypeError, RuntimeError, ValueError):
        pass
    return None


def _parsed_dim(d):
    """A manifest shape's dimension (a number, -1 - k for s_k, or a product of sizes as text:
    "s0*s1", "16*s0^2") as (number, ((key, power), ...)), each size keyed as a call's `sizes`
    are (-1 - k): parsed once, by the runtime's parser (sotc_parse_size), evaluated per call
    by _dim_at."""
    if isinstance(d, int):
        return (d, ()) if d >= 0 else (1, ((d, 1),))
    factor, powers = ctypes.c_int64(), (ctypes.c_int32 * 8)()
    if _runtime().sotc_parse_size(d.encode(), ctypes.byref(factor), powers):
        raise SotcError("E8001", f"a dimension of {d!r} (a number or N*s0^P*s1^Q)")
    return factor.value, tuple((-1 - k, p) for k, p in enumerate(powers) if p)


def _dim_at(dim, sizes):
    """A _parsed_dim at a call's `sizes`."""
    n, terms = dim
    for key, power in terms:
        n *= sizes[key] ** power
    return n


def _static_results(manifest):
    """[(dtype, shape)] of the result's tensors when every segment that returns returns the
    same ones (then the caller's arrays can be allocated before the run: each dimension a
    _parsed_dim, of the call's dynamic sizes), else None."""
    specs = None
    for segment in manifest["segments"]:
        end = segment["end"]
        if end["kind"] != "return" or "result" not in end:
            continue
        buffers = {b["name"]: b for b in segment["inputs"] + segment["outputs"]}
        these = [(buffers[n]["dtype"], tuple(_parsed_dim(d) for d in buffers[n]["shape"]))
                 for n in _result_names(end)]
        if specs is not None and these != specs:
            return None
        specs = these
    return specs


def _assign_in_place(target, value):
    """target[...] = value for a numpy array, a torch tensor or a paddle tensor; a new shape
    (x.resize_as_(t)) resizes the target as the framework would."""
    if isinstance(target, np.ndarray):
        value = np.asarray(value)
        if target.shape != value.shape:
            try:  # only an array that owns its memory can change its shape in place
                target.resize(value.shape, refcheck=False)
            except ValueError as exc:
                raise SotcError("E8005", f"the compiled function resizes an argument to "
                                f"{list(value.shape)}, which this numpy array cannot do in "
                                f"place ({exc})") from None
        np.copyto(target, value)
    elif type(target).__module__.startswith("torch"):
        import torch
        value = value if isinstance(value, torch.Tensor) else torch.from_numpy(value)
        if tuple(target.shape) != tuple(value.shape):
            target.resize_(value.shape)
        target.copy_(value)
    elif hasattr(target, "set_value"):  # paddle
        target.set_value(np.asarray(value))
    else:
        raise TypeError(f"cannot write the compiled function's update into a "
                        f"{type(target).__name__}")


def _result_names(end):
    """The tensors a run that ends at `end` returns, in order: the result's, then those of its
    side effects not among them yet (as runtime/src/Artifact.cpp lists them)."""
    names = _tensor_names(end["result"])
    for effect in end.get("side_effects", []):
        if "value" in effect and "state" not in effect:  # a state's stays in the runtime
            names += [n for n in _tensor_names(effect["value"]) if n not in names]
    return names


def _tensor_names(r):
    """The tensors of a manifest value, in the order the runtime returns them."""
    if "tensor" in r:
        return [r["tensor"]]
    pairs = (r.get("dict") or r.get("record", {}).get("fields", [])
             or r.get("object", {}).get("attributes", []))
    items = r.get("tuple") or r.get("list") or [pair[1] for pair in pairs]
    return [name for item in items for name in _tensor_names(item)]


def _numpy_dtype(dtype):
    """numpy's dtype for sotc's: bfloat16 is ml_dtypes' (its raw bits, uint16, without it)."""
    name = _DTYPES[dtype]
    if name == "bfloat16":
        try:
            import ml_dtypes
            return np.dtype(ml_dtypes.bfloat16)
        except ImportError:
            return np.dtype("uint16")
    return np.dtype(name)


def _view(v):
    """The host memory of the tensor value `v` as a numpy array (no copy)."""
    dtype = _numpy_dtype(v.dtype)
    shape = tuple(v.shape[d] for d in range(v.rank))
    count = int(np.prod(shape))
    if not count:
        return np.zeros(shape, dtype)
    buffer = (ctypes.c_char * (count * dtype.itemsize)).from_address(v.data)
    return np.frombuffer(buffer, dtype=dtype).reshape(shape)


def _array(v):
    """A copy of the tensor value `v` (the runtime reuses its buffers) as a numpy array."""
    return _view(v).copy()


def _rebuild(r, tensors, host_results):
    """A Python value from its manifest form (docs/manifest.md: `result`)."""
    if "tensor" in r:
        return tensors[r["tensor"]]
    if "constant" in r:
        return ast.literal_eval(r["constant"])
    if "tuple" in r:
        return tuple(_rebuild(item, tensors, host_results) for item in r["tuple"])
    if "list" in r:
        return [_rebuild(item, tensors, host_results) for item in r["list"]]
    if "dict" in r:
        return {_rebuild(k, tensors, host_results): _rebuild(v, tensors, host_results)
                for k, v in r["dict"]}
    if "record" in r:
        fields = {name: _rebuild(v, tensors, host_results) for name, v in r["record"]["fields"]}
        return _record_class(r["record"]["class"])(**fields)
    if "object" in r:
        return _rebuild_object(r["object"], tensors, host_results)
    if r.get("callback") in host_results:
        return host_results[r["callback"]]
    raise SotcError("E8005", f"no host callback computed {r.get('host')}")


class Record(collections.OrderedDict):
    """A traced model's output record (transformers' ModelOutput) when its class is not
    imported here: the fields are attributes (None where unset), the fields set are its items
    (`out["logits"]`), and it indexes like the tuple of their values (`out[0]`)."""

    def __init__(self, **fields):
        super().__init__((k, v) for k, v in fields.items() if v is not None)
        self.__dict__.update(fields)

    def __getitem__(self, key):
        return super().__getitem__(key) if isinstance(key, str) else self.to_tuple()[key]

    def to_tuple(self):
        return tuple(self.values())

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}=...' for k in self)})"


def _rebuild_object(o, tensors, host_results):
    """An object the function returns (transformers' DynamicCache in a model's output): of its
    own class where its module is imported here, as pickle rebuilds one (the class's __new__,
    then its attributes), else a namespace named after it. An attribute only the traced
    process had (a torch.device's repr) is left unset, and named in __sotc_unset__."""
    module, _, qualname = o["class"].partition(":")
    cls = sys.modules.get(module)
    for part in qualname.split("."):
        cls = getattr(cls, part, None)
    if not isinstance(cls, type):
        cls = type(qualname.rpartition(".")[2], (types.SimpleNamespace,),
                   {"__module__": "sotc.objects"})
    obj = cls.__new__(cls)
    unset = []
    for name, value in o["attributes"]:
        try:
            obj.__dict__[name] = _rebuild(value, tensors, host_results)
        except SotcError:  # a value the host cannot rebuild
            unset.append(name)
    if unset:
        obj.__dict__["__sotc_unset__"] = unset
    return obj


def _record_class(qualified):
    """The record's own class where its module is imported in this process (the drop-in
    answer for the traced model's caller), else a Record named after it."""
    module, _, qualname = qualified.partition(":")
    cls = sys.modules.get(module)
    for part in qualname.split("."):
        cls = getattr(cls, part, None)
    if isinstance(cls, type):
        return cls
    return type(qualname.rpartition(".")[2], (Record,), {"__module__": "sotc.records"})


# Tensor methods that read values on the host, on numpy arrays.
_TENSOR_METHODS = {"numpy": np.array, "item": lambda x: x.item(), "tolist": lambda x: x.tolist()}


def _host_function(callee):
    """The Python callable a manifest's host callback names: a builtin, a tensor method, or an
    API of a framework (its tensors converted from and back to numpy)."""
    if hasattr(builtins, callee):
        return getattr(builtins, callee)
    if callee.startswith("Tensor.") and callee[7:] in _TENSOR_METHODS:
        return _TENSOR_METHODS[callee[7:]]
    module, _, attribute = callee.partition(".")
    try:
        framework = fn = importlib.import_module(module)
        for part in attribute.split("."):
            fn = getattr(fn, part)
    except (ImportError, AttributeError) as e:
        raise SotcError("E8006", f"the host callback {callee} is not available here: {e}") from e
    # numpy arrays in as the framework's tensors (torch.from_numpy, paddle.to_tensor), out as
    # numpy arrays again.
    wrap = getattr(framework, "from_numpy" if module == "torch" else "to_tensor", None)

    def convert(value, inward):
        if isinstance(value, (tuple, list)):
            return type(value)(convert(v, inward) for v in value)
        if inward and wrap and isinstance(value, np.ndarray):
            return wrap(value)
        if not inward and hasattr(value, "numpy") and not isinstance(value, np.ndarray):
            return (value.detach() if hasattr(value, "detach") else value).numpy()
        return value

    return lambda *a, **k: convert(
        fn(*convert(a, True), **{n: convert(v, True) for n, v in k.items()}), False)


def _fill_results(end, result, buffers):
    """Writes the tensors of a host call's result where the manifest's `result` places them
    into the runtime's buffers (result_tensors), checked against what was compiled."""
    by_name = {v.name.decode(): v for v in buffers}

    def fill(r, value):
        if "tensor" in r:
            target, array = _view(by_name[r["tensor"]]), np.asarray(value)
            if array.shape != target.shape or array.dtype != target.dtype:
                raise SotcError("E8006", f"{end['callee']} ({end['source']}) returned "
                                         f"{array.dtype}{list(array.shape)}; the compiled "
                                         f"program expects {target.dtype}{list(target.shape)}")
            np.copyto(target, array)
        for key in ("tuple", "list"):
            if key in r:
                if not isinstance(value, (tuple, list)) or len(value) != len(r[key]):
                    raise SotcError("E8006", f"{end['callee']} ({end['source']}) returned "
                                             f"{value!r:.60}; expected a {key} of {len(r[key])}")
                for item, v in zip(r[key], value):
                    fill(item, v)
    fill(end["result"], result)
