"""Builds a trace (trace_pb2.Trace) from a Python function and its example inputs.

Nothing is executed: the tracer records the entry function's code, every code object and user
function reachable from it, the globals those functions read, and the example inputs' specs.
"""

import collections
import dataclasses
import dis
import enum
import functools
import inspect
import json
import os
import re
import sys
import warnings
import types

from google.protobuf import text_format

from . import trace_pb2 as pb
from ._layer_table import LEAF_LAYERS
from ._specs import is_tensor_like, parse_tensor_spec, spec_of_tensor
from ._stubs import is_stub
from ._version import PRODUCER, TRACE_FORMAT_VERSION

_CO_GENERATOR = inspect.CO_GENERATOR
_CO_ASYNC = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
# The frameworks whose semantics a trace can have (Trace.framework).
FRAMEWORKS = ("torch", "paddle")
_ADDRESS_RE = re.compile(r" at 0x[0-9a-fA-F]+")
# Modules whose functions are library APIs, recorded by qualified name, never traced: the
# frameworks (the operator table speaks their API) and the standard library.
_LIBRARY_ROOTS = {"paddle", "torch", "jax", "numpy", "tensorflow", "triton", "math", "operator",
                  "functools", "itertools", "builtins", "collections", "typing"}
# Packages inside a framework that hold model code, compiled from bytecode like a user's.
_MODEL_PACKAGES = ("paddle.vision.models", "torch.nn.modules.utils")
# The standard library's abstract bases a package's class may have (no state of their own).
_INTERFACE_MODULES = {"abc", "_collections_abc", "collections.abc", "typing"}
# Those whose classes' methods are Python a subclass inherits (Mapping.get, __contains__):
# recorded, and compiled from their bytecode.
_MIXIN_MODULES = {"_collections_abc", "collections.abc"}
# Where the frameworks export what their private extension modules define (torch._C._nn).
_PUBLIC_NAMESPACES = ("torch.nn.functional", "torch", "paddle.nn.functional", "paddle")
# The special methods the compiler calls on a class's objects (obj(...), obj[key], key in obj).
_RECORDED_DUNDERS = ("__init__", "__call__", "__getitem__", "__contains__", "__iter__",
                     "__len__", "__getattribute__")
# What the compiler calls without code naming it: a layer's forward, the special methods.
_IMPLICIT_MEMBERS = _RECORDED_DUNDERS + ("forward", "setup_context")
# The frameworks' custom-operator bases: a subclass's `apply(...)` runs its static `forward`.
_AUTOGRAD_FUNCTION_BASES = (("torch", "autograd", "Function"), ("paddle", "autograd", "PyLayer"))
_JUMP_OPCODES = set(dis.hasjrel) | set(dis.hasjabs)
_GLOBAL_LOADS = {"LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL"}


class TraceError(Exception):
    """The function or its inputs cannot be traced."""


class Trace:
    """A recorded trace; `proto` is the trace_pb2.Trace message. `code_objects` holds the
    traced CodeType objects in trace order when the trace was made here (not when loaded)."""

    def __init__(self, proto, code_objects=(), weights=None):
        self.proto = proto
        self.code_objects = list(code_objects)
        self.weights = weights or {}  # a model's: state-dict name -> numpy array

    def to_bytes(self):
        return self.proto.SerializeToString(deterministic=True)

    def to_text(self):
        return text_format.MessageToString(self.proto)

    def save(self, path):
        """Writes `.pb` (binary) or `.pbtxt` (text) by extension, atomically; a model's
        weights go beside it, into STEM.safetensors, which the trace names."""
        path = os.fspath(path)
        if not path.endswith((".pb", ".pbtxt")):
            raise TraceError(f"cannot tell the trace format of '{path}': use .pb or .pbtxt")
        weights_path = os.path.splitext(path)[0] + ".safetensors" if self.weights else None
        if weights_path:
            self.proto.weights_file = os.path.basename(weights_path)
            _write_atomically(weights_path, _safetensors_bytes(self.weights))
        data = self.to_text().encode() if path.endswith(".pbtxt") else self.to_bytes()
        try:
            _write_atomically(path, data)
        except TraceError:
            if weights_path:  # both or neither
                os.remove(weights_path)
            raise
        return path


def _write_atomically(path, data):
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise TraceError(f"cannot write '{path}': {exc.strerror or exc}") from exc


class _BFloat16Bits:
    """A bfloat16 weight as its bits (numpy has no bfloat16; safetensors.numpy neither)."""

    def __init__(self, bits):
        self.bits = bits
        self.shape, self.dtype = bits.shape, "bfloat16"


def _safetensors_bytes(weights):
    try:
        from safetensors.numpy import save
    except ImportError as exc:
        raise TraceError("saving a model's weights needs the safetensors package "
                         "(pip install safetensors)") from exc
    bfloat16 = [k for k, v in weights.items() if isinstance(v, _BFloat16Bits)]
    data = save({k: v.bits if isinstance(v, _BFloat16Bits) else v
                 for k, v in sorted(weights.items())})
    if not bfloat16:
        return data
    # Saved as their bits (U16): the header says BF16, padded to 8 bytes as safetensors pads.
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + size])
    for k in bfloat16:
        header[k]["dtype"] = "BF16"
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + data[8 + size:]


def _is_model_code(module):
    return any(module == p or module.startswith(p + ".") for p in _MODEL_PACKAGES)


def _in_installed_package(filename):
    return "site-packages" in filename or "dist-packages" in filename


# The frameworks' modules of layers and functionals, whose private helpers are compiled.
_LAYER_MODULES = ("paddle.nn.layer.", "torch.nn.modules.", "torch.nn.functional.",
                  "paddle.nn.functional.")


def _is_traced_function(obj):
    """A Python function the trace records and the compiler inlines: the program's own, or
    an installed package's (torchvision's helpers), but not a framework's or the standard
    library's, which are called by name."""
    if not isinstance(obj, types.FunctionType):
        return False
    module = getattr(obj, "__module__", None) or ""
    if _is_model_code(module):
        return True
    # The private helpers of the frameworks' layer modules (paddle.nn.layer.transformer's
    # _convert_attention_mask) serve layer classes compiled from their bytecode: compiled too.
    if (obj.__name__.startswith("_") and not obj.__name__.startswith("__")
            and (module + ".").startswith(_LAYER_MODULES)
            and not any(value is obj and not name.startswith("_")  # F.threshold is _threshold
                        for name, value in vars(sys.modules.get(module, types)).items())):
        return True
    if module.split(".")[0] in _LIBRARY_ROOTS:
        return False
    filename = obj.__code__.co_filename
    return (_in_installed_package(filename)
            or not filename.startswith(sys.base_prefix + os.sep + "lib"))


def _scripted_function(obj):
    """The Python function a torch.jit.script function was compiled from (torch keeps it for
    torch.compile to inline; DeBERTa's helpers are scripted), or None."""
    kind = type(obj)
    if kind.__qualname__.rsplit(".", 1)[-1] != "ScriptFunction" or kind.__module__ != "torch.jit":
        return None
    original = getattr(obj, "_torchdynamo_inline", None)
    return original if _is_traced_function(original) else None


def _without_framework_wrappers(fn):
    """`fn` without the frameworks' decorators around it (torch.no_grad(), paddle's keyword
    aliases on Pad2D.forward): the wrapped code is what computes. A package's own wrapper
    (transformers' dispatch of experts on the config) is code that runs and stays. The code's
    file tells a framework's wrapper: functools.wraps gives it the wrapped one's __module__."""
    dirs = _framework_dirs()
    while isinstance(getattr(fn, "__wrapped__", None), types.FunctionType) and any(
            fn.__code__.co_filename.startswith(root + os.sep) for root in dirs):
        fn = fn.__wrapped__
    return fn


