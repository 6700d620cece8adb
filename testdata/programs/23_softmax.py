# sotc-trace: fn x=float32[32,128]
import paddle


def fn(x):
    m = x.max(axis=-1, keepdim=True)
    e = paddle.exp(x - m)
    return e / e.sum(axis=-1, keepdim=True)
