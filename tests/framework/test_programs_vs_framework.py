"""Every testdata program end to end against the real framework: the committed trace ->
`sotc compile --target cpu` -> `sotc.load` -> called on numpy inputs, compared with the
original Python function run eagerly by paddle (or torch) on the CPU with the same values.

Runs in the reference environment (scripts/reference-env.sh: paddlepaddle and torch from
PyPI), never in the package's own. Each program runs on three input sets so that branches on
tensor values go both ways and tensor-driven loops run several iterations: standard normal
values, positive ones (|x| * 8 + 0.5) and negative ones.

Tolerance (float32): a result element e of reference r passes when
    |e - r| <= 1e-6 * |r| + 1e-6 * max|R|        (R: the whole reference tensor)
The relative term is the bound of the issue (about 8 ulp). The second term is needed where an
element is much smaller than its tensor's scale: a reduction summed in another order (sotc
vectorizes; OpenBLAS and paddle block their dot products their own way) or a cancellation
such as x - mean differs by a few ulp of the *operands*, which is large relative to a result
near zero. Without it, layer_norm (x - mean) and the GEMM outputs of the MLPs near zero fail
(relative errors up to 0.16 on elements ~1e-7 of a tensor of scale 1); with it, every program
passes, so no program needs a wider bound.
"""

import copy
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))

import sotc  # noqa: E402
from sotc import trace_pb2  # noqa: E402
from sotc._specs import dtype_name, parse_input  # noqa: E402

PROGRAMS = os.path.join(ROOT, "testdata", "programs")
TRACES = os.path.join(ROOT, "testdata", "traces")
HEADER = "# sotc-trace:"

# Flags a program needs to compile (the testdata lit tests use the same).
FLAGS = {"36_host_callback": ["--allow-host-callbacks"]}

# Programs sotc refuses on purpose, with the error code (the test checks the refusal).
REFUSED = {"32_big_constants": "E3002"}  # Python integers beyond 64 bits

VARIANTS = ("normal", "positive", "negative")
# Where the artifacts run: the CPU library, and the CUDA fatbin on the CUDA emulator
# (docs/emulator.md), which runs the PTX the fatbin carries with CUDA's semantics.
DEVICES = ("cpu", "emulator")
RTOL = 1e-6


def programs():
    return sorted(f[:-3] for f in os.listdir(PROGRAMS) if f.endswith(".py"))


def header(name):
    with open(os.path.join(PROGRAMS, name + ".py")) as f:
        first = f.readline()
    func, *inputs = first[len(HEADER):].split()
    return func, [item.partition("=")[::2] for item in inputs]


def example(spec, rng, variant):
    """A numpy value for one traced input: tensors random, other values as traced."""
    if not isinstance(spec, trace_pb2.TensorSpec):
        return spec
    shape = tuple(d.size for d in spec.dims)
    dtype = np.dtype(dtype_name(spec.dtype))
    if dtype.kind == "f":
        x = rng.standard_normal(shape)
        if variant != "normal":
            x = np.abs(x) * 8 + 0.5
            x = -x if variant == "negative" else x
        return x.astype(dtype)
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else (-50 if variant != "positive" else 1)
        hi = 50 if variant != "negative" else -1
        return rng.integers(lo, hi, shape).astype(dtype)
    return rng.integers(0, 2, shape).astype(dtype)


