"""A dynamic size used as more than a batch (docs/dynamic-shapes.md#a-sequence-length): a
sequence length `T` that attention reduces over (softmax rows of T), contracts (scores @ v)
and holds twice (the T x T scores). One CPU artifact runs every T and matches numpy at each,
lengths that are no multiple of a vector included; the manifest writes its counts as powers
of s0; a static table sliced by T (a causal mask) guards T against its size; the CUDA
artifacts run every T on the emulator."""

import json
import subprocess

import numpy as np
import pytest

import sotc
from test_dynamic_batch import _compile, _compiled, _softmax, program_module

PROGRAMS = """
def attention(q, k, v):
    s = (q @ k.transpose(-1, -2)) * 0.25
    return torch.softmax(s, dim=-1) @ v

def heads(x, w):  # the sequence second: heads split and merged around it
    B, T, C = x.shape
    q = (x @ w).reshape(B, T, 2, C // 2).transpose(1, 2)
    att = torch.softmax(q @ q.transpose(-1, -2), -1)
    return (att @ q).transpose(1, 2).reshape(B, T, C)

def causal(x, mask):  # mask: a static table, as a model's registered tril buffer
    T = x.shape[0]
    s = x @ x.t()
    s = s.masked_fill(mask[:T, :T] == 0, float("-inf"))
    return torch.softmax(s, -1)

def pooled(x):  # a reduction over the sequence and a product that contracts it
    return x.sum(0), x.t() @ x

def positions(x):
    T = x.shape[1]
    return x + torch.arange(0, T)[None, :, None].float()

def ends(x):  # GPT's logits of the last token; the one before it; the first (BERT's pooler)
    return x[:, [-1], :], x[:, -2], x[:, 0]

def trimmed(x):  # a static slice up to -2: Python's -2, not the dynamic size's marker
    return x[..., :-2, :] + torch.arange(-2).sum()

def packed(p):  # transformers' packed-sequence check: a diff and a scan along the sequence
    d = torch.diff(p, prepend=p[:, :1] - 1, dim=-1)
    return (d != 1).cumsum(-1)

def row_softmax(x):
    return torch.softmax(x, -1)

def pooled_mean(x):  # mean pooling over the tokens; their variance
    return x.mean(1), x.var(1), x.std(dim=(0, 1))

def conv1d(x, w):  # transformers' Conv1D: every sequence's tokens as rows of one GEMM
    size_out = x.size()[:-1] + (w.shape[1],)
    return torch.addmm(torch.zeros(w.shape[1]), x.view(-1, x.size(-1)), w).view(size_out)

def flat_tokens(x):  # rows of B * T and B * 2 returned as they are; all of them summed
    B, T, C = x.shape
    return x.reshape(B * T, C).exp(), x.reshape(B * 2, -1), x.view(-1).sum()

def regrouped(x):  # B * T rows, then their quotient by T as rows again: sizes divide exactly
    B, T, C = x.shape
    n = B * T
    return x.reshape(n, C).reshape(n // T, T * C) * (n // n)

def split_rows(x):
    return x.reshape(-1, 4)

def made_of_sizes(x):  # tensors made at the call's sizes: a causal mask of T - 1, zeros of B x T
    B, T, C = x.shape
    mask = torch.ones(T - 1, T - 1).tril()
    return mask @ x[:, 1:], torch.zeros(B, T) + x.sum(-1), torch.full((T,), 2.0) * x[0, :, 0]

def scaled_by_length(x):  # Python arithmetic on T: a 0-d tensor of the call's T
    T = x.shape[1]
    return x.sum(1) / T, x * T ** -0.5, x + (T * 2 - 1), (T // 2) * x
"""


@pytest.fixture()
def programs(tmp_path, monkeypatch):
    return program_module(tmp_path, monkeypatch, "seq_programs", PROGRAMS)


