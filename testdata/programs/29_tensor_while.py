# sotc-trace: fn x=float32[8]
import paddle


def fn(x):
    while x.max() > 1.0:
        x = x * 0.5
    return x
