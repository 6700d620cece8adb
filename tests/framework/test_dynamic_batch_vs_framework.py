"""Models traced once with a dynamic batch (`sotc.trace(model, "float32[?,3,16,16]")`) and
compiled once for the CPU: the testdata CNNs in torch and paddle, torchvision's ResNet-18 and
transformers' BERT run at every batch size asked of them and match the framework each time;
new weights reach the one artifact; the testdata transformer blocks and GPTs, whose attention
moves the batch behind the q/k/v split or the heads, too. A model whose code merges the batch
with another dimension is refused with the line that does.

Tolerance: as the models' tests (test_library_models.assert_matches).
"""

import json
import os
import subprocess
import sys

import numpy as np
import paddle
import pytest
import torch
import torchvision
import transformers

from test_library_models import assert_matches, sotc_bin, workdir  # noqa: F401

import sotc  # noqa: E402  (test_programs_vs_framework puts tools/python on the path)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "testdata", "models"))

import cnn_paddle  # noqa: E402
import cnn_torch  # noqa: E402
import gpt_paddle  # noqa: E402
import gpt_torch  # noqa: E402
import transformer_paddle  # noqa: E402
import transformer_torch  # noqa: E402


def compile_cpu(sotc_bin, trace, output):  # noqa: F811
    target = ["--gpu-arch", "sm_90"] if output.endswith(".fatbin") else ["--target", "cpu"]
    result = subprocess.run([sotc_bin, "compile", trace, "-o", output] + target,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr.strip().splitlines()[-1:]
    subprocess.run([sotc_bin, "inspect", output], check=True, capture_output=True)
    return sotc.load(output, device="emulator" if output.endswith(".fatbin") else None)


def test_torch_cnn_at_every_batch(sotc_bin, workdir):  # noqa: F811
    model = cnn_torch.make_model()
    trace = sotc.trace(model, "float32[?,3,16,16]").save(str(workdir / "cnn.pb"))
    f = compile_cpu(sotc_bin, trace, str(workdir / "cnn.so"))
    emulated = compile_cpu(sotc_bin, trace, str(workdir / "cnn.fatbin"))
    rng = np.random.default_rng(0)
    for n in (1, 7, 64, 1000, 3):
        x = torch.from_numpy(rng.standard_normal((n, 3, 16, 16), np.float32))
        with torch.no_grad():
            want = model(x).numpy()
        assert_matches([np.asarray(f(x))], [want], f"batch {n}")
        if n < 64:
            assert_matches([np.asarray(emulated(x.numpy()))], [want], f"CUDA emulator, batch {n}")
    # New weights: the batch norms are folded again, once for every batch size.
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(1.5)
    f.set_weights(model.state_dict())
    for n in (2, 64):
        x = torch.from_numpy(rng.standard_normal((n, 3, 16, 16), np.float32))
        with torch.no_grad():
            assert_matches([np.asarray(f(x))], [model(x).numpy()], f"rebound, batch {n}")


def test_paddle_cnn_at_every_batch(sotc_bin, workdir):  # noqa: F811
    model = cnn_paddle.make_model()
    trace = sotc.trace(model, "float32[?,3,16,16]").save(str(workdir / "cnn_paddle.pb"))
    f = compile_cpu(sotc_bin, trace, str(workdir / "cnn_paddle.so"))
    rng = np.random.default_rng(1)
    for n in (1, 7, 64):
        x = rng.standard_normal((n, 3, 16, 16), np.float32)
        with paddle.no_grad():
            want = model(paddle.to_tensor(x)).numpy()
        assert_matches([np.asarray(f(x))], [want], f"batch {n}")


def test_torchvision_resnet18_at_every_batch(sotc_bin, workdir):  # noqa: F811
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).eval()
    trace = sotc.trace(model, "float32[?,3,32,32]").save(str(workdir / "resnet18.pb"))
    f = compile_cpu(sotc_bin, trace, str(workdir / "resnet18.so"))
    rng = np.random.default_rng(2)
    for n in (1, 7, 64):
        x = torch.from_numpy(rng.standard_normal((n, 3, 32, 32), np.float32))
        with torch.no_grad():
            assert_matches([np.asarray(f(x))], [model(x).numpy()], f"batch {n}")


