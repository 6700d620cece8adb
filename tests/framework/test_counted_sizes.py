"""Sizes a kernel counts (docs/dynamic-shapes.md#sizes-a-kernel-counts): nonzero, argwhere,
masked_select, x[mask] and where(cond) in torch and paddle, and a detector's filtering on
what they select, traced once, compiled for the CPU and for CUDA (run on the CUDA emulator),
and compared with the framework's eager result where nothing, some and everything is
selected."""

import json
import os
import subprocess
import sys

import numpy as np
import paddle
import pytest
import torch
import torchvision

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))

from test_programs_vs_framework import DEVICES, assert_same, sotc_bin  # noqa: E402,F401

import sotc  # noqa: E402


def t_nonzero(x):
    return torch.nonzero(x > 0), torch.argwhere(x < -1)


def t_as_tuple(x):
    rows, cols = torch.nonzero(x > 0, as_tuple=True)
    i, j = torch.where(x < 0)
    return rows * 10 + cols, i - j


def t_masked_select(x, m):  # the mask broadcast over x's rows
    return torch.masked_select(x, m), x.masked_select(m).sum()


def t_boolean_index(x, m):  # a mask over the leading dimensions: whole rows
    return x[m] * 2.0


def t_filter(boxes, scores):  # a detector's score threshold on boxes, scores and their sum
    keep = scores > 0.5
    b, s = boxes[keep], scores[keep]
    return b * s[:, None], s, b.sum(0)


def t_indices(x, m):  # nonzero's positions as an index
    idx = torch.nonzero(m).squeeze(1)
    return x[idx] + idx[:, None].float()


def t_chained(x):  # a mask over rows another mask selected: its bound is a counted size
    a = x[x > 0]
    return a[a < 1.5] * 3.0


def t_nms(boxes, scores):  # torchvision's non-maximum suppression
    keep = torchvision.ops.nms(boxes, scores, 0.5)
    return boxes[keep], keep


def t_detect(boxes, scores, labels):  # a detector's post-processing: threshold, then per class
    keep = scores > 0.5
    b, s, l = boxes[keep], scores[keep], labels[keep]
    kept = torchvision.ops.batched_nms(b, s, l, 0.4)
    return b[kept], s[kept], l[kept]


def t_decided(x):  # a decision on a counted size: a branch, both sides compiled
    rows = torch.nonzero(x > 0)
    if rows.shape[0] < 4:
        return rows
    return rows * 2


def t_numel(x):  # torchvision's guard against no boxes
    kept = x[x > 0]
    if kept.numel() == 0:
        return torch.zeros(1)
    return kept.sum(0, keepdim=True)


def t_levels(scores, boxes):  # RetinaNet's and FCOS's levels: threshold, top k, concatenate
    parts, kept = [], []
    for level in range(3):
        s = scores[level * 12:(level + 1) * 12]
        keep = s > 0
        s = s[keep]
        idx = torch.where(keep)[0]
        k = min(5, s.size(0))  # torchvision's _topk_min: a size counted from a counted one
        s, order = s.topk(k)
        parts.append(s)
        kept.append(boxes[level * 12 + idx[order]])
    s, b = torch.cat(parts), torch.cat(kept)
    return s[:8], b[:8] * 2, torch.ones(max(3, len(s)))  # first rows at most; a bounded max


def t_many(scores):  # a detector's level with thousands of candidates: the runtime sorts them
    s = scores[scores > 0]
    v, i = s.topk(min(1000, s.size(0)))
    return v, i, torch.sort(s)[0][:3]


def t_unique(x, labels):  # the classes among kept rows, how often, and where each went
    kept = labels[x > 0]
    values, inverse, counts = torch.unique(kept, return_inverse=True, return_counts=True)
    runs, run_counts = torch.unique_consecutive(labels, return_counts=True)
    return (values, inverse, counts, runs, run_counts, kept.unique(),
            torch.unique_consecutive(x.floor(), return_inverse=True)[1],
            torch.unique(labels.view(8, 5), return_inverse=True)[1])


def p_unique(x, labels):
    kept = paddle.masked_select(labels, x > 0)
    values, index, inverse, counts = paddle.unique(kept, return_index=True, return_inverse=True,
                                                   return_counts=True)
    runs, run_counts = paddle.unique_consecutive(labels, return_counts=True, dtype="int32")
    return values, index, inverse, counts, runs, run_counts, paddle.unique(x.floor())


