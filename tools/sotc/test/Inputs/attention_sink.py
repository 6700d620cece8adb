"""Attention with a learnable sink (granite_swa, gpt-oss): a logsumexp of the scores' rows
beside the softmax of the same rows."""
import torch


def attention_sink(scores, mask, sinks):
    scores = scores + mask
    lse = torch.logsumexp(scores, dim=-1)
    scale = (lse - sinks.view(1, -1, 1)).sigmoid()
    return torch.softmax(scores, dim=-1) * scale.unsqueeze(-1)