def _framework_dirs():
    """The folders of the imported library packages the tracer never traces (torch, paddle;
    not the standard library's modules, whose folder holds the installed packages too)."""
    return tuple(folder for root in sorted(_LIBRARY_ROOTS)
                 if (m := sys.modules.get(root)) is not None and not is_stub(m)
                 for folder in getattr(m, "__path__", ()))


_NOT_CONSTANT = object()
# Environment variables whose values a trace never holds (a saved trace is shared like code).
_CREDENTIAL = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_?KEY|ACCESS_?KEY|"
                         r"PRIVATE_?KEY|AUTH", re.IGNORECASE)


def _marked_constant(obj):
    """Whether torch.compile takes the function's result as a constant
    (torch.compiler.assume_constant_result, transformers' probes under lru_cache)."""
    return callable(obj) and any(getattr(f, "_dynamo_marked_constant", False) is True
                                 for f in (obj, getattr(obj, "__wrapped__", None)))


_CALLS = {"CALL", "CALL_KW", "CALL_FUNCTION", "CALL_FUNCTION_KW"}


def _constant_call_sites(code, names):
    """(function, msg, args, kwargs) of each call in `code` of a function of `names` (by the
    name it is loaded under) whose arguments are constants, keywords included."""
    instructions = [i for i in dis.get_instructions(code) if i.opname not in ("PRECALL", "CACHE",
                                                                              "PUSH_NULL")]
    for k, ins in enumerate(instructions):
        if ins.opname not in ("LOAD_GLOBAL", "LOAD_ATTR", "LOAD_METHOD", "LOAD_NAME") or \
                ins.argval not in names:
            continue
        j, consts, keywords = k + 1, [], ()
        while j < len(instructions) and instructions[j].opname == "LOAD_CONST":
            consts.append(instructions[j].argval)
            j += 1
        if j < len(instructions) and instructions[j].opname == "KW_NAMES":  # 3.11, 3.12
            keywords = code.co_consts[instructions[j].arg]
            j += 1
        elif j < len(instructions) and instructions[j].opname == "CALL_KW" and consts:  # 3.13
            keywords = consts.pop()
        if j >= len(instructions) or instructions[j].opname not in _CALLS or \
                instructions[j].arg != len(consts):
            continue
        split = len(consts) - len(keywords)
        args, kwargs = consts[:split], dict(zip(keywords, consts[split:]))
        for fn, msg in names[ins.argval]:
            yield fn, msg, args, kwargs


def _constant_result(obj):
    """(result,) of a function of no arguments that torch.compile takes as a constant
    (torch.compiler.assume_constant_result, transformers' install probes under lru_cache),
    called now as torch.compile would; _NOT_CONSTANT for anything else, and for one that fails
    here (a CUDA probe on a machine without a driver): recorded as a function, it runs from its
    code where the program calls it."""
    if not _marked_constant(obj):
        return _NOT_CONSTANT
    try:
        if inspect.signature(obj).parameters:
            return _NOT_CONSTANT
        return (obj(),)
    except Exception:  # noqa: BLE001
        return _NOT_CONSTANT


def _is_library_class(cls):
    """A class of a library (a framework, the standard library, an installed package)."""
    qualified = getattr(cls, "__module__", None)
    if qualified is None:  # an extension's class without a module: a framework's
        return True
    module = qualified.split(".")[0]
    filename = getattr(sys.modules.get(qualified), "__file__", None) or ""
    return (module in _LIBRARY_ROOTS or module in sys.stdlib_module_names
            or qualified == "builtins" or _in_installed_package(filename))


def _is_compiled_layer_class(cls):
    """A library's layer class whose forward the compiler runs from its bytecode: any layer
    class but the layer table's leaves (Conv2d, Linear, Sequential, ...) and the frameworks'
    base classes (torch.nn.Module, paddle.nn.Layer)."""
    framework, root = _layer_root(cls)
    return framework is not None and cls is not root and _public_name(cls) not in LEAF_LAYERS


def _is_autograd_function_class(cls):
    """A subclass of torch.autograd.Function or paddle.autograd.PyLayer (Bloom's GeLUFunction):
    the compiler runs its forward from bytecode; its backward is training's and never runs."""
    if not isinstance(cls, type):
        return False
    for path in _AUTOGRAD_FUNCTION_BASES:
        base = _framework_class(*path)
        if base is not None and issubclass(cls, base) and cls is not base:
            return True
    return False


def _is_leaf_layer_class(cls):
    """A layer class the layer table compiles by name (torch.nn.Softmax), as code names it."""
    return (isinstance(cls, type) and _layer_root(cls)[0] is not None
            and _public_name(cls) in LEAF_LAYERS)


def _leaf_layer_classes(names):
    """The layer-table leaves of the imported frameworks whose class name is among `names`, in
    the table's order."""
    found = []
    for public in sorted(LEAF_LAYERS):
        module_name, _, name = public.rpartition(".")
        module = sys.modules.get(module_name)
        if name in names and module is not None and not is_stub(module):
            cls = getattr(module, name, None)
            if _is_leaf_layer_class(cls):
                found.append(cls)
    return found


def _is_value_enum(cls):
    """An Enum whose members are strings or ints (timm's `class Format(str, Enum)`): its members
    are recorded as those values, which they compare equal to, and the class with them."""
    return (isinstance(cls, type) and issubclass(cls, enum.Enum) and cls is not enum.Enum
            and issubclass(cls, (str, int)) and len(cls.__members__) > 0)


def _is_package_class(cls):
    """A class of an installed package (not a framework's nor the standard library's), all
    of whose bases are too but for abstract interfaces (transformers' attention registries are
    MutableMappings): its objects (a model's config) are data the compiler reads, its methods
    compiled from their bytecode."""
    if not isinstance(cls, type) or cls is object:
        return False
    for c in cls.__mro__[:-1]:
        qualified = getattr(c, "__module__", None) or ""
        if c is not cls and (qualified in _INTERFACE_MODULES or c in (dict, collections.OrderedDict)):
            continue
        module = qualified.split(".")[0]
        filename = getattr(sys.modules.get(qualified), "__file__", None) or ""
        if module in _LIBRARY_ROOTS or not _in_installed_package(filename):
            return False
    return True


def _is_record_class(cls):
    """A dataclass that is also a dict (transformers' ModelOutput), of the program or of an
    installed package: the compiler builds and reads its objects itself."""
    if not (isinstance(cls, type) and issubclass(cls, dict) and dataclasses.is_dataclass(cls)):
        return False
    return all(c in (dict, collections.OrderedDict) or c.__module__ in _INTERFACE_MODULES
               or not _is_library_class(c) or _in_installed_package(
                   getattr(sys.modules.get(c.__module__), "__file__", None) or "")
               for c in cls.__mro__[:-1])


def _is_user_class(cls):
    """A class of the program's own (not a library's), all of whose bases are too."""
    if not isinstance(cls, type) or cls is object:
        return False
    # without object; dict may be a base (a registry with methods of its own)
    return not any(_is_library_class(c) for c in cls.__mro__[:-1]
                   if c not in (dict, collections.OrderedDict) or c is cls)


def _is_exception_class(cls):
    """An exception class of the program or of an installed package, whose bases are too but
    for builtin exceptions (class NotFound(KeyError))."""
    if not (isinstance(cls, type) and issubclass(cls, BaseException)
            and cls.__module__ != "builtins"):
        return False
    return all(c.__module__ == "builtins" or not _is_library_class(c) or _in_installed_package(
        getattr(sys.modules.get(c.__module__), "__file__", None) or "") for c in cls.__mro__[:-1])