def import_program(name):
    spec = importlib.util.spec_from_file_location("prog_" + name, os.path.join(PROGRAMS, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def to_framework(module, value):
    if not isinstance(value, np.ndarray):
        return value
    if "torch" in vars(module):
        return module.torch.from_numpy(value.copy())
    return module.paddle.to_tensor(value.copy())


def to_numpy(value):
    """The framework's result with every tensor as a numpy array."""
    if isinstance(value, (tuple, list)):
        return type(value)(to_numpy(v) for v in value)
    if isinstance(value, dict):
        return {k: to_numpy(v) for k, v in value.items()}
    if hasattr(value, "detach"):  # torch
        return value.detach().numpy()
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):  # paddle
        return value.numpy()
    return value


def assert_same(got, expected, rtol, where="result"):
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), f"{where}: expected an array, got {type(got).__name__}"
        assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype}, expected {expected.dtype}"
        assert got.shape == expected.shape, f"{where}: shape {got.shape}, expected {expected.shape}"
        if expected.dtype.kind != "f":
            np.testing.assert_array_equal(got, expected, err_msg=where)
            return
        finite = np.isfinite(expected)
        np.testing.assert_array_equal(np.isfinite(got), finite, err_msg=where + ": inf/nan places")
        scale = float(np.abs(expected[finite]).max()) if finite.any() else 0.0
        np.testing.assert_allclose(got[finite], expected[finite], rtol=rtol, atol=1e-6 * scale,
                                   err_msg=where)
        return
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected), (
            f"{where}: {type(got).__name__} of {len(got)}, expected "
            f"{type(expected).__name__} of {len(expected)}")
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, rtol, f"{where}[{i}]")
        return
    if isinstance(expected, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(expected), where
        for k in expected:
            assert_same(got[k], expected[k], rtol, f"{where}[{k!r}]")
        return
    assert got == expected, f"{where}: {got!r}, expected {expected!r}"


@pytest.fixture(scope="session")
def sotc_bin():
    path = os.environ.get("SOTC_BIN", os.path.join(ROOT, "bazel-bin", "tools", "sotc", "sotc"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"sotc binary not found at {path}: bazel build //tools/sotc")
    return path


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory, sotc_bin):
    """(name, module globals, device) -> loaded artifact, compiled once per session: for the
    CPU (device "cpu") or for CUDA, run on the CUDA emulator (device "emulator")."""
    out, compiled = tmp_path_factory.mktemp("compiled"), set()

    def get(name, module_globals=None, device="cpu"):
        target = "cpu" if device == "cpu" else "cuda"
        artifact = out / (name + (".so" if target == "cpu" else ".fatbin"))
        if artifact not in compiled:
            subprocess.run([sotc_bin, "compile", os.path.join(TRACES, name + ".pb"), "--target",
                            target, "-o", str(artifact)] + FLAGS.get(name, []), check=True,
                           cwd=ROOT, capture_output=True, text=True)
            compiled.add(artifact)
        return sotc.load(artifact, globals=module_globals, device=device)
    return get


def module_state(module):
    """A program module's plain global values (what its side effects may change)."""
    return {k: to_numpy(v) for k, v in vars(module).items()
            if not k.startswith("__") and not callable(v) and not isinstance(v, type(os))}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", programs())
def test_program_matches_framework(name, variant, device, artifacts):
    if name in REFUSED:
        with pytest.raises(subprocess.CalledProcessError) as e:
            artifacts(name, device=device)
        assert f"error {REFUSED[name]}:" in e.value.stderr
        return
    func, inputs = header(name)
    rng = np.random.default_rng(sum(map(ord, name + variant)))
    values = {k: example(parse_input(spec), rng, variant) for k, spec in inputs}
    # Each side runs on its own module and its own copies: side effects are compared too.
    ours = import_program(name)
    compiled = artifacts(name, vars(ours), device)
    our_args = copy.deepcopy(values)
    module = import_program(name)
    their_args = {k: to_framework(module, v) for k, v in copy.deepcopy(values).items()}
    try:
        expected = to_numpy(getattr(module, func)(**their_args))
    except Exception as e:  # noqa: BLE001  the values fail the program's own checks
        # The compiled run raises the builtin exception it derives from, with its message.
        builtin = next(c for c in type(e).__mro__ if c.__module__ == "builtins")
        with pytest.raises(builtin) as raised:
            compiled(**our_args)
        assert str(raised.value) == str(e)
        return
    got = compiled(**our_args)
    assert_same(got, expected, RTOL)
    assert_same(module_state(ours), module_state(module), RTOL, "module globals")
    assert_same(to_numpy(our_args), to_numpy(their_args), RTOL, "arguments after the call")


def test_break_on_api_runs_in_the_framework(sotc_bin, tmp_path):
    """--break-on=paddle.sin: the compiled program calls paddle.sin on the host between its two
    segments, and the tensor it returns feeds the second."""
    library = tmp_path / "relu_sin.so"
    subprocess.run([sotc_bin, "compile", os.path.join(TRACES, "22_relu_sin.pb"), "--target", "cpu",
                    "--allow-host-callbacks", "--break-on=paddle.sin", "-o", str(library)],
                   check=True, cwd=ROOT)
    x = np.random.default_rng(1).standard_normal(64).astype(np.float32) * 3
    module = import_program("22_relu_sin")
    assert_same(sotc.load(library)(x), module.fn(module.paddle.to_tensor(x)).numpy(), RTOL)


@pytest.mark.parametrize("name", programs())
def test_tracing_with_the_framework_records_what_the_stubs_do(name, sotc_bin, tmp_path):
    """The committed traces are made without paddle or torch (the tracer's stubs); traced here
    with the real framework, whose functions live in private modules under other names
    (paddle.nn.functional.activation.relu is paddle.nn.functional.relu), each program must
    translate the same."""
    func, inputs = header(name)
    module = import_program(name)
    traced = sotc.trace(getattr(module, func), sotc_root=ROOT,
                        **{k: parse_input(spec) for k, spec in inputs})
    fresh = traced.save(tmp_path / (name + ".pb"))

    def sir(path):
        result = subprocess.run([sotc_bin, "dump", "--sir", "--allow-host-callbacks", str(path)],
                                capture_output=True, text=True, cwd=ROOT)
        return result.returncode, result.stdout, result.stderr.replace(str(path), "TRACE")

    assert sir(fresh) == sir(os.path.join(TRACES, name + ".pb"))


# Testdata programs with kernels a broken GPU lowering changes: several statements in one
# kernel (softmax and the norms: barriers between them) and reductions split over threads.
BROKEN_LOWERINGS = [(name, fault) for fault in ("barrier", "index", "reduction")
                    for name in ("23_softmax", "24_layer_norm", "25_rms_norm",
                                 "37_column_and_row_sums")
                    if not (fault == "barrier" and name == "37_column_and_row_sums")]


@pytest.mark.parametrize("name, fault", BROKEN_LOWERINGS)
def test_a_broken_gpu_lowering_fails_on_the_emulator(name, fault, sotc_bin, tmp_path):
    """`sotc compile --testing-break=FAULT` lowers GPU kernels wrongly on purpose: without the
    barriers between a kernel's statements, each thread on its neighbour's element, or the
    threads' partial sums left uncombined. Run on the emulator, each program either faults
    (E8007: a race, an access out of bounds) or differs from the framework; the same program
    lowered correctly matches (test_program_matches_framework)."""
    fatbin = tmp_path / (name + ".fatbin")
    subprocess.run([sotc_bin, "compile", os.path.join(TRACES, name + ".pb"), "--gpu-arch",
                    "sm_90", "--testing-break=" + fault, "-o", str(fatbin)], check=True, cwd=ROOT)
    func, inputs = header(name)
    rng = np.random.default_rng(sum(map(ord, name)))
    values = {k: example(parse_input(spec), rng, "normal") for k, spec in inputs}
    module = import_program(name)
    expected = to_numpy(getattr(module, func)(**{k: to_framework(module, v)
                                                 for k, v in copy.deepcopy(values).items()}))
    compiled = sotc.load(fatbin, device="emulator")
    try:
        got = compiled(**copy.deepcopy(values))
    except sotc.SotcError as e:
        assert e.code == "E8007", str(e)
        return
    with pytest.raises(AssertionError):
        assert_same(got, expected, RTOL)
