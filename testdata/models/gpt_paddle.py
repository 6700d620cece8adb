# sotc-model: make_model tokens=int64[2,12]
"""A small GPT-style decoder in paddle: token and position embeddings (positions from
paddle.arange), pre-norm blocks of causal self-attention and a tanh-GELU MLP in a LayerList,
the layers in a LayerDict, the output projection reusing the token embedding (a matmul with
its transpose), and the next token's logits from the last position (x[:, [-1], :]). One block
masks with a registered tril buffer and masked_fill(-inf), the other with
scaled_dot_product_attention's is_causal (paddle's [batch, seq, heads, dim] layout)."""
import math

import paddle
from paddle import nn
from paddle.nn import functional as F

VOCAB, CONTEXT, WIDTH, HEADS, LAYERS = 48, 16, 32, 4, 2


class CausalSelfAttention(nn.Layer):
    def __init__(self, fused):
        super().__init__()
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.proj = nn.Linear(WIDTH, WIDTH)
        self.fused = fused
        self.register_buffer("mask", paddle.tril(paddle.ones([CONTEXT, CONTEXT])))

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.qkv(x).split(3, axis=2)
        shape = [batch, length, HEADS, width // HEADS]
        q, k, v = q.reshape(shape), k.reshape(shape), v.reshape(shape)
        if self.fused:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            q, k, v = q.transpose([0, 2, 1, 3]), k.transpose([0, 2, 1, 3]), v.transpose([0, 2, 1, 3])
            scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(width // HEADS)
            scores = scores.masked_fill(self.mask[:length, :length] == 0, float("-inf"))
            y = paddle.matmul(F.softmax(scores, axis=-1), v).transpose([0, 2, 1, 3])
        return self.proj(y.reshape([batch, length, width]))


class Block(nn.Layer):
    def __init__(self, fused):
        super().__init__()
        self.ln_1 = nn.LayerNorm(WIDTH)
        self.attn = CausalSelfAttention(fused)
        self.ln_2 = nn.LayerNorm(WIDTH)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(approximate=True),
                                 nn.Linear(4 * WIDTH, WIDTH), nn.Dropout(0.1))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Layer):
    def __init__(self):
        super().__init__()
        self.parts = nn.LayerDict({
            "wte": nn.Embedding(VOCAB, WIDTH),
            "wpe": nn.Embedding(CONTEXT, WIDTH),
            "h": nn.LayerList([Block(fused=i % 2 == 1) for i in range(LAYERS)]),
            "ln_f": nn.LayerNorm(WIDTH),
        })

    def forward(self, tokens):
        length = tokens.shape[1]
        x = self.parts["wte"](tokens) + self.parts["wpe"](paddle.arange(length))
        for block in self.parts["h"]:
            x = block(x)
        last = self.parts["ln_f"](x)[:, [-1], :]
        return paddle.matmul(last, self.parts["wte"].weight, transpose_y=True)


def make_model():
    paddle.seed(0)
    model = GPT()
    model.eval()
    return model
