"""Models traced once with a dynamic sequence length (`sotc.trace(model, "int64[1,?<=64]")`)
and compiled once for the CPU and once for CUDA (run on the CUDA emulator): the testdata transformer blocks and GPTs (torch and paddle:
attention over T tokens, causal masks sliced from a registered table, the last token's
logits), and transformers' BERT, DistilBERT, RoBERTa, GPT-2, LLaMA and Qwen2 (their mask code
scans and diffs along the sequence) run at every length asked of them and match the framework
each time. transformers decides `seq_len > 1` (a guard `>= 2`): a bundle with a one-token
trace first serves single tokens from the same artifact.

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
import transformers

from test_dynamic_batch_vs_framework import compile_cpu
from test_library_models import assert_matches, sotc_bin, workdir  # noqa: F401

import sotc  # noqa: E402  (test_programs_vs_framework puts tools/python on the path)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "testdata", "models"))

import gpt_paddle  # noqa: E402
import gpt_torch  # noqa: E402
import transformer_paddle  # noqa: E402
import transformer_torch  # noqa: E402


def test_transformer_blocks_at_every_length(sotc_bin, workdir):  # noqa: F811
    rng = np.random.default_rng(0)
    block = transformer_torch.make_model().eval()
    trace = sotc.trace(block, "float32[1,?,64]").save(str(workdir / "b.pb"))
    f = compile_cpu(sotc_bin, trace, str(workdir / "b.so"))
    emulated = compile_cpu(sotc_bin, trace, str(workdir / "b.fatbin"))
    pblock = transformer_paddle.make_model()
    g = compile_cpu(sotc_bin, sotc.trace(pblock, "float32[1,?,64]").save(str(workdir / "p.pb")),
                    str(workdir / "p.so"))
    manifest = json.loads((workdir / "b.manifest.json").read_text())
    counts = [s.get("n") for s in manifest["segments"][0]["steps"] if s["kind"] == "gemm"]
    assert "s0" in counts  # the scores: T columns
    for t in (1, 5, 16, 33, 100):
        x = rng.standard_normal((1, t, 64), np.float32)
        with torch.no_grad():
            want = block(torch.from_numpy(x)).numpy()
        assert_matches([np.asarray(f(x))], [want], f"torch block, {t} tokens")
        assert_matches([np.asarray(emulated(x))], [want], f"CUDA emulator, {t} tokens")
        assert_matches([np.asarray(g(paddle.to_tensor(x)))],
                       [pblock(paddle.to_tensor(x)).numpy()], f"paddle block, {t} tokens")


def test_gpts_at_every_length_up_to_their_context(sotc_bin, workdir):  # noqa: F811
    """The causal masks are the registered tril buffer sliced to T x T (a guard T <= 16, which
    the input bound already gives) and scaled_dot_product_attention's is_causal; the logits
    are the last token's (x[:, [-1], :])."""
    rng = np.random.default_rng(1)
    model = gpt_torch.make_model()
    trace = sotc.trace(model, "int64[1,?<=16]").save(str(workdir / "g.pb"))
    f = compile_cpu(sotc_bin, trace, str(workdir / "g.so"))
    emulated = compile_cpu(sotc_bin, trace, str(workdir / "g.fatbin"))
    pmodel = gpt_paddle.make_model()
    g = compile_cpu(sotc_bin, sotc.trace(pmodel, "int64[1,?<=16]").save(str(workdir / "p.pb")),
                    str(workdir / "p.so"))
    for t in (1, 2, 7, 16):
        ids = rng.integers(0, 48, (1, t))
        with torch.no_grad():
            want = model(torch.from_numpy(ids)).numpy()
        assert_matches([np.asarray(f(ids))], [want], f"torch GPT, {t} tokens")
        assert_matches([np.asarray(emulated(ids))], [want], f"CUDA emulator, {t} tokens")
        assert_matches([np.asarray(g(paddle.to_tensor(ids)))],
                       [pmodel(paddle.to_tensor(ids)).numpy()], f"paddle GPT, {t} tokens")
    with pytest.raises(sotc.GuardError, match="<= 16"):
        f(rng.integers(0, 48, (1, 17)))


