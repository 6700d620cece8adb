# sotc-trace: fn x=float32[8] steps=4
import paddle


def fn(x, steps):
    i = 0
    while i < steps:
        x = x * 0.5 + 1
        i += 1
    return x
