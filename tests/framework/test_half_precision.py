"""float16 and bfloat16 programs compute in float32 (sotc-sir-widen-half): traced with half
inputs, compiled for the CPU and for CUDA (run on the CUDA emulator), called with torch's half
tensors, and compared with torch computing in float32 on the same half inputs. The bound: one
rounding of the float32 result to the half type (a relative 2^-10 for float16, 2^-7 for
bfloat16, and 1e-4 near zero), which torch's own half kernels do not always meet (they round
between operations; sotc rounds once, when it stores the result). bfloat16 results come back
as ml_dtypes.bfloat16 arrays."""

import os
import subprocess
import sys

import numpy as np
import paddle
import pytest
import torch
import torch.nn.functional as F

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(ROOT, "testdata"))

from test_programs_vs_framework import DEVICES, sotc_bin  # noqa: E402,F401

import sotc  # noqa: E402


def softmax_scaled(x):
    return torch.softmax(x, -1) * 2


def layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b)


def mlp(x, w, b):
    return F.gelu(x @ w + b).sum(-1)


def linear_relu(x, w, b):
    return torch.relu(F.linear(x, w, b))


def linear_gelu_tanh(x, w, b):
    return F.gelu(x @ w + b, approximate="tanh")


# On CUDA the last two are one cuBLASLt call in half (bias and activation its epilogue).
CASES = {
    "softmax": (softmax_scaled, [(8, 16)]),
    "linear_relu": (linear_relu, [(8, 32), (16, 32), (16,)]),
    "linear_gelu_tanh": (linear_gelu_tanh, [(8, 32), (32, 16), (16,)]),
    "layer_norm": (layer_norm, [(4, 32), (32,), (32,)]),
    "mlp": (mlp, [(6, 24), (24, 12), (12,)]),
}


# The half type and one rounding to it (relative).
HALVES = {"float16": (torch.float16, 2.0 ** -10), "bfloat16": (torch.bfloat16, 2.0 ** -7)}


@pytest.mark.parametrize("half", sorted(HALVES))
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_half_computes_in_float32(name, device, half, tmp_path, sotc_bin):  # noqa: F811
    fn, shapes = CASES[name]
    dtype, rounding = HALVES[half]
    rng = np.random.default_rng(7)
    inputs = [torch.from_numpy(rng.standard_normal(s).astype(np.float32)).to(dtype) for s in shapes]
    got = _compiled(fn, inputs, device, tmp_path, sotc_bin)(*inputs)
    assert isinstance(got, torch.Tensor) and got.dtype == dtype
    with torch.no_grad():
        reference = fn(*[t.float() for t in inputs]).numpy()
    np.testing.assert_allclose(got.float(), reference, rtol=rounding, atol=1e-4)


def _bfloat16():
    return pytest.importorskip("ml_dtypes").bfloat16


