"""sotc.load with the frameworks' own tensors and functions: `fallback=fn` runs the original
function, when the inputs do not match what was compiled, on its framework's tensors where the
caller gave numpy arrays (a paddle or torch function reads them with its framework's methods),
and its tensors come back as numpy arrays, as the compiled artifact returns them; a torch
tensor that requires grad is read without its history; a bfloat16 one is passed (and checked
against what was compiled), a dtype numpy cannot view is a coded error."""

import os
import subprocess
import sys

import numpy as np
import paddle
import pytest
import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))

import sotc  # noqa: E402

SOTC = os.environ.get("SOTC_BIN", os.path.join(ROOT, "bazel-bin", "tools", "sotc", "sotc"))


def paddle_scale(x):
    return paddle.abs(x).sum(-1) * 2


def torch_scale(x):
    return torch.abs(x).sum(-1) * 2


@pytest.mark.parametrize("fn", [paddle_scale, torch_scale], ids=["paddle", "torch"])
def test_fallback_gets_framework_tensors(fn, tmp_path):
    example = paddle.zeros([4, 8]) if fn is paddle_scale else torch.zeros(4, 8)
    trace = tmp_path / "t.pb"
    sotc.trace(fn, example).save(str(trace))
    library = tmp_path / "k.so"
    subprocess.run([SOTC, "compile", str(trace), "--target", "cpu", "-o", str(library)],
                   check=True, cwd=ROOT)
    f = sotc.load(library, fallback=fn)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    np.testing.assert_allclose(f(x), np.abs(x).sum(-1) * 2, rtol=1e-6)  # compiled
    other = rng.standard_normal((3, 5)).astype(np.float32)  # not compiled for: the fallback
    got = f(other)
    assert isinstance(got, np.ndarray), type(got)
    np.testing.assert_allclose(got, np.abs(other).sum(-1) * 2, rtol=1e-6)


def test_torch_tensors_that_numpy_cannot_view_plainly(tmp_path):
    trace = tmp_path / "t.pb"
    sotc.trace(torch_scale, torch.zeros(4, 8)).save(str(trace))
    library = tmp_path / "k.so"
    subprocess.run([SOTC, "compile", str(trace), "--target", "cpu", "-o", str(library)],
                   check=True, cwd=ROOT)
    f = sotc.load(library)
    x = torch.randn(4, 8, requires_grad=True)
    np.testing.assert_allclose(f(x), (x.detach().abs().sum(-1) * 2).numpy(), rtol=1e-6)
    with pytest.raises(sotc.GuardError, match=r"expected float32\[4, 8\], got bfloat16\[4, 8\]"):
        f(x.detach().to(torch.bfloat16))
    with pytest.raises(sotc.SotcError, match=r"E8005: x: a torch.complex32 tensor cannot be"):
        f(torch.zeros(4, 8, dtype=torch.complex32))