SMALL = dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
             vocab_size=100, max_position_embeddings=64)
LIBRARY_MODELS = {
    "bert": lambda: transformers.BertModel(transformers.BertConfig(**SMALL)),
    "distilbert": lambda: transformers.DistilBertModel(transformers.DistilBertConfig(
        n_layers=2, dim=64, n_heads=4, hidden_dim=128, vocab_size=100,
        max_position_embeddings=64)),
    "roberta": lambda: transformers.RobertaModel(transformers.RobertaConfig(**SMALL)),
    "gpt2": lambda: transformers.GPT2Model(transformers.GPT2Config(
        n_layer=2, n_embd=64, n_head=4, vocab_size=100, n_positions=64, use_cache=False)),
    "llama": lambda: transformers.LlamaModel(transformers.LlamaConfig(
        **SMALL, num_key_value_heads=2, use_cache=False)),
    "qwen2": lambda: transformers.Qwen2Model(transformers.Qwen2Config(
        **SMALL, num_key_value_heads=2, use_cache=False)),
}


@pytest.mark.parametrize("name", sorted(LIBRARY_MODELS))
def test_transformers_models_at_every_length(sotc_bin, workdir, name):  # noqa: F811
    torch.manual_seed(0)
    model = LIBRARY_MODELS[name]().eval()
    # RoBERTa's positions start after its padding index: 62 tokens fill its 64.
    bound = 62 if name == "roberta" else 64
    trace = sotc.trace(model, f"int64[1,?<={bound}]").save(str(workdir / f"{name}.pb"))
    f = compile_cpu(sotc_bin, trace, str(workdir / f"{name}.so"))
    emulated = compile_cpu(sotc_bin, trace, str(workdir / f"{name}.fatbin"))
    rng = np.random.default_rng(2)
    for t in (2, 5, 17, bound):
        ids = torch.from_numpy(rng.integers(0, 100, (1, t)))
        with torch.no_grad():
            want = model(ids).last_hidden_state.numpy()
        assert_matches([np.asarray(f(ids).last_hidden_state)], [want], f"{name}, {t} tokens")
        if t != 5:
            assert_matches([np.asarray(emulated(ids.numpy()).last_hidden_state)], [want],
                           f"{name} on the CUDA emulator, {t} tokens")


def test_one_token_from_a_bundle(sotc_bin, workdir):  # noqa: F811
    """BERT's attention code decides on `seq_len > 1`: the dynamic trace guards `>= 2`, and a
    bundle with a one-token trace first serves every length from one artifact."""
    torch.manual_seed(0)
    model = LIBRARY_MODELS["bert"]().eval()
    one = sotc.trace(model, "int64[1,1]").save(str(workdir / "bert1.pb"))
    many = sotc.trace(model, "int64[1,?<=64]").save(str(workdir / "bert.pb"))
    alone = compile_cpu(sotc_bin, many, str(workdir / "alone.so"))
    with pytest.raises(sotc.GuardError, match=">= 2"):
        alone(torch.zeros((1, 1), dtype=torch.int64))
    subprocess.run([sotc_bin, "compile", one, many, "--target", "cpu", "-o",
                    str(workdir / "both.so")], check=True, capture_output=True)
    f = sotc.load(str(workdir / "both.so"))
    rng = np.random.default_rng(3)
    for t in (1, 2, 9):
        ids = torch.from_numpy(rng.integers(0, 100, (1, t)))
        with torch.no_grad():
            want = model(ids).last_hidden_state.numpy()
        assert_matches([np.asarray(f(ids).last_hidden_state)], [want], f"bundle, {t} tokens")


