"""Calls that take a dimension, made on a 0-d tensor (torch.mean(x, dim=0) once crashed
`sotc compile`): each compiles, computing what torch computes (dimension 0 and -1 of a 0-d
tensor reduce nothing, and keepdim keeps none), or is refused with a coded error; none crashes."""

import subprocess
import sys

import numpy as np
import pytest

import sotc

# (call on x, what it computes for x as a numpy 0-d array; None: refused with a coded error)
CALLS = [
    ("torch.mean(x, dim=0, keepdim=True)", lambda x: x),
    ("torch.sum(x, dim=-1)", lambda x: x),
    ("torch.amax(x, 0)", lambda x: x),
    ("torch.logsumexp(x, 0)", lambda x: x),
    ("torch.softmax(x, 0)", lambda x: np.ones_like(x)),
    ("torch.nn.functional.normalize(x, dim=0)", lambda x: x / max(abs(float(x)), 1e-12)),
    ("torch.transpose(x, 0, -1)", lambda x: x),
    ("x.mean(-1)", lambda x: x),
    ("paddle.mean(x, axis=-1, keepdim=True)", lambda x: x),
    ("paddle.nn.functional.softmax(x, axis=0)", lambda x: np.ones_like(x)),
    ("torch.cat([x, x], 0)", None),
    ("torch.chunk(x, 1, 0)", None),
    ("torch.split(x, 1, 0)", None),
    ("torch.roll(x, [1], [0])", None),
]


@pytest.mark.parametrize("call, want", CALLS, ids=[c for c, _ in CALLS])
def test_dimension_arguments_of_a_0d_tensor(call, want, sotc_bin, tmp_path, monkeypatch):
    module = tmp_path / "zero_d.py"
    module.write_text(f"import paddle\nimport torch\n\n\ndef fn(x):\n    return {call}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("zero_d", None)
    with sotc.stub_missing_frameworks():
        import zero_d
    framework = "paddle" if call.startswith("paddle") else "torch"
    trace = sotc.trace(zero_d.fn, x="float32[]", sotc_framework=framework).save(
        str(tmp_path / "t.pb"))
    library = tmp_path / "t.so"
    result = subprocess.run([sotc_bin, "compile", trace, "--target", "cpu", "-o", str(library)],
                            capture_output=True, text=True)
    if want is None:
        assert result.returncode == 2, result.stderr
        assert "sotc: error E2010: " in result.stderr and "of a 0-d tensor" in result.stderr
        return
    assert result.returncode == 0, result.stderr
    x = np.array(-0.75, np.float32)
    got = sotc.load(library)(x)
    assert np.ndim(got) == 0  # keepdim keeps no dimension of a 0-d tensor either
    np.testing.assert_allclose(got, want(x), rtol=1e-6)


@pytest.mark.parametrize("call", ["torch.exp(x)", "torch.matmul(x, x.T)"])
def test_a_kernel_over_an_empty_tensor_is_a_coded_error(call, sotc_bin, tmp_path, monkeypatch):
    """Kernels iterate over at least one element: an empty tensor is E4002 with the line,
    not a code generation failure (E9005) or a run-time grid of 0."""
    module = tmp_path / "empty.py"
    module.write_text(f"import torch\n\n\ndef fn(x):\n    return {call}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("empty", None)
    with sotc.stub_missing_frameworks():
        import empty
    trace = sotc.trace(empty.fn, x="float32[0,3]").save(str(tmp_path / "t.pb"))
    result = subprocess.run([sotc_bin, "compile", trace, "--target", "cpu", "-o",
                             str(tmp_path / "t.so")], capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    assert "error E4002: " in result.stderr and "no elements" in result.stderr
    assert "empty.py:5" in result.stderr
    assert not (tmp_path / "t.so").exists()
