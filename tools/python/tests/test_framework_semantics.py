"""Tensor methods mean what they mean in the program's framework, whatever the function's body
names: the tracer records the framework (the inputs' tensors, the model, the one framework
the code's module imports, or sotc_framework=/--framework) and the compiler dispatches methods
and prints guards by it. Tensors of no framework with nothing to decide are E1016."""

import json
import subprocess
import sys

import numpy as np
import pytest

import sotc


def _module(tmp_path, monkeypatch, name, imports, body):
    (tmp_path / f"{name}.py").write_text(imports + "\n\n\ndef fn(x):\n    return " + body + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)
    with sotc.stub_missing_frameworks():
        return __import__(name)


def _compile(sotc_bin, tmp_path, traced):
    path = traced.save(str(tmp_path / "t.pb"))
    library = tmp_path / "t.so"
    result = subprocess.run([sotc_bin, "compile", path, "--target", "cpu", "-o", str(library)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return library


# (method call on x [2, 3] whose body names no framework, what torch computes)
TORCH_METHODS = [
    ("x.mean(dim=-1, keepdim=True)", lambda x: x.mean(-1, keepdims=True)),
    ("x.view(-1)", lambda x: x.reshape(-1)),
    ("x.sum(dim=0)", lambda x: x.sum(0)),
    ("x.transpose(0, 1)", lambda x: x.T),
]


@pytest.mark.parametrize("body, want", TORCH_METHODS, ids=[b for b, _ in TORCH_METHODS])
def test_a_torch_module_gets_torch_methods(body, want, sotc_bin, tmp_path, monkeypatch):
    module = _module(tmp_path, monkeypatch, "torch_methods", "import torch", body)
    traced = sotc.trace(module.fn, x="float32[2,3]")
    assert traced.proto.framework == "torch"
    library = _compile(sotc_bin, tmp_path, traced)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(sotc.load(library)(x), want(x), rtol=1e-6)
    guards = json.loads((tmp_path / "t.manifest.json").read_text())["entries"][0]["guards"]
    assert "torch.float32" in guards[0]["expected"]


def test_a_paddle_module_keeps_paddle_methods(sotc_bin, tmp_path, monkeypatch):
    module = _module(tmp_path, monkeypatch, "paddle_methods", "import paddle",
                     "x.mean(axis=-1, keepdim=True)")
    traced = sotc.trace(module.fn, x="float32[2,3]")
    assert traced.proto.framework == "paddle"
    library = _compile(sotc_bin, tmp_path, traced)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(sotc.load(library)(x), x.mean(-1, keepdims=True), rtol=1e-6)


def test_numpy_inputs_take_the_framework_the_module_imports(tmp_path, monkeypatch):
    module = _module(tmp_path, monkeypatch, "numpy_torch", "import torch", "x.view(-1)")
    assert sotc.trace(module.fn, np.zeros((2, 3), np.float32)).proto.framework == "torch"


@pytest.mark.parametrize("imports, named, inputs", [
    ("import math", "neither torch nor paddle", np.zeros((2, 3), np.float32)),
    ("import paddle\nimport torch", "paddle and torch", "float32[2,3]")])
def test_undecidable_framework_is_e1016(imports, named, inputs, sotc_bin, tmp_path, monkeypatch):
    module = _module(tmp_path, monkeypatch, "undecided", imports, "x.sum()")
    with pytest.raises(sotc.TraceError, match=r"^E1016: cannot tell whether the program is "
                       r"torch or paddle: .* import " + named + r"; pass sotc_framework="):
        sotc.trace(module.fn, x=inputs)
    traced = sotc.trace(module.fn, x=inputs, sotc_framework="torch")
    assert traced.proto.framework == "torch"
    _compile(sotc_bin, tmp_path, traced)
    with pytest.raises(sotc.TraceError, match="^E1016: unknown framework 'jax'"):
        sotc.trace(module.fn, x=inputs, sotc_framework="jax")


def test_specs_with_no_framework_imported_keep_the_default(tmp_path, monkeypatch):
    module = _module(tmp_path, monkeypatch, "specs_only", "import math", "x * 2")
    assert sotc.trace(module.fn, x="float32[4]").proto.framework == ""


def test_programs_without_tensor_inputs_need_no_framework(tmp_path, monkeypatch):
    module = _module(tmp_path, monkeypatch, "no_tensors", "import math", "x + 1")
    assert sotc.trace(module.fn, 3).proto.framework == ""


def test_the_command_line_takes_a_framework(tmp_path, monkeypatch):
    module = _module(tmp_path, monkeypatch, "cli_case", "import paddle\nimport torch", "x.sum()")
    out = tmp_path / "cli.pb"
    run = [sys.executable, "-m", "sotc", "trace", f"{module.__file__}:fn", "--input",
           "x=float32[4]", "-o", str(out)]
    env = {"PYTHONPATH": sotc.__path__[0] + "/.."}
    result = subprocess.run(run, capture_output=True, text=True, env=env)
    assert result.returncode == 2 and "sotc trace: error: E1016: " in result.stderr
    result = subprocess.run(run + ["--framework", "torch"], capture_output=True, text=True,
                            env=env)
    assert result.returncode == 0, result.stderr
    assert sotc.load(str(out)).proto.framework == "torch"