@pytest.mark.parametrize("name", ["block", "gpt"] + sorted(LIBRARY_MODELS))
def test_a_batch_and_a_sequence_both_dynamic(sotc_bin, workdir, name):  # noqa: F811
    """Two named sizes, `[B,T]` (docs/dynamic-shapes.md#named-sizes): one CPU artifact serves
    every batch and every length, each bound from its own dimension of the input (LLaMA's and
    Qwen2's mask code guards B != 1, as with a dynamic batch alone: pairs of two rows up)."""
    torch.manual_seed(0)
    rng = np.random.default_rng(3)
    if name == "block":
        model, spec = transformer_torch.make_model().eval(), "float32[B,T,64]"
        make = lambda b, t: torch.from_numpy(rng.standard_normal((b, t, 64), np.float32))  # noqa: E731
    elif name == "gpt":
        model, spec = gpt_torch.make_model(), "int64[B,T<=16]"
        make = lambda b, t: torch.from_numpy(rng.integers(0, 48, (b, t)))  # noqa: E731
    else:
        model, spec = LIBRARY_MODELS[name]().eval(), "int64[B,T<=64]"
        make = lambda b, t: torch.from_numpy(rng.integers(0, 100, (b, t)))  # noqa: E731
    trace = sotc.trace(model, spec).save(str(workdir / f"{name}_bt.pb"))
    f = compile_cpu(sotc_bin, trace, str(workdir / f"{name}_bt.so"))
    for b, t in ((2, 2), (3, 5), (2, 16), (5, 3)):
        x = make(b, t)
        with torch.no_grad():
            want = model(x)
        got = f(x)
        if name in LIBRARY_MODELS:
            want, got = want.last_hidden_state, got.last_hidden_state
        assert_matches([np.asarray(got)], [want.numpy()], f"{name}, B={b} T={t}")


def token_loss(logits, labels):  # transformers' causal LM loss: every token of every sequence
    return torch.nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1))


def token_router(x, gate):  # a mixture of experts' router: the top two of each token
    probs = torch.softmax(x.view(-1, x.shape[-1]) @ gate, -1)
    top, index = torch.topk(probs, 2, -1)
    return top / top.sum(-1, keepdim=True), index


def token_norm(x, w, b):
    return torch.nn.functional.layer_norm(x.reshape(-1, x.shape[-1]), (8,), w, b).view(x.shape)


def token_clamp(x):  # assignment through boolean masks of the tokens' own shape
    y = x * 2
    y[x > 1] = -1.0
    y[x < -1] = x.mean()
    return y


def token_rotary_of_none(x):  # a partial rotary embedding over none of the dims
    rotated, kept = x[..., :0], x[..., 0:]
    return torch.cat([rotated.sin() * 2, kept], -1).exp(), rotated.cos(), rotated.sum(-1)


def token_attention_sink(scores, mask, sinks):  # granite_swa's: a logsumexp beside a softmax
    scores = scores + mask
    scale = (torch.logsumexp(scores, dim=-1) - sinks.view(1, -1, 1)).sigmoid()
    return torch.softmax(scores, dim=-1) * scale.unsqueeze(-1)


