"""Artifacts of several traces of one model (`sotc compile a.pb b.pb -o k.so`): a torch CNN
traced at several batch sizes and a transformers GPT-2 at several sequence lengths, each
compiled once for the CPU and once for CUDA; every call takes the entry of its shape and
matches the model in torch (CPU, and the CUDA emulator), and new weights reach every entry.

Tolerance: as the models' tests (test_library_models.assert_matches).
"""

import os
import subprocess
import sys

import numpy as np
import torch
import transformers

from test_library_models import assert_matches, sotc_bin, workdir  # noqa: F401

import sotc  # noqa: E402  (test_programs_vs_framework puts tools/python on the path)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "testdata", "models"))

import cnn_torch  # noqa: E402


def bundle(sotc_bin, traces, output, target):  # noqa: F811
    arch = ["--gpu-arch", "sm_90"] if target == "cuda" else []
    result = subprocess.run([sotc_bin, "compile", *traces, "--target", target, "-o", output]
                            + arch, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr.strip().splitlines()[-1:]
    subprocess.run([sotc_bin, "inspect", output], check=True, capture_output=True)
    return output


def test_cnn_at_every_traced_batch(sotc_bin, workdir):  # noqa: F811
    model = cnn_torch.make_model()
    batches = (1, 7, 64)
    traces = [sotc.trace(model, torch.zeros(n, 3, 16, 16)).save(str(workdir / f"cnn{n}.pb"))
              for n in batches]
    cpu = sotc.load(bundle(sotc_bin, traces, str(workdir / "cnn.so"), "cpu"))
    emulated = sotc.load(bundle(sotc_bin, traces[:2], str(workdir / "cnn.fatbin"), "cuda"),
                         device="emulator")
    rng = np.random.default_rng(0)
    for n in batches + (1,):
        x = torch.from_numpy(rng.standard_normal((n, 3, 16, 16), np.float32))
        with torch.no_grad():
            want = model(x).numpy()
        assert_matches([np.asarray(cpu(x))], [want], f"CPU, batch {n}")
        if n < 64:
            assert_matches([np.asarray(emulated(x.numpy()))], [want], f"CUDA emulator, batch {n}")
    # New weights: every entry prepares them again (each folds the batch norms its own way).
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(1.5)
    cpu.set_weights(model.state_dict())
    for n in batches:
        x = torch.from_numpy(rng.standard_normal((n, 3, 16, 16), np.float32))
        with torch.no_grad():
            assert_matches([np.asarray(cpu(x))], [model(x).numpy()], f"rebound, batch {n}")


def test_gpt2_at_every_traced_sequence_length(sotc_bin, workdir):  # noqa: F811
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(transformers.GPT2Config(
        n_layer=2, n_embd=64, n_head=4, vocab_size=100, n_positions=32, use_cache=False)).eval()
    lengths = (8, 16, 32)
    traces = [sotc.trace(model, torch.zeros(2, n, dtype=torch.int64)).save(
        str(workdir / f"gpt2_{n}.pb")) for n in lengths]
    cpu = sotc.load(bundle(sotc_bin, traces, str(workdir / "gpt2.so"), "cpu"))
    emulated = sotc.load(bundle(sotc_bin, traces[:1], str(workdir / "gpt2.fatbin"), "cuda"),
                         device="emulator")
    rng = np.random.default_rng(1)
    for n in lengths:
        ids = torch.from_numpy(rng.integers(0, 100, (2, n)))
        with torch.no_grad():
            want = model(ids).logits.numpy()
        assert_matches([cpu(ids).logits.numpy()], [want], f"CPU, length {n}")
        if n == 8:
            assert_matches([np.asarray(emulated(ids.numpy()).logits)], [want], "CUDA emulator")
