"""Models that keep state from call to call by writing their weights in place: the static KV
cache a decoder fills as it generates, and its count of tokens. Compiled (the prefill of a
dynamic number of tokens and the one-token decode as two entries of one artifact, sharing the
weights and the state), run through sotc.load call after call, and compared with the same
model object in eager mode fed the same calls, which carries its state the same way.

- testdata/models/kv_cache_torch.py: index_copy_ into registered buffers and a 0-d counter's
  add_ of the new tokens' count; CPU and the CUDA emulator; sequence states (new_state,
  use_state, reset) and a dozen threads each decoding its own sequence on one artifact.
- transformers' own export wrapper over its StaticCache (TorchExportableModuleWithStaticCache,
  what users write for ExecuTorch): GPT-2, LLaMA (grouped-query attention), Qwen2 and Mixtral
  (a mixture of experts) at tiny
  configs (GPT-2 on the CUDA emulator too), greedy decoding equal to `model.generate` token
  for token, every step's logits within 1e-4 of their scale.
- GPT-2 and LLaMA at their defaults (use_cache=True): the DynamicCache the forward returns,
  rebuilt of its class.
"""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch
import transformers
from transformers.integrations.executorch import TorchExportableModuleWithStaticCache

from test_library_models import assert_matches, workdir  # noqa: F401
from test_programs_vs_framework import ROOT, sotc_bin  # noqa: F401

sys.path.insert(0, os.path.join(ROOT, "testdata"))
import make_model_traces  # noqa: E402

import sotc  # noqa: E402

PROMPT = [5, 17, 3, 9, 21]