def token_expert_order(x, experts):  # a mixture of experts' dispatch: rows by expert and back
    rows = x.reshape(-1, x.shape[-1])
    _, order = torch.sort(experts.reshape(-1), stable=True)
    grouped = rows[order] * 2 + 1
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(order.size(0))
    return grouped[inverse], torch.index_select(rows, 0, order), rows[order // 2]


def token_updates_in_place(x, b):  # in-place operators and whole writes at every size
    out = x * 2
    out.add_(b)
    whole, rows = x.clone(), x.clone()
    whole[:] = 3.0
    rows[...] = x.sum(-1, keepdim=True)
    return out, whole, rows


def token_routes(x):  # ergo's experts: each token once per route, tensors made like them
    rows = x.reshape(-1, x.shape[-1]).repeat_interleave(2, dim=0)
    return rows * 3, rows.new_ones(rows.shape) + rows.new_zeros((rows.shape[0], 1)), \
        x.repeat_interleave(2), x.repeat(1, 2, 1)


@pytest.mark.parametrize("fn, specs", [
    (token_loss, ["float32[B,T,16]", "int64[B,T]"]),
    (token_router, ["float32[B,T,8]", "float32[8,4]"]),
    (token_norm, ["float32[B,T,8]", "float32[8]", "float32[8]"]),
    (token_clamp, ["float32[B,T,8]"]),
    (token_rotary_of_none, ["float32[B,T,8]"]),
    (token_attention_sink, ["float32[B,4,T,T]", "float32[B,1,T,T]", "float32[4]"]),
    (token_expert_order, ["float32[1,T,8]", "int64[1,T]"]),
    (token_updates_in_place, ["float32[B,T,8]", "float32[8]"]),
    (token_routes, ["float32[B,T,8]"]),
], ids=["loss", "router", "norm", "masked-assignment", "no-elements", "attention-sink",
        "expert-order", "in-place", "routes"])
def test_rows_of_every_token_as_torch_computes_them(sotc_bin, workdir, fn, specs):  # noqa: F811
    """Work over rows of B*T tokens (docs/dynamic-shapes.md#merged-sizes): a loss over every
    token, a router's top-k per token, a layer norm of the flattened tokens viewed back,
    values assigned through masks of the tokens' shape, tensors of no elements, an attention
    sink's logsumexp beside its softmax, rows gathered and put back in an expert's order,
    in-place operators and whole writes, rows repeated per route; one
    CPU artifact against torch at every pair of sizes."""
    trace = sotc.trace(fn, *specs, sotc_framework="torch").save(str(workdir / f"{fn.__name__}.pb"))
    f = compile_cpu(sotc_bin, trace, str(workdir / f"{fn.__name__}.so"))
    rng = np.random.default_rng(8)
    for b, t in ((1, 1), (2, 3), (3, 7)):
        args = []
        for spec in specs:
            shape = [b if d == "B" else t if d == "T" else int(d)
                     for d in spec[spec.index("[") + 1:-1].split(",")]
            args.append(torch.from_numpy(rng.integers(0, 16, shape))
                        if spec.startswith("int64")
                        else torch.from_numpy(rng.standard_normal(shape).astype(np.float32)))
        want = fn(*args)
        want = want if isinstance(want, tuple) else (want,)
        got = f(*args)
        got = got if isinstance(got, tuple) else (got,)
        assert_matches([np.asarray(g) for g in got], [w.numpy() for w in want],
                       f"{fn.__name__}, B={b} T={t}")


def rows_written(x, rows, v):  # x[rows] = ... of x's own size, M rows of another size
    filled, put = x.clone(), x.clone()
    filled[rows] = 0.5
    put[rows] = v
    return filled, put


def test_rows_written_at_sizes_of_their_own(sotc_bin, workdir):  # noqa: F811
    """x[rows] = v where x has N rows and `rows` M positions, both dynamic and unrelated (a
    number or a row broadcast to the M rows; the last write of a repeated row wins, as torch's
    CPU does): one artifact against torch at several (N, M)."""
    trace = sotc.trace(rows_written, "float32[N,3]", "int64[M]", "float32[3]",
                       sotc_framework="torch").save(str(workdir / "rows_written.pb"))
    f = compile_cpu(sotc_bin, trace, str(workdir / "rows_written.so"))
    rng = np.random.default_rng(10)
    for n, m in ((6, 2), (3, 5), (1, 1)):
        args = [torch.from_numpy(rng.standard_normal((n, 3)).astype(np.float32)),
                torch.from_numpy(rng.integers(0, n, m)),
                torch.from_numpy(rng.standard_normal(3).astype(np.float32))]
        assert_matches([np.asarray(g) for g in f(*args)], [w.numpy() for w in rows_written(*args)],
                       f"N={n} M={m}")


def paddle_token_rows(x, w):  # paddle's reshape: -1 merges B and T, 0 copies a dim
    B, T, C = x.shape
    h = paddle.matmul(paddle.reshape(x, [-1, C]), w)
    return paddle.reshape(h, [B, T, -1]), paddle.reshape(x, [0, 0, 2, 4]).sum(2), h.flatten()


def test_paddle_rows_of_every_token(sotc_bin, workdir):  # noqa: F811
    """paddle's reshape with B and T merged by -1, dims copied by 0, and merged rows
    flattened (6*s0*s1 elements): one artifact against paddle at every pair of sizes."""
    trace = sotc.trace(paddle_token_rows, "float32[B,T,8]", "float32[8,6]",
                       sotc_framework="paddle").save(str(workdir / "paddle_rows.pb"))
    f = compile_cpu(sotc_bin, trace, str(workdir / "paddle_rows.so"))
    rng = np.random.default_rng(9)
    for b, t in ((1, 1), (2, 3), (3, 7)):
        x = rng.standard_normal((b, t, 8)).astype(np.float32)
        w = rng.standard_normal((8, 6)).astype(np.float32)
        want = paddle_token_rows(paddle.to_tensor(x), paddle.to_tensor(w))
        assert_matches([np.asarray(g) for g in f(x, w)], [v.numpy() for v in want],
                       f"paddle, B={b} T={t}")


def shifted_loss(logits, labels):  # a causal LM's loss: positions 0..T-2 predict labels 1..T-1
    V = logits.shape[-1]
    return torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, V),
                                             labels[:, 1:].reshape(-1))


