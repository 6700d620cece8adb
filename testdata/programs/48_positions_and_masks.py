# sotc-trace: fn q=float32[2,6,2,8] x=float32[3,5]
import paddle
import paddle.nn.functional as F


def fn(q, x):
    pos = paddle.arange(x.shape[1])  # positions: int64, one iota kernel however long
    steps = paddle.arange(0.5, 2.0, 0.25)
    causal = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    return x + pos.astype("float32"), steps, paddle.tril(x), x.triu(1), causal