def compile_entries(sotc_bin, traces, output, target="cpu"):  # noqa: F811
    result = subprocess.run([sotc_bin, "compile", *map(str, traces), "--target", target, "-o",
                             str(output)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr.strip().splitlines()[-1:]


def kv_cache_artifact(sotc_bin, workdir, target):  # noqa: F811
    """kv_cache_torch compiled for `target`: its prefill (the model file's header) and a
    one-token decode entry."""
    prefill = make_model_traces.trace_model("kv_cache_torch", str(workdir))
    decode = sotc.trace(make_model_traces.make_model("kv_cache_torch"), "int64[1,1]",
                        "int64[1]").save(str(workdir / "decode.pb"))
    artifact = workdir / ("kv_cache.so" if target == "cpu" else "kv_cache.fatbin")
    compile_entries(sotc_bin, [prefill, decode], artifact, target)
    return artifact


def decode_calls(steps, seed):
    """The calls of one sequence: a prompt, then one token at a time (tokens, positions)."""
    rng = np.random.default_rng(seed)
    calls = [(torch.tensor([PROMPT]), torch.arange(len(PROMPT)))]
    for i in range(steps):
        calls.append((torch.tensor([[int(rng.integers(32))]]), torch.tensor([len(PROMPT) + i])))
    return calls


def eager_results(calls):
    model = make_model_traces.make_model("kv_cache_torch")
    with torch.no_grad():
        return [model(tokens, position).numpy() for tokens, position in calls]


@pytest.mark.parametrize("device", ["cpu", "emulator"])
def test_a_kv_cache_written_in_place_is_kept_from_call_to_call(device, sotc_bin, workdir):  # noqa: F811
    artifact = kv_cache_artifact(sotc_bin, workdir, "cpu" if device == "cpu" else "cuda")
    f = sotc.load(str(artifact), device=device)
    assert f.state == ["seen", "attention.keys", "attention.values"]
    assert f.cache_positions == 16  # the keys' and values' positions axis, from the manifest
    calls = decode_calls(4, seed=1)
    want = eager_results(calls)
    for (tokens, position), w in zip(calls, want):
        assert_matches([np.asarray(f(tokens, position))], [w], f"{device} at {position.tolist()}")
    # A new sequence: after reset_state the same calls give the same results.
    f.reset_state()
    assert_matches([np.asarray(f(*calls[0]))], [want[0]], "after reset_state")


def test_a_state_that_is_not_reset_carries_over(sotc_bin, workdir):  # noqa: F811
    """The counter and the cache are the model's: without a reset, the second sequence sees
    the first (as the eager model does), so the results differ from a fresh one's."""
    f = sotc.load(str(kv_cache_artifact(sotc_bin, workdir, "cpu")))
    calls = decode_calls(2, seed=2)
    for call in calls:
        f(*call)
    again = np.asarray(f(*calls[0]))
    model = make_model_traces.make_model("kv_cache_torch")
    with torch.no_grad():
        for call in calls:
            model(*call)
        assert_matches([again], [model(*calls[0]).numpy()], "a second sequence without reset")
    assert np.abs(again - eager_results(calls[:1])[0]).max() > 1e-3


def test_sequence_states_on_threads_decode_apart(sotc_bin, workdir):  # noqa: F811
    """A dozen threads, each with a state of its own on one artifact, decode their own
    sequences at once and get what each gets alone."""
    f = sotc.load(str(kv_cache_artifact(sotc_bin, workdir, "cpu")))
    sequences = [decode_calls(6, seed=10 + i) for i in range(12)]
    want = [eager_results(calls) for calls in sequences]
    got, errors = [None] * len(sequences), []

    def decode(i):
        try:
            state = f.new_state()
            f.use_state(state)
            got[i] = [np.asarray(f(*call)).copy() for call in sequences[i]]
            state.close()
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=decode, args=(i,)) for i in range(len(sequences))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i in range(len(sequences)):
        assert_matches(got[i], want[i], f"sequence {i}")
    # The artifact's own state was never used by them: it starts a sequence afresh.
    assert_matches([np.asarray(f(*sequences[0][0]))], [want[0][0]], "the artifact's own state")


def test_a_position_past_the_cache_is_refused_and_writes_nothing(sotc_bin, workdir):  # noqa: F811
    """The cache's update is a step that writes the new token's keys and values into the state
    in place: a position outside the 16 the cache holds fails the call with E8004 before
    anything is written, and the sequence goes on as if that call had not been made."""
    f = sotc.load(str(kv_cache_artifact(sotc_bin, workdir, "cpu")))
    calls = decode_calls(2, seed=4)
    want = eager_results(calls)
    assert_matches([np.asarray(f(*calls[0]))], [want[0]], "the prompt")
    with pytest.raises(sotc.SotcError, match="E8004.*position 16 is outside the 16 positions"):
        f(torch.tensor([[3]]), torch.tensor([16]))
    for call, w in zip(calls[1:], want[1:]):
        assert_matches([np.asarray(f(*call))], [w], "after the refused call")


def test_a_state_reset_starts_over_and_others_are_untouched(sotc_bin, workdir):  # noqa: F811
    f = sotc.load(str(kv_cache_artifact(sotc_bin, workdir, "cpu")))
    calls = decode_calls(3, seed=3)
    want = eager_results(calls)
    mine = f.new_state()
    f.use_state(mine)
    for call in calls:
        f(*call)
    mine.reset()
    assert_matches([np.asarray(f(*calls[0]))], [want[0]], "after the state's reset")
    f.use_state(None)  # the artifact's own, untouched so far
    assert_matches([np.asarray(f(*calls[0]))], [want[0]], "the artifact's own state")
    mine.close()


def eager_greedy(prompt, steps):
    model = make_model_traces.make_model("kv_cache_torch")
    tokens, position, out = torch.tensor([prompt]), torch.arange(len(prompt)), []
    with torch.no_grad():
        for _ in range(steps):
            out.append(int(model(tokens, position)[0].argmax()))
            tokens, position = torch.tensor([[out[-1]]]), position[-1:] + 1
    return out


def test_generate_decodes_greedily_and_samples_reproducibly(sotc_bin, workdir):  # noqa: F811
    f = sotc.load(str(kv_cache_artifact(sotc_bin, workdir, "cpu")))
    want = eager_greedy(PROMPT, 8)
    out = f.generate(torch.tensor([PROMPT]), max_new_tokens=8)
    assert isinstance(out, torch.Tensor) and out[0].tolist() == PROMPT + want
    assert list(f.generate_stream(np.array(PROMPT), max_new_tokens=8)) == want
    assert f.generate(np.array([PROMPT]), max_new_tokens=8, eos_token_id=want[2])[0].tolist() \
        == PROMPT + want[:3]
    sampled = [f.generate(np.array([PROMPT]), max_new_tokens=8, do_sample=True, temperature=2.0,
                          top_k=20, top_p=0.9, seed=seed)[0].tolist() for seed in (1, 1, 2)]
    assert sampled[0] == sampled[1] and sampled[0] != sampled[2]
    # Generation runs on a state of its own: the artifact's is untouched.
    assert_matches([np.asarray(f(torch.tensor([PROMPT]), torch.arange(len(PROMPT))))],
                   [eager_results(decode_calls(0, seed=0))[0]], "the artifact's own state")
    # The command line decodes the same tokens.
    cli = subprocess.run([sotc_bin, "generate", str(workdir / "kv_cache.so"), "--prompt-ids",
                          ",".join(map(str, PROMPT)), "--max-new-tokens", "8"],
                         capture_output=True, text=True, check=True)
    assert cli.stdout.split() == [",".join(map(str, want))]
    # The cache holds 16 positions: more is refused before anything runs.
    with pytest.raises(sotc.SotcError, match="exceed the 16 positions the compiled cache holds"):
        f.generate(np.array([PROMPT]), max_new_tokens=12)


def test_a_model_without_state_has_none(sotc_bin, workdir):  # noqa: F811
    trace = make_model_traces.trace_model("mlp_torch", str(workdir))
    compile_entries(sotc_bin, [trace], workdir / "mlp.so")
    f = sotc.load(str(workdir / "mlp.so"))
    assert f.state == [] and f.cache_positions == 0
    with pytest.raises(sotc.SotcError, match="keeps no state"):
        f.new_state()
    with pytest.raises(sotc.SotcError, match="generate needs a model that keeps a KV cache"):
        f.generate(np.array([PROMPT]))


# -- transformers' static cache --------------------------------------------------------------

MAX_CACHE = 32
CONFIGS = {
    "gpt2": lambda: transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=100,
                                            n_positions=64),
    "llama": lambda: transformers.LlamaConfig(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, vocab_size=100, max_position_embeddings=64),
    "qwen2": lambda: transformers.Qwen2Config(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, vocab_size=100, max_position_embeddings=64),
    # a mixture of experts: tokens sorted by expert, gathered and put back at any prompt length
    "mixtral": lambda: transformers.MixtralConfig(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, vocab_size=100, max_position_embeddings=64, num_local_experts=4,
        num_experts_per_tok=2),
}


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_decoders_at_their_defaults_return_their_cache(name, sotc_bin, workdir):  # noqa: F811
    """use_cache=True, the library's default: the output holds the DynamicCache the forward
    filled, rebuilt of its own class with every layer's keys and values."""
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(CONFIGS[name]()).eval()
    sotc.trace(model, f"int64[1,?<={MAX_CACHE}]").save(str(workdir / "m.pb"))
    compile_entries(sotc_bin, [workdir / "m.pb"], workdir / "m.so")
    ids = torch.tensor([PROMPT])
    got = sotc.load(str(workdir / "m.so"), fallback=model)(ids)
    with torch.no_grad():
        want = model(ids)
    assert_matches([np.asarray(got.logits)], [want.logits.numpy()], "logits")
    cache = getattr(want, "cache", None) or want.past_key_values
    got_cache = getattr(got, "cache", None) or got.past_key_values
    assert type(got_cache) is type(cache) and len(got_cache.layers) == len(cache.layers)
    for i, (g, w) in enumerate(zip(got_cache.layers, cache.layers)):
        assert_matches([np.asarray(g.keys), np.asarray(g.values)],
                       [w.keys.numpy(), w.values.numpy()], f"layer {i}")