def t_write_columns(x):  # YOLO's decoding of kept rows: columns written at a counted size
    y = x[x[:, 4] > 0]
    y[:, :2] = y[:, :2] - y[:, 2:4] / 2  # (centre, size) to corners, in place
    y[..., 2:4] += y[..., :2]
    y[:, 4] = 1.0
    y[:, -2:] = torch.arange(2.0)  # a value broadcast along the counted rows
    picked = torch.nonzero(y[:, 3] > 0.5).squeeze_(-1)  # (ultralytics' fast_nms) a new shape
    z = x * 2
    z.t_()  # in place, on a static one
    return y, picked, z


def t_roi_align(features, boxes, scores):  # a two-stage detector's pooling of kept proposals
    kept = boxes[scores > 0.5]
    pool = torchvision.ops.RoIAlign((3, 2), spatial_scale=0.5, sampling_ratio=2, aligned=True)
    return (torchvision.ops.roi_align(features, [kept], 3, 0.5, 2),
            pool(features, [kept, boxes[:3] * 1.5]),
            torchvision.ops.roi_align(features[:1], [boxes * 2 - 6], (2, 2), 0.5, 3))


# Faster R-CNN's box head pooling: each kept proposal from the level its size picks. Its
# scales are set on the first call (as a model's warm-up run sets them), before tracing.
_POOL = torchvision.ops.MultiScaleRoIAlign(["0", "1"], 3, 2)
_POOL({"0": torch.zeros(1, 4, 16, 16), "1": torch.zeros(1, 4, 8, 8)}, [torch.zeros(1, 4)],
      [(64, 64)])


def t_multiscale_pool(f0, f1, boxes, scores):
    kept = boxes[scores > 0.5]
    return _POOL({"0": f0, "1": f1}, [kept], [(64, 64)])


def p_roi_align(features, boxes, boxes_num):  # boxes_num: the boxes of each image
    return (paddle.vision.ops.roi_align(features, boxes, boxes_num, 3, 0.5, 2),
            paddle.vision.ops.roi_align(features, boxes * 1.5, boxes_num, (2, 3), 0.5, 1,
                                        aligned=False))


def p_write_columns(x):
    y = x[x[:, 4] > 0]
    y[:, :2] = y[:, :2] - y[:, 2:4] / 2
    y[:, 4] = 1.0
    return y


def p_nms(boxes, scores):  # paddle's nms: by scores, or the boxes in their order
    return paddle.vision.ops.nms(boxes, 0.5, scores), paddle.vision.ops.nms(boxes, iou_threshold=0.4)


def p_nonzero(x):
    return paddle.nonzero(x > 0), paddle.nonzero(x < 0, as_tuple=True)[1]


def p_masked_select(x, m):
    return paddle.masked_select(x, m)


def p_boolean_index(x, m):
    return x[m] + 1.0


# name: (function, inputs(rng, selected) with `selected` the fraction the masks select)
def _x(rng, selected, shape):
    """Values whose sign selects: positive with probability `selected`."""
    magnitude = rng.uniform(0.5, 2.0, shape).astype(np.float32)
    return np.where(rng.random(shape) < selected, magnitude, -magnitude).astype(np.float32)


def _distinct(rng, selected, n):
    """n distinct values (no ties for topk to order) whose sign selects, as _x."""
    magnitude = (rng.permutation(n) + 1).astype(np.float32) / np.float32(n)
    return np.where(rng.random(n) < selected, magnitude, -magnitude).astype(np.float32)


def _mask(rng, selected, shape):
    return rng.random(shape) < selected


def _boxes(rng, n):
    """n boxes (x1, y1, x2, y2) of sides 1 to 3 around 12 x 12: many overlap."""
    corner = rng.uniform(0, 10, (n, 2))
    return np.concatenate([corner, corner + rng.uniform(1, 3, (n, 2))], 1).astype(np.float32)


def _sized_boxes(rng, n):
    """n boxes in a 64 x 64 image of sides 2 to 200: pooled from either of two levels (those
    over 112 from the coarser)."""
    corner = rng.uniform(0, 50, (n, 2))
    return np.concatenate([corner, corner + rng.uniform(2, 200, (n, 2))], 1).astype(np.float32)


def _scores(rng, selected, n):
    """Scores above 0.5 with probability `selected`."""
    return np.where(rng.random(n) < selected, rng.uniform(0.55, 1, n),
                    rng.uniform(0, 0.45, n)).astype(np.float32)