def _forward_hooks(layer, framework):
    """(after, function, with_kwargs) of each hook the layer's call runs around its forward,
    in the order the framework's __call__ runs them (torch's global hooks first)."""
    if framework == "torch":
        from torch.nn.modules import module
        pre = [*module._global_forward_pre_hooks.items(), *layer._forward_pre_hooks.items()]
        post = [*module._global_forward_hooks.items(), *layer._forward_hooks.items()]
        pre_kwargs = layer._forward_pre_hooks_with_kwargs
        post_kwargs = {**getattr(module, "_global_forward_hooks_with_kwargs", {}),
                       **layer._forward_hooks_with_kwargs}
    else:
        pre, post = layer._forward_pre_hooks.items(), layer._forward_post_hooks.items()
        pre_kwargs = getattr(layer, "_forward_pre_hooks_with_kwargs_flag", {})
        post_kwargs = getattr(layer, "_forward_post_hooks_with_kwargs_flag", {})
    return ([(False, f, key in pre_kwargs) for key, f in pre] +
            [(True, f, key in post_kwargs) for key, f in post])


def _layer_framework(obj):
    """"torch" for a torch.nn.Module, "paddle" for a paddle.nn.Layer, else None."""
    return _layer_root(type(obj))[0]


def _layer_root(cls):
    """("torch", torch.nn.Module) for a class that is or derives from it, ("paddle",
    paddle.nn.Layer) likewise, else (None, None)."""
    for name, base in (("torch", "Module"), ("paddle", "Layer")):
        root = _framework_class(name, "nn", base)
        if root is not None and isinstance(cls, type) and issubclass(cls, root):
            return name, root
    return None, None


def _framework_class(framework, package, name):
    """framework.package.name (torch.nn.Module) where the framework is imported and not a
    stub, else None."""
    module = sys.modules.get(framework)
    if module is None or is_stub(module):
        return None
    cls = getattr(getattr(module, package, None), name, None)
    return cls if isinstance(cls, type) else None


_LAYER_INTERNALS = {}


def _layer_internals(framework):
    """The attributes every layer of `framework` has for its own bookkeeping (hooks, the
    parameter and sublayer dicts), which a trace leaves out; `training` is kept."""
    if framework not in _LAYER_INTERNALS:
        module = sys.modules[framework]
        base = module.nn.Module() if framework == "torch" else module.nn.Layer()
        _LAYER_INTERNALS[framework] = set(vars(base)) - {"training"}
    return _LAYER_INTERNALS[framework]


# Complex weights are saved as their (real, imaginary) pairs, in these real dtypes.
_COMPLEX_PAIRS = {"complex64": pb.FLOAT32, "complex128": pb.FLOAT64}


def _weight_array(tensor, name):
    """A parameter's or buffer's values as a contiguous numpy array."""
    import numpy as np
    t = tensor
    try:
        for step in ("detach", "cpu"):
            if hasattr(t, step):
                t = getattr(t, step)()
    except RuntimeError as exc:
        # A buffer with no memory behind it (paddle's RNN layers keep an unallocated cuDNN
        # dropout state): nothing reads its values, which are zeros here.
        if "memory's size is 0" not in str(exc):
            raise TraceError(f"cannot read the weight '{name}': {exc}") from exc
        return np.zeros([int(d) for d in tensor.shape], np.dtype(str(tensor.dtype).split(".")[-1]))
    if str(getattr(t, "dtype", "")).split(".")[-1] in _COMPLEX_PAIRS:  # (real, imaginary) pairs
        array = t.numpy() if hasattr(t, "numpy") else np.asarray(t)
        real = np.float32 if array.dtype == np.complex64 else np.float64
        return np.require(array.view(real).reshape(*array.shape, 2), requirements="C")
    if str(getattr(t, "dtype", "")).endswith("bfloat16"):  # torch, paddle, ml_dtypes: the bits
        if type(t).__module__.split(".")[0] == "torch":
            t = t.view(sys.modules["torch"].int16)
        bits = t.numpy() if hasattr(t, "numpy") else np.asarray(t)
        return _BFloat16Bits(np.require(bits.view(np.uint16), requirements="C"))
    try:
        array = t.numpy() if hasattr(t, "numpy") else np.asarray(t)
    except (TypeError, RuntimeError) as exc:
        raise TraceError(f"cannot read the weight '{name}' ({tensor.dtype}) as a numpy array: "
                         f"{exc}") from exc
    return np.require(array, requirements="C")  # (ascontiguousarray makes 0-d arrays 1-d)


def _model_entry(model):
    """The function a model's trace starts in: its class's forward, or, for a built-in layer
    (Sequential), `def forward(self, ...): return self(...)` with forward's signature."""
    forward = type(model).forward
    if _is_traced_function(forward):
        return forward
    params, call, star = [], [], False
    for i, p in enumerate(inspect.signature(forward).parameters.values()):
        if p.kind is p.VAR_POSITIONAL:
            text, arg, star = f"*{p.name}", f"*{p.name}", True
        elif p.kind is p.VAR_KEYWORD:
            text, arg = f"**{p.name}", f"**{p.name}"
        elif p.kind is p.KEYWORD_ONLY:
            text, arg = ("" if star else "*, ") + p.name, f"{p.name}={p.name}"
            star = True
        else:
            text, arg = p.name, p.name
        params.append(text)
        if i:  # the first is the layer itself
            call.append(arg)
    source = (f"def forward({', '.join(params)}):\n"
              f"    return {params[0]}({', '.join(call)})\n")
    namespace = {"__name__": "sotc.model"}
    exec(compile(source, f"<sotc: {type(model).__qualname__}.forward>", "exec"), namespace)
    entry = namespace["forward"]
    entry.__defaults__, entry.__kwdefaults__ = forward.__defaults__, forward.__kwdefaults__
    return entry


def _refuse_unsupported(fn, role, generators=False):
    """Coroutines are refused wherever they are; generator functions as the function traced
    (`generators=False`), not as functions it calls (the compiler pulls them item by item)."""
    flags = fn.__code__.co_flags
    if flags & _CO_ASYNC:
        kind = "an async function or coroutine"
    elif flags & _CO_GENERATOR and not generators:
        kind = "a generator function"
    else:
        return
    raise TraceError(
        f"cannot trace {role} '{fn.__qualname__}' ({fn.__code__.co_filename}:"
        f"{fn.__code__.co_firstlineno}): it is {kind}; sotc compiles plain functions only")


def _sorted_repr(items):
    """A frozenset constant as dis prints it, its items in a stable order (dis's order
    follows the string hash seed: traces would differ from run to run)."""
    inner = ", ".join(repr(x) for x in sorted(items, key=lambda x: (type(x).__name__, repr(x))))
    return f"frozenset({{{inner}}})" if items else "frozenset()"


def _public_name(obj):
    """The shortest name a parent package gives `obj` (paddle.nn.functional.relu for the
    function defined in paddle.nn.functional.activation; paddle.add for paddle.tensor.math.add),
    checked to be the same object; else where it is defined."""
    module, name = getattr(obj, "__module__", None), obj.__qualname__
    if module is None:  # an extension's class without one (paddle's PyLayer base)
        return name
    if "." not in name:
        parts = module.split(".")
        for i in range(1, len(parts)):
            prefix = ".".join(parts[:i])
            parent = sys.modules.get(prefix)
            if parent is not None and getattr(parent, name, None) is obj:
                return f"{prefix}.{name}"
        if any(part.startswith("_") for part in parts):  # torch._C._nn.gelu is F.gelu
            for public in _PUBLIC_NAMESPACES:
                namespace = sys.modules.get(public)
                if namespace is not None and getattr(namespace, name, None) is obj:
                    return f"{public}.{name}"
    return f"{module}.{name}"