def test_transformers_bert_at_every_batch(sotc_bin, workdir):  # noqa: F811
    torch.manual_seed(0)
    model = transformers.BertModel(transformers.BertConfig(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
        vocab_size=100, max_position_embeddings=64)).eval()
    trace = sotc.trace(model, "int64[?,16]").save(str(workdir / "bert.pb"))
    f = compile_cpu(sotc_bin, trace, str(workdir / "bert.so"))
    emulated = compile_cpu(sotc_bin, trace, str(workdir / "bert.fatbin"))
    rng = np.random.default_rng(3)
    for n in (1, 3, 17):
        ids = torch.from_numpy(rng.integers(0, 100, (n, 16)))
        with torch.no_grad():
            want = model(ids)
        wanted = [want.last_hidden_state.numpy(), want.pooler_output.numpy()]
        got = f(ids)
        assert_matches([got.last_hidden_state.numpy(), got.pooler_output.numpy()], wanted,
                       f"batch {n}")
        if n < 17:
            got = emulated(ids.numpy())
            assert_matches([np.asarray(got.last_hidden_state), np.asarray(got.pooler_output)],
                           wanted, f"CUDA emulator, batch {n}")


def test_attention_that_moves_the_batch(sotc_bin, workdir):  # noqa: F811
    """The testdata transformer blocks permute q/k/v as [3, B, heads, T, d] (the batch behind
    the split, as nanoGPT and timm do) and the GPTs as [B, heads, T, d]: all four at every
    batch, the torch block on the CUDA emulator too."""
    rng = np.random.default_rng(4)
    block = transformer_torch.make_model().eval()
    trace = sotc.trace(block, "float32[?,16,64]").save(str(workdir / "block.pb"))
    f = compile_cpu(sotc_bin, trace, str(workdir / "block.so"))
    emulated = compile_cpu(sotc_bin, trace, str(workdir / "block.fatbin"))
    for n in (1, 7, 64, 3):
        x = torch.from_numpy(rng.standard_normal((n, 16, 64), np.float32))
        with torch.no_grad():
            want = block(x).numpy()
        assert_matches([np.asarray(f(x))], [want], f"torch block, batch {n}")
        if n < 64:
            assert_matches([np.asarray(emulated(x.numpy()))], [want],
                           f"torch block on the CUDA emulator, batch {n}")
    block = transformer_paddle.make_model()
    f = compile_cpu(sotc_bin, sotc.trace(block, "float32[?,16,64]").save(
        str(workdir / "block_paddle.pb")), str(workdir / "block_paddle.so"))
    for n in (1, 7, 64):
        x = rng.standard_normal((n, 16, 64), np.float32)
        assert_matches([np.asarray(f(x))], [block(paddle.to_tensor(x)).numpy()],
                       f"paddle block, batch {n}")
    for name, module, run in (("gpt", gpt_torch, lambda m, ids: m(torch.from_numpy(ids))),
                              ("gpt_paddle", gpt_paddle,
                               lambda m, ids: m(paddle.to_tensor(ids)))):
        model = module.make_model()
        f = compile_cpu(sotc_bin, sotc.trace(model, "int64[?,12]").save(
            str(workdir / f"{name}.pb")), str(workdir / f"{name}.so"))
        for n in (1, 5, 33):
            ids = rng.integers(0, module.VOCAB, (n, 12))
            with torch.no_grad():
                want = run(model, ids).numpy()
            assert_matches([np.asarray(f(ids))], [want], f"{name}, batch {n}")