def _compiled(fn, inputs, device, tmp_path, sotc_bin):
    """`fn` traced on `inputs`, compiled for `device` and loaded (every artifact built is run)."""
    trace = tmp_path / "t.pb"
    sotc.trace(fn, *inputs).save(str(trace))
    stem = f"k{len(list(tmp_path.iterdir()))}"  # one test may build several
    artifact = tmp_path / (stem + (".so" if device == "cpu" else ".fatbin"))
    r = subprocess.run([sotc_bin, "compile", str(trace), "--target",
                        "cpu" if device == "cpu" else "cuda", "-o", str(artifact)],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return sotc.load(artifact, device=device)


def _randn(*shape, seed=3):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _read_back(product, dtype, device):
    """What the operators after a half matmul read of it: the GEMM's rounded half result (on
    CUDA, and in bfloat16 on the CPU: oneDNN's bfloat16 GEMM), but in float16 on the CPU its
    float32 value (oneDNN has no float16 GEMM: computed in float32). The tolerance of a value
    computed from it: float32 math (a tie rounded the other way by the library's summation
    order moves it by one half ulp more)."""
    if device == "cpu" and dtype == torch.float16:
        return product, 1e-5
    return product.to(dtype).float(), 1e-5 + (2.0 ** -10 if dtype == torch.float16 else 2.0 ** -7)


def autocast_cuda(x, w, b):
    with torch.autocast("cuda"):
        h = F.linear(x, w, b)           # torch's lower-precision list: float16
        p = torch.softmax(h, -1)        # its float32 list
        with torch.autocast("cuda", enabled=False):
            plain = x @ w.t()           # autocast off: float32
        s = h + p                       # no list: type promotion (float32)
    return h, p, plain, s


@pytest.mark.parametrize("device", DEVICES)
def test_torch_autocast_cuda_lists(device, tmp_path, sotc_bin):  # noqa: F811
    """torch.autocast("cuda") as torch defines it, checked by hand (torch without CUDA turns
    the block off): the linear reads float16 operands and returns float16 (on CUDA a cuBLASLt
    half GEMM, whose product is rounded before the bias is added: two roundings), softmax
    runs in float32, a nested disabled block in float32."""
    x, w, b = _randn(6, 32), _randn(16, 32, seed=4), _randn(16, seed=5)
    h, p, plain, s = _compiled(autocast_cuda, [x, w, b], device, tmp_path, sotc_bin)(x, w, b)
    assert [t.dtype for t in (h, p, plain, s)] == [torch.float16] + [torch.float32] * 3
    xh, wh, bh = (t.half().float() for t in (x, w, b))
    product, rtol = _read_back(xh @ wh.t(), torch.float16, device)
    h_ref = product + bh
    np.testing.assert_allclose(h.float(), h_ref, rtol=2.0 ** -10 + rtol, atol=1e-3)
    np.testing.assert_allclose(p, torch.softmax(h_ref, -1), rtol=10 * rtol, atol=1e-7)
    np.testing.assert_allclose(plain, x @ w.t(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(s, h_ref + p, rtol=rtol, atol=1e-5)


def autocast_queries(x):
    outside = torch.is_autocast_enabled("cpu")
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        inside = (torch.is_autocast_enabled("cpu"), torch.is_autocast_enabled(),
                  torch.is_autocast_enabled(device_type="cuda"))
        with torch.autocast("cpu", enabled=False):
            off = torch.is_autocast_enabled("cpu")
    return x + 1, outside, inside, off


def test_torch_is_autocast_enabled_as_eager(tmp_path, sotc_bin):  # noqa: F811
    """torch.is_autocast_enabled(device) answers for the innermost block of that device, as
    eager torch does (the CUDA question, asked with no device, outside any CUDA block)."""
    x = _randn(3)
    got = _compiled(autocast_queries, [x], "cpu", tmp_path, sotc_bin)(x)
    want = autocast_queries(x)
    np.testing.assert_allclose(got[0], want[0])
    assert got[1:] == want[1:] == (False, (True, False, False), False)


def autocast_cpu(x, w):
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        y = x @ w                       # bfloat16
        z = torch.cat([y, x], -1)       # widest type: float32
        e = torch.exp(y)                # no list on the CPU: bfloat16
    return y, z, e


@pytest.mark.parametrize("device", DEVICES)
def test_torch_autocast_cpu(device, tmp_path, sotc_bin):  # noqa: F811
    """torch.autocast("cpu", bfloat16): the dtypes torch gives; values as sotc defines them
    (y rounded once when stored; what reads y inside the program reads it in float32)."""
    x, w = _randn(4, 16), _randn(16, 16, seed=6)
    got = _compiled(autocast_cpu, [x, w], device, tmp_path, sotc_bin)(x, w)
    with torch.no_grad():
        expected = autocast_cpu(x, w)
    assert [g.dtype for g in got] == [e.dtype for e in expected]
    y, rtol = _read_back(x.bfloat16().float() @ w.bfloat16().float(), torch.bfloat16, device)
    y_got, z_got, e_got = (g.float() for g in got)
    np.testing.assert_allclose(y_got, y, rtol=2.0 ** -7 + rtol, atol=1e-3)
    np.testing.assert_allclose(z_got, torch.cat([y, x], -1), rtol=rtol, atol=1e-5)
    np.testing.assert_allclose(e_got, torch.exp(y), rtol=2.0 ** -7 + 10 * rtol)


def paddle_auto_cast(x, w):
    with paddle.amp.auto_cast():
        y = paddle.matmul(x, w)         # O1 white list: float16
        z = paddle.exp(y)               # black list: float32
        s = y + x                       # float16 + float32: promoted to float32
    return y, z, s


@pytest.mark.parametrize("device", DEVICES)
def test_paddle_auto_cast_o1(device, tmp_path, sotc_bin):  # noqa: F811
    rng = np.random.default_rng(8)
    x, w = (rng.standard_normal((8, 8)).astype(np.float32) for _ in range(2))
    f = _compiled(paddle_auto_cast, [paddle.to_tensor(x), paddle.to_tensor(w)], device, tmp_path,
                  sotc_bin)
    y, z, s = f(paddle.to_tensor(x), paddle.to_tensor(w))
    assert [str(t.dtype) for t in (y, z, s)] == ["paddle.float16", "paddle.float32",
                                                "paddle.float32"]
    product = torch.from_numpy(x).half().float() @ torch.from_numpy(w).half().float()
    y_ref, rtol = _read_back(product, torch.float16, device)
    np.testing.assert_allclose(y.numpy().astype(np.float32), y_ref, rtol=2.0 ** -10 + rtol,
                               atol=1e-3)
    np.testing.assert_allclose(z.numpy(), torch.exp(y_ref).numpy(), rtol=10 * rtol)
    np.testing.assert_allclose(s.numpy(), (y_ref + x).numpy(), rtol=rtol, atol=1e-5)


def test_results_come_back_as_the_inputs_kinds(tmp_path, sotc_bin):  # noqa: F811
    """sotc.load returns what it is given: torch's half tensors for torch's, numpy float16
    and ml_dtypes bfloat16 arrays for numpy's (into out= buffers too)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = _randn(4, 8).to(torch.bfloat16)
    f = _compiled(softmax_scaled, [x], "cpu", tmp_path, sotc_bin)
    got = f(x)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.bfloat16
    expected = softmax_scaled(x.float())
    np.testing.assert_allclose(got.float(), expected, rtol=2.0 ** -7, atol=1e-4)
    array = x.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    from_numpy = f(array)
    assert isinstance(from_numpy, np.ndarray) and from_numpy.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(from_numpy.view(np.uint16), got.view(torch.int16).numpy()
                                  .view(np.uint16))
    out = np.empty((4, 8), ml_dtypes.bfloat16)
    f(array, out=(out,))
    np.testing.assert_array_equal(out.view(np.uint16), from_numpy.view(np.uint16))
    h = f_half = _compiled(softmax_scaled, [x.half()], "cpu", tmp_path, sotc_bin)
    half_result = h(x.half().numpy())
    assert isinstance(half_result, np.ndarray) and half_result.dtype == np.float16
    assert f_half(x.half()).dtype == torch.float16


# The testdata programs that make sense in half precision, traced with float16 and bfloat16
# inputs instead of their float32 ones (paddle programs: called with numpy float16 and
# ml_dtypes bfloat16 arrays).
HALF_PROGRAMS = ["21_exp_minus_x", "22_relu_sin", "23_softmax", "24_layer_norm", "25_rms_norm",
                 "26_gelu_mlp", "27_swiglu", "37_column_and_row_sums"]


@pytest.mark.parametrize("half", sorted(HALVES))
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", HALF_PROGRAMS)
def test_testdata_program_in_half(name, device, half, tmp_path, sotc_bin):  # noqa: F811
    """Against the framework in float32 on the same rounded inputs. The bound: one rounding
    of each result (rtol), plus four roundings of the result's largest magnitude (atol) for
    what a reduction or a GEMM cancels; on CUDA a GEMM stores its product in half, as the
    frameworks' half GEMMs do."""
    from make_traces import header  # noqa: E402
    from sotc.__main__ import _parse_inputs  # noqa: E402
    from test_programs_vs_framework import PROGRAMS, import_program, to_framework, to_numpy

    dtype, rounding = HALVES[half]
    func, specs = header(os.path.join(PROGRAMS, name + ".py"))
    specs = [s.replace("float32", half) for s in specs]
    module = import_program(name)
    trace = tmp_path / "t.pb"
    sotc.trace(getattr(module, func), sotc_root=ROOT, **_parse_inputs(specs)).save(str(trace))
    artifact = tmp_path / ("k.so" if device == "cpu" else "k.fatbin")
    r = subprocess.run([sotc_bin, "compile", str(trace), "--target",
                        "cpu" if device == "cpu" else "cuda", "-o", str(artifact)],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rng = np.random.default_rng(11)
    shapes = [tuple(int(d) for d in s.split("[")[1].rstrip("]").split(",")) for s in specs]
    arrays = [torch.from_numpy(rng.standard_normal(shape).astype(np.float32) * 0.5).to(dtype)
              for shape in shapes]
    given = [a.numpy() if half == "float16" else
             a.view(torch.int16).numpy().view(_bfloat16()) for a in arrays]
    got = sotc.load(artifact, device=device)(*given)
    expected = to_numpy(getattr(module, func)(*[to_framework(module, a.float().numpy())
                                                 for a in arrays]))
    for g, e in zip(got if isinstance(got, tuple) else [got],
                    expected if isinstance(expected, tuple) else [expected]):
        assert g.dtype == given[0].dtype
        scale = float(np.abs(e).max())
        np.testing.assert_allclose(g.astype(np.float32), e, rtol=rounding,
                                   atol=4 * rounding * scale)


# The testdata torch models converted with model.half() / model.to(torch.bfloat16): their
# weights go into the safetensors file in half.
HALF_MODELS = ["mlp_torch", "cnn_torch", "transformer_torch"]


@pytest.mark.parametrize("half", sorted(HALVES))
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", HALF_MODELS)
def test_half_model(name, device, half, tmp_path, sotc_bin, monkeypatch):  # noqa: F811
    """Against the same model in float32 with the same (rounded) weights, on the same
    rounded input; bound as for the programs (four roundings of the largest magnitude)."""
    import make_model_traces

    monkeypatch.chdir(ROOT)  # model files are found (and recorded) relative to the root
    from sotc._specs import parse_input

    dtype, rounding = HALVES[half]
    _, specs = make_model_traces.header(name)
    model = make_model_traces.make_model(name).to(dtype)
    shape = tuple(d.size for d in parse_input(specs[0].split("=", 1)[1]).dims)
    x = _randn(*shape, seed=12).to(dtype)
    got = _compiled(model, [x], device, tmp_path, sotc_bin)(x)
    assert got.dtype == dtype
    with torch.no_grad():
        expected = model.float()(x.float())
    scale = float(expected.abs().max())
    np.testing.assert_allclose(got.float(), expected, rtol=rounding, atol=4 * rounding * scale)


@pytest.mark.parametrize("half", sorted(HALVES))
def test_a_decoder_with_rotary_embeddings_in_half(half, tmp_path, sotc_bin):  # noqa: F811
    """transformers' LLaMA converted to half: its rotary embedding's rotate_half is a concat
    that is a kernel of its own (stored in float32 between kernels, not rounded inside it).
    Against the same model in float32; bound as for the models above."""
    transformers = pytest.importorskip("transformers")
    dtype, rounding = HALVES[half]
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, vocab_size=100, max_position_embeddings=64, use_cache=False)
    model = transformers.AutoModelForCausalLM.from_config(config).eval().to(dtype)
    ids = torch.tensor([[5, 17, 3, 9, 21, 4]])
    trace = tmp_path / "t.pb"
    sotc.trace(model, "int64[1,?<=16]").save(str(trace))
    r = subprocess.run([sotc_bin, "compile", str(trace), "--target", "cpu", "-o",
                        str(tmp_path / "k.so")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = sotc.load(str(tmp_path / "k.so"), fallback=model)(ids).logits
    assert got.dtype == dtype
    with torch.no_grad():
        expected = model.float()(ids).logits
    scale = float(expected.abs().max())
    np.testing.assert_allclose(got.float(), expected, rtol=rounding, atol=4 * rounding * scale)


def paddle_softmax(x):
    return paddle.nn.functional.softmax(x * 2, -1)


@pytest.mark.parametrize("half", sorted(HALVES))
def test_paddle_half_tensors_in_and_out(half, tmp_path, sotc_bin):  # noqa: F811
    """paddle's float16 and bfloat16 tensors go in (bfloat16 through its uint16 numpy form)
    and paddle tensors of the same dtype come back."""
    _, rounding = HALVES[half]
    x = paddle.to_tensor(np.random.default_rng(13).standard_normal((4, 8)).astype(np.float32))
    x = x.astype(half)
    got = _compiled(paddle_softmax, [x], "cpu", tmp_path, sotc_bin)(x)
    assert isinstance(got, paddle.Tensor) and str(got.dtype) == f"paddle.{half}"
    expected = paddle_softmax(x.astype("float32")).numpy()
    np.testing.assert_allclose(got.astype("float32").numpy(), expected, rtol=rounding, atol=1e-4)
