"""A dynamic dimension (`float32[?,128]`) compiles as a batch (docs/dynamic-shapes.md):
one artifact runs any number of rows and matches numpy at each, sizes that are not multiples
of a vector or of the rows a kernel is built for included, the batch first or moved behind
static dims; the manifest writes the batch as -1 and its counts per row; calls whose batches disagree, or that have none, get the usual
mismatch table; what would tie the batch to another size is a coded error at compile time."""

import os
import json
import subprocess
import sys

import numpy as np
import pytest

import sotc

PROGRAMS = """
def softmax(x):
    e = torch.exp(x - x.max(-1, keepdim=True)[0])
    return e / e.sum(-1, keepdim=True)

def layer_norm(x, w, b):
    m = x.mean(-1, keepdim=True)
    v = ((x - m) ** 2).mean(-1, keepdim=True)
    return (x - m) / torch.sqrt(v + 1e-5) * w + b

def mlp(x, w1, b1, w2):
    return torch.relu(x @ w1 + b1) @ w2

def heads(q, k):
    s = q @ k.transpose(-1, -2)
    return torch.softmax(s, -1)

def short_rows(x, y):
    return torch.sin(x) * y

def flatten(x):
    B, C, L = x.shape
    return x.view(B, -1) * 2.0

def rows_sum(x):
    return x.sum(0)

def split_heads(x, w):  # nanoGPT's and timm's attention: the batch behind the q/k/v split
    B, T, C = x.shape
    qkv = (x @ w).reshape(B, T, 3, 2, C // 2).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    att = torch.softmax(q @ k.transpose(-2, -1), -1)
    return (att @ v).transpose(1, 2).reshape(B, T, C)

def columns(x, y):  # the batch second, in and out
    return torch.exp(x - x.max(0, keepdim=True)[0]) * y.t()

def turned(x):  # the batch second in the only input, first in the result
    return torch.exp(x.t())

def merged_after_move(x):
    return x.transpose(0, 1).reshape(-1)

def chunked(x):  # a decision the bound settles: no guard
    if x.shape[0] > 100:
        return x.reshape(x.shape[0], 2, -1).sum(1)
    return x * 2.0

def row_lookup(x, i):  # torch.gather along the tokens of a batch-first table
    return torch.gather(x, 1, i)

def conv1d(x, w, b):  # transformers' Conv1D: the tokens flattened with their batch
    size_out = x.size()[:-1] + (w.shape[1],)
    y = torch.addmm(b, x.view(-1, x.size(-1)), w)
    return torch.softmax(y, -1).view(size_out)

def same_segment(m):  # transformers' packed-sequence mask: m[b, q] == m[b, k] per batch row
    B = m.shape[0]
    b = torch.arange(B)[:, None, None]
    q = torch.arange(6)[None, :, None]
    k = torch.arange(6)[None, None, :]
    return (m[b, q] == m[b, k]) & (k <= q)

def pinned(x, y):
    return x + y

def doubled(x):
    return x.reshape(x.shape[0] * 2, -1)

def all_but_last(x):
    return x[: x.shape[0] - 1]

def rows_mod_three(x):
    return x[: x.shape[0] % 3]

def pairs_of_rows(x):
    B = x.shape[0]
    return x.reshape(B // 2, 2, x.shape[1]).sum(1)

def pairs_decided(x):
    B = x.shape[0]
    y = x.reshape(B // 2, -1)
    if B > 5:
        return y * 2
    return y

def single_row_first(x):
    B = x.shape[0]
    if B == 1:
        return x * 2.0
    return x * 3.0

def at_least_four(x, y):
    if x.shape[0] < 4:
        return x
    if y.shape[0] == x.shape[0]:  # one batch: always true
        return x + 1.0
    return x
"""

BATCHES = [1, 7, 64, 1000, 4099, 4100]


def program_module(tmp_path, monkeypatch, name, source):
    """Module `name` of the torch functions in `source`, importable for tracing (torch stubbed
    where it is not installed)."""
    (tmp_path / f"{name}.py").write_text("import torch\n" + source)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)
    with sotc.stub_missing_frameworks():
        return __import__(name)


@pytest.fixture()
def programs(tmp_path, monkeypatch):
    return program_module(tmp_path, monkeypatch, "dyn_programs", PROGRAMS)


def _compile(sotc_bin, tmp_path, trace, name):
    path = trace.save(str(tmp_path / f"{name}.pb"))
    library = tmp_path / f"{name}.so"
    result = subprocess.run([sotc_bin, "compile", path, "--target", "cpu", "-o", str(library)],
                            capture_output=True, text=True)
    return library, result


def _compiled(sotc_bin, tmp_path, trace, name):
    library, result = _compile(sotc_bin, tmp_path, trace, name)
    assert result.returncode == 0, result.stderr
    return sotc.load(library)


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _layer_norm(x, w, b):
    m = x.mean(-1, keepdims=True)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5) * w + b