def test_attention_over_every_length(sotc_bin, tmp_path, programs):
    f = _compiled(sotc_bin, tmp_path, sotc.trace(programs.attention, "float32[4,?,16]",
                                                 "float32[4,?,16]", "float32[4,?,16]"), "attn")
    manifest = json.loads((tmp_path / "attn.manifest.json").read_text())
    steps = manifest["segments"][0]["steps"]
    scores, values = (s for s in steps if s["kind"] == "gemm")
    assert (scores["m"], scores["n"], scores["k"]) == ("s0", "s0", 16)
    assert scores["batch_strides"]["c"] == ["s0^2"]
    assert (values["m"], values["n"], values["k"], values["lda"]) == ("s0", 16, "s0", "s0")
    arena = manifest["segments"][0]["arena"]["buffers"]
    assert [b["shape"] for b in arena if b["shape"].count(-1) == 2]
    assert all("offset" not in b for b in arena if -1 in b["shape"])
    rng = np.random.default_rng(0)
    for t in (1, 7, 64, 130, 7):
        q, k, v = (rng.standard_normal((4, t, 16), np.float32) for _ in range(3))
        want = _softmax(q @ k.transpose(0, 2, 1) * 0.25) @ v
        np.testing.assert_allclose(f(q, k, v), want, rtol=1e-4, atol=1e-5, err_msg=f"T={t}")
    inspect = subprocess.run([sotc_bin, "inspect", str(tmp_path / "attn.so")], check=True,
                             capture_output=True, text=True).stdout
    assert "m=s0 n=s0 k=16" in inspect and "float32[4, ?, ?], 16*s0^2 bytes" in inspect


def test_heads_split_around_the_sequence(sotc_bin, tmp_path, programs):
    f = _compiled(sotc_bin, tmp_path, sotc.trace(programs.heads, "float32[2,?,8]",
                                                 "float32[8,8]"), "heads")
    rng = np.random.default_rng(1)
    w = rng.standard_normal((8, 8), np.float32) * 0.3
    for t in (1, 5, 33):
        x = rng.standard_normal((2, t, 8), np.float32)
        q = (x @ w).reshape(2, t, 2, 4).transpose(0, 2, 1, 3)
        want = (_softmax(q @ q.transpose(0, 1, 3, 2)) @ q).transpose(0, 2, 1, 3).reshape(2, t, 8)
        np.testing.assert_allclose(f(x, w), want, rtol=1e-4, atol=1e-5, err_msg=f"T={t}")


def test_a_table_sliced_by_the_length_is_guarded(sotc_bin, tmp_path, programs):
    library, result = _compile(sotc_bin, tmp_path, sotc.trace(programs.causal, "float32[?,4]",
                                                              "float32[8,8]"), "causal")
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "causal.manifest.json").read_text())
    guard = next(g for g in manifest["entries"][0]["guards"] if g["kind"] == "batch")
    assert guard["expected"] == "<= 8" and "seq_programs.py:" in guard["source"]
    f = sotc.load(library)
    rng = np.random.default_rng(2)
    tril = np.tril(np.ones((8, 8), np.float32))
    for t in (1, 3, 8):
        x = rng.standard_normal((t, 4), np.float32)
        want = _softmax(np.where(tril[:t, :t] != 0, x @ x.T, -np.inf))
        np.testing.assert_allclose(f(x, tril), want, rtol=1e-4, atol=1e-6, err_msg=f"T={t}")
    with pytest.raises(sotc.GuardError) as beyond:
        f(rng.standard_normal((9, 4), np.float32), tril)
    assert "with ? <= 8" in str(beyond.value)