CASES = {
    "t_nonzero": (t_nonzero, lambda r, s: [_x(r, s, (4, 6)) * np.float32(1.5)]),
    "t_as_tuple": (t_as_tuple, lambda r, s: [_x(r, s, (5, 3))]),
    "t_masked_select": (t_masked_select, lambda r, s: [_x(r, 0.5, (3, 8)), _mask(r, s, (8,))]),
    "t_boolean_index": (t_boolean_index, lambda r, s: [_x(r, 0.5, (4, 5, 3)), _mask(r, s, (4, 5))]),
    "t_filter": (t_filter, lambda r, s: [r.random((30, 4)).astype(np.float32),
                                         np.where(r.random(30) < s, r.uniform(0.6, 1, 30),
                                                  r.uniform(0, 0.4, 30)).astype(np.float32)]),
    "t_indices": (t_indices, lambda r, s: [_x(r, 0.5, (7, 2)), _mask(r, s, (7,))]),
    "t_decided": (t_decided, lambda r, s: [_x(r, s * 0.6, (6,))]),
    "t_numel": (t_numel, lambda r, s: [_x(r, s, (9,))]),
    "t_chained": (t_chained, lambda r, s: [_x(r, s, (24,)) * np.float32(2)]),
    "t_nms": (t_nms, lambda r, s: [_boxes(r, 40), _scores(r, 0.5, 40)]),
    "t_detect": (t_detect, lambda r, s: [_boxes(r, 40), _scores(r, s, 40),
                                         r.integers(0, 3, 40).astype(np.int64)]),
    "t_levels": (t_levels, lambda r, s: [_x(r, s, (36,)), r.random((36, 4)).astype(np.float32)]),
    "t_many": (t_many, lambda r, s: [_distinct(r, s, 6000)]),
    "t_unique": (t_unique, lambda r, s: [_x(r, s, (40,)), r.integers(0, 5, 40).astype(np.int64)]),
    "p_unique": (p_unique, lambda r, s: [_x(r, s, (40,)), r.integers(0, 5, 40).astype(np.int64)]),
    "t_write_columns": (t_write_columns, lambda r, s: [_x(r, s, (9, 6)) * np.float32(3)]),
    "p_write_columns": (p_write_columns, lambda r, s: [_x(r, s, (9, 6)) * np.float32(3)]),
    "t_roi_align": (t_roi_align, lambda r, s: [r.standard_normal((2, 3, 7, 8)).astype(np.float32),
                                               _boxes(r, 12), _scores(r, s, 12)]),
    "t_multiscale_pool": (t_multiscale_pool, lambda r, s: [
        r.standard_normal((1, 4, 16, 16)).astype(np.float32),
        r.standard_normal((1, 4, 8, 8)).astype(np.float32), _sized_boxes(r, 20),
        _scores(r, s, 20)]),
    "p_roi_align": (p_roi_align, lambda r, s: [r.standard_normal((2, 3, 7, 8)).astype(np.float32),
                                               _boxes(r, 12), np.array([5, 7], np.int32)]),
    "p_nms": (p_nms, lambda r, s: [_boxes(r, 40), _scores(r, 0.5, 40)]),
    "p_nonzero": (p_nonzero, lambda r, s: [_x(r, s, (3, 5))]),
    "p_masked_select": (p_masked_select, lambda r, s: [_x(r, 0.5, (4, 3)), _mask(r, s, (4, 3))]),
    "p_boolean_index": (p_boolean_index, lambda r, s: [_x(r, 0.5, (6, 2)), _mask(r, s, (6,))]),
}
SELECTED = {"none": 0.0, "some": 0.5, "all": 1.0}


def _framework(name):
    return paddle if name.startswith("p_") else torch


def _tensors(name, values):
    if _framework(name) is paddle:
        return [paddle.to_tensor(v) for v in values]
    return [torch.from_numpy(v.copy()) for v in values]


def _numpy(value):
    if isinstance(value, (tuple, list)):
        return tuple(_numpy(v) for v in value)
    return value.detach().numpy() if hasattr(value, "detach") else value.numpy()


