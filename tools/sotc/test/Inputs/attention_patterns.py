"""What transformers' attention code does (attention-patterns.test): a packed-sequence mask
built by indexing a tensor with broadcast index tensors, shared by two attentions; grouped-query
attention; rotary embeddings' cat of a tensor with itself."""

import torch
import torch.nn.functional as F


def shared_point_mask(q, k, v, segments):
    b = torch.arange(2)[:, None, None, None]
    kv = torch.arange(16)[None, None, None, :]
    qi = torch.arange(16)[None, None, :, None]
    mask = (segments[b, qi] == segments[b, kv]).expand(2, -1, 16, 16)
    a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.25)
    return F.scaled_dot_product_attention(a, k, v, attn_mask=mask, scale=0.25)


def grouped_query(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


def rotary(positions, inv_freq):
    freqs = positions[..., None].float() * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()
