"""The tracer: specs, what a trace holds, and that every instruction and constant survives
the round trip through .pb and .pbtxt."""

import dis
import os
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import sotc
from sotc import trace_pb2 as pb

GLOBAL_SCALE = 3


def helper(t, k=2):
    return t * k * GLOBAL_SCALE


def rich(x, y, n=2, *args, flag=True, **kwargs):
    big = 2**100
    consts = (None, True, -7, 1.25, 3j, "s", b"b", ..., frozenset({1, 2}))
    inner = lambda v: v + n  # noqa: E731

    def nested(v, *, w=1):
        return helper(v) * w

    total = x
    for i in range(n):
        total = nested(total, w=i) + inner(i)
    if y is not None and flag:
        total = total - y
    return total, big, consts, args, kwargs


def decode(value, codes):
    """A pb.Value back to a Python constant (code objects by index into `codes`)."""
    kind = value.WhichOneof("kind")
    if kind == "none":
        return None
    if kind == "ellipsis":
        return ...
    if kind == "big_int_value":
        return int(value.big_int_value)
    if kind == "complex_value":
        return complex(value.complex_value.real, value.complex_value.imag)
    if kind == "tuple_value":
        return tuple(decode(v, codes) for v in value.tuple_value.items)
    if kind == "frozenset_value":
        return frozenset(decode(v, codes) for v in value.frozenset_value.items)
    if kind == "code":
        return codes[value.code]
    return getattr(value, kind)


@pytest.mark.parametrize("suffix", [".pb", ".pbtxt"])
def test_round_trip_keeps_every_instruction_and_constant(tmp_path, suffix):
    traced = sotc.trace(rich, "float32[4,8]", "f32[4,8]!grad", 3)
    path = traced.save(tmp_path / f"t{suffix}")
    loaded = sotc.load(path).proto
    assert loaded == traced.proto
    codes = traced.code_objects
    assert len(loaded.code_objects) == len(codes) >= 4  # rich, <lambda>, nested, helper
    for msg, code in zip(loaded.code_objects, codes):
        assert msg.qualname == code.co_qualname
        assert msg.code == code.co_code
        assert msg.exceptiontable == code.co_exceptiontable
        assert msg.linetable == code.co_linetable
        assert list(msg.varnames) == list(code.co_varnames)
        assert list(msg.freevars) == list(code.co_freevars)
        assert list(msg.cellvars) == list(code.co_cellvars)
        assert list(msg.names) == list(code.co_names)
        assert msg.flags == code.co_flags and msg.argcount == code.co_argcount
        assert tuple(decode(c, codes) for c in msg.consts) == code.co_consts
        expected = list(dis.get_instructions(code))
        assert len(msg.instructions) == len(expected)
        for got, want in zip(msg.instructions, expected):
            assert (got.offset, got.opcode, got.opname) == (want.offset, want.opcode,
                                                             want.opname)
            assert got.has_arg == (want.arg is not None)
            assert got.arg == (want.arg or 0)
            if isinstance(want.starts_line, bool):  # 3.13 on: a flag and line_number
                assert got.starts_line == ((want.starts_line and want.line_number) or 0)
                assert got.starts_unnumbered_line == (want.starts_line and
                                                      want.line_number is None)
            else:
                assert got.starts_line == (want.starts_line or 0)
            if not isinstance(want.argval, types.CodeType):
                assert got.argrepr == want.argrepr


def test_trace_records_functions_globals_and_closures():
    traced = sotc.trace(rich, "float32[4,8]", None)
    t = traced.proto
    names = [t.code_objects[f.code].qualname for f in t.functions]
    assert names == ["rich", "helper"]
    assert t.functions[0].defaults[0].int_value == 2
    assert t.functions[0].kwdefaults[0].name == "flag"
    assert t.functions[1].defaults[0].int_value == 2
    ns = t.namespaces[t.functions[0].namespace]
    glob = {g.name: g.value for g in ns.globals}
    assert glob["helper"].function == 1
    assert glob["GLOBAL_SCALE"].int_value == 3
    assert "range" not in glob  # builtins are not globals
    assert t.sources[0].lines[0].startswith("def rich(")
    assert t.python.major == sys.version_info.major and t.python.minor == sys.version_info.minor


