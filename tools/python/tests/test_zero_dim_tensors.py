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


# (call on x: float32[0, 3] and y: float32[3, 0], what numpy computes)
EMPTY_CALLS = [
    ("torch.exp(x)", lambda x, y: np.exp(x)),
    ("torch.matmul(x, x.T)", lambda x, y: x @ x.T),
    ("torch.matmul(x.T, x)", lambda x, y: x.T @ x),  # k = 0: zeros
    ("x.sum(0)", lambda x, y: x.sum(0)),
    ("x.mean(0)", lambda x, y: np.full(3, np.nan, np.float32)),
    ("torch.prod(x, 0)", lambda x, y: x.prod(0)),
    ("torch.cat([x, x + 1, torch.ones(2, 3)])", lambda x, y: np.ones((2, 3), np.float32)),
    ("torch.nn.functional.pad(y, (1, 1), value=2.0)", lambda x, y: np.full((3, 2), 2, np.float32)),
    ("torch.cumsum(x, 0)", lambda x, y: x),
    ("x.reshape(-1)", lambda x, y: x.reshape(-1)),
    ("torch.softmax(y, 1)", lambda x, y: y),
    ("torch.logsumexp(y, 1)", lambda x, y: np.full(3, -np.inf, np.float32)),
]


@pytest.mark.parametrize("call, want", EMPTY_CALLS, ids=[c for c, _ in EMPTY_CALLS])
def test_tensors_with_no_elements(call, want, sotc_bin, tmp_path, monkeypatch):
    """A tensor with no elements is computed by no kernel: what reads it and has elements
    folds (a sum over nothing is 0, a matmul over k = 0 is zeros, a concat skips it)."""
    module = tmp_path / "empty.py"
    module.write_text(f"import torch\n\n\ndef fn(x, y):\n    return {call}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("empty", None)
    with sotc.stub_missing_frameworks():
        import empty
    trace = sotc.trace(empty.fn, x="float32[0,3]", y="float32[3,0]",
                       sotc_framework="torch").save(str(tmp_path / "t.pb"))
    library = tmp_path / "t.so"
    result = subprocess.run([sotc_bin, "compile", trace, "--target", "cpu", "-o", str(library)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    x, y = np.zeros((0, 3), np.float32), np.zeros((3, 0), np.float32)
    got = sotc.load(library)(x, y)
    expected = want(x, y)
    assert np.shape(got) == expected.shape
    np.testing.assert_array_equal(got, expected)
