# sotc-model: make_model tokens=int64[2,12]
"""A small GPT-style decoder in torch: token and position embeddings (positions from
torch.arange on the tokens' device), pre-norm blocks of causal self-attention and a tanh-GELU
MLP, the output projection tied to the token embedding, and the next token's logits from the
last position (x[:, [-1], :]). One block masks with a registered tril buffer and
masked_fill(-inf), the other with scaled_dot_product_attention's is_causal."""
import math

import torch
from torch import nn
from torch.nn import functional as F

VOCAB, CONTEXT, WIDTH, HEADS, LAYERS = 48, 16, 32, 4, 2


class CausalSelfAttention(nn.Module):
    def __init__(self, fused):
        super().__init__()
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.proj = nn.Linear(WIDTH, WIDTH)
        self.fused = fused
        mask = torch.tril(torch.ones(CONTEXT, CONTEXT)).view(1, 1, CONTEXT, CONTEXT)
        self.register_buffer("mask", mask)

    def heads(self, t, batch, length):
        return t.view(batch, length, HEADS, WIDTH // HEADS).transpose(1, 2)

    def forward(self, x):
        batch, length, width = x.size()
        q, k, v = self.qkv(x).split(width, dim=2)
        q, k, v = self.heads(q, batch, length), self.heads(k, batch, length), self.heads(v, batch, length)
        if self.fused:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            scores = scores.masked_fill(self.mask[:, :, :length, :length] == 0, float("-inf"))
            y = F.softmax(scores, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(batch, length, width))


class Block(nn.Module):
    def __init__(self, fused):
        super().__init__()
        self.ln_1 = nn.LayerNorm(WIDTH)
        self.attn = CausalSelfAttention(fused)
        self.ln_2 = nn.LayerNorm(WIDTH)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * WIDTH, WIDTH), nn.Dropout(0.1))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(VOCAB, WIDTH),
            wpe=nn.Embedding(CONTEXT, WIDTH),
            h=nn.ModuleList([Block(fused=i % 2 == 1) for i in range(LAYERS)]),
            ln_f=nn.LayerNorm(WIDTH),
        ))
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied: one weight, two uses

    def forward(self, tokens):
        batch, length = tokens.size()
        assert length <= CONTEXT, f"{length} tokens; the context is {CONTEXT}"
        positions = torch.arange(0, length, dtype=torch.long, device=tokens.device)
        x = self.transformer.wte(tokens) + self.transformer["wpe"](positions)
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x)[:, [-1], :])


def make_model():
    torch.manual_seed(0)
    return GPT().eval()