def test_closure_cells_holding_functions_are_traced():
    def make():
        def scale(v):
            return v * 2

        def fn(x):
            return scale(x)

        return fn

    traced = sotc.trace(make(), "f32[2]")
    fn_msg = traced.proto.functions[0]
    assert len(fn_msg.closure) == 1
    callee = traced.proto.functions[fn_msg.closure[0].function]
    assert traced.proto.code_objects[callee.code].name == "scale"


def _marked_constant(fn):  # what torch.compiler.assume_constant_result marks
    fn._dynamo_marked_constant = True
    return fn


@_marked_constant
def release_at_least(version, exact=False):
    return (version <= "2.9") if not exact else version == "2.9"


SHARED = [1, 2]
HOLDER = {"items": SHARED}


def gated(x):
    if release_at_least("2.8") and not release_at_least("3.0", exact=True):
        x = x * 2
    SHARED.append(3)
    return x + len(HOLDER["items"]) + release_at_least(str(x.ndim))


def test_constant_functions_record_their_results_at_constant_call_sites():
    """Only the calls whose arguments are constants in the code: the third runs its code."""
    t = sotc.trace(gated, "f32[2]").proto
    (fn,) = [f for f in t.functions if f.qualname == "release_at_least"]
    calls = {(tuple(a.str_value for a in c.args), tuple((k.name, k.value.bool_value)
                                                        for k in c.keywords)): c.result.bool_value
             for c in fn.constant_calls}
    assert calls == {(("2.8",), ()): True, (("3.0",), (("exact", True),)): False}


def test_an_object_reached_by_two_paths_has_one_identity():
    t = sotc.trace(gated, "f32[2]").proto
    glob = {g.name: g.value for ns in t.namespaces for g in ns.globals}
    shared, holder = glob["SHARED"], glob["HOLDER"]
    assert shared.identity and holder.identity and shared.identity != holder.identity
    assert holder.dict_value.items[0].value.identity == shared.identity


def test_inputs_bind_to_parameters():
    traced = sotc.trace(rich, np.zeros((2, 3), np.float32), None, 4, 5, 6, flag=False, extra=1,
                        sotc_framework="paddle")
    inputs = {i.name: i.value for i in traced.proto.inputs}
    assert [d.size for d in inputs["x"].tensor.dims] == [2, 3]
    assert inputs["x"].tensor.dtype == pb.FLOAT32
    assert inputs["y"].WhichOneof("kind") == "none"
    assert [v.int_value for v in inputs["args"].tuple_value.items] == [5, 6]
    assert inputs["flag"].bool_value is False
    assert inputs["kwargs"].dict_value.items[0].key.str_value == "extra"
    with pytest.raises(sotc.TraceError, match="inputs do not match rich"):
        sotc.trace(rich)


def test_an_input_named_root_is_just_an_input():
    def fn(root, x):
        return x + root

    traced = sotc.trace(fn, root=2, x="f32[2]")
    assert [i.name for i in traced.proto.inputs] == ["root", "x"]


def test_tensor_like_objects_and_grad():
    class FakeTorchTensor:
        shape = (3, 4)
        dtype = "torch.bfloat16"
        requires_grad = True

    traced = sotc.trace(helper, FakeTorchTensor(), sotc_framework="torch")
    spec = traced.proto.inputs[0].value.tensor
    assert spec.dtype == pb.BFLOAT16 and not spec.stop_gradient


@pytest.mark.parametrize("text,dtype,dims,stop_gradient", [
    ("float32[64,128]", pb.FLOAT32, [(64, False), (128, False)], True),
    ("f16[?,8]", pb.FLOAT16, [(-1, True), (8, False)], True),
    ("bf16[]", pb.BFLOAT16, [], True),
    ("i64[3]!grad", pb.INT64, [(3, False)], False),
    ("bool[2, 2]", pb.BOOL, [(2, False), (2, False)], True),
])
def test_tensor_specs(text, dtype, dims, stop_gradient):
    spec = sotc.parse_tensor_spec(text)
    assert spec.dtype == dtype
    assert [(d.size, d.dynamic) for d in spec.dims] == dims
    assert spec.stop_gradient == stop_gradient