@pytest.fixture(scope="module")
def compiled(tmp_path_factory, sotc_bin):  # noqa: F811
    out, cache = tmp_path_factory.mktemp("counted"), {}

    def get(name, device, folder_only=False):
        if folder_only:
            return out / name
        if (name, device) not in cache:
            fn, make = CASES[name]
            folder = out / name
            folder.mkdir(exist_ok=True)
            trace = folder / "t.pb"
            values = make(np.random.default_rng(0), 0.5)
            sotc.trace(fn, *_tensors(name, values), sotc_root=str(folder)).save(str(trace))
            target = "cpu" if device == "cpu" else "cuda"
            artifact = folder / ("k.so" if target == "cpu" else "k.fatbin")
            r = subprocess.run([sotc_bin, "compile", str(trace), "--target", target, "-o",
                                str(artifact)], cwd=ROOT, capture_output=True, text=True)
            if r.returncode != 0:
                pytest.fail(f"sotc compile failed: {r.stderr.strip()}")
            cache[name, device] = sotc.load(artifact, device=device)
        return cache[name, device]
    return get


@pytest.mark.parametrize("selected", sorted(SELECTED))
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_counted_rows_match_framework(name, device, selected, compiled):
    artifact = compiled(name, device)
    fn, make = CASES[name]
    values = make(np.random.default_rng(sum(map(ord, name + selected))), SELECTED[selected])
    expected = _numpy(fn(*_tensors(name, values)))
    got = artifact(*values)
    assert_same(tuple(got) if isinstance(expected, tuple) else got, expected, 2e-6, where=name)


def test_the_manifest_names_each_counted_size(compiled):
    """One size for boxes[keep] and scores[keep] (one mask), bound where each segment ends."""
    compiled("t_filter", "cpu")
    manifest = json.loads((compiled("t_filter", "cpu", True) / "k.manifest.json").read_text())
    entry = manifest["entries"][0]
    assert {p["size"] for p in entry["produced_sizes"]} == {"s0"}, entry["produced_sizes"]
    ends = [s["end"] for s in manifest["segments"] if s["end"]["kind"] == "size"]
    assert len(ends) == 2 and all(e["size"] == "s0" and e["bound"] == 30 for e in ends), ends


def t_sum_beside_running_count(x):  # one kernel sums the kept rows and counts along them
    f = x[x > 0] > 1
    return torch.count_nonzero(f), torch.cumsum(f, 0)


def test_a_sum_over_counted_rows_beside_work_over_them_is_zero_where_none_are_kept(
        tmp_path, sotc_bin):  # noqa: F811
    """Fused with the cumsum's [k, k] comparisons, the count's kernel would run a block per
    row: with none kept, no block would write the count (it returned what the buffer held).
    Fusion keeps it apart; it is 0."""
    sotc.trace(t_sum_beside_running_count, torch.randn(40)).save(str(tmp_path / "t.pb"))
    r = subprocess.run([sotc_bin, "compile", str(tmp_path / "t.pb"), "--target", "cpu", "-o",
                        str(tmp_path / "k.so")], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    compiled = sotc.load(str(tmp_path / "k.so"))
    for x in (np.linspace(-1, 3, 40).astype(np.float32), np.full(40, 2, np.float32),
              -np.ones(40, np.float32), np.linspace(-1, 3, 40).astype(np.float32)):
        assert_same(compiled(x), _numpy(t_sum_beside_running_count(torch.from_numpy(x))), 0)


class Anchored(torch.nn.Module):
    """Tensors a layer holds in a list outside its state dict (torchvision's AnchorGenerator
    and DefaultBoxGenerator do): constants of the model, saved with its weights."""

    def __init__(self):
        super().__init__()
        self.cell_anchors = [torch.arange(8.0).reshape(2, 4), torch.ones(3, 4)]

    def forward(self, x):
        anchors = torch.cat([a.to(dtype=x.dtype) for a in self.cell_anchors])
        return x[x[:, 0] > 0] + anchors[:1]


def test_tensors_a_layer_holds_in_a_list_are_its_constants(tmp_path, sotc_bin):  # noqa: F811
    model = Anchored().eval()
    x = torch.randn(5, 4)
    sotc.trace(model, x).save(str(tmp_path / "t.pb"))
    r = subprocess.run([sotc_bin, "compile", str(tmp_path / "t.pb"), "--target", "cpu", "-o",
                        str(tmp_path / "k.so")], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "k.manifest.json").read_text())
    assert {t["name"] for t in manifest["weights"]["tensors"]} >= {"cell_anchors.0", "cell_anchors.1"}
    compiled = sotc.load(str(tmp_path / "k.so"))
    for rows in (np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32),
                 -np.ones((5, 4), np.float32)):
        with torch.no_grad():
            expected = model(torch.from_numpy(rows)).numpy()
        assert_same(compiled(rows), expected, 1e-6)
