"""Hugging Face transformers' language models, as a user gets them from the library: built from
tiny configs with random weights (nothing is downloaded), traced from the model object with
`input_ids` and, for half of the cases, a padding `attention_mask` by keyword, compiled for the
CPU, run through sotc.load and compared with `model(...)` in eval mode field by field of its
ModelOutput; compiled for CUDA (the fatbin read by `sotc inspect`) and run on the CUDA emulator.

Nothing here knows a model by name beyond the config that builds it: the Auto classes pick
the model class, and every output field the library returns is compared. Both attention
implementations the library runs on the CPU (`sdpa`, `eager`) are traced.

Tolerance: |sotc - transformers| <= 1e-4 * max|transformers| per field (the issue's).
"""

import subprocess

import numpy as np
import pytest
import torch
import transformers

from test_library_models import (assert_matches, compile_model, launched_threads,  # noqa: F401
                                 randomize_constant_weights, sotc_bin, workdir)

import sotc  # noqa: E402  (test_programs_vs_framework puts tools/python on the path)

BATCH, LENGTH, VOCAB = 2, 16, 100
CI_EMULATED_THREADS = 16_000_000

# (what builds the model from its config, config): two layers, 64 wide, 4 heads; LLaMA with 2
# key/value heads (grouped-query attention); Falcon with one (multi-query attention, rotary
# tables broadcast to one key head); T5's encoder stack alone.
CONFIGS = {
    "gpt2": (transformers.AutoModelForCausalLM.from_config, lambda: transformers.GPT2Config(
        n_layer=2, n_embd=64, n_head=4, vocab_size=VOCAB, n_positions=32, use_cache=False)),
    "bert": (transformers.AutoModel.from_config, lambda: transformers.BertConfig(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
        vocab_size=VOCAB, max_position_embeddings=32)),
    "llama": (transformers.AutoModelForCausalLM.from_config, lambda: transformers.LlamaConfig(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, vocab_size=VOCAB, max_position_embeddings=32, use_cache=False)),
    "falcon": (transformers.AutoModel.from_config, lambda: transformers.FalconConfig(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, vocab_size=VOCAB,
        multi_query=True, new_decoder_architecture=False, use_cache=False)),
    "t5-encoder": (transformers.T5EncoderModel, lambda: transformers.T5Config(
        num_layers=2, d_model=64, num_heads=4, d_kv=16, d_ff=128, vocab_size=VOCAB)),
}
CASES = [(name, attention, mask) for name in CONFIGS for attention in ("sdpa", "eager")
         for mask in (False, True)]


def build(name, attention):
    make, config = CONFIGS[name]
    torch.manual_seed(0)
    config = config()
    config._attn_implementation = attention
    model = make(config).eval()
    randomize_constant_weights("torch", model)
    return model


def inputs(mask):
    rng = np.random.default_rng(0)
    ids = torch.from_numpy(rng.integers(0, VOCAB, (BATCH, LENGTH)))
    if not mask:
        return ids, {}
    attention_mask = torch.ones(BATCH, LENGTH, dtype=torch.int64)
    attention_mask[1, LENGTH * 2 // 3:] = 0  # the second sequence is padded
    return ids, {"attention_mask": attention_mask}


def fields(output):
    """A ModelOutput's fields that are set, as numpy arrays by name."""
    return {k: v.detach().numpy() for k, v in output.items()}


@pytest.mark.parametrize("name,attention,mask", CASES,
                         ids=[f"{n}-{a}{'-masked' if m else ''}" for n, a, m in CASES])
def test_transformers_model_compiles_and_matches(name, attention, mask, sotc_bin, workdir):  # noqa: F811
    model = build(name, attention)
    ids, kwargs = inputs(mask)
    with torch.no_grad():
        want = model(ids, **kwargs)
    trace_path = sotc.trace(model, ids, **kwargs).save(str(workdir / "model.pb"))
    library = str(workdir / "model.so")
    compile_model(sotc_bin, trace_path, library, "cpu")
    got = sotc.load(library)(ids, **kwargs)
    # The model's own output class, indexed as the library indexes it.
    assert type(got) is type(want) and list(got.keys()) == list(want.keys())
    assert_matches([got[0].numpy()], [want[0].numpy()], "CPU, out[0]")
    expected = fields(want)
    assert_matches([fields(got)[k] for k in expected], list(expected.values()), "CPU")

    fatbin = str(workdir / "model.fatbin")
    compile_model(sotc_bin, trace_path, fatbin, "cuda")
    subprocess.run([sotc_bin, "inspect", fatbin], check=True, capture_output=True)
    if launched_threads(fatbin) <= CI_EMULATED_THREADS:
        emulated = sotc.load(fatbin, device="emulator")(ids.numpy(),
                                                         **{k: v.numpy() for k, v in kwargs.items()})
        assert_matches([np.asarray(emulated[k]) for k in expected], list(expected.values()),
                       "CUDA emulator")


def test_model_output_without_its_class(sotc_bin, workdir):  # noqa: F811
    """Where the output's class is not imported, sotc.load returns a Record that answers as a
    ModelOutput does: fields as attributes (None when unset), items by name, tuple indexing."""
    from sotc._runtime import Record, _rebuild
    value = {"record": {"class": "not_imported_anywhere:CausalLMOutput",
                        "fields": [["loss", {"constant": "None"}], ["logits", {"tensor": "t"}]]}}
    out = _rebuild(value, {"t": np.ones(3)}, {})
    assert isinstance(out, Record) and type(out).__name__ == "CausalLMOutput"
    assert out.loss is None and list(out.keys()) == ["logits"]
    assert out[0] is out["logits"] is out.logits and out.to_tuple() == (out.logits,)