@pytest.mark.parametrize("text,value", [("3", 3), ("True", True), ("None", None),
                                        ("(1, 2)", (1, 2)), ("'s'", "s"), ("[1.5]", [1.5])])
def test_literal_inputs(text, value):
    assert sotc.parse_input(text) == value


@pytest.mark.parametrize("text,message", [
    ("float33[2]", "unknown dtype 'float33'"),
    ("f32[2,3x]", "bad dimension '3x'"),
    ("f32[T<=0]", "bound must be at least 1"),
    ("hello world", "neither a tensor spec"),
])
def test_bad_specs(text, message):
    with pytest.raises(sotc.SpecError, match=message):
        sotc.parse_input(text)


def gen(x):
    yield x


async def coro(x):
    return x


def calls_gen(x):
    return list(gen(x))


@pytest.mark.parametrize("fn,kind", [(gen, "a generator function"),
                                     (coro, "an async function or coroutine")])
def test_generators_and_coroutines_are_refused_as_the_traced_function(fn, kind):
    with pytest.raises(sotc.TraceError, match=kind):
        sotc.trace(fn, 1)


def test_generator_functions_the_program_calls_are_recorded():
    traced = sotc.trace(calls_gen, 1)
    assert "gen" in {f.qualname for f in traced.proto.functions}


def test_an_installed_packages_generators_are_recorded_not_refused(tmp_path, monkeypatch):
    """Library code reached from a model (huggingface_hub's path filters behind a config)
    may hold generator functions the program never calls: recorded like the program's own."""
    package = tmp_path / "site-packages" / "genlib"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent("""\
        def items(n):
            yield from range(n)


        def helper(x, pick=items):
            return x * 2
        """))
    monkeypatch.syspath_prepend(str(tmp_path / "site-packages"))
    import genlib
    helper = genlib.helper  # a library function the program holds (its default: a generator)

    def uses(x):
        return helper(x)

    traced = sotc.trace(uses, "f32[4]")
    names = {f.qualname for f in traced.proto.functions}
    assert {"helper", "items"} <= names


def test_tracing_is_deterministic():
    assert sotc.trace(rich, "f32[4]", None).to_bytes() == sotc.trace(rich, "f32[4]", None).to_bytes()


def test_save_rejects_unknown_extension_and_unwritable_paths(tmp_path):
    traced = sotc.trace(helper, "f32[2]")
    with pytest.raises(sotc.TraceError, match="use .pb or .pbtxt"):
        traced.save(tmp_path / "t.json")
    with pytest.raises(sotc.TraceError, match="cannot write"):
        traced.save(tmp_path / "missing" / "t.pb")
    assert not (tmp_path / "missing").exists()


def test_a_models_weights_are_saved_with_its_trace_or_not_at_all(tmp_path):
    pytest.importorskip("safetensors")
    traced = sotc.trace(helper, "f32[2]")
    traced.weights = {"fc.weight": np.arange(6, dtype=np.float32).reshape(2, 3)}
    with pytest.raises(sotc.TraceError, match="use .pb or .pbtxt"):
        traced.save(tmp_path / "m.json")
    (tmp_path / "m.pb").mkdir()  # the trace cannot be written there
    with pytest.raises(sotc.TraceError, match="cannot write"):
        traced.save(tmp_path / "m.pb")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.pb"]
    traced.save(tmp_path / "ok.pb")
    from safetensors.numpy import load_file
    assert traced.proto.weights_file == "ok.safetensors"
    assert (load_file(tmp_path / "ok.safetensors")["fc.weight"] == traced.weights["fc.weight"]).all()