def test_transformers_llama_at_every_batch(sotc_bin, workdir):  # noqa: F811
    """LLaMA's mask indexes its packed-sequence ids per batch row (`m[batch_arange, q_idx]`,
    the batch's own coordinates), and decides `batch_size != position_ids.shape[0]` (a guard
    `!= 1`): a bundle with a one-row trace first serves every batch from 1 up."""
    torch.manual_seed(0)
    model = transformers.LlamaModel(transformers.LlamaConfig(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, vocab_size=100, max_position_embeddings=64,
        use_cache=False)).eval()
    one = sotc.trace(model, "int64[1,16]").save(str(workdir / "llama1.pb"))
    rows = sotc.trace(model, "int64[?,16]").save(str(workdir / "llama.pb"))
    result = subprocess.run([sotc_bin, "compile", one, rows, "--target", "cpu", "-o",
                             str(workdir / "llama.so")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    f = sotc.load(str(workdir / "llama.so"))
    rng = np.random.default_rng(5)
    for n in (1, 2, 7, 33):
        ids = torch.from_numpy(rng.integers(0, 100, (n, 16)))
        with torch.no_grad():
            want = model(ids).last_hidden_state.numpy()
        assert_matches([np.asarray(f(ids).last_hidden_state)], [want], f"batch {n}")
    manifest = json.loads((workdir / "llama.manifest.json").read_text())
    guards = [g for g in manifest["entries"][1]["guards"] if g["kind"] == "batch"]
    assert [g["expected"] for g in guards] == ["!= 1"]
    assert "masking_utils.py" in guards[0]["source"]


SMALL = dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
             vocab_size=100, max_position_embeddings=64)
LIBRARY_MODELS = {
    "distilbert": lambda: transformers.DistilBertModel(transformers.DistilBertConfig(
        n_layers=2, dim=64, n_heads=4, hidden_dim=128, vocab_size=100,
        max_position_embeddings=64)),
    "qwen2": lambda: transformers.Qwen2Model(transformers.Qwen2Config(
        **SMALL, num_key_value_heads=2, use_cache=False)),
    "mistral": lambda: transformers.MistralModel(transformers.MistralConfig(
        **SMALL, num_key_value_heads=2, use_cache=False)),
    "roberta": lambda: transformers.RobertaModel(transformers.RobertaConfig(**SMALL)),
    "phi": lambda: transformers.PhiModel(transformers.PhiConfig(**SMALL, use_cache=False)),
    "gpt2": lambda: transformers.GPT2Model(transformers.GPT2Config(
        n_layer=2, n_embd=64, n_head=4, vocab_size=100, n_positions=64, use_cache=False)),
    "gpt_neox": lambda: transformers.GPTNeoXModel(transformers.GPTNeoXConfig(
        **SMALL, use_cache=False)),
    "vit": lambda: transformers.ViTModel(transformers.ViTConfig(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
        image_size=32, patch_size=8)),
}


@pytest.mark.parametrize("name", sorted(LIBRARY_MODELS))
def test_transformers_models_at_every_batch(sotc_bin, workdir, name):  # noqa: F811
    """More of transformers' models, from their configs, traced once with a dynamic batch:
    their attention splits heads with the batch first or moves it behind them; GPT-2's Conv1D
    flattens the tokens with their batch around its GEMMs."""
    torch.manual_seed(0)
    model = LIBRARY_MODELS[name]().eval()
    spec = "float32[?,3,32,32]" if name == "vit" else "int64[?,16]"
    f = compile_cpu(sotc_bin, sotc.trace(model, spec).save(str(workdir / f"{name}.pb")),
                    str(workdir / f"{name}.so"))
    rng = np.random.default_rng(6)
    for n in (2, 5, 17):
        x = torch.from_numpy(rng.standard_normal((n, 3, 32, 32), np.float32) if name == "vit"
                             else rng.integers(0, 100, (n, 16)))
        with torch.no_grad():
            want = model(x).last_hidden_state.numpy()
        assert_matches([np.asarray(f(x).last_hidden_state)], [want], f"{name}, batch {n}")


def test_rows_flattened_with_their_batch_are_returned_so(sotc_bin, workdir):  # noqa: F811
    """Rows of tokens flattened with their batch (`x.view(-1, C)`: 16 * B rows) and returned
    so (docs/dynamic-shapes.md#merged-sizes): a result of 16*s0 rows at every batch, on the
    CPU and the CUDA emulator."""
    class Flattened(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x.view(-1, 64)).sum(-1)
    model = Flattened().eval()
    trace = sotc.trace(model, "float32[?,16,64]").save(str(workdir / "flat.pb"))
    f = compile_cpu(sotc_bin, trace, str(workdir / "flat.so"))
    emulated = compile_cpu(sotc_bin, trace, str(workdir / "flat.fatbin"))
    rng = np.random.default_rng(4)
    for n in (1, 3, 7):
        x = torch.from_numpy(rng.standard_normal((n, 16, 64), np.float32))
        with torch.no_grad():
            want = model(x).numpy()
        got = np.asarray(f(x))
        assert got.shape == (16 * n,)
        assert_matches([got], [want], f"batch {n}")
        assert_matches([np.asarray(emulated(x.numpy()))], [want], f"CUDA emulator, batch {n}")
