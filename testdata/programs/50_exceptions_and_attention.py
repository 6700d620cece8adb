# sotc-trace: fn q=float32[2,4,8,16] kv=float32[2,2,8,16] segments=int64[2,8]
"""What transformers' code does besides tensor math: handlers that catch KeyError,
IndexError and AttributeError (a registry's Mapping lookups, optional settings), `finally`,
a raise in a callee; a mask read from a tensor by broadcast index tensors, shared by two
attentions; grouped-query attention; cat of a tensor with itself (rotary embeddings)."""
import torch
import torch.nn.functional as F

SCALES = {"q": 0.5}


class Settings:
    heads = 4


def check_heads(n):
    if n % 2:
        raise ValueError("an odd number of heads")
    return n


def lookup(name, default):
    try:
        return SCALES[name]
    except KeyError:
        return default


def fn(q, kv, segments):
    scale = lookup("q", 1.0) * lookup("k", 2.0)  # 0.5 * 2.0
    try:
        window = Settings.window
    except AttributeError:
        window = None
    try:
        first = [1, 2][3]
    except LookupError:
        first = 0
    try:
        check_heads(3)
        heads = 3
    except ValueError:
        heads = check_heads(Settings.heads)
    finally:
        scale = scale * 2 if window is None else scale
    b = torch.arange(2)[:, None, None, None]
    i = torch.arange(8)[None, None, :, None]
    j = torch.arange(8)[None, None, None, :]
    mask = (segments[b, i] == segments[b, j]).expand(2, -1, 8, 8)
    a = F.scaled_dot_product_attention(q, kv, kv, attn_mask=mask, scale=scale, enable_gqa=True)
    a = F.scaled_dot_product_attention(a, q, q, attn_mask=mask)
    half = a[..., 8:]
    rotated = torch.cat((half, half), dim=-1)
    return a + rotated * heads + first
