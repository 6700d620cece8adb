"""`sotc compile --precision bf16`: a float32 model's matrix products and convolutions read
bfloat16 operands and accumulate in float32 (oneDNN's AMX or AVX-512 BF16 kernels where the
CPU has them), as OpenVINO's bf16 inference precision and torch's CPU autocast compute; the
rest stays float32. Checked against torch in float32 on the CPU: the manifest says which steps
compute in bfloat16, and the results are within the stated bound, on the CPU's fastest path
and on the fallbacks a CPU without bfloat16 kernels takes (oneDNN limited to AVX2: the
operands widened to float32; no oneDNN: CBLAS and the columns of a convolution)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))

from test_programs_vs_framework import sotc_bin  # noqa: E402,F401

import sotc  # noqa: E402

# The bound on a result over its largest magnitude: each layer reads its operands rounded to
# bfloat16 (2^-9 relative each): about 2^-8 a layer, for models of three layers with a 16x
# margin for what sums cancel.
BOUND = 3 * 8 * 2.0 ** -7 / 4


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(64, 256), nn.Linear(256, 32)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.up(x))
        return self.down(h) + torch.softmax(x @ x.transpose(-1, -2), -1) @ x[..., :32]


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.block = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.BatchNorm2d(16),
                                   nn.ReLU(), nn.Conv2d(16, 16, 1))
        self.depthwise = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        h = torch.relu(self.stem(x))
        h = torch.relu(h + self.block(h))
        h = self.depthwise(h)
        return self.head(h.mean((2, 3)))


MODELS = {"mlp": (Mlp, (4, 24, 64)), "cnn": (Cnn, (2, 3, 16, 16))}


def _compiled(name, tmp_path, sotc_bin, precision):  # noqa: F811
    make, shape = MODELS[name]
    torch.manual_seed(0)
    model = make().eval()
    x = torch.from_numpy(np.random.default_rng(1).standard_normal(shape).astype(np.float32))
    trace = tmp_path / f"{name}.pb"
    sotc.trace(model, x).save(str(trace))
    artifact = tmp_path / f"{name}_{precision}.so"
    r = subprocess.run([sotc_bin, "compile", str(trace), "--target", "cpu", "--precision",
                        precision, "-o", str(artifact)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with torch.no_grad():
        expected = model(x).numpy()
    return artifact, x.numpy(), expected


def _steps(artifact):
    with open(str(artifact)[:-len(".so")] + ".manifest.json") as f:
        manifest = json.load(f)
    return [s for seg in manifest["segments"] for s in seg["steps"]]


def _run_in_process(artifact, x, env):
    """The artifact's result on x in a fresh process with `env` (oneDNN reads its limits
    when it loads)."""
    np.save(str(artifact) + ".x.npy", x)
    code = ("import sys, numpy as np, sotc; f = sotc.load(sys.argv[1]); "
            "np.save(sys.argv[1] + '.y.npy', f(np.load(sys.argv[1] + '.x.npy')))")
    python_path = os.pathsep.join(filter(None, [os.path.join(ROOT, "tools", "python"),
                                                os.environ.get("PYTHONPATH")]))
    r = subprocess.run([sys.executable, "-c", code, str(artifact)], capture_output=True,
                       text=True, env={**os.environ, **env, "PYTHONPATH": python_path})
    assert r.returncode == 0, r.stderr
    return np.load(str(artifact) + ".y.npy")


# The fastest path this CPU has; oneDNN limited to AVX2 (no bfloat16 kernels: the GEMMs'
# operands widened, the convolutions on oneDNN's float32-converting reorders); no oneDNN.
PATHS = {"fastest": {}, "avx2": {"DNNL_MAX_CPU_ISA": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
         "cblas": {"SOTC_CBLAS": "libscipy_openblas.so"}}


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("name", sorted(MODELS))
def test_bf16_within_bound(name, path, tmp_path, sotc_bin):  # noqa: F811
    artifact, x, expected = _compiled(name, tmp_path, sotc_bin, "bf16")
    steps = _steps(artifact)
    gemms = [s for s in steps if s["kind"] == "gemm"]
    convs = [s for s in steps if s["kind"] == "conv"]
    # bfloat16 operands, float32 products (oneDNN stores them so: no rounding after)
    assert gemms and all(s["operand_dtype"] == "bfloat16" and s["dtype"] == "float32"
                         for s in gemms)
    # every convolution but the depthwise one (memory-bound: float32)
    assert (name == "cnn") == bool(convs)
    assert all(s["compute"] == ("float32" if s.get("groups", 1) == s["c"] > 1 else "bfloat16")
               for s in convs)
    got = _run_in_process(artifact, x, PATHS[path])
    scale = float(np.abs(expected).max())
    error = float(np.abs(got - expected).max()) / scale
    assert error <= BOUND, (error, BOUND)


def test_float32_is_the_default(tmp_path, sotc_bin):  # noqa: F811
    """Without the option every step computes in float32 and the result matches torch to
    float32's rounding."""
    artifact, x, expected = _compiled("cnn", tmp_path, sotc_bin, "float32")
    steps = _steps(artifact)
    assert all(s["dtype"] == "float32" and "operand_dtype" not in s
               for s in steps if s["kind"] == "gemm")
    assert all(s["compute"] == "float32" for s in steps if s["kind"] == "conv")
    np.testing.assert_allclose(sotc.load(artifact)(x), expected, rtol=1e-4, atol=1e-5)


def test_bf16_differs_from_float32(tmp_path, sotc_bin):  # noqa: F811
    """The bfloat16 path is taken: its result is not float32's."""
    artifact, x, expected = _compiled("mlp", tmp_path, sotc_bin, "bf16")
    got = sotc.load(artifact)(x)
    assert float(np.abs(got - expected).max()) > 1e-4 * float(np.abs(expected).max())


def test_unknown_precision_is_refused(tmp_path, sotc_bin):  # noqa: F811
    r = subprocess.run([sotc_bin, "compile", "x.pb", "--target", "cpu", "--precision", "fp8",
                        "-o", str(tmp_path / "k.so")], capture_output=True, text=True)
    assert r.returncode != 0 and "--precision" in r.stderr
    assert not (tmp_path / "k.so").exists()
