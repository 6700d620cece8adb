# sotc-trace: fn x=float32[2,4] mask=float32[2,4] steps=int64[1]
"""Numbers read from tensors by .item() that decide branches (Longformer's and LED's
`is_global_attn = mask.any().item()`, tested again in every layer; a step counter's
`if steps.item() >= n:`): the graph branches where one is tested, compared as Python compares
numbers (a float in double precision), and each side continues with it as a Python constant,
so a later test of the same value does not branch again."""
import torch


def layer(h, flag, mask):
    if flag:
        h = h + mask.float().sum()
    return h * 2, (flag and h.shape[0] == 2)


def fn(x, mask, steps):
    flag = (mask > 0).flatten().any().item()
    for _ in range(3):
        x, both = layer(x, flag, mask > 0)
    if not flag:
        x = x - 1
    if steps.item() >= 3 and 0.1 < x.max().item():
        x = x * 0.5
    return x, both