def padded_labels(logits, labels):  # transformers' ForCausalLMLoss: pad by one, shift back
    labels = torch.nn.functional.pad(labels, (0, 1), value=-100)
    return torch.nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]),
                                             labels[..., 1:].reshape(-1))


def neighbours(x, w):  # differences and sums of neighbouring positions, T - 1 of T
    T = x.shape[1]
    d = x[:, 1:] - x[:, :T - 1]
    return torch.softmax(d @ w, -1), x[:, 1:T].mean(1)


def paddle_neighbours(x):
    return paddle.nn.functional.relu(x[:, 1:] - x[:, :-1]).sum(1)


def paddle_made_of_sizes(x):  # tensors made at the call's sizes, T - 1 among them
    B, T, C = x.shape
    return (paddle.zeros([B, T]) + x.sum(-1), paddle.full([T - 1], 3.0) * x[0, 1:, 0],
            paddle.ones([B, T - 1, C]) * x[:, 1:])


@pytest.mark.parametrize("fn, specs, framework", [
    (shifted_loss, ["float32[B,T,16]", "int64[B,T]"], "torch"),
    (padded_labels, ["float32[B,T,16]", "int64[B,T]"], "torch"),
    (neighbours, ["float32[B,T,8]", "float32[8,4]"], "torch"),
    (paddle_neighbours, ["float32[B,T,8]"], "paddle"),
    (paddle_made_of_sizes, ["float32[B,T,8]"], "paddle"),
], ids=["shifted", "padded", "neighbours", "paddle", "paddle_made"])
def test_sizes_derived_from_the_sequence(sotc_bin, workdir, fn, specs, framework):  # noqa: F811
    """T - 1 positions of T (docs/dynamic-shapes.md#derived-sizes): shifted logits and
    labels, labels padded to T + 1 and shifted back, differences of neighbours; one CPU
    artifact against the framework at every pair of sizes, and one position refused where a
    tensor would have none (a guard T >= 2), served where it would not (the pad)."""
    trace = sotc.trace(fn, *specs, sotc_framework=framework).save(str(workdir / f"{fn.__name__}.pb"))
    f = compile_cpu(sotc_bin, trace, str(workdir / f"{fn.__name__}.so"))
    rng = np.random.default_rng(10)

    def arguments(b, t):
        args = []
        for spec in specs:
            shape = [b if d == "B" else t if d == "T" else int(d)
                     for d in spec[spec.index("[") + 1:-1].split(",")]
            args.append(rng.integers(0, 16, shape) if spec.startswith("int64")
                        else rng.standard_normal(shape).astype(np.float32))
        return args

    for b, t in ((1, 2), (2, 3), (3, 7)):
        args = arguments(b, t)
        tensor = torch.from_numpy if framework == "torch" else paddle.to_tensor
        want = fn(*[tensor(a) for a in args])
        want = want if isinstance(want, tuple) else (want,)
        got = f(*args)
        got = got if isinstance(got, tuple) else (got,)
        assert_matches([np.asarray(g) for g in got], [w.numpy() for w in want],
                       f"{fn.__name__}, B={b} T={t}")
    if fn is padded_labels:  # every label ignored: nan, as torch's mean over none
        assert np.isnan(np.asarray(f(*arguments(2, 1)))) and torch.isnan(
            fn(*[torch.from_numpy(a) for a in arguments(2, 1)]))
    else:
        with pytest.raises(sotc.GuardError, match="s1 >= 2"):
            f(*arguments(2, 1))


