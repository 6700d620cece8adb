"""Input specifications: tensor specs from strings or tensor-like objects, and Python literals."""

import ast
import re
import types

from . import trace_pb2 as pb

# Canonical dtype names, their short forms, and the spellings numpy/torch/paddle print.
_DTYPES = {
    "bool": pb.BOOL,
    "int8": pb.INT8,
    "uint8": pb.UINT8,
    "int16": pb.INT16,
    "int32": pb.INT32,
    "int64": pb.INT64,
    "float16": pb.FLOAT16,
    "bfloat16": pb.BFLOAT16,
    "float32": pb.FLOAT32,
    "float64": pb.FLOAT64,
    "complex64": pb.COMPLEX64,
    "complex128": pb.COMPLEX128,
}
_SHORT = {
    "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
    "i8": "int8", "u8": "uint8", "i16": "int16", "i32": "int32", "i64": "int64",
    "c64": "complex64", "c128": "complex128", "half": "float16", "float": "float32",
    "double": "float64", "int": "int32", "long": "int64",
}

_SPEC_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9]*)\s*\[([^\]]*)\]\s*(!grad)?\s*$")
# A dynamic dimension: `?` (the size every `?` shares) or a name (`T`: dims of one name are one
# size), with an optional bound (`?<=4096`, `T<=512`).
_DYNAMIC_RE = re.compile(r"^\s*(\?|[A-Za-z_][A-Za-z0-9_]*)\s*(?:<=\s*(-?\d+)\s*)?$")


class SpecError(ValueError):
    """An input specification that cannot be understood."""


def dtype_from_name(name):
    """Maps 'f32', 'float32', 'torch.float32', 'paddle.float32' or numpy's dtype to the enum."""
    text = str(name).strip()
    for prefix in ("torch.", "paddle.", "jax.numpy.", "numpy.", "np."):
        if text.startswith(prefix):
            text = text[len(prefix):]
    text = _SHORT.get(text, text)
    if text not in _DTYPES:
        raise SpecError(f"unknown dtype '{name}' (expected one of {', '.join(_DTYPES)})")
    return _DTYPES[text]


def dtype_name(enum_value):
    for name, value in _DTYPES.items():
        if value == enum_value:
            return name
    raise SpecError(f"unknown dtype enum {enum_value}")


def tensor_spec(shape, dtype, stop_gradient=True):
    spec = pb.TensorSpec(dtype=dtype_from_name(dtype), stop_gradient=stop_gradient)
    for size in shape:
        dynamic = _DYNAMIC_RE.match(size) if isinstance(size, str) else None
        if size is None:
            spec.dims.add(size=-1, dynamic=True)
        elif dynamic:  # ?, T, ?<=4096, T<=512: dynamic, at most that many
            name, bound = dynamic.groups()
            most = int(bound) if bound is not None else 0
            if bound is not None and most < 1:
                raise SpecError(f"a dynamic dimension's bound must be at least 1, not {most}")
            spec.dims.add(size=-1, dynamic=True, max=most, symbol="" if name == "?" else name)
        else:
            size = int(size)
            if size < 0:
                raise SpecError(f"negative dimension {size} in shape {list(shape)}")
            spec.dims.add(size=size, dynamic=False)
    return spec


def parse_tensor_spec(text):
    """Parses `float32[64,128]`, `f32[?,128]`, `f32[?<=4096,128]`, `int64[B,T<=512]`, `bf16[]`,
    `f32[8]!grad`; None if not a spec."""
    match = _SPEC_RE.match(text)
    if not match:
        return None
    dtype, dims, grad = match.groups()
    dims = [d.strip() for d in dims.split(",")] if dims.strip() else []
    for d in dims:
        if not d.isdigit() and not _DYNAMIC_RE.match(d):
            raise SpecError(f"bad dimension '{d}' in '{text}' (use a size, '?', a name or "
                            "'?<=N')")
    return tensor_spec(dims, dtype, stop_gradient=grad is None)


def parse_input(text):
    """A command-line input: a tensor spec or a Python literal."""
    spec = parse_tensor_spec(text)
    if spec is not None:
        return spec
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError) as exc:
        raise SpecError(
            f"'{text}' is neither a tensor spec (e.g. float32[64,128]) nor a Python literal"
        ) from exc


def is_tensor_like(obj):
    """numpy arrays and framework tensors: anything with a shape and a dtype (not the numpy
    module, which has both as functions)."""
    return (not isinstance(obj, (type, types.ModuleType)) and hasattr(obj, "shape")
            and hasattr(obj, "dtype") and not isinstance(obj, (str, bytes)) and not callable(obj))


def spec_of_tensor(obj):
    if isinstance(obj, pb.TensorSpec):
        return obj
    if hasattr(obj, "stop_gradient"):
        stop_gradient = bool(obj.stop_gradient)
    elif hasattr(obj, "requires_grad"):
        stop_gradient = not bool(obj.requires_grad)
    else:
        stop_gradient = True
    return tensor_spec(tuple(obj.shape), obj.dtype, stop_gradient)