_VALUE_BUDGET = 1_000_000  # objects and containers a trace records (_Builder.value)
_VALUE_DEPTH = 24  # objects and containers nested in one another (three messages each)


class _Builder:
    def __init__(self, root):
        self.root = os.path.abspath(root) if root else None
        self.trace = pb.Trace(format_version=TRACE_FORMAT_VERSION, producer=PRODUCER)
        v = sys.version_info
        self.trace.python.major, self.trace.python.minor, self.trace.python.micro = v[:3]
        self.trace.python.implementation = sys.implementation.name
        self._classes = {}     # id(class) -> index
        self._codes = {}       # id(code) -> index
        self._constant_functions = []  # (fn, Function msg) of constant functions with parameters
        self._constant_calls = set()   # (id(fn), args, kwargs) recorded
        self._identities = {}  # id(obj) -> Value.identity
        # Objects and containers recorded, at most _VALUE_BUDGET: a shared object is recorded
        # again on each path that reaches it, so a large object graph behind a global (a test
        # runner's, a framework's registry) could otherwise take exponential time and memory.
        self._values_left = _VALUE_BUDGET
        self.code_objects = []  # the CodeType objects, by index
        self._functions = {}   # id(function) -> index
        self._namespaces = {}  # id(globals dict) -> index
        self._keep = []        # keeps traced functions alive so their ids stay unique
        self._pending = []     # functions whose globals still need recording
        # A library class's members are recorded once traced code names one of them (a class
        # like PreTrainedModel has hundreds, reaching much of its library): the names traced
        # code uses, and the members waiting for theirs.
        self._names = set()
        self._layer_names_seen = set()  # names _record_named looked up as leaf layers
        self._deferred = []    # (class message, name, member)
        self._modules = {}     # id -> an installed package's module code reads attributes of
        self.weights = {}      # a model's parameters and buffers by state-dict name: arrays
        self._weight_names = {}  # id(tensor) -> its state-dict name (tied weights share one)
        self._weight_tensors = {}  # state-dict name -> id(tensor)
        self._layer_paths = {}  # id(layer) -> its state-dict prefix ("layer1.0.") in the model
        self.tensor_frameworks = set()  # of the tensors recorded: "torch", "paddle" or None
        self.imported_frameworks = set()  # that the traced functions' modules import

    # -- paths -------------------------------------------------------------------------
    def path(self, filename):
        """Paths under the root are recorded relative to it, so traces do not depend on
        where a checkout lives."""
        if self.root and os.path.isabs(filename):
            try:
                rel = os.path.relpath(filename, self.root)
            except ValueError:
                return filename
            if not rel.startswith(".."):
                return rel.replace(os.sep, "/")
        return filename

    def code_repr(self, code):
        index = self._codes[id(code)]
        return (f'<code object {code.co_name} at 0x{index:x}, file '
                f'"{self.path(code.co_filename)}", line {code.co_firstlineno}>')

    # -- values ------------------------------------------------------------------------
    def _identity(self, obj):
        """The number that stands for a mutable object wherever it is recorded (kept alive
        until the trace is written, so that no other object takes its id)."""
        if id(obj) not in self._identities:
            self._identities[id(obj)] = len(self._identities) + 1
            self._keep.append(obj)
        return self._identities[id(obj)]

    def value(self, obj, out, allow_tensor=False, _seen=None):
        """Encodes `obj` into the pb.Value `out`."""
        if _seen and id(obj) in _seen and id(obj) in self._identities:
            # An object being recorded, reached again from inside itself (a layer's
            # `self.forward = self.forward_split`): itself, by its identity.
            out.identity = self._identities[id(obj)]
            return
        # Code and its constants (literals, and tuples and frozensets of them) always are.
        if not isinstance(obj, (type(None), bool, int, float, complex, str, bytes,
                                type(Ellipsis), types.CodeType, tuple, frozenset)):
            self._values_left -= 1
            if self._values_left < 0:
                if self._values_left == -1:
                    warnings.warn(f"sotc.trace: the values the traced code reaches hold more than "
                                  f"{_VALUE_BUDGET} objects; the rest are recorded as opaque "
                                  f"(compiling code that uses one of them is refused)")
                out.opaque.type_name = f"{type(obj).__module__}.{type(obj).__qualname__}"
                out.opaque.repr = f"not recorded: beyond the trace's {_VALUE_BUDGET} objects"
                return
            if _seen and len(_seen) >= _VALUE_DEPTH:  # protobuf readers stop at 100 levels
                out.opaque.type_name = f"{type(obj).__module__}.{type(obj).__qualname__}"
                out.opaque.repr = f"not recorded: nested in more than {_VALUE_DEPTH} objects"
                return
        if obj is None:
            out.none.SetInParent()
        elif obj is Ellipsis:
            out.ellipsis.SetInParent()
        elif isinstance(obj, bool):
            out.bool_value = obj
        elif isinstance(obj, int):
            if _INT64_MIN <= obj <= _INT64_MAX:
                out.int_value = obj
            else:
                out.big_int_value = str(obj)
        elif isinstance(obj, float):
            out.float_value = obj
        elif isinstance(obj, complex):
            out.complex_value.real, out.complex_value.imag = obj.real, obj.imag
        elif isinstance(obj, str):
            out.str_value = obj
        elif isinstance(obj, bytes):
            out.bytes_value = obj
        elif isinstance(obj, types.CodeType):
            out.code = self.add_code(obj)
        elif type(obj) is functools.partial:
            self.value(obj.func, out.partial.func, allow_tensor, _seen)
            for arg in obj.args:
                self.value(arg, out.partial.args.add(), allow_tensor, _seen)
            for name, arg in sorted(obj.keywords.items()):
                self.value(arg, out.partial.keywords.add(name=name).value, allow_tensor, _seen)
        elif isinstance(obj, range) and all(_INT64_MIN <= v <= _INT64_MAX
                                            for v in (obj.start, obj.stop, obj.step)):
            out.range_value.start, out.range_value.stop = obj.start, obj.stop
            out.range_value.step = obj.step
        elif is_stub(obj):
            if obj.__sotc_imported__:
                out.module = obj.__name__
            else:
                out.external = obj.__name__
        elif isinstance(obj, types.ModuleType):
            out.module = obj.__name__
            if ((obj.__name__.split(".")[0] not in _LIBRARY_ROOTS
                    and _in_installed_package(getattr(obj, "__file__", None) or ""))
                    or (obj.__name__ + ".").startswith(_LAYER_MODULES) or obj is sys):
                self._modules.setdefault(id(obj), obj)  # pkg.name: what code names, recorded
        elif id(obj) in self._weight_names and is_tensor_like(obj):
            # a model's parameter or buffer that another object holds too (transformers'
            # StaticCache layers hold the K/V buffers its export wrapper registers): that weight
            self.add_weight(obj, out, self._weight_names[id(obj)], buffer=True)
        elif isinstance(obj, pb.TensorSpec) or (allow_tensor and is_tensor_like(obj)):
            out.tensor.CopyFrom(spec_of_tensor(obj))
            package = type(obj).__module__.split(".")[0]
            if not isinstance(obj, pb.TensorSpec):  # a spec names no framework, nor refuses one
                self.tensor_frameworks.add(package if package in FRAMEWORKS else None)
        elif isinstance(obj, (tuple, list, set, frozenset, dict)):
            if isinstance(obj, (list, set, dict)):
                out.identity = self._identity(obj)
            _seen = _seen or set()
            if id(obj) in _seen:
                out.opaque.type_name, out.opaque.repr = type(obj).__name__, "<recursive>"
                return
            _seen = _seen | {id(obj)}
            if isinstance(obj, dict):
                try:
                    items = list(obj.items())
                except Exception as e:  # noqa: BLE001  (a lazy mapping that fails to load)
                    out.opaque.type_name = f"{type(obj).__module__}.{type(obj).__qualname__}"
                    out.opaque.repr = f"a mapping whose items() raises {type(e).__name__}"
                    return
                out.dict_value.SetInParent()  # an empty dict is a value too
                if type(obj) is not dict and (_is_user_class(type(obj))
                                              or _is_package_class(type(obj))):
                    out.dict_value.subclass = self.add_class(type(obj))
                    for name, attribute in sorted(getattr(obj, "__dict__", {}).items()):
                        if id(attribute) not in _seen:
                            self.value(attribute, out.dict_value.attributes.add(name=name).value,
                                       allow_tensor, _seen)
                for key, item in items:
                    entry = out.dict_value.items.add()
                    self.value(key, entry.key, allow_tensor, _seen)
                    self.value(item, entry.value, allow_tensor, _seen)
                return
            if isinstance(obj, tuple):
                target, items = out.tuple_value, obj
            elif isinstance(obj, list):
                target, items = out.list_value, obj
            else:  # sets: a stable order, whatever the hash seed
                target = out.frozenset_value if isinstance(obj, frozenset) else out.set_value
                items = sorted(obj, key=lambda x: (type(x).__name__, repr(x)))
            target.SetInParent()
            for item in items:
                self.value(item, target.items.add(), allow_tensor, _seen)
        elif (scripted := _scripted_function(obj)) is not None:
            self.value(scripted, out, allow_tensor, _seen)
        elif (constant := _constant_result(obj)) is not _NOT_CONSTANT:
            self.value(constant[0], out.constant_result, allow_tensor, _seen)
        elif (isinstance(obj, functools._lru_cache_wrapper)
              and _is_traced_function(getattr(obj, "__wrapped__", None))):
            # A cached function (transformers' is_torch_distributed_available): the function.
            self.value(obj.__wrapped__, out, allow_tensor, _seen)
        elif _is_traced_function(obj):
            # A library's generator (huggingface_hub's path filters) is refused only if the
            # program calls it; the program's own is refused now.
            obj = _without_framework_wrappers(obj)
            out.function = self.add_function(
                obj, refuse=not _in_installed_package(obj.__code__.co_filename))
        elif (_is_user_class(obj) or _is_package_class(obj) or _is_record_class(obj)
              or _is_exception_class(obj) or _is_autograd_function_class(obj)
              or _is_value_enum(obj)
              or (isinstance(obj, type) and _is_compiled_layer_class(obj))):
            out.class_ref = self.add_class(obj)
        elif _is_leaf_layer_class(obj):
            out.class_ref = self.add_layer_class(obj)
        elif _layer_framework(obj):  # a model's sublayer held outside its layer tree too
            self.add_layer(obj, out, self._layer_paths.get(id(obj), ""), _seen)
        elif (_is_user_class(type(obj)) or _is_package_class(type(obj))) and hasattr(obj,
                                                                                  "__dict__"):
            _seen = (_seen or set()) | {id(obj)}
            out.identity = self._identity(obj)
            out.object_value.class_index = self.add_class(type(obj))
            out.object_value.SetInParent()
            for name, attribute in sorted(vars(obj).items()):
                if id(attribute) in _seen:
                    continue
                self.value(attribute, out.object_value.attributes.add(name=name).value,
                           allow_tensor, _seen)
        elif isinstance(obj, types.BuiltinFunctionType) and obj.__module__ == "builtins":
            out.builtin = obj.__name__
        elif isinstance(obj, type) and obj.__module__ == "builtins":
            out.builtin = obj.__name__
        elif (isinstance(obj, types.MethodType) and _is_traced_function(obj.__func__)
              and (_layer_framework(obj.__self__) or _is_user_class(type(obj.__self__))
                   or _is_package_class(type(obj.__self__)))):
            # net.forward passed in: its function with the object bound first, as a partial.
            self.value(obj.__func__, out.partial.func, allow_tensor, _seen)
            self.value(obj.__self__, out.partial.args.add(), allow_tensor, _seen)
        elif is_tensor_like(getattr(obj, "__self__", None)):  # x.add: not the function alone
            out.opaque.type_name = f"bound method {type(obj.__self__).__name__}.{obj.__name__}"
            out.opaque.repr = "a method bound to a tensor passed in"
        elif callable(obj) and hasattr(obj, "__qualname__") and getattr(obj, "__module__", None):
            out.external = _public_name(obj)
        elif (type(obj).__module__, type(obj).__qualname__) in (("torch", "dtype"),
                                                                ("paddle", "dtype")):
            out.external = str(obj)  # a framework's dtype: torch.float32, paddle.float32
        else:
            out.opaque.type_name = f"{type(obj).__module__}.{type(obj).__qualname__}"
            out.opaque.repr = _ADDRESS_RE.sub("", repr(obj))[:200]

    # -- models ------------------------------------------------------------------------
    def add_model(self, model):
        """Records the model's layer tree; every sublayer's weights are named by its path
        from the model, as its state dict names them, wherever else a layer refers to it
        (paddle's ShuffleNetV2 also keeps its blocks in a plain list)."""
        pending = [(model, "")]
        while pending:
            layer, prefix = pending.pop()
            if id(layer) in self._layer_paths:
                continue
            self._layer_paths[id(layer)] = prefix
            # Every weight is named by its state-dict path before anything is recorded, so that
            # an object reached first (an attribute sorted before the layer's _buffers) names it so.
            for group in ("_parameters", "_buffers"):
                for name, tensor in getattr(layer, group).items():
                    if tensor is not None:
                        self._weight_names.setdefault(id(tensor), prefix + name)
            children = layer._modules if _layer_framework(layer) == "torch" else layer._sub_layers
            pending.extend((child, f"{prefix}{name}.") for name, child in
                           reversed(list(children.items())) if child is not None)
        self.add_layer(model, self.trace.model, "")

    def add_layer(self, layer, out, prefix, _seen=None):
        """Encodes a layer: its class, its own attributes, its parameters and buffers (as
        WeightRefs named by their state-dict path) and its sublayers, recursively."""
        _seen = (_seen or set()) | {id(layer)}
        out.identity = self._identity(layer)
        framework = _layer_framework(layer)
        self.tensor_frameworks.add(framework)  # its weights are that framework's tensors
        obj = out.object_value
        obj.class_index, obj.layer = self.add_class(type(layer)), True
        for hooks in ("_forward_pre_hooks", "_forward_hooks", "_forward_post_hooks"):
            if getattr(layer, hooks, None):
                obj.hooks.append(hooks.strip("_").replace("_hooks", ""))
        for after, function, with_kwargs in _forward_hooks(layer, framework):
            hook = obj.forward_hooks.add(after=after, with_kwargs=with_kwargs)
            self.value(function, hook.function, _seen=_seen)
        internals = _layer_internals(framework)
        for name, attribute in sorted(vars(layer).items()):
            if name in internals or id(attribute) in _seen:
                continue
            entry = obj.attributes.add(name=name).value
            if is_tensor_like(attribute):  # a tensor the layer holds outside its state dict
                self.add_weight(attribute, entry, prefix + name, buffer=True)
            elif (isinstance(attribute, (list, tuple)) and attribute
                  and all(is_tensor_like(t) for t in attribute)):
                # tensors it holds in a list (torchvision's anchors per feature map): each one
                target = entry.list_value if isinstance(attribute, list) else entry.tuple_value
                target.SetInParent()
                if isinstance(attribute, list):
                    entry.identity = self._identity(attribute)
                for i, tensor in enumerate(attribute):
                    self.add_weight(tensor, target.items.add(), f"{prefix}{name}.{i}", buffer=True)
            else:
                self.value(attribute, entry, _seen=_seen)
        for group, buffer in (("_parameters", False), ("_buffers", True)):
            for name, tensor in getattr(layer, group).items():
                entry = obj.attributes.add(name=name).value
                if tensor is None:
                    entry.none.SetInParent()
                else:
                    self.add_weight(tensor, entry, prefix + name, buffer)
        children = layer._modules if framework == "torch" else layer._sub_layers
        for name, child in children.items():
            entry = obj.attributes.add(name=name).value
            obj.children.append(name)
            if child is None:
                entry.none.SetInParent()
            else:
                self.add_layer(child, entry, f"{prefix}{name}.", _seen)

    def add_weight(self, tensor, out, name, buffer):
        name = self._weight_names.setdefault(id(tensor), name)
        if name not in self.weights:
            self._keep.append(tensor)
            self.weights[name] = _weight_array(tensor, name)
            self._weight_tensors[name] = id(tensor)
        elif self._weight_tensors[name] != id(tensor):
            raise TraceError(f"two models' weights are both named '{name}': sotc names weights "
                             "by their state-dict path, so a function may read one model")
        out.weight.name, out.weight.buffer = name, buffer
        out.weight.spec.CopyFrom(spec_of_tensor(tensor))
        if str(getattr(tensor, "dtype", "")).split(".")[-1] in _COMPLEX_PAIRS:  # as its pairs
            out.weight.complex_pairs = True
            out.weight.spec.dtype = _COMPLEX_PAIRS[str(tensor.dtype).split(".")[-1]]
            out.weight.spec.dims.add(size=2)

    # -- code objects ------------------------------------------------------------------
    def add_code(self, code):
        if id(code) in self._codes:
            return self._codes[id(code)]
        index = len(self.trace.code_objects)
        self._codes[id(code)] = index
        self.code_objects.append(code)
        msg = self.trace.code_objects.add()
        msg.name, msg.qualname = code.co_name, getattr(code, "co_qualname", code.co_name)
        msg.filename = self.path(code.co_filename)
        msg.firstlineno = code.co_firstlineno
        msg.argcount, msg.posonlyargcount = code.co_argcount, code.co_posonlyargcount
        msg.kwonlyargcount, msg.nlocals = code.co_kwonlyargcount, code.co_nlocals
        msg.stacksize, msg.flags = code.co_stacksize, code.co_flags
        msg.varnames.extend(code.co_varnames)
        msg.cellvars.extend(code.co_cellvars)
        msg.freevars.extend(code.co_freevars)
        msg.names.extend(code.co_names)
        for const in code.co_consts:
            self.value(const, msg.consts.add())
        msg.code = code.co_code
        self._names.update(code.co_names)  # and getattr(obj, "name"):
        self._names.update(c for c in code.co_consts if isinstance(c, str))
        msg.exceptiontable = getattr(code, "co_exceptiontable", b"")
        msg.linetable = getattr(code, "co_linetable", b"")
        parse = getattr(dis, "_parse_exception_table", None)
        entries = parse(code) if parse is not None else []
        for e in entries:
            msg.exception_entries.add(start=e.start, end=e.end, target=e.target,
                                      depth=e.depth, lasti=e.lasti)
        self._add_instructions(code, msg, {e.target for e in entries})
        return index

    def _add_instructions(self, code, msg, exception_targets):
        for ins in dis.get_instructions(code):
            out = msg.instructions.add(offset=ins.offset, opcode=ins.opcode, opname=ins.opname)
            if ins.arg is not None:
                out.has_arg, out.arg = True, ins.arg
                self.value(ins.argval, out.argval)
            if isinstance(ins.argval, types.CodeType):
                out.argrepr = self.code_repr(ins.argval)
            elif isinstance(ins.argval, frozenset):  # dis prints it in hash order
                out.argrepr = _sorted_repr(ins.argval)
            else:
                out.argrepr = ins.argrepr
            starts = ins.starts_line
            if isinstance(starts, bool):  # 3.13 on: a flag, and the number in line_number
                out.starts_unnumbered_line = starts and ins.line_number is None
                starts = ins.line_number if starts else None
            if isinstance(starts, int):
                out.starts_line = starts
            positions = getattr(ins, "positions", None)
            if positions is not None and positions.lineno is not None:
                out.line = positions.lineno
            # As dis.dis marks them: jump targets and exception handlers.
            out.is_jump_target = ins.is_jump_target or ins.offset in exception_targets
            if ins.opcode in _JUMP_OPCODES and isinstance(ins.argval, int):
                out.has_jump_target, out.jump_target = True, ins.argval

    # -- classes -----------------------------------------------------------------------
    def add_class(self, cls):
        """Records a class and its MRO (bases recorded first): a user class, a library's
        layer class the compiler runs from bytecode, or an installed package's (a model's
        config), with its own members; a layer-table leaf or a framework's base class by its
        public name alone."""
        if id(cls) in self._classes:
            return self._classes[id(cls)]
        index = len(self.trace.classes)
        self._classes[id(cls)] = index
        self._keep.append(cls)
        msg = self.trace.classes.add(qualname=cls.__qualname__,
                                     module=getattr(cls, "__module__", None) or "")
        library = _is_library_class(cls)
        if library:
            msg.library_name = _public_name(cls)
        record = _is_record_class(cls)
        if record:
            msg.record_fields.extend(f.name for f in dataclasses.fields(cls))
        if (library and not _is_compiled_layer_class(cls) and not _is_package_class(cls)
                and not _is_autograd_function_class(cls) and not _is_value_enum(cls) and not record
                and getattr(cls, "__module__", None) not in _MIXIN_MODULES):
            msg.mro.extend(self.add_class(c) if c is not cls else index
                           for c in cls.__mro__[:-1])
            return index
        for name, member in sorted(vars(cls).items()):
            if name.startswith("__") and name not in _RECORDED_DUNDERS:
                continue
            if library and name not in self._names and name not in _IMPLICIT_MEMBERS:
                self._deferred.append((msg, name, member))
            else:
                self._add_member(msg, name, member, library)
        msg.mro.extend(self.add_class(c) if c is not cls else index
                       for c in cls.__mro__[:-1])
        return index

    def add_layer_class(self, cls):
        """Records a layer-table leaf that traced code may construct, with its constructor."""
        index = self.add_class(cls)
        msg = self.trace.classes[index]
        if not msg.HasField("layer_constructor"):
            msg.layer_constructor.function = self.add_function(inspect.unwrap(cls.__init__),
                                                               refuse=False)
        return index

    def _add_member(self, msg, name, member, library):
        kinds = pb.ClassMember
        kind, value = kinds.PLAIN, member
        if isinstance(member, staticmethod):
            kind, value = kinds.STATIC, member.__func__
        elif isinstance(member, classmethod):
            kind, value = kinds.CLASS, member.__func__
        elif isinstance(member, property):
            kind, value = kinds.PROPERTY, member.fget
        entry = msg.members.add(name=name, kind=kind)
        if library and isinstance(value, types.FunctionType):
            # A library's method, whichever package it lives in (torch.nn.Hardswish's
            # forward); a generator among them is refused only if it is called.
            entry.value.function = self.add_function(_without_framework_wrappers(value),
                                                     refuse=False)
        else:
            self.value(value, entry.value)

    # -- functions and globals ---------------------------------------------------------
    def add_function(self, fn, refuse=True):
        if id(fn) in self._functions:
            return self._functions[id(fn)]
        if refuse:
            _refuse_unsupported(fn, "function", generators=True)
        index = len(self.trace.functions)
        self._functions[id(fn)] = index
        self._keep.append(fn)
        msg = self.trace.functions.add()
        msg.code = self.add_code(fn.__code__)
        msg.qualname, msg.module = fn.__qualname__, fn.__module__ or ""
        msg.namespace = self._namespace(fn.__globals__)
        for default in fn.__defaults__ or ():
            self.value(default, msg.defaults.add())
        for name, default in sorted((fn.__kwdefaults__ or {}).items()):
            entry = msg.kwdefaults.add(name=name)
            self.value(default, entry.value)
        for cell in fn.__closure__ or ():
            try:
                contents = cell.cell_contents
            except ValueError:  # an empty cell: the variable is assigned after the def
                msg.closure.add().opaque.type_name = "cell"
                continue
            self.value(contents, msg.closure.add())
        self._add_source(fn)
        self._pending.append(fn)
        if _marked_constant(fn) and inspect.signature(fn).parameters:
            self._constant_functions.append((fn, msg))
        return index

    def _record_constant_calls(self):
        """The results of the constant functions with parameters for the constant arguments
        the recorded code calls them with (by name: f("2.9.0"), module.f(x, flag=True))."""
        names = {}
        for fn, msg in self._constant_functions:
            names.setdefault(fn.__name__, []).append((fn, msg))
        for code in self.code_objects:
            for fn, msg, args, kwargs in _constant_call_sites(code, names):
                key = (id(fn), repr(args), repr(sorted(kwargs.items())))
                if key in self._constant_calls:
                    continue
                self._constant_calls.add(key)
                try:
                    result = fn(*args, **kwargs)
                except Exception:  # noqa: BLE001  (it fails when run too: its code runs)
                    continue
                call = msg.constant_calls.add()
                for a in args:
                    self.value(a, call.args.add())
                for k, v in sorted(kwargs.items()):
                    self.value(v, call.keywords.add(name=k).value)
                self.value(result, call.result)

    def _namespace(self, globals_dict):
        key = id(globals_dict)
        if key not in self._namespaces:
            self._namespaces[key] = len(self.trace.namespaces)
            self.trace.namespaces.add(
                module=globals_dict.get("__name__", ""),
                library=(_in_installed_package(globals_dict.get("__file__") or "")
                         or globals_dict is vars(sys)),
                package=globals_dict.get("__package__") or "")
            self._keep.append(globals_dict)
            self.imported_frameworks |= {
                f for v in list(globals_dict.values()) if isinstance(v, types.ModuleType)
                for f in FRAMEWORKS if v.__name__ == f or v.__name__.startswith(f + ".")}
        return self._namespaces[key]

    def _add_source(self, fn):
        try:
            lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            return
        span = self.trace.sources.add(filename=self.path(fn.__code__.co_filename),
                                      first_line=max(first, 1))
        span.lines.extend(line.rstrip("\r\n") for line in lines)

    def _global_names(self, code, names):
        for ins in dis.get_instructions(code):
            if ins.opname in _GLOBAL_LOADS:
                names.add(ins.argval)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                self._global_names(const, names)

    def _imported_modules(self, code, package):
        """The installed packages' modules a function imports in its body (`from .ops import
        f`, `import pkg.mod`), as loaded now: recorded like modules its globals name, so what
        it takes from them compiles from their code."""
        instructions = list(dis.get_instructions(code))
        for i, ins in enumerate(instructions):
            if ins.opname != "IMPORT_NAME" or i < 2:
                continue
            level, fromlist = instructions[i - 2].argval, instructions[i - 1].argval
            name = ins.argval
            if isinstance(level, int) and level > 0:
                base = package.rsplit(".", level - 1)[0] if level > 1 else package
                name = f"{base}.{name}" if name else base
            for full in [name] + [f"{name}.{f}" for f in (fromlist or ()) if isinstance(f, str)]:
                module = sys.modules.get(full)
                if module is sys or (module is not None
                                     and full.split(".")[0] not in _LIBRARY_ROOTS
                                     and _in_installed_package(getattr(module, "__file__", None)
                                                               or "")):
                    self._modules.setdefault(id(module), module)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                self._imported_modules(const, package)

    def record_globals(self):
        """Records every global each traced function reads and every library class member
        traced code names; may discover more functions. Members no traced code names are
        listed as not recorded."""
        self._record_globals()
        while self._record_named():
            self._record_globals()

    def _record_named(self):
        """Records the deferred class members and the package modules' attributes that traced
        code names; whether there were any."""
        named = [d for d in self._deferred if d[1] in self._names]
        self._deferred = [d for d in self._deferred if d[1] not in self._names]
        for msg, name, member in named:
            self._add_member(msg, name, member, library=True)
        found = bool(named)
        # Leaf layers code names through their module (nn.Softmax(dim=-1)), which the compiler
        # resolves by name: recorded with their constructors.
        for cls in _leaf_layer_classes(self._names - self._layer_names_seen):
            if not self.trace.classes[self.add_class(cls)].HasField("layer_constructor"):
                self.add_layer_class(cls)
                found = True
        self._layer_names_seen |= self._names
        for module in list(self._modules.values()):
            ns = self.trace.namespaces[self._namespace(vars(module))]
            known = {g.name for g in ns.globals}
            framework = module.__name__.split(".")[0] in _LIBRARY_ROOTS
            for name in sorted(self._names & vars(module).keys() - known):
                if framework and not _is_traced_function(vars(module)[name]):
                    continue  # a framework module's operators are called by name
                if module is sys:
                    found |= self._record_sys(name, ns)
                    continue
                self.value(vars(module)[name], ns.globals.add(name=name).value)
                found = True
        return found

    def _record_sys(self, name, ns):
        """sys's state as the trace found it: `"torchvision" in sys.modules` (the modules
        imported, each by name) and its plain values (sys.platform, sys.version_info); its
        functions and files stay names."""
        value = getattr(sys, name)
        if name == "modules":
            out = ns.globals.add(name=name).value
            out.identity = self._identity(value)
            out.dict_value.SetInParent()
            for key in sorted(k for k in list(value) if isinstance(k, str)):
                entry = out.dict_value.items.add()
                entry.key.str_value = key
                entry.value.module = key
            return True
        plain = (type(None), bool, int, float, str)
        if isinstance(value, plain) or (isinstance(value, tuple)
                                        and all(isinstance(v, plain) for v in value)):
            self.value(tuple(value) if isinstance(value, tuple) else value,
                       ns.globals.add(name=name).value)
            return True
        return False

    def finish(self):
        """Ends the recording: what is still deferred is listed as not recorded."""
        self.record_globals()
        self._record_constant_calls()
        self.record_globals()
        for msg, name, _ in self._deferred:
            msg.unrecorded_members.append(name)
        self._deferred = []
        for code in self.trace.code_objects:  # the variables the code may name, as now set
            for const in code.consts:
                if const.WhichOneof("kind") == "str_value" and const.str_value in os.environ:
                    if _CREDENTIAL.search(const.str_value):
                        if const.str_value not in self.trace.withheld_environment:
                            self.trace.withheld_environment.append(const.str_value)
                    else:
                        self.trace.environment[const.str_value] = os.environ[const.str_value]

    def _record_globals(self):
        while self._pending:
            fn = self._pending.pop(0)
            names = set()
            self._global_names(fn.__code__, names)
            self._imported_modules(fn.__code__, fn.__globals__.get("__package__") or "")
            ns = self.trace.namespaces[self._namespace(fn.__globals__)]
            known = {g.name for g in ns.globals}
            for name in sorted(names - known):
                if name not in fn.__globals__:
                    continue  # a builtin, or a NameError the compiler reports with its line
                value, out = fn.__globals__[name], ns.globals.add(name=name).value
                if ns.library and is_tensor_like(value):
                    # An installed package's module-level tensor (ultralytics' RLE_WEIGHT) is
                    # a constant of that library: saved with the weights, not an input.
                    self.add_weight(value, out, f"{ns.module}.{name}", buffer=True)
                else:  # the program's own global tensor is an input, read at each call
                    self.value(value, out, allow_tensor=True)