def test_reductions_and_products_over_the_length(sotc_bin, tmp_path, programs):
    f = _compiled(sotc_bin, tmp_path, sotc.trace(programs.pooled, "float32[?,3]"), "pooled")
    g = _compiled(sotc_bin, tmp_path, sotc.trace(programs.positions, "float32[2,?,3]"), "pos")
    rng = np.random.default_rng(3)
    for t in (1, 9, 100):
        x = rng.standard_normal((t, 3), np.float32)
        total, gram = f(x)
        np.testing.assert_allclose(total, x.sum(0), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(gram, x.T @ x, rtol=1e-4, atol=1e-4)
        y = rng.standard_normal((2, t, 3), np.float32)
        np.testing.assert_allclose(g(y), y + np.arange(t, dtype=np.float32)[None, :, None])


def test_positions_from_either_end(sotc_bin, tmp_path, programs):
    """x[:, -k] has no slice of s0 - k elements: a mask on the positions picks it (and a
    guard `>= k` keeps shorter calls out); diff and cumsum along s0 mask pairs of positions."""
    library, result = _compile(sotc_bin, tmp_path, sotc.trace(programs.ends, "float32[1,?,4]"),
                               "ends")
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "ends.manifest.json").read_text())
    assert [g["expected"] for g in manifest["entries"][0]["guards"]
            if g["kind"] == "batch"] == [">= 2"]
    f = sotc.load(library)
    g = _compiled(sotc_bin, tmp_path, sotc.trace(programs.packed, "int64[2,?]"), "packed")
    rng = np.random.default_rng(4)
    for t in (2, 3, 40):
        x = rng.standard_normal((1, t, 4), np.float32)
        last, before, first = f(x)
        np.testing.assert_array_equal(last, x[:, [-1], :])
        np.testing.assert_array_equal(before, x[:, -2])
        np.testing.assert_array_equal(first, x[:, 0])
        p = np.concatenate([np.arange(t // 2), np.arange(t - t // 2)])[None].repeat(2, 0)
        d = np.diff(p, prepend=p[:, :1] - 1, axis=-1)
        np.testing.assert_array_equal(g(p), (d != 1).cumsum(-1))
    with pytest.raises(sotc.GuardError, match="with \\? >= 2"):
        f(rng.standard_normal((1, 1, 4), np.float32))


def test_static_negative_stops_stay_static(sotc_bin, tmp_path, programs):
    f = _compiled(sotc_bin, tmp_path, sotc.trace(programs.trimmed, "float32[2,5,3]"), "trimmed")
    x = np.random.default_rng(5).standard_normal((2, 5, 3)).astype(np.float32)
    np.testing.assert_array_equal(f(x), x[..., :-2, :])


def _on_emulator(sotc_bin, tmp_path, trace, name):
    path = tmp_path / f"{name}.fatbin"
    subprocess.run([sotc_bin, "compile", trace.save(str(tmp_path / f"{name}.pb")),
                    "--gpu-arch", "sm_90", "-o", str(path)], check=True)
    return sotc.load(path, device="emulator")


def test_cuda_artifacts_of_a_sequence_run_on_the_emulator(sotc_bin, tmp_path, programs):
    """CUDA kernels loop over a row of T in their threads, ceil(T / threads) times at the
    call's T (past the compiler's stand-in for s0, 4099, here: a sum over 5000 positions).
    What a block keeps of a softmax row is the launch's dynamic shared memory where a bound on
    T keeps it small enough (`?<=512`), global memory (more outputs of the kernel) where
    nothing bounds T."""
    attn = _on_emulator(sotc_bin, tmp_path, sotc.trace(
        programs.attention, "float32[2,?,8]", "float32[2,?,8]", "float32[2,?,8]"), "attn")
    steps = json.loads((tmp_path / "attn.cuda.manifest.json").read_text())["segments"][0]["steps"]
    assert not any("dynamic_shared_bytes" in s for s in steps)
    (softmax,) = (s for s in steps if s["kind"] == "kernel" and s["grid"] == "2*s0")
    assert softmax["block"] == 256 and len(softmax["outputs"]) == 3  # + the scaled scores, exps
    bounded = _on_emulator(sotc_bin, tmp_path, sotc.trace(
        programs.attention, "float32[2,?<=512,8]", "float32[2,?<=512,8]",
        "float32[2,?<=512,8]"), "bounded")
    steps = json.loads((tmp_path / "bounded.cuda.manifest.json").read_text())["segments"][0]
    (softmax,) = (s for s in steps["steps"] if "dynamic_shared_bytes" in s)
    assert (softmax["grid"], softmax["block"], softmax["dynamic_shared_bytes"]) == \
        ("2*s0", 256, "8*s0") and len(softmax["outputs"]) == 1
    heads = _on_emulator(sotc_bin, tmp_path, sotc.trace(programs.heads, "float32[2,?,8]",
                                                        "float32[8,8]"), "heads")
    causal = _on_emulator(sotc_bin, tmp_path, sotc.trace(programs.causal, "float32[?,4]",
                                                         "float32[8,8]"), "causal")
    pooled = _on_emulator(sotc_bin, tmp_path, sotc.trace(programs.pooled, "float32[?,3]"),
                          "pooled")
    ends = _on_emulator(sotc_bin, tmp_path, sotc.trace(programs.ends, "float32[1,?,4]"), "ends")
    rng = np.random.default_rng(6)
    w = rng.standard_normal((8, 8), np.float32) * 0.3
    tril = np.tril(np.ones((8, 8), np.float32))
    for t in (1, 7, 300, 2):
        q, k, v = (rng.standard_normal((2, t, 8), np.float32) for _ in range(3))
        want = _softmax(q @ k.transpose(0, 2, 1) * 0.25) @ v
        np.testing.assert_allclose(attn(q, k, v), want, rtol=1e-4, atol=1e-5, err_msg=f"T={t}")
        np.testing.assert_allclose(bounded(q, k, v), want, rtol=1e-4, atol=1e-5)
        x = rng.standard_normal((2, t, 8), np.float32)
        h = (x @ w).reshape(2, t, 2, 4).transpose(0, 2, 1, 3)
        want = (_softmax(h @ h.transpose(0, 1, 3, 2)) @ h).transpose(0, 2, 1, 3).reshape(2, t, 8)
        np.testing.assert_allclose(heads(x, w), want, rtol=1e-4, atol=1e-5, err_msg=f"T={t}")
        if t <= 8:
            x = rng.standard_normal((t, 4), np.float32)
            want = _softmax(np.where(tril[:t, :t] != 0, x @ x.T, -np.inf))
            np.testing.assert_allclose(causal(x, tril), want, rtol=1e-4, atol=1e-6)
        if t >= 2:
            x = rng.standard_normal((1, t, 4), np.float32)
            for got, want in zip(ends(x), (x[:, [-1], :], x[:, -2], x[:, 0])):
                np.testing.assert_array_equal(got, want)
    for t in (3, 5000):
        x = rng.standard_normal((t, 3), np.float32)
        total, gram = pooled(x)
        np.testing.assert_allclose(total, x.sum(0), rtol=1e-4, atol=1e-3, err_msg=f"T={t}")
        np.testing.assert_allclose(gram, x.T @ x, rtol=1e-4, atol=1e-2, err_msg=f"T={t}")


def test_rows_beyond_a_gpus_shared_memory(sotc_bin, tmp_path, programs, monkeypatch):
    """A softmax row of T floats with T bounded (`?<=50000`: 200 KB) is dynamic shared
    memory, which the kernel opts in to (an sm_90 has 227 KiB a block). On a GPU with less
    (the emulator told it has a consumer GPU's 99 KiB) a longer call is E8004 naming the
    kernel and the bytes, before anything runs. Unbounded, the row is global memory and any
    length runs."""
    monkeypatch.setenv("SOTC_EMULATOR_SHARED_OPTIN", str(99 * 1024))
    bounded = _on_emulator(sotc_bin, tmp_path, sotc.trace(programs.row_softmax,
                                                          "float32[2,?<=50000]"), "bounded")
    unbounded = _on_emulator(sotc_bin, tmp_path, sotc.trace(programs.row_softmax,
                                                            "float32[2,?]"), "unbounded")
    rng = np.random.default_rng(7)
    for t in (1000, 13000):  # 4,000 and 52,000 bytes a block: the second opts in
        x = rng.standard_normal((2, t), np.float32)
        np.testing.assert_allclose(bounded(x), _softmax(x), rtol=1e-5, atol=1e-8)
    with pytest.raises(sotc.SotcError, match=r"E8004.*dynamic size of 30000 is beyond what kernel "
                                             r"\S+ can hold: its blocks would keep 120\d{3} bytes "
                                             r"in shared memory, more than a block's 101376"):
        bounded(np.zeros((2, 30000), np.float32))
    x = rng.standard_normal((2, 60000), np.float32)
    np.testing.assert_allclose(unbounded(x), _softmax(x), rtol=1e-5, atol=1e-9)


def test_means_and_arithmetic_over_the_length(sotc_bin, tmp_path, programs):
    """mean/var/std over T divide by the call's count, and Python arithmetic on T (`x.sum(1)
    / T`, `T ** -0.5`, `T * 2 - 1`, `T // 2`) computes on the call's T: a 0-d tensor made
    from it (a sum of ones over arange(T)), on the CPU and the CUDA emulator."""
    means = _compiled(sotc_bin, tmp_path, sotc.trace(programs.pooled_mean, "float32[2,?,3]"),
                      "means")
    arith = _compiled(sotc_bin, tmp_path, sotc.trace(programs.scaled_by_length,
                                                     "float32[2,?,3]"), "arith")
    emulated = _on_emulator(sotc_bin, tmp_path, sotc.trace(programs.scaled_by_length,
                                                           "float32[2,?,3]"), "arith_cuda")
    rng = np.random.default_rng(8)
    for t in (1, 2, 7, 300):
        x = rng.standard_normal((2, t, 3), np.float32)
        mean, var, std = means(x)
        np.testing.assert_allclose(mean, x.mean(1), rtol=1e-5, atol=1e-6, err_msg=f"T={t}")
        if t > 1:
            np.testing.assert_allclose(var, x.var(1, ddof=1), rtol=1e-4, atol=1e-6)
        else:  # one token: 0 / 0, as torch
            assert np.isnan(var).all()
        np.testing.assert_allclose(std, x.std((0, 1), ddof=1), rtol=1e-4, atol=1e-6)
        want = (x.sum(1) / t, x * t ** -0.5, x + (t * 2 - 1), (t // 2) * x)
        for f in (arith, emulated):
            for got, w in zip(f(x), want):
                np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-5, err_msg=f"T={t}")


def test_a_batch_and_a_sequence_both_dynamic(sotc_bin, tmp_path, programs):
    """Two named sizes (float32[B,T,8]): one artifact runs every batch and every length, each
    bound from its own dimension (sizes that are no multiple of a vector, and B != T, so that a
    size taken for the other would show); the GEMMs' counts and the kernels' grids are their
    powers (the scores: s1 x s1 per head and row); pooled results of B rows, the mean of T."""
    f = _compiled(sotc_bin, tmp_path, sotc.trace(programs.heads, "float32[B,T,8]",
                                                 "float32[8,8]"), "both")
    manifest = json.loads((tmp_path / "both.manifest.json").read_text())
    steps = manifest["segments"][0]["steps"]
    scores = [s for s in steps if s["kind"] == "gemm" and s["m"] == s["n"] == "s1"]
    assert scores and scores[0]["batch"] == ["s0", 2]
    assert any(s.get("sizes") == ["s0", "s1"] for s in steps if s["kind"] == "kernel")
    rng = np.random.default_rng(5)
    w = rng.standard_normal((8, 8), np.float32) * 0.3
    for b, t in ((1, 1), (3, 5), (2, 33), (7, 3)):
        x = rng.standard_normal((b, t, 8), np.float32)
        q = (x @ w).reshape(b, t, 2, 4).transpose(0, 2, 1, 3)
        want = (_softmax(q @ q.transpose(0, 1, 3, 2)) @ q).transpose(0, 2, 1, 3).reshape(b, t, 8)
        np.testing.assert_allclose(f(x, w), want, rtol=1e-4, atol=1e-5, err_msg=f"B={b} T={t}")
    g = _compiled(sotc_bin, tmp_path, sotc.trace(programs.pooled_mean, "float32[B,T,4]"), "mean")
    for b, t in ((2, 3), (5, 17)):
        x = rng.standard_normal((b, t, 4), np.float32)
        mean, var, std = g(x)
        np.testing.assert_allclose(mean, x.mean(1), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(var, x.var(1, ddof=1), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(std, x.std(axis=(0, 1), ddof=1), rtol=1e-4, atol=1e-5)
    with pytest.raises(sotc.GuardError) as e:
        f(rng.standard_normal((2, 3, 4), np.float32), w)
    assert e.value.mismatches[0]["compiled_for"] == "float32[?, s1, 8]"


def test_sizes_merged_into_one_dimension(sotc_bin, tmp_path, programs):
    """A dimension that is a product of sizes (docs/dynamic-shapes.md#merged-sizes): GPT-2's
    Conv1D views [B, T, C] as rows of B*T around its GEMM (computed on [B, T] rows again:
    the GEMM's m is s0*s1), and results of B*T and 2*B rows have shapes the call's sizes
    give, the manifest writing those dims as their products."""
    f = _compiled(sotc_bin, tmp_path, sotc.trace(programs.conv1d, "float32[B,T,8]",
                                                 "float32[8,6]"), "conv1d")
    steps = json.loads((tmp_path / "conv1d.manifest.json").read_text())["segments"][0]["steps"]
    assert [s["m"] for s in steps if s["kind"] == "gemm"] == ["s0*s1"]
    g = _compiled(sotc_bin, tmp_path, sotc.trace(programs.flat_tokens, "float32[B,T,8]"), "flat")
    outputs = json.loads((tmp_path / "flat.manifest.json").read_text())["segments"][0]["outputs"]
    assert [o["shape"] for o in outputs] == [["s0*s1", 8], ["2*s0", "4*s1"], []]
    rng = np.random.default_rng(11)
    w = rng.standard_normal((8, 6), np.float32)
    for b, t in ((1, 1), (3, 5), (2, 33), (7, 3)):
        x = rng.standard_normal((b, t, 8), np.float32)
        np.testing.assert_allclose(f(x, w), x @ w, rtol=1e-4, atol=1e-5, err_msg=f"B={b} T={t}")
        rows, doubled, total = g(x)
        assert rows.shape == (b * t, 8) and doubled.shape == (2 * b, 4 * t)
        np.testing.assert_allclose(rows, np.exp(x.reshape(b * t, 8)), rtol=1e-5)
        np.testing.assert_array_equal(doubled, x.reshape(2 * b, -1))
        np.testing.assert_allclose(total, x.sum(), rtol=1e-4, atol=1e-4)
    h = _compiled(sotc_bin, tmp_path, sotc.trace(programs.regrouped, "float32[B,T,8]"), "regroup")
    x = rng.standard_normal((3, 5, 8), np.float32)
    np.testing.assert_array_equal(h(x), x.reshape(3, 40))


def test_a_split_of_a_dynamic_size_takes_it_as_a_multiple(sotc_bin, tmp_path, programs):
    """B * 6 elements into rows of 4 are whole for even B only: B is taken as a multiple of 2
    (docs/dynamic-shapes.md#split-sizes), guarded; even batches match numpy, odd ones are
    refused with the line that needs them even."""
    f = _compiled(sotc_bin, tmp_path, sotc.trace(programs.split_rows, "float32[?,6]"), "split")
    rng = np.random.default_rng(6)
    for b in (2, 4, 18):
        x = rng.standard_normal((b, 6), np.float32)
        np.testing.assert_array_equal(f(x), x.reshape(-1, 4))
    with pytest.raises(sotc.GuardError, match=r"x: expected float32\[\?, 6\] with dimension 0 a "
                       r"multiple of 2, got float32\[3, 6\] \(guard g1 \(\S*seq_programs.py:\d+\)\)"):
        f(rng.standard_normal((3, 6), np.float32))


def test_tensors_made_at_the_calls_sizes(sotc_bin, tmp_path, programs):
    """torch.ones(T - 1, T - 1), torch.zeros(B, T) and torch.full((T,), v) of the call's sizes
    (a derived one included) match numpy at every pair."""
    f = _compiled(sotc_bin, tmp_path, sotc.trace(programs.made_of_sizes, "float32[B,T,4]"),
                  "made")
    rng = np.random.default_rng(7)
    for b, t in ((1, 2), (3, 5), (2, 9)):
        x = rng.standard_normal((b, t, 4), np.float32)
        masked, zeros, full = f(x)
        np.testing.assert_allclose(masked, np.tril(np.ones((t - 1, t - 1), np.float32)) @ x[:, 1:],
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(zeros, x.sum(-1), rtol=1e-6)
        np.testing.assert_allclose(full, 2 * x[0, :, 0], rtol=1e-6)