def static_cache_artifact(name, device, sotc_bin, workdir, cache=MAX_CACHE):  # noqa: F811
    """The tiny `name` decoder and sotc.load of its static-cache wrapper compiled for
    `device`: a prefill of up to `cache` tokens and a one-token decode entry."""
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(CONFIGS[name]()).eval()
    model.generation_config.cache_implementation = "static"
    wrapper = TorchExportableModuleWithStaticCache(model, 1, cache).eval()
    prefill = sotc.trace(wrapper, f"int64[1,?<={cache}]",
                         cache_position=f"int64[?<={cache}]").save(str(workdir / "p.pb"))
    decode = sotc.trace(wrapper, "int64[1,1]", cache_position="int64[1]").save(
        str(workdir / "d.pb"))
    artifact = workdir / ("lm.so" if device == "cpu" else "lm.fatbin")
    compile_entries(sotc_bin, [prefill, decode], artifact, "cpu" if device == "cpu" else "cuda")
    f = sotc.load(str(artifact), device=device)
    assert f.cache_positions == cache
    return model, f


@pytest.mark.parametrize("name,device", [(name, "cpu") for name in sorted(CONFIGS)]
                         + [("gpt2", "emulator")])
def test_static_cache_decoding_equals_generate(name, device, sotc_bin, workdir):  # noqa: F811
    model, f = static_cache_artifact(name, device, sotc_bin, workdir)
    eager = TorchExportableModuleWithStaticCache(model, 1, MAX_CACHE).eval()
    steps = 12
    with torch.no_grad():
        expected = model.generate(torch.tensor([PROMPT]), max_new_tokens=steps, do_sample=False,
                                  cache_implementation="dynamic")[0, len(PROMPT):].tolist()
    ids, position, tokens = torch.tensor([PROMPT]), torch.arange(len(PROMPT)), []
    for step in range(steps):
        got = np.asarray(f(ids, cache_position=position))
        with torch.no_grad():
            want = eager(input_ids=ids, cache_position=position).numpy()
        assert_matches([got], [want], f"{name}, step {step}")
        tokens.append(int(got[0, -1].argmax()))
        ids, position = torch.tensor([[tokens[-1]]]), torch.tensor([int(position[-1]) + 1])
    assert tokens == expected
    assert f.generate(torch.tensor([PROMPT]), max_new_tokens=steps)[0].tolist() == \
        PROMPT + expected