def _choose_framework(builder, requested, model_framework=None):
    """Sets the trace's framework, whose semantics tensor methods get: `requested`, else the
    model's, else that of the tensors recorded, else the one framework the traced functions'
    modules import. numpy arrays (tensors of no framework) with nothing else to decide, or
    modules that import both frameworks, are an error."""
    if requested is not None and requested not in FRAMEWORKS:
        raise TraceError(f"E1016: unknown framework '{requested}' (torch or paddle)")
    found = builder.tensor_frameworks - {None}
    if requested is None and model_framework is None and len(found) > 1:
        raise TraceError("E1016: the inputs mix torch and paddle tensors; pass "
                         "sotc_framework='torch' or 'paddle' (sotc trace --framework) to say "
                         "whose semantics the program has")
    named = builder.imported_frameworks
    framework = requested or model_framework or next(iter(found), None)
    if framework is None and len(named) == 1:
        framework = next(iter(named))
    # numpy arrays with neither framework imported, or anything with both, need a choice; a
    # program of specs that imports neither keeps its methods' default (paddle's).
    if framework is None and (None in builder.tensor_frameworks or len(named) > 1):
        names = " and ".join(sorted(named)) if named else "neither torch nor paddle"
        inputs = "numpy arrays" if None in builder.tensor_frameworks else "specs"
        raise TraceError(f"E1016: cannot tell whether the program is torch or paddle: its "
                         f"tensor inputs are {inputs} and its modules import {names}; pass "
                         f"sotc_framework='torch' or 'paddle' (sotc trace --framework)")
    builder.trace.framework = framework or ""


