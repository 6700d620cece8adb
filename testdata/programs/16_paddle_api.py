# sotc-trace: fn x=float32[4,8] y=float32[4,8]
import paddle
import paddle.nn.functional as F


def fn(x, y):
    a = paddle.add(x, y)
    b = paddle.exp(a)
    c = paddle.clip(b, min=0.0, max=6.0)
    d = F.relu(c - 1.0)
    return paddle.concat([d, paddle.sin(x)], axis=0)
