# sotc-trace: fn x=float32[16]
import paddle


def scaled(t):
    if t.mean() > 0:
        return t * 2
    return t - 1


def fn(x):
    return scaled(x) + 1