def trace(fn, *example_inputs, sotc_root=None, sotc_framework=None, sotc_dynamic=None,
          **named_inputs):
    """Traces `fn` for the given example inputs (tensor specs, tensor-like objects or Python
    values) and returns a Trace. File paths under `sotc_root` (default: the current
    directory) are recorded relative to it; the prefixed names keep them apart from `fn`'s
    own keyword arguments. Tensor methods get the semantics of `sotc_framework` ("torch" or
    "paddle"); by default that of the inputs' tensors, else of the framework the code names.

    `fn` may be a model (a paddle.nn.Layer or torch.nn.Module): the trace then records its
    forward, its layer tree and its weights (written beside the trace by Trace.save).

    `sotc_dynamic` marks dimensions of example tensors dynamic, by input name:
    `sotc_dynamic={"x": [0]}` traces x's first dimension as `?` (a dynamic batch, as the spec
    "float32[?,128]" does); `{"ids": {0: "B", 1: "T"}}` names the sizes (as "int64[B,T]")."""
    if _layer_framework(fn):
        return _trace_model(fn, example_inputs, named_inputs, sotc_root, sotc_framework,
                            sotc_dynamic)
    if isinstance(fn, types.MethodType) or not isinstance(fn, types.FunctionType):
        raise TraceError(f"sotc.trace expects a Python function, not {type(fn).__name__}")
    _refuse_unsupported(fn, "entry function")
    try:
        bound = inspect.signature(fn).bind(*example_inputs, **named_inputs)
    except TypeError as exc:
        raise TraceError(f"inputs do not match {fn.__qualname__}{inspect.signature(fn)}: "
                         f"{exc}") from exc
    builder = _Builder(os.getcwd() if sotc_root is None else sotc_root)
    builder.trace.entry_function = builder.add_function(fn)
    builder.record_globals()
    for name, value in bound.arguments.items():
        entry = builder.trace.inputs.add(name=name)
        builder.value(_example(value), entry.value, allow_tensor=True)
    _mark_dynamic(builder.trace, sotc_dynamic)
    builder.finish()
    _choose_framework(builder, sotc_framework)
    return Trace(builder.trace, builder.code_objects, builder.weights)


