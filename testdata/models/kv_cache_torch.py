# sotc-model: make_model tokens=int64[1,?<=16] position=int64[?<=16]
"""A one-layer decoder in torch over a static KV cache, as exporters for generation shape
one (transformers' StaticCache, ExecuTorch's KVCache): the cache is a pair of registered
buffers of the whole context, written in place at the new tokens' positions
(index_copy_), and a 0-d buffer counts the tokens seen (add_ of the new tokens' count).
Attention runs over the whole cache, masked to the positions written so far. The model keeps
its state between calls: each call's result depends on the earlier calls' tokens."""
import torch
from torch import nn

VOCAB, CONTEXT, WIDTH, HEADS = 32, 16, 16, 2


class CachedAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.proj = nn.Linear(WIDTH, WIDTH)
        shape = (1, HEADS, CONTEXT, WIDTH // HEADS)
        self.register_buffer("keys", torch.zeros(shape))
        self.register_buffer("values", torch.zeros(shape))

    def forward(self, x, position):
        batch, length, _ = x.shape
        q, k, v = (t.view(batch, length, HEADS, -1).transpose(1, 2)
                   for t in self.qkv(x).chunk(3, dim=-1))
        self.keys.index_copy_(2, position, k)
        self.values.index_copy_(2, position, v)
        visible = torch.arange(CONTEXT)[None, :] <= position[:, None]
        scores = (q @ self.keys.transpose(-1, -2)) / (WIDTH // HEADS) ** 0.5
        scores = scores.masked_fill(~visible, float("-inf"))
        out = scores.softmax(-1) @ self.values
        return self.proj(out.transpose(1, 2).reshape(batch, length, WIDTH))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.attention = CachedAttention()
        self.norm = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB)
        self.register_buffer("seen", torch.tensor(0))

    def forward(self, tokens, position):
        self.seen.add_(tokens.shape[1])
        x = self.embed(tokens)
        x = x + self.attention(self.norm(x), position)
        return self.head(x)[:, -1] + 0.01 * self.seen  # the count, seen in the result


def make_model():
    torch.manual_seed(0)
    return Decoder().eval()