def test_bfloat16_weights_are_saved_as_bf16(tmp_path):
    """numpy (and safetensors.numpy) have no bfloat16: the bits are written under a BF16
    header, which the runtime checks against the manifest's dtype."""
    pytest.importorskip("safetensors")
    import json

    from sotc._tracer import _weight_array
    bits = np.array([0x3F80, 0xC040, 0x0000], np.uint16)  # 1.0, -3.0, 0.0

    class Bf16:  # what a framework's bfloat16 tensor looks like to the tracer
        dtype = "paddle.bfloat16"

        def numpy(self):
            return bits

    traced = sotc.trace(helper, "f32[2]")
    traced.weights = {"a": np.ones(2, np.float32), "b": _weight_array(Bf16(), "b")}
    traced.save(tmp_path / "m.pb")
    data = (tmp_path / "m.safetensors").read_bytes()
    size = int.from_bytes(data[:8], "little")
    assert size % 8 == 0
    header = json.loads(data[8:8 + size])
    assert header["b"]["dtype"] == "BF16" and header["b"]["shape"] == [3]
    assert header["a"]["dtype"] == "F32"
    start, end = header["b"]["data_offsets"]
    assert np.frombuffer(data[8 + size + start:8 + size + end], np.uint16).tolist() == bits.tolist()


PROGRAM = textwrap.dedent("""\
    import paddle
    import paddle.nn.functional as F
    from paddle import add
    import torch

    paddle.set_device("gpu")


    def fn(x, y):
        return add(F.relu(x), torch.sin(y))
    """)


def run_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "sotc", *args], capture_output=True,
                          text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": os.path.dirname(sotc.__path__[0])})


def test_cli_traces_files_that_import_missing_frameworks(tmp_path):
    (tmp_path / "model.py").write_text(PROGRAM)
    result = run_cli("trace", "model.py:fn", "--input", "x=f32[4,?]", "-i", "y=float32[4,8]!grad",
                     "--framework", "paddle", "-o", "out.pbtxt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    t = sotc.load(tmp_path / "out.pbtxt").proto
    glob = {g.name: g.value for g in t.namespaces[0].globals}
    assert "paddle" not in glob  # only the globals the code reads
    assert glob["F"].module == "paddle.nn.functional"
    assert glob["add"].external == "paddle.add"
    assert glob["torch"].module == "torch"
    assert t.code_objects[0].filename == "model.py"  # relative to the working directory
    dims = t.inputs[0].value.tensor.dims
    assert dims[1].dynamic and not t.inputs[1].value.tensor.stop_gradient


@pytest.mark.parametrize("args,message", [
    (["model.py:nope", "-o", "o.pb"], "'model.py' has no function 'nope'"),
    (["missing.py:fn", "-o", "o.pb"], "no such file: 'missing.py'"),
    (["model.py:fn", "-i", "x=f32[", "-o", "o.pb"], "neither a tensor spec"),
    (["model.py:fn", "-i", "x=1", "-i", "x=2", "-o", "o.pb"], "input 'x' given twice"),
    (["model.py:fn", "-i", "z=1", "-o", "o.pb"], "inputs do not match fn"),
    (["model.py:fn", "-i", "x=1", "-i", "y=2", "--framework", "paddle", "-o", "nodir/o.pb"],
     "cannot write"),
])
def test_cli_errors_are_one_line_with_status_2(tmp_path, args, message):
    (tmp_path / "model.py").write_text(PROGRAM)
    result = run_cli("trace", *args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert result.stderr.startswith("sotc trace: error: ")
    assert not (tmp_path / "o.pb").exists()


def test_spec_strings_are_tensors_for_functions_too():
    """The README's call: a string that is a tensor spec stands for such a tensor, as it does
    for a model and on the command line; other strings stay strings."""
    def fn(x, y, mode="sum", n=2):
        return (x + y) * n

    t = sotc.trace(fn, "float32[64,128]", np.zeros((64, 128), np.float32), "max", n=3,
                   sotc_framework="paddle")
    x, y, mode, n = t.proto.inputs
    assert x.value.WhichOneof("kind") == "tensor"
    assert [d.size for d in x.value.tensor.dims] == [64, 128]
    assert x.value.tensor.dtype == pb.FLOAT32
    assert y.value.tensor.dtype == pb.FLOAT32
    assert mode.value.WhichOneof("kind") != "tensor"
