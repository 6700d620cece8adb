# sotc-trace: fn x=float32[8]
import paddle


def fn(x):
    for w in [1.0, 2.0, 3.0]:
        if (x * w).sum() > 0:
            x = x + w
        else:
            x = x - w
    return x