_DYNAMIC_NAME = re.compile(r"^(\?|[A-Za-z_][A-Za-z0-9_]*)$")


def _mark_dynamic(trace_msg, dynamic):
    """Marks the dimensions `dynamic` names ({input: [dims]}, or {input: {dim: size name}})
    of the traced inputs dynamic."""
    inputs = {i.name: i for i in trace_msg.inputs}
    for name, dims in (dynamic or {}).items():
        value = inputs.get(name)
        if value is None or not value.value.HasField("tensor"):
            raise TraceError(f"sotc_dynamic names {name!r}, which is no tensor input "
                             f"(inputs: {', '.join(inputs)})")
        spec = value.value.tensor
        for d in dims:
            if not isinstance(d, int) or not -len(spec.dims) <= d < len(spec.dims):
                raise TraceError(f"sotc_dynamic: {name} has no dimension {d!r} (its rank is "
                                 f"{len(spec.dims)})")
            spec.dims[d].size, spec.dims[d].dynamic = -1, True
            symbol = dims[d] if isinstance(dims, dict) else "?"
            if not isinstance(symbol, str) or not _DYNAMIC_NAME.match(symbol):
                raise TraceError(f"sotc_dynamic: {name}'s dimension {d} is named {symbol!r} "
                                 "('?' or an identifier)")
            spec.dims[d].symbol = "" if symbol == "?" else symbol