def test_one_artifact_runs_every_batch(sotc_bin, tmp_path, programs):
    rng = np.random.default_rng(0)
    softmax = _compiled(sotc_bin, tmp_path, sotc.trace(programs.softmax, "float32[?,96]"), "sm")
    norm = _compiled(sotc_bin, tmp_path, sotc.trace(programs.layer_norm, "float32[?,96]",
                                                    "float32[96]", "float32[96]"), "ln")
    w, b = rng.standard_normal(96, np.float32), rng.standard_normal(96, np.float32)
    for n in BATCHES + [7, 1]:  # sizes again after larger ones: each call its own rows
        x = rng.standard_normal((n, 96), np.float32)
        np.testing.assert_allclose(softmax(x), _softmax(x), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(norm(x, w, b), _layer_norm(x, w, b), rtol=1e-4, atol=1e-4)


def test_gemms_take_the_batch_as_rows_or_batch(sotc_bin, tmp_path, programs):
    rng = np.random.default_rng(1)
    mlp = _compiled(sotc_bin, tmp_path, sotc.trace(programs.mlp, "float32[?,5,32]",
                                                   "float32[32,48]", "float32[48]",
                                                   "float32[48,16]"), "mlp")
    heads = _compiled(sotc_bin, tmp_path, sotc.trace(programs.heads, "float32[?,4,16,8]",
                                                     "float32[?,4,16,8]"), "heads")
    manifest = json.loads((tmp_path / "mlp.manifest.json").read_text())
    gemms = [s for s in manifest["segments"][0]["steps"] if s["kind"] == "gemm"]
    assert [g["m"] for g in gemms] == ["5*s0", "5*s0"]
    manifest = json.loads((tmp_path / "heads.manifest.json").read_text())
    gemm = next(s for s in manifest["segments"][0]["steps"] if s["kind"] == "gemm")
    assert gemm["batch"] == ["s0", 4]
    w1 = rng.standard_normal((32, 48), np.float32) * 0.2
    b1 = rng.standard_normal(48, np.float32)
    w2 = rng.standard_normal((48, 16), np.float32) * 0.2
    for n in (1, 3, 130):
        x = rng.standard_normal((n, 5, 32), np.float32)
        np.testing.assert_allclose(mlp(x, w1, b1, w2), np.maximum(x @ w1 + b1, 0) @ w2,
                                   rtol=1e-4, atol=1e-4)
        q, k = (rng.standard_normal((n, 4, 16, 8), np.float32) for _ in range(2))
        np.testing.assert_allclose(heads(q, k), _softmax(q @ k.transpose(0, 1, 3, 2)),
                                   rtol=1e-4, atol=1e-5)


def test_rows_shorter_than_a_vector_and_reshapes(sotc_bin, tmp_path, programs):
    rng = np.random.default_rng(2)
    short = _compiled(sotc_bin, tmp_path, sotc.trace(programs.short_rows, "float32[?,3]",
                                                     "float32[3]"), "short")
    flat = _compiled(sotc_bin, tmp_path, sotc.trace(programs.flatten, "float32[?,3,5]"), "flat")
    y = rng.standard_normal(3, np.float32)
    for n in (1, 2, 9, 17):
        x = rng.standard_normal((n, 3), np.float32)
        np.testing.assert_allclose(short(x, y), np.sin(x) * y, rtol=1e-6, atol=1e-6)
        x3 = rng.standard_normal((n, 3, 5), np.float32)
        out = flat(x3)
        assert out.shape == (n, 15)
        np.testing.assert_array_equal(out, x3.reshape(n, 15) * 2)


def test_manifest_writes_the_batch_per_row(sotc_bin, tmp_path, programs):
    _compiled(sotc_bin, tmp_path, sotc.trace(programs.layer_norm, "float32[?,96]",
                                             "float32[96]", "float32[96]"), "ln")
    manifest = json.loads((tmp_path / "ln.manifest.json").read_text())
    assert manifest["entries"][0]["inputs"][0]["shape"] == [-1, 96]
    segment = manifest["segments"][0]
    assert segment["inputs"][0] == {"name": "x", "dtype": "float32", "shape": [-1, 96],
                                    "bytes": 384, "stop_gradient": True}
    assert segment["outputs"][0]["shape"] == [-1, 96]
    (kernel,) = segment["steps"]  # the norm is one kernel, its weights read in place
    assert kernel["grid"] == "s0"
    inspect = subprocess.run([sotc_bin, "inspect", str(tmp_path / "ln.so")], capture_output=True,
                             text=True, check=True).stdout
    assert "x: float32[?, 96]" in inspect and "grid s0" in inspect


def test_calls_without_one_batch_are_refused(sotc_bin, tmp_path, programs):
    f = _compiled(sotc_bin, tmp_path, sotc.trace(programs.short_rows, "float32[?,3]",
                                                 "float32[?,3]"), "two")
    x = np.ones((4, 3), np.float32)
    np.testing.assert_allclose(f(x, x), np.sin(x))
    with pytest.raises(sotc.GuardError) as e:
        f(x, np.ones((5, 3), np.float32))
    assert [(m["parameter"], m["compiled_for"], m["got"]) for m in e.value.mismatches] == [
        ("y", "float32[?, 3] with ? = 4, the batch of x", "float32[5, 3]")]
    with pytest.raises(sotc.GuardError) as e:
        f(np.ones((0, 3), np.float32), np.ones((0, 3), np.float32))
    assert e.value.mismatches[0]["compiled_for"] == "float32[?, 3] with ? >= 1"
    with pytest.raises(sotc.GuardError) as e:
        f(np.ones((4, 4), np.float32), x)
    assert e.value.mismatches[0]["compiled_for"] == "float32[?, 3]"


def test_the_batch_behind_static_dims(sotc_bin, tmp_path, programs):
    """Kernels whose tensors hold the batch after a static dim take the call's rows and index
    with them; inputs and results may have it there too."""
    rng = np.random.default_rng(10)
    heads = _compiled(sotc_bin, tmp_path, sotc.trace(programs.split_heads, "float32[?,6,8]",
                                                     "float32[8,24]"), "split")
    cols = _compiled(sotc_bin, tmp_path, sotc.trace(programs.columns, "float32[5,?]",
                                                    "float32[?,5]"), "cols")
    manifest = json.loads((tmp_path / "split.manifest.json").read_text())
    shapes = [b["shape"] for b in manifest["segments"][0]["arena"]["buffers"]]
    assert [3, -1, 2, 6, 4] in shapes
    assert "int64_t s0" in manifest["target"]["abi"]
    w = rng.standard_normal((8, 24), np.float32) * 0.3

    def want_heads(x):
        B, T, C = x.shape
        qkv = (x @ w).reshape(B, T, 3, 2, C // 2).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        return (_softmax(q @ k.transpose(0, 1, 3, 2)) @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
    for n in (1, 7, 64, 1000, 4100, 3):
        x = rng.standard_normal((n, 6, 8), np.float32)
        np.testing.assert_allclose(heads(x, w), want_heads(x), rtol=1e-4, atol=1e-5)
        c, r = rng.standard_normal((5, n), np.float32), rng.standard_normal((n, 5), np.float32)
        out = cols(c, r)
        assert out.shape == (5, n)
        np.testing.assert_allclose(out, np.exp(c - c.max(0, keepdims=True)) * r.T, rtol=1e-5,
                                   atol=1e-6)
    turned = _compiled(sotc_bin, tmp_path, sotc.trace(programs.turned, "float32[5,?]"), "turned")
    for n in (1, 9, 3):  # sotc.load sizes the result by the input's second dimension
        c = rng.standard_normal((5, n), np.float32)
        np.testing.assert_allclose(turned(c), np.exp(c.T), rtol=1e-6)
    with pytest.raises(sotc.GuardError) as e:
        cols(np.ones((5, 4), np.float32), np.ones((3, 5), np.float32))
    assert e.value.mismatches[0]["compiled_for"] == "float32[?, 5] with ? = 4, the batch of x"
    path = tmp_path / "split.fatbin"
    subprocess.run([sotc_bin, "compile", str(tmp_path / "split.pb"), "--gpu-arch", "sm_90", "-o",
                    str(path)], check=True)
    emulated = sotc.load(path, device="emulator")
    for n in (1, 5):
        x = rng.standard_normal((n, 6, 8), np.float32)
        np.testing.assert_allclose(emulated(x, w), want_heads(x), rtol=1e-4, atol=1e-5)


def test_a_bound_on_the_batch(sotc_bin, tmp_path, programs):
    """`?<=64`: calls of more rows are refused with the usual table, and a decision on the
    size that the bound settles (`B > 100`) needs no guard."""
    f = _compiled(sotc_bin, tmp_path, sotc.trace(programs.chunked, "float32[?<=64,4]"), "bound")
    manifest = json.loads((tmp_path / "bound.manifest.json").read_text())
    guards = [g for g in manifest["entries"][0]["guards"] if g["kind"] == "batch"]
    assert [(g["expression"], g["expected"]) for g in guards] == [
        ("frame.f_locals['x'].shape[0]", "<= 64")]
    for n in (1, 64):
        x = np.full((n, 4), 1.5, np.float32)
        np.testing.assert_array_equal(f(x), x * 2)
    with pytest.raises(sotc.GuardError) as e:
        f(np.ones((65, 4), np.float32))
    assert e.value.mismatches[0]["compiled_for"] == "float32[?, 4] with ? <= 64"
    with pytest.raises(sotc.SpecError, match="at least 1"):
        sotc.trace(programs.chunked, "float32[?<=0,4]")


def test_a_gather_along_each_row(sotc_bin, tmp_path, programs):
    """`torch.gather(x, 1, i)` with the batch first in both: each index compared with its
    row's positions, on the CPU and CUDA."""
    f = _compiled(sotc_bin, tmp_path, sotc.trace(programs.row_lookup, "float32[?,8]",
                                                 "int64[?,3]"), "lookup")
    path = tmp_path / "lookup.fatbin"
    subprocess.run([sotc_bin, "compile", str(tmp_path / "lookup.pb"), "--gpu-arch", "sm_90",
                    "-o", str(path)], check=True)
    emulated = sotc.load(path, device="emulator")
    rng = np.random.default_rng(13)
    for n in (1, 7, 64, 1000):
        x = rng.standard_normal((n, 8), np.float32)
        i = rng.integers(0, 8, (n, 3))
        want = np.take_along_axis(x, i, 1)
        np.testing.assert_array_equal(f(x, i), want)
        if n < 64:
            np.testing.assert_array_equal(emulated(x, i), want)


def test_rows_flattened_with_their_batch(sotc_bin, tmp_path, programs):
    """`x.view(-1, C)` merges the batch with the tokens; the GEMM, the bias and the softmax
    after it run on the unmerged rows (sotc-sir-unmerge-batch), and `view(size_out)` reads
    them back: one GEMM of 4 rows per batch row."""
    f = _compiled(sotc_bin, tmp_path, sotc.trace(programs.conv1d, "float32[?,4,8]",
                                                 "float32[8,6]", "float32[6]"), "conv1d")
    manifest = json.loads((tmp_path / "conv1d.manifest.json").read_text())
    gemm = next(s for s in manifest["segments"][0]["steps"] if s["kind"] == "gemm")
    assert gemm["m"] == "4*s0"
    path = tmp_path / "conv1d.fatbin"
    subprocess.run([sotc_bin, "compile", str(tmp_path / "conv1d.pb"), "--gpu-arch", "sm_90",
                    "-o", str(path)], check=True)
    emulated = sotc.load(path, device="emulator")
    rng = np.random.default_rng(12)
    w, b = rng.standard_normal((8, 6), np.float32), rng.standard_normal(6, np.float32)
    for n in (1, 7, 64, 1000):
        x = rng.standard_normal((n, 4, 8), np.float32)
        want = _softmax(x @ w + b)
        np.testing.assert_allclose(f(x, w, b), want, rtol=1e-5, atol=1e-6)
        if n < 64:
            np.testing.assert_allclose(emulated(x, w, b), want, rtol=1e-5, atol=1e-6)


def test_rows_indexed_by_their_own_batch_index(sotc_bin, tmp_path, programs):
    """`m[arange(B)[:, None, None], q]` names each batch row's own elements: it compiles as a
    lookup per row (the batch moved behind the looked-up dim), on the CPU and CUDA."""
    f = _compiled(sotc_bin, tmp_path, sotc.trace(programs.same_segment, "int64[?,6]"), "seg")
    path = tmp_path / "seg.fatbin"
    subprocess.run([sotc_bin, "compile", str(tmp_path / "seg.pb"), "--gpu-arch", "sm_90", "-o",
                    str(path)], check=True)
    emulated = sotc.load(path, device="emulator")
    rng = np.random.default_rng(11)
    q, k = np.arange(6)[:, None], np.arange(6)[None, :]
    for n in (1, 7, 64, 1000):
        m = rng.integers(0, 3, (n, 6))
        want = (m[:, :, None] == m[:, None, :]) & (k <= q)
        np.testing.assert_array_equal(f(m), want)
        if n < 64:
            np.testing.assert_array_equal(emulated(m), want)


@pytest.mark.parametrize("name, specs, why", [
    ("pinned", ["float32[?,4]", "float32[3,4]"], "the dynamic size meets a static one (3)"),
])
def test_what_ties_the_batch_is_refused(sotc_bin, tmp_path, programs, name, specs, why):
    library, result = _compile(sotc_bin, tmp_path, sotc.trace(getattr(programs, name), *specs),
                               name)
    assert result.returncode != 0
    assert "error E4002" in result.stderr and why in result.stderr
    assert f"dyn_programs.py:" in result.stderr
    assert not library.exists()


def test_the_batch_merged_with_other_dims(sotc_bin, tmp_path, programs):
    """Dimensions that are products of the batch (docs/dynamic-shapes.md#merged-sizes): the
    transposed rows flattened (4*s0 elements), and B * 2 rows of half as many."""
    moved = _compiled(sotc_bin, tmp_path, sotc.trace(programs.merged_after_move, "float32[?,4]"),
                      "moved")
    doubled = _compiled(sotc_bin, tmp_path, sotc.trace(programs.doubled, "float32[?,4]"), "twice")
    rng = np.random.default_rng(2)
    for n in (1, 7, 64, 1000):
        x = rng.standard_normal((n, 4), np.float32)
        np.testing.assert_array_equal(moved(x), x.T.reshape(-1))
        np.testing.assert_array_equal(doubled(x), x.reshape(2 * n, 2))


def test_a_size_computed_from_the_batch_is_no_shape(sotc_bin, tmp_path, programs):
    """B % 3 is a 0-d tensor of the call's value (arithmetic compiles), which no shape or
    slice bound takes: a dimension is a product of the sizes or one of them plus a number."""
    library, result = _compile(sotc_bin, tmp_path,
                               sotc.trace(programs.rows_mod_three, "float32[?,4]"), "mod")
    assert result.returncode != 0
    assert ("error E3005: a size computed from a dynamic dimension's size other than by "
            "products, sums with a number and whole quotients (T * T, T % 3) is a tensor known "
            "at run time: __getitem__ takes numbers") in result.stderr
    assert "dyn_programs.py:" in result.stderr
    assert not library.exists()


def test_all_rows_but_the_last_are_a_size_derived_from_the_batch(sotc_bin, tmp_path, programs):
    """x[:B - 1] has B - 1 rows, a size of its own (docs/dynamic-shapes.md#derived-sizes):
    it matches numpy at every batch, and one row, which would leave none, is refused."""
    f = _compiled(sotc_bin, tmp_path, sotc.trace(programs.all_but_last, "float32[?,4]"), "abl")
    rng = np.random.default_rng(4)
    for n in (2, 5, 33):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        np.testing.assert_array_equal(np.asarray(f(x)), x[:-1])
    with pytest.raises(sotc.GuardError, match=r"with \? >= 2"):
        f(np.ones((1, 4), np.float32))


def test_a_batch_split_in_pairs_is_taken_even(sotc_bin, tmp_path, programs):
    """B // 2 as a dimension (x.reshape(B // 2, 2, C)) takes the batch as a multiple of 2: the
    input's dimension is 2*s0 (the manifest's "2*s0"), a guard `% 2 == 0` says which line
    needs it, and odd batches are refused; a decision on B is one on s0 (`B > 5`: s0 >= 3)."""
    trace = sotc.trace(programs.pairs_of_rows, "float32[?,4]")
    f = _compiled(sotc_bin, tmp_path, trace, "pairs")
    manifest = json.loads((tmp_path / "pairs.manifest.json").read_text())
    entry = manifest["entries"][0]
    assert entry["inputs"][0]["shape"] == ["2*s0", 4]
    assert [(g["expression"], g["expected"]) for g in entry["guards"] if g["kind"] == "batch"] \
        == [("frame.f_locals['x'].shape[0]", "% 2 == 0")]
    rng = np.random.default_rng(5)
    for n in (2, 6, 40):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        np.testing.assert_allclose(np.asarray(f(x)), x.reshape(n // 2, 2, 4).sum(1), rtol=1e-6)
    with pytest.raises(sotc.GuardError, match="x: expected float32"):
        f(np.ones((3, 4), np.float32))
    decided = _compiled(sotc_bin, tmp_path, sotc.trace(programs.pairs_decided, "float32[?,4]"),
                        "decided")
    guards = json.loads((tmp_path / "decided.manifest.json").read_text())["entries"][0]["guards"]
    assert ("frame.f_locals['x'].shape[0]", ">= 6") in [(g["expression"], g["expected"])
                                                       for g in guards]
    x = rng.standard_normal((8, 4)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(decided(x)), x.reshape(4, 8) * 2, rtol=1e-6)
    with pytest.raises(sotc.GuardError):
        decided(np.ones((4, 4), np.float32))


def test_sotc_run_draws_the_batch_it_is_given(sotc_bin, tmp_path, programs):
    library, _ = _compile(sotc_bin, tmp_path, sotc.trace(programs.softmax, "float32[?,8]"), "sm")
    run = [sotc_bin, "run", str(library), "--input", "x=random"]
    missing = subprocess.run(run, capture_output=True, text=True)
    assert missing.returncode != 0
    assert "E9009: x=random: it has a dynamic batch (float32[?, 8]): give its " \
           "size with --batch N" in missing.stderr
    given = subprocess.run(run + ["--batch", "3"], capture_output=True, text=True, check=True)
    assert "float32[3, 8]" in given.stdout


def test_threads_calling_with_other_batches(sotc_bin, tmp_path, programs):
    import threading
    f = _compiled(sotc_bin, tmp_path, sotc.trace(programs.softmax, "float32[?,32]"), "sm")
    failures = []

    def calls(seed):
        rng = np.random.default_rng(seed)
        for _ in range(50):
            x = rng.standard_normal((int(rng.integers(1, 300)), 32), np.float32)
            if not np.allclose(f(x), _softmax(x), rtol=1e-5, atol=1e-6):
                failures.append(x.shape)

    threads = [threading.Thread(target=calls, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_a_bundle_of_batched_entries(sotc_bin, tmp_path, programs):
    """One trace per width, each with a dynamic batch: a call takes the entry of its width,
    at any rows; the same traces give the same bytes."""
    paths = [sotc.trace(programs.layer_norm, f"float32[?,{c}]", f"float32[{c}]",
                        f"float32[{c}]").save(str(tmp_path / f"ln{c}.pb")) for c in (64, 96)]
    outputs = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        library = tmp_path / name / "k.so"
        subprocess.run([sotc_bin, "compile", *paths, "--target", "cpu", "-o", str(library)],
                       check=True, capture_output=True)
        outputs.append((library.read_bytes(), (tmp_path / name / "k.manifest.json").read_text()))
    assert outputs[0] == outputs[1]
    f = sotc.load(tmp_path / "a" / "k.so")
    rng = np.random.default_rng(5)
    for n, c in ((3, 64), (5, 96), (1, 64), (700, 96)):
        x = rng.standard_normal((n, c), np.float32)
        w, b = rng.standard_normal(c, np.float32), rng.standard_normal(c, np.float32)
        np.testing.assert_allclose(f(x, w, b), _layer_norm(x, w, b), rtol=1e-4, atol=1e-4)


def test_decisions_on_the_batch_size_are_guarded(sotc_bin, tmp_path, programs):
    """`if B == 1` is decided the way that keeps every other size (B != 1), and guarded: a call
    of one row is refused with the line that decided, as any mismatch is."""
    f = _compiled(sotc_bin, tmp_path, sotc.trace(programs.single_row_first, "float32[?,4]"),
                  "single")
    manifest = json.loads((tmp_path / "single.manifest.json").read_text())
    (guard,) = [g for g in manifest["entries"][0]["guards"] if g["kind"] == "batch"]
    assert (guard["expression"], guard["expected"]) == ("frame.f_locals['x'].shape[0]", "!= 1")
    assert "dyn_programs.py:" in guard["source"]
    x = np.ones((3, 4), np.float32)
    np.testing.assert_array_equal(f(x), x * 3)
    with pytest.raises(sotc.GuardError) as e:
        f(np.ones((1, 4), np.float32))
    ((parameter, expected, got, source),) = [
        (m["parameter"], m["compiled_for"], m["got"], m["guard"]) for m in e.value.mismatches]
    assert (parameter, expected, got) == ("x", "float32[?, 4] with ? != 1", "float32[1, 4]")
    assert "dyn_programs.py:" in source

    g = _compiled(sotc_bin, tmp_path, sotc.trace(programs.at_least_four, "float32[?,4]",
                                                 "float32[?,4]"), "four")
    np.testing.assert_array_equal(g(x[:1].repeat(5, 0), x[:1].repeat(5, 0)), np.full((5, 4), 2))
    with pytest.raises(sotc.GuardError) as e:
        g(x, x)
    assert e.value.mismatches[0]["compiled_for"] == "float32[?, 4] with ? >= 4"


def test_example_arrays_with_a_dynamic_batch(sotc_bin, tmp_path, programs):
    """sotc.trace(fn, array, sotc_dynamic={"x": [0]}): the example's first dimension as `?`."""
    rng = np.random.default_rng(7)
    trace = sotc.trace(programs.softmax, np.zeros((2, 24), np.float32), sotc_dynamic={"x": [0]})
    dims = [(d.size, d.dynamic) for d in trace.proto.inputs[0].value.tensor.dims]
    assert dims == [(-1, True), (24, False)]
    f = _compiled(sotc_bin, tmp_path, trace, "sm")
    for n in (1, 9):
        x = rng.standard_normal((n, 24), np.float32)
        np.testing.assert_allclose(f(x), _softmax(x), rtol=1e-5, atol=1e-6)
    with pytest.raises(sotc.TraceError, match="sotc_dynamic names 'y', which is no tensor input"):
        sotc.trace(programs.softmax, np.zeros((2, 24), np.float32), sotc_dynamic={"y": [0]})
    with pytest.raises(sotc.TraceError, match="x has no dimension 2"):
        sotc.trace(programs.softmax, np.zeros((2, 24), np.float32), sotc_dynamic={"x": [2]})


def test_a_named_dynamic_size(sotc_bin, tmp_path, programs):
    """A dynamic size may have a name (`float32[B,24]`, sotc_dynamic={"x": {0: "B"}}): one
    name is one size, compiled as `?` is, its bound a guard."""
    rng = np.random.default_rng(8)
    spec = sotc.parse_input("float32[B<=16,24]")
    assert [(d.dynamic, d.symbol, d.max) for d in spec.dims] == [(True, "B", 16), (False, "", 0)]
    trace = sotc.trace(programs.softmax, np.zeros((2, 24), np.float32),
                       sotc_dynamic={"x": {0: "B"}})
    assert [(d.dynamic, d.symbol) for d in trace.proto.inputs[0].value.tensor.dims] == [
        (True, "B"), (False, "")]
    f = _compiled(sotc_bin, tmp_path, sotc.trace(programs.softmax, spec), "named")
    for n in (1, 16):
        x = rng.standard_normal((n, 24), np.float32)
        np.testing.assert_allclose(f(x), _softmax(x), rtol=1e-5, atol=1e-6)
    with pytest.raises(sotc.GuardError):
        f(np.zeros((17, 24), np.float32))
    with pytest.raises(sotc.TraceError, match="x's dimension 0 is named '1B'"):
        sotc.trace(programs.softmax, np.zeros((2, 24), np.float32), sotc_dynamic={"x": {0: "1B"}})


def _add_rows(x, y):
    return x + y


def test_sizes_named_apart_that_meet_are_one(sotc_bin, tmp_path):
    """x + y of B and N rows needs B == N: one size, with a relation guard at the line; a
    call whose y has other rows than x is refused."""
    trace = sotc.trace(_add_rows, "float32[B,4]", "float32[N,4]", sotc_framework="torch")
    f = _compiled(sotc_bin, tmp_path, trace, "rows")
    manifest = json.loads((tmp_path / "rows.manifest.json").read_text())
    (relation,) = [g for g in manifest["entries"][0]["guards"] if g["kind"] == "relation"]
    assert relation["condition"] == "frame.f_locals['y'].shape[0] == frame.f_locals['x'].shape[0]"
    x, y = np.ones((3, 4), np.float32), np.full((3, 4), 2, np.float32)
    np.testing.assert_array_equal(f(x, y), x + y)
    with pytest.raises(sotc.GuardError) as e:
        f(x, np.ones((5, 4), np.float32))
    assert "the batch of x" in e.value.mismatches[0]["compiled_for"]
    assert e.value.mismatches[0]["guard"] == f"{relation['id']} ({relation['source']})"


def test_cuda_artifacts_of_a_batch_run_on_the_emulator(sotc_bin, tmp_path, programs):
    """The same programs for CUDA, on the emulator: kernels launched over the call's rows
    (their block fixed, their grid per call), GEMMs planned for each batch's shape."""
    def fatbin(trace, name):
        path = tmp_path / f"{name}.fatbin"
        subprocess.run([sotc_bin, "compile", trace.save(str(tmp_path / f"{name}.pb")),
                        "--gpu-arch", "sm_90", "-o", str(path)], check=True)
        return sotc.load(path, device="emulator")
    softmax = fatbin(sotc.trace(programs.softmax, "float32[?,96]"), "sm")
    mlp = fatbin(sotc.trace(programs.mlp, "float32[?,5,32]", "float32[32,48]", "float32[48]",
                            "float32[48,16]"), "mlp")
    manifest = json.loads((tmp_path / "sm.cuda.manifest.json").read_text())
    (kernel,) = manifest["segments"][0]["steps"]
    assert (kernel["grid"], kernel["block"]) == ("s0", 128)
    rng = np.random.default_rng(8)
    w1 = rng.standard_normal((32, 48), np.float32) * 0.2
    b1 = rng.standard_normal(48, np.float32)
    w2 = rng.standard_normal((48, 16), np.float32) * 0.2
    for n in (1, 7, 130, 7):
        x = rng.standard_normal((n, 96), np.float32)
        np.testing.assert_allclose(softmax(x), _softmax(x), rtol=1e-5, atol=1e-6)
        x3 = rng.standard_normal((n, 5, 32), np.float32)
        np.testing.assert_allclose(mlp(x3, w1, b1, w2), np.maximum(x3 @ w1 + b1, 0) @ w2,
                                   rtol=1e-4, atol=1e-4)


def test_rows_of_three_warps_on_the_emulator(sotc_bin, tmp_path, programs):
    """A softmax over 96 columns reduces twice per row: with a block of 3 warps the second
    all_reduce raced the first on their shared buffer (the emulator's E8007); blocks are a
    power of two now. Static and dynamic alike."""
    for spec in ("float32[5,96]", "float32[?,96]"):
        path = tmp_path / "sm96.fatbin"
        subprocess.run([sotc_bin, "compile", sotc.trace(programs.softmax, spec).save(
            str(tmp_path / "sm96.pb")), "--gpu-arch", "sm_90", "-o", str(path)], check=True)
        x = np.random.default_rng(9).standard_normal((5, 96), np.float32)
        np.testing.assert_allclose(sotc.load(path, device="emulator")(x), _softmax(x),
                                   rtol=1e-5, atol=1e-6)


def test_a_bundle_serves_the_size_a_guard_left_out(sotc_bin, tmp_path, programs):
    """`if B == 1` leaves one row out of the dynamic entry (`!= 1`); a bundle with a trace of
    one row first serves it, the dynamic entry every other size."""
    paths = [sotc.trace(programs.single_row_first, spec).save(str(tmp_path / f"{name}.pb"))
             for name, spec in (("one", "float32[1,4]"), ("many", "float32[?,4]"))]
    library = tmp_path / "k.so"
    subprocess.run([sotc_bin, "compile", *paths, "--target", "cpu", "-o", str(library)],
                   check=True, capture_output=True)
    f = sotc.load(library)
    for n, scale in ((1, 2), (2, 3), (9, 3), (1, 2)):
        x = np.full((n, 4), 1.5, np.float32)
        np.testing.assert_array_equal(f(x), x * scale)


def test_static_dimensions_that_are_multiples_of_the_first_stand_ins(sotc_bin, tmp_path,
                                                                     programs):
    """The kernels are built for each dynamic size at a prime stand-in (4099 for s0 first);
    a model whose static dimensions are multiples of the first ones (4099, 3 * 4111) gets
    others, so it compiles, and its static sizes stay static: a reduction over 4099 columns
    and a GEMM contracting them, on rows of the batch, for the CPU and for CUDA."""
    rng = np.random.default_rng(12)
    specs = ("float32[?,4099]", "float32[4099]", "float32[4099]")
    norm = _compiled(sotc_bin, tmp_path, sotc.trace(programs.layer_norm, *specs), "ln4099")
    mlp_specs = ("float32[?,2,4099]", "float32[4099,16]", "float32[16]", "float32[16,12333]")
    mlp = _compiled(sotc_bin, tmp_path, sotc.trace(programs.mlp, *mlp_specs), "mlp4099")
    manifest = json.loads((tmp_path / "mlp4099.manifest.json").read_text())
    gemms = [s for s in manifest["segments"][0]["steps"] if s["kind"] == "gemm"]
    assert [(g["m"], g["k"], g["n"]) for g in gemms] == [("2*s0", 4099, 16),
                                                        ("2*s0", 16, 12333)]
    w, b = rng.standard_normal(4099, np.float32), rng.standard_normal(4099, np.float32)
    w1 = rng.standard_normal((4099, 16), np.float32) * 0.02
    b1 = rng.standard_normal(16, np.float32)
    w2 = rng.standard_normal((16, 12333), np.float32) * 0.2
    for n in (1, 3, 8):
        x = rng.standard_normal((n, 4099), np.float32)
        np.testing.assert_allclose(norm(x, w, b), _layer_norm(x, w, b), rtol=1e-4, atol=1e-4)
        x3 = rng.standard_normal((n, 2, 4099), np.float32)
        np.testing.assert_allclose(mlp(x3, w1, b1, w2), np.maximum(x3 @ w1 + b1, 0) @ w2,
                                   rtol=1e-3, atol=1e-3)
    path = tmp_path / "ln4099.fatbin"
    subprocess.run([sotc_bin, "compile", str(tmp_path / "ln4099.pb"), "--gpu-arch", "sm_90",
                    "-o", str(path)], check=True)
    x = rng.standard_normal((3, 4099), np.float32)
    np.testing.assert_allclose(sotc.load(path, device="emulator")(x, w, b), _layer_norm(x, w, b),
                               rtol=1e-4, atol=1e-4)


def test_a_bundle_whose_entries_stand_in_apart(sotc_bin, tmp_path, programs):
    """A bundle's entries are compiled apart, each at its own stand-ins (the one with 4099
    columns at others than the one with 64): each kernel's grid and buffers are read at its
    entry's, so both run at any rows."""
    paths = [sotc.trace(programs.layer_norm, f"float32[?,{c}]", f"float32[{c}]",
                        f"float32[{c}]").save(str(tmp_path / f"ln{c}.pb")) for c in (64, 4099)]
    library = tmp_path / "k.so"
    subprocess.run([sotc_bin, "compile", *paths, "--target", "cpu", "-o", str(library)],
                   check=True, capture_output=True)
    manifest = json.loads((tmp_path / "k.manifest.json").read_text())
    assert [s["grid"] for seg in manifest["segments"] for s in seg["steps"]] == ["s0", "s0"]
    f = sotc.load(library)
    rng = np.random.default_rng(13)
    for n, c in ((3, 64), (5, 4099), (2, 4099), (7, 64)):
        x = rng.standard_normal((n, c), np.float32)
        w, b = rng.standard_normal(c, np.float32), rng.standard_normal(c, np.float32)
        np.testing.assert_allclose(f(x, w, b), _layer_norm(x, w, b), rtol=1e-4, atol=1e-4)


def test_a_dynamic_size_where_a_method_takes_a_tensor(root, sotc_bin, tmp_path):
    """x.sum(0) / x.shape[0] and x.sum(0).div(x.shape[0]): the size's run-time value, at
    several batch sizes, against numpy."""
    inputs = os.path.join(root, "tools", "sotc", "test", "Inputs")
    trace = tmp_path / "mean.pb"
    subprocess.run([sys.executable, "-m", "sotc", "trace", "sizes_as_tensors.py:mean_rows",
                    "--framework", "torch", "-i", "x=f32[?,4]", "-o", str(trace)], check=True,
                   cwd=inputs, env=dict(os.environ, PYTHONPATH=os.path.join(root, "tools",
                                                                              "python")))
    library = tmp_path / "mean.so"
    subprocess.run([sotc_bin, "compile", str(trace), "--target", "cpu", "-o", str(library)],
                   check=True)
    f = sotc.load(library)
    for rows in (1, 3, 17):
        x = np.random.default_rng(rows).standard_normal((rows, 4)).astype(np.float32)
        for got in f(x):
            np.testing.assert_allclose(got, x.sum(0) / rows, rtol=1e-5, atol=1e-6)