def test_causal_lm_loss_at_every_batch_and_length(sotc_bin, workdir):  # noqa: F811
    """transformers' GPT-2 LM asked for its loss (`model(ids, labels=ids)`: the labels padded
    to T + 1 and shifted back, docs/dynamic-shapes.md#derived-sizes) traced once with a
    dynamic batch and length: the loss and the logits match torch at every pair."""
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(transformers.GPT2Config(
        n_layer=2, n_embd=64, n_head=4, vocab_size=100, n_positions=64, use_cache=False)).eval()
    trace = sotc.trace(model, "int64[B,T<=64]", labels="int64[B,T]").save(
        str(workdir / "gpt2_loss.pb"))
    f = compile_cpu(sotc_bin, trace, str(workdir / "gpt2_loss.so"))
    rng = np.random.default_rng(11)
    for b, t in ((2, 2), (3, 17), (2, 64)):
        ids = torch.from_numpy(rng.integers(0, 100, (b, t)))
        with torch.no_grad():
            want = model(ids, labels=ids)
        got = f(ids, labels=ids)
        assert_matches([np.asarray(got.loss), np.asarray(got.logits)],
                       [want.loss.numpy(), want.logits.numpy()], f"GPT-2 loss, B={b} T={t}")


def paired_tokens(x, w):  # tokens merged in pairs (T // 2 positions of 2 * C), projected
    B, T, C = x.shape
    return torch.relu(x.reshape(B, T // 2, 2 * C) @ w)


def paddle_paired_tokens(x):
    return paddle.reshape(x, [x.shape[0], -1, 2 * x.shape[2]]).mean(1)


@pytest.mark.parametrize("fn, specs, framework", [
    (paired_tokens, ["float32[B,T<=64,8]", "float32[16,4]"], "torch"),
    (paddle_paired_tokens, ["float32[B,T,8]"], "paddle"),
], ids=["torch", "paddle"])
def test_sizes_split_in_pairs(sotc_bin, workdir, fn, specs, framework):  # noqa: F811
    """T // 2 positions of pairs of tokens (docs/dynamic-shapes.md#split-sizes): T is taken as
    a multiple of 2, guarded; one CPU artifact matches the framework at every even length and
    refuses an odd one, naming the line that splits it."""
    trace = sotc.trace(fn, *specs, sotc_framework=framework).save(str(workdir / f"{fn.__name__}.pb"))
    f = compile_cpu(sotc_bin, trace, str(workdir / f"{fn.__name__}.so"))
    rng = np.random.default_rng(12)
    w = rng.standard_normal((16, 4)).astype(np.float32)
    tensor = torch.from_numpy if framework == "torch" else paddle.to_tensor
    for b, t in ((1, 2), (3, 6), (2, 64)):
        x = rng.standard_normal((b, t, 8)).astype(np.float32)
        args = (x, w) if len(specs) == 2 else (x,)
        want = fn(*[tensor(a) for a in args])
        assert_matches([np.asarray(f(*args))], [want.numpy()], f"{fn.__name__}, B={b} T={t}")
    odd = (rng.standard_normal((2, 5, 8)).astype(np.float32),) + ((w,) if len(specs) == 2 else ())
    with pytest.raises(sotc.GuardError, match="with dimension 1 a multiple of 2"):
        f(*odd)