def _example(value):
    """An example input as given: a string that is a tensor spec ("float32[8,3,224,224]")
    stands for a tensor of that spec, as on the command line; any other value is itself."""
    return (parse_tensor_spec(value) or value) if isinstance(value, str) else value


def _trace_model(model, example_inputs, named_inputs, sotc_root, framework, dynamic):
    if model.training:
        raise TraceError(f"the model ({type(model).__qualname__}) is in training mode: call "
                         ".eval() first (sotc compiles inference: dropout off, batch norm "
                         "with its running statistics)")
    entry = _model_entry(model)
    _refuse_unsupported(entry, "forward")
    try:
        bound = inspect.signature(entry).bind(model, *example_inputs, **named_inputs)
    except TypeError as exc:
        raise TraceError(f"inputs do not match {type(model).__qualname__}.forward"
                         f"{inspect.signature(entry)}: {exc}") from exc
    builder = _Builder(os.getcwd() if sotc_root is None else sotc_root)
    builder.trace.entry_function = builder.add_function(entry)
    builder.add_model(model)
    builder.record_globals()
    for name, value in list(bound.arguments.items())[1:]:  # the model itself is not an input
        entry_input = builder.trace.inputs.add(name=name)
        builder.value(_example(value), entry_input.value, allow_tensor=True)
    _mark_dynamic(builder.trace, dynamic)
    builder.finish()
    _choose_framework(builder, framework, _layer_framework(model))
    return Trace(builder.trace, builder.code_objects, builder.weights)


def load(path):
    """Reads a `.pb` or `.pbtxt` trace back (for tests and tools)."""
    path = os.fspath(path)
    msg = pb.Trace()
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".pbtxt"):
        text_format.Parse(data.decode(), msg)
    else:
        msg.ParseFromString(data)
    return Trace(msg)
