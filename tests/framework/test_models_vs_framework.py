"""Every testdata model end to end against its framework: traced from its class and seeded
weights (testdata/models/*.py) -> `sotc compile --target cpu` (the weights go beside the
library) -> `sotc.load` -> called on numpy inputs, compared with the model's eval-mode output
in paddle or torch on the CPU.

Tolerance (float32): |e - r| <= 1e-5 * |r| + 1e-5 * max|R|, the issue's relative 1e-5 with
the same scale term as the programs' test (test_programs_vs_framework.py explains it): a
model's GEMMs and LayerNorms sum hundreds of products in another order than the framework's
kernels, which moves elements near zero by a few ulp of the operands.
"""

import importlib
import os
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "testdata"))

import make_model_traces  # noqa: E402
from test_programs_vs_framework import DEVICES, assert_same, sotc_bin  # noqa: E402,F401

import sotc  # noqa: E402  (test_programs_vs_framework puts tools/python on the path)
from sotc._specs import dtype_name  # noqa: E402
from sotc._tracer import _layer_framework  # noqa: E402

RTOL = 1e-5
VARIANTS = ("normal", "positive", "negative")


def framework(model):
    """The model's framework module (torch or paddle)."""
    return importlib.import_module(_layer_framework(model))


# The models of one input, each called once here; those of more (kv_cache_torch's tokens and
# positions, over calls that keep state) have tests of their own (test_model_state.py).
ONE_INPUT_MODELS = [name for name in make_model_traces.models()
                    if len(make_model_traces.header(name)[1]) == 1]


def run_model(model, x):
    """The model's output for the numpy input `x`, as numpy, in its own framework."""
    fw = framework(model)
    with fw.no_grad():
        tensor = fw.from_numpy(x.copy()) if fw.__name__ == "torch" else fw.to_tensor(x.copy())
        return model(tensor).numpy()


def example(spec, rng, variant):
    """An input of `spec` (shape, dtype): floats normal, or large and of one sign; token ids
    (integer inputs) anywhere in 0..31, or only low, or only high ones."""
    shape, dtype = spec
    if np.issubdtype(dtype, np.integer):
        low, high = {"normal": (0, 32), "positive": (16, 32), "negative": (0, 8)}[variant]
        return rng.integers(low, high, shape).astype(dtype)
    x = rng.standard_normal(shape)
    if variant != "normal":
        x = np.abs(x) * 8 + 0.5
        x = -x if variant == "negative" else x
    return x.astype(np.float32)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory, sotc_bin):  # noqa: F811
    """(name, device) -> (the model, its input's (shape, dtype), the compiled artifact): for
    the CPU (device "cpu") or for CUDA, run on the CUDA emulator (device "emulator")."""
    out, cache = tmp_path_factory.mktemp("models"), {}

    def get(name, device="cpu"):
        if (name, device) not in cache:
            trace_path = make_model_traces.trace_model(name, str(out))
            target = "cpu" if device == "cpu" else "cuda"
            artifact = out / (name + (".so" if target == "cpu" else ".fatbin"))
            subprocess.run([sotc_bin, "compile", trace_path, "--target", target, "-o",
                            str(artifact)], check=True, capture_output=True, text=True)
            spec = sotc.parse_tensor_spec(make_model_traces.header(name)[1][0].partition("=")[2])
            cache[name, device] = (make_model_traces.make_model(name),
                                   (tuple(d.size for d in spec.dims),
                                    np.dtype(dtype_name(spec.dtype))),
                                   artifact)
        return cache[name, device]
    return get


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", ONE_INPUT_MODELS)
def test_model_matches_framework(name, variant, device, compiled):
    model, shape, artifact = compiled(name, device)
    x = example(shape, np.random.default_rng(sum(map(ord, name + variant))), variant)
    assert_same(sotc.load(artifact, device=device)(x), run_model(model, x), RTOL)


@pytest.mark.parametrize("name", ONE_INPUT_MODELS)
def test_fresh_weights_bind_without_recompiling(name, compiled):
    """sotc.load(path, params=state_dict): another model of the same shapes, same artifact."""
    model, shape, library = compiled(name)
    other = changed_copy(name)
    x = example(shape, np.random.default_rng(7), "normal")
    got = sotc.load(library, params=other.state_dict())(x)
    assert_same(got, run_model(other, x), RTOL)
    assert np.abs(got - run_model(model, x)).max() > 1e-3  # the weights did change
    # A state dict that leaves a weight out: named, unless strict=False keeps the compiled one.
    partial = dict(other.state_dict())
    left_out = [k for k in partial if k in sotc.load(library).weights][-1]
    del partial[left_out]
    with pytest.raises(KeyError, match=f"the state dict gives no {re.escape(left_out)}"):
        sotc.load(library, params=partial)
    sotc.load(library, params=partial, strict=False)(x)


def changed_copy(name):
    """The model `name` with other weights of the same shapes: parameters and float buffers
    (batch norms' running statistics) scaled."""
    other = make_model_traces.make_model(name)
    with framework(other).no_grad():
        for t, factor in [(p, 0.8) for p in other.parameters()] + \
                         [(b, 1.5) for b in other.buffers() if "float" in str(b.dtype)]:
            t.set_value(t * factor) if hasattr(t, "set_value") else t.mul_(factor)
    return other


@pytest.mark.parametrize("name", ["cnn_torch", "cnn_paddle"])
def test_weights_rebound_after_a_call_are_prepared_again(name, compiled):
    """A batch norm folded into its conv is prepared from the weights once; rebinding them
    between calls (Compiled.set_weights) prepares them again before the next call."""
    model, shape, library = compiled(name)
    x = example(shape, np.random.default_rng(8), "normal")
    f = sotc.load(library)
    assert_same(f(x), run_model(model, x), RTOL)
    other = changed_copy(name)
    f.set_weights(other.state_dict())
    assert_same(f(x), run_model(other, x), RTOL)
    f.set_weights(model.state_dict())
    assert_same(f(x), run_model(model, x), RTOL)


def test_committed_model_traces_are_current():
    result = subprocess.run([sys.executable, os.path.join(ROOT, "testdata",
                                                          "make_model_traces.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
