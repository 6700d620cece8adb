# sotc-model: make_model x=float32[2,16,64]
"""A pre-norm transformer block (LayerNorm, multi-head self-attention written as
matmul-softmax-matmul, a GELU MLP, residuals), in paddle."""
import paddle
from paddle import nn
from paddle.nn import functional as F


class Attention(nn.Layer):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, C = x.shape
        qkv = self.qkv(x).reshape([B, T, 3, self.heads, C // self.heads])
        qkv = qkv.transpose([2, 0, 3, 1, 4])
        q, k, v = qkv[0], qkv[1], qkv[2]
        att = F.softmax(paddle.matmul(q, k, transpose_y=True) * self.scale, axis=-1)
        y = paddle.matmul(att, v).transpose([0, 2, 1, 3]).reshape([B, T, C])
        return self.proj(y)


class Block(nn.Layer):
    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


def make_model():
    paddle.seed(0)
    model = Block()
    model.eval()
    return model
