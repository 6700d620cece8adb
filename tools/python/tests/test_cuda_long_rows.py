"""CUDA blocks keep what a later statement of theirs reads (a softmax's exponentials, a layer
norm's centred row) in shared memory, 48 KiB. Longer rows (a softmax over GPT-2's 50,257
logits: 201 KB a row) go to global memory: the kernel gets one more output, which the arena
places and nothing reads (sotc-mapexpr-spill-rows). Run on the CUDA emulator against numpy."""

import json
import subprocess

import numpy as np
import pytest

import sotc
from test_dynamic_batch import _compiled, _layer_norm, _softmax, program_module

PROGRAMS = """
def softmax(x):
    return torch.softmax(x, -1)

def layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b)
"""


@pytest.fixture()
def programs(tmp_path, monkeypatch):
    return program_module(tmp_path, monkeypatch, "row_programs", PROGRAMS)


def _fatbin(sotc_bin, tmp_path, trace, name):
    path = tmp_path / f"{name}.fatbin"
    subprocess.run([sotc_bin, "compile", trace.save(str(tmp_path / f"{name}.pb")),
                    "--gpu-arch", "sm_90", "-o", str(path)], check=True)
    steps = json.loads((tmp_path / f"{name}.cuda.manifest.json").read_text())["segments"][0]
    return sotc.load(path, device="emulator"), steps


def test_a_vocabulary_softmax_keeps_its_row_in_global_memory(sotc_bin, tmp_path, programs):
    f, segment = _fatbin(sotc_bin, tmp_path, sotc.trace(programs.softmax, "float32[4,50257]"),
                         "vocab")
    (kernel,) = segment["steps"]
    assert len(kernel["outputs"]) == 2 and kernel["shared_bytes"] < 1024
    (spilled,) = segment["arena"]["buffers"]
    assert spilled["name"] == kernel["outputs"][1] and spilled["bytes"] == 4 * 50257 * 4
    x = np.random.default_rng(0).standard_normal((4, 50257), np.float32) * 4
    np.testing.assert_allclose(f(x), _softmax(x), rtol=1e-5, atol=1e-9)
    inspect = subprocess.run([sotc_bin, "inspect", str(tmp_path / "vocab.fatbin")], check=True,
                             capture_output=True, text=True).stdout
    assert f"arena +0  {spilled['name']}: float32[4, 50257], 804112 bytes, steps 0..0" in inspect


def test_a_wide_layer_norm_and_a_row_that_fits(sotc_bin, tmp_path, programs):
    rng = np.random.default_rng(1)
    wide, segment = _fatbin(sotc_bin, tmp_path, sotc.trace(
        programs.layer_norm, "float32[3,20000]", "float32[20000]", "float32[20000]"), "ln")
    assert len(segment["steps"][0]["outputs"]) == 2  # the centred row, 80 KB
    x = rng.standard_normal((3, 20000), np.float32)
    w, b = rng.standard_normal(20000, np.float32), rng.standard_normal(20000, np.float32)
    np.testing.assert_allclose(wide(x, w, b), _layer_norm(x, w, b), rtol=1e-4, atol=1e-4)
    # 8192 floats a row (32 KiB) stay in shared memory: one output, nothing in the arena.
    fits, segment = _fatbin(sotc_bin, tmp_path, sotc.trace(programs.softmax, "float32[2,8192]"),
                            "fits")
    assert len(segment["steps"][0]["outputs"]) == 1 and not segment["arena"]["buffers"]
    x = rng.standard_normal((2, 8192), np.float32)
    np.testing.assert_allclose(fits(x), _softmax(x), rtol=1e-5, atol=1e-9)


def test_wide_rows_of_a_dynamic_batch(sotc_bin, tmp_path, programs):
    """A layer norm over 20,000 columns of a dynamic batch: on CUDA its centred rows, 80 KB a
    block, are an output of the kernel of the call's rows (the arena places it per call); on
    the CPU a scratch buffer the kernel allocates at the call's rows (past the compiler's
    stand-in for s0, 4099, here)."""
    trace = sotc.trace(programs.layer_norm, "float32[?,20000]", "float32[20000]",
                       "float32[20000]")
    f, segment = _fatbin(sotc_bin, tmp_path, trace, "lnb")
    (kernel,) = segment["steps"]
    assert kernel["grid"] == "s0" and len(kernel["outputs"]) == 2
    cpu = _compiled(sotc_bin, tmp_path, trace, "lnb_cpu")
    rng = np.random.default_rng(2)
    w, b = rng.standard_normal(20000, np.float32), rng.standard_normal(20000, np.float32)
    for n in (1, 3, 4100):
        x = rng.standard_normal((n, 20000), np.float32)
        np.testing.assert_allclose(cpu(x, w, b), _layer_norm(x, w, b), rtol=1e-4, atol=1e-4)
        if n < 10:
            np.testing.assert_allclose(f(x, w, b), _layer_norm(x, w, b), rtol=1e-4, atol=1e-4)
