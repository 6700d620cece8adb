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
import pytest
import torch
import torch.nn.functional as F

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))

from test_programs_vs_framework import DEVICES, sotc_bin  # noqa: E402,F401

import sotc  # noqa: E402


def softmax_scaled(x):
    return torch.softmax(x, -1) * 2


def layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b)


def mlp(x, w, b):
    return F.gelu(x @ w + b).sum(-1)


CASES = {
    "softmax": (softmax_scaled, [(8, 16)]),
    "layer_norm": (layer_norm, [(4, 32), (32,), (32,)]),
    "mlp": (mlp, [(6, 24), (24, 12), (12,)]),
}


# The half type, the numpy dtype of its results, and one rounding to it (relative).
HALVES = {"float16": (torch.float16, np.float16, 2.0 ** -10),
          "bfloat16": (torch.bfloat16, "bfloat16", 2.0 ** -7)}


@pytest.mark.parametrize("half", sorted(HALVES))
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_half_computes_in_float32(name, device, half, tmp_path, sotc_bin):  # noqa: F811
    fn, shapes = CASES[name]
    dtype, numpy_dtype, rounding = HALVES[half]
    rng = np.random.default_rng(7)
    inputs = [torch.from_numpy(rng.standard_normal(s).astype(np.float32)).to(dtype) for s in shapes]
    trace = tmp_path / "t.pb"
    sotc.trace(fn, *inputs).save(str(trace))
    artifact = tmp_path / ("k.so" if device == "cpu" else "k.fatbin")
    r = subprocess.run([sotc_bin, "compile", str(trace), "--target",
                        "cpu" if device == "cpu" else "cuda", "-o", str(artifact)],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = np.asarray(sotc.load(artifact, device=device)(*inputs))
    assert got.dtype == np.dtype(numpy_dtype if half == "float16" else _bfloat16())
    with torch.no_grad():
        reference = fn(*[t.float() for t in inputs]).numpy()
    np.testing.assert_allclose(got.astype(np.float32), reference, rtol=rounding, atol=1e-4)


def _bfloat16():
    return pytest.importorskip("ml_dtypes").bfloat16
