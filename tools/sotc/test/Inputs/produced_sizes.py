"""Sizes a kernel counts (docs/dynamic-shapes.md#sizes-a-kernel-counts): nonzero's rows, a
mask's selection, then work on them."""
import torch


def positions(x):
    return torch.nonzero(x > 0)


def selected(x):
    return x[x > 0.5] * 2.0


def scored(boxes, scores):
    keep = scores > 0.3
    b = boxes[keep]
    s = scores[keep]
    return b * s[:, None], b.sum(0)


def decided(x):
    rows = torch.nonzero(x > 0)
    if rows.shape[0] < 4:
        return rows
    return rows * 2


def top(x):  # torchvision's _topk_min: a size counted from a counted one, then its rows
    s = x[x > 0]
    v, i = s.topk(min(3, s.size(0)))
    return v, i[:2]


def distinct(x):  # unique: the values at the starts of the sorted runs, a size counted there
    return torch.unique(x.floor(), return_counts=True)
