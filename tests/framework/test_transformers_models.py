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
# More architectures, each traced once (eager attention, which all of them have, and a
# mask): Bloom's GELU is a torch.autograd.Function, CodeGen builds nn.Softmax inside forward,
# DeBERTa-v2's helpers are torch.jit.script functions, Mixtral's experts run as the config's
# "batched_mm" (the default's loop over the experts a token picked has data-dependent shapes).
MORE_CONFIGS = {
    "bloom": (transformers.AutoModelForCausalLM.from_config, lambda: transformers.BloomConfig(
        n_layer=2, hidden_size=64, n_head=4, vocab_size=VOCAB, use_cache=False)),
    "codegen": (transformers.AutoModelForCausalLM.from_config, lambda: transformers.CodeGenConfig(
        n_layer=2, n_embd=64, n_head=4, rotary_dim=8, vocab_size=VOCAB, n_positions=32,
        use_cache=False)),
    "deberta-v2": (transformers.AutoModel.from_config, lambda: transformers.DebertaV2Config(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
        vocab_size=VOCAB, max_position_embeddings=32, relative_attention=True,
        pos_att_type=["p2c", "c2p"], position_buckets=8, max_relative_positions=16)),
    "mixtral": (transformers.AutoModelForCausalLM.from_config, lambda: transformers.MixtralConfig(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, vocab_size=VOCAB, num_local_experts=4, num_experts_per_tok=2,
        max_position_embeddings=32, use_cache=False, experts_implementation="batched_mm")),
}
CONFIGS.update(MORE_CONFIGS)
CASES = [(name, attention, mask) for name in CONFIGS if name not in MORE_CONFIGS
         for attention in ("sdpa", "eager") for mask in (False, True)]
CASES += [(name, "eager", True) for name in MORE_CONFIGS]


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


# Speech models, by keyword inputs of their own: wav2vec2 from the waveform (a convolution
# stack; its positional convolution under weight_norm's parametrization; LayerDrop's
# torch.rand([]) that only training reads), Whisper's encoder and decoder from mel features.
AUDIO = {
    "wav2vec2": (lambda: transformers.Wav2Vec2Config(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
        conv_dim=[16, 16], conv_stride=[5, 2], conv_kernel=[10, 3], num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=4),
        lambda rng: {"input_values": rng.standard_normal((BATCH, 1600))}),
    "whisper": (lambda: transformers.WhisperConfig(
        encoder_layers=2, decoder_layers=2, d_model=64, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, num_mel_bins=16,
        max_source_positions=32, max_target_positions=32, vocab_size=VOCAB,
        decoder_start_token_id=0, pad_token_id=0, use_cache=False),
        lambda rng: {"input_features": rng.standard_normal((BATCH, 16, 64)),
                     "decoder_input_ids": rng.integers(0, VOCAB, (BATCH, 4))}),
}


@pytest.mark.parametrize("name", sorted(AUDIO))
def test_audio_model_compiles_and_matches(name, sotc_bin, workdir):  # noqa: F811
    config, make_inputs = AUDIO[name]
    torch.manual_seed(0)
    model = transformers.AutoModel.from_config(config()).eval()
    randomize_constant_weights("torch", model)
    inputs = {k: torch.from_numpy(v.astype(np.float32) if v.dtype.kind == "f" else v)
              for k, v in make_inputs(np.random.default_rng(0)).items()}
    with torch.no_grad():
        want = fields(model(**inputs))
    library = str(workdir / "model.so")
    compile_model(sotc_bin, sotc.trace(model, **inputs).save(str(workdir / "model.pb")), library,
                  "cpu")
    got = fields(sotc.load(library)(**inputs))
    assert_matches([got[k] for k in want], list(want.values()), "CPU")
    fatbin = str(workdir / "model.fatbin")
    compile_model(sotc_bin, str(workdir / "model.pb"), fatbin, "cuda")
    if launched_threads(fatbin) <= CI_EMULATED_THREADS:
        emulated = sotc.load(fatbin, device="emulator")(**{k: v.numpy() for k, v in inputs.items()})
        assert_matches([np.asarray(emulated[k]) for k in want], list(want.values()),
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
