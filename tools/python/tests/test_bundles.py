"""Artifacts of several traces of one function (`sotc compile a.pb b.pb -o k.so`): a call
takes the first entry whose guards hold, in order; numbers against numpy at every traced
shape; a call no entry matches lists every entry's mismatches; the guards only the caller can
check (module globals) choose among entries too; a model's entries share its weights."""

import json
import subprocess
import sys

import numpy as np
import pytest

import sotc

LAYER_NORM = """
def fn(x, w, b):
    m = x.mean(-1, keepdim=True)
    v = ((x - m) ** 2).mean(-1, keepdim=True)
    return (x - m) / torch.sqrt(v + 1e-5) * w + b
"""

GLOBAL_SCALE = """
SCALE = 2.0

def fn(x):
    return torch.tanh(x) * SCALE
"""


def _module(tmp_path, monkeypatch, name, source):
    (tmp_path / f"{name}.py").write_text("import torch\n" + source)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)
    with sotc.stub_missing_frameworks():
        return __import__(name)


def _bundle(sotc_bin, tmp_path, traces, name="k"):
    paths = [t.save(str(tmp_path / f"{name}{i}.pb")) for i, t in enumerate(traces)]
    library = tmp_path / f"{name}.so"
    result = subprocess.run([sotc_bin, "compile", *paths, "--target", "cpu", "-o", str(library)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return library


def _layer_norm(x, w, b):
    m = x.mean(-1, keepdims=True)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5) * w + b


def test_each_batch_runs_its_own_entry(sotc_bin, tmp_path, monkeypatch):
    module = _module(tmp_path, monkeypatch, "bundle_layer_norm", LAYER_NORM)
    batches = [1, 7, 64, 1000]
    traces = [sotc.trace(module.fn, f"float32[{n},96]", "float32[96]", "float32[96]")
              for n in batches]
    library = _bundle(sotc_bin, tmp_path, traces)
    manifest = json.loads((tmp_path / "k.manifest.json").read_text())
    assert [e["inputs"][0]["shape"] for e in manifest["entries"]] == [[n, 96] for n in batches]
    f = sotc.load(library)
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal(96, np.float32), rng.standard_normal(96, np.float32)
    for n in batches + [7, 1]:  # back to an earlier entry too
        x = rng.standard_normal((n, 96), np.float32)
        np.testing.assert_allclose(f(x, w, b), _layer_norm(x, w, b), rtol=1e-4, atol=1e-4)


def test_a_call_no_entry_matches_lists_every_entry(sotc_bin, tmp_path, monkeypatch):
    module = _module(tmp_path, monkeypatch, "bundle_miss", LAYER_NORM)
    traces = [sotc.trace(module.fn, f"float32[{n},8]", "float32[8]", "float32[8]")
              for n in (2, 4)]
    f = sotc.load(_bundle(sotc_bin, tmp_path, traces))
    x, w = np.zeros((3, 8), np.float32), np.ones(8, np.float32)
    with pytest.raises(sotc.GuardError) as e:
        f(x, w, w)
    assert e.value.code == "E8004"
    assert [(m["entry"], m["parameter"], m["compiled_for"], m["got"])
            for m in e.value.mismatches] == [(0, "x", "float32[2, 8]", "float32[3, 8]"),
                                             (1, "x", "float32[4, 8]", "float32[3, 8]")]
    assert "entry 0 (k0.pb)" in str(e.value) and "entry 1 (k1.pb)" in str(e.value)
    assert str(e.value).splitlines()[1].split() == ["entry", "input", "compiled", "for", "got",
                                                    "guard"]
    # With a fallback the original function runs instead.
    fallback = sotc.load(tmp_path / "k.so", fallback=lambda x, w, b: "eager")
    assert fallback(x, w, w) == "eager"


def test_the_callers_guards_choose_among_entries(sotc_bin, tmp_path, monkeypatch):
    """Entries traced with different values of a module global: the binding checks the
    global's guards per entry and lets the runtime take only those whose guards hold."""
    module = _module(tmp_path, monkeypatch, "bundle_global", GLOBAL_SCALE)
    traces = []
    for scale in (2.0, 3.0):
        module.SCALE = scale
        traces.append(sotc.trace(module.fn, "float32[4,4]"))
    f = sotc.load(_bundle(sotc_bin, tmp_path, traces), globals=vars(module))
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
    for scale in (3.0, 2.0, 3.0):
        module.SCALE = scale
        np.testing.assert_allclose(f(x), np.tanh(x) * scale, rtol=1e-5, atol=1e-6)
    module.SCALE = 5.0
    with pytest.raises(sotc.GuardError) as e:
        f(x)
    assert [(m["entry"], m["compiled_for"], m["got"]) for m in e.value.mismatches] == [
        (0, "2.0", "5.0"), (1, "3.0", "5.0")]


def test_traces_of_another_function_are_refused(sotc_bin, tmp_path, monkeypatch):
    module = _module(tmp_path, monkeypatch, "bundle_two", LAYER_NORM + "\n\ndef g(x):\n"
                     "    return x * 2\n")
    a = sotc.trace(module.fn, "float32[2,8]", "float32[8]", "float32[8]").save(
        str(tmp_path / "a.pb"))
    b = sotc.trace(module.g, "float32[2,8]").save(str(tmp_path / "b.pb"))
    result = subprocess.run([sotc_bin, "compile", a, b, "--target", "cpu", "-o",
                             str(tmp_path / "k.so")], capture_output=True, text=True)
    assert result.returncode != 0
    assert "error E9011" in result.stderr and "traces g(x)" in result.stderr
    assert not list(tmp_path.glob("k.*"))