def test_generate_equals_transformers_over_32_tokens(sotc_bin, workdir):  # noqa: F811
    """Greedy generate of 32 new tokens from prompts of 1, 5 and 13 tokens: transformers'
    tokens, one artifact, a sequence state each."""
    model, f = static_cache_artifact("qwen2", "cpu", sotc_bin, workdir, cache=48)
    for length in (1, 5, 13):
        prompt = torch.tensor([[(7 * i + 3) % 100 for i in range(length)]])
        with torch.no_grad():
            want = model.generate(prompt, max_new_tokens=32, do_sample=False,
                                  cache_implementation="dynamic")[0].tolist()
        got = f.generate(prompt, max_new_tokens=32,
                         eos_token_id=model.generation_config.eos_token_id)
        assert got[0].tolist() == want, f"prompt of {length}"


def test_a_sequence_rewound_decodes_as_a_fresh_one(sotc_bin, workdir):  # noqa: F811
    """Sequence.rewind: back at the end of the prompt after some decoding, the next token's
    logits are a fresh sequence's for the prompt and that token (transformers' too); a sequence
    goes on from where it is, and rewinds only backwards."""
    model, f = static_cache_artifact("llama", "cpu", sotc_bin, workdir)
    with f.sequence() as sequence:
        sequence.append(PROMPT)
        for token in (7, 8, 9):
            sequence.append([token])
        sequence.rewind(len(PROMPT))
        got = sequence.append([11])
        assert sequence.position == len(PROMPT) + 1
        with pytest.raises(sotc.SotcError, match="rewind to position 9: the sequence has reached 6"):
            sequence.rewind(9)
        with pytest.raises(sotc.SotcError, match="exceed the 32 positions"):
            sequence.append(list(range(27)))
    with f.sequence() as fresh:
        want = fresh.append(PROMPT + [11])
    assert_matches([got], [want], "rewound vs fresh")
    with torch.no_grad():
        eager = model(torch.tensor([PROMPT + [11]])).logits[0, -1].numpy()
    assert_matches([got], [eager], "rewound vs transformers")


def test_a_batch_of_left_padded_prompts_generates_as_transformers_does(sotc_bin, workdir):  # noqa: F811
    """Prompts of 2, 5 and 3 tokens padded on the left with an attention_mask (as a tokenizer
    pads for generation): transformers' batched greedy generate, row for row, padding kept."""
    model, f = static_cache_artifact("gpt2", "cpu", sotc_bin, workdir)
    rows = [[11, 12], [5, 17, 3, 9, 21], [40, 41, 42]]
    width = max(map(len, rows))
    ids = torch.tensor([[0] * (width - len(r)) + r for r in rows])
    mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows])
    with torch.no_grad():
        want = model.generate(ids, attention_mask=mask, max_new_tokens=10, do_sample=False,
                              pad_token_id=0, cache_implementation="dynamic")
    got = f.generate(ids, attention_mask=mask, max_new_tokens=10, pad_token_id=0)
    assert got.tolist() == want.tolist()
    for row, prompt in zip(got.tolist(), rows):  # each row as its prompt alone generates
        assert row[width:] == f.generate(torch.tensor([prompt]), max_new_tokens=10)[0, len(prompt):].tolist()
    with pytest.raises(sotc.SotcError, match="padding on the left"):
        f.generate(ids, attention_mask=torch.flip(mask, [1]), max_new_tokens=2)

