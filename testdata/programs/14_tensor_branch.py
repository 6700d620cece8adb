# sotc-trace: fn x=float32[8]
import paddle


def fn(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = -x
    return y + 1
