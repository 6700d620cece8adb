# sotc-trace: fn x=float32[64,128]
import paddle


def fn(x):
    return paddle.exp(x) - x
