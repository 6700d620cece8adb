# sotc-trace: fn x=float32[8] mode='scale' factor=3
import paddle


def fn(x, mode, factor):
    if mode == "scale":
        y = x * factor
    elif mode == "shift":
        y = x + factor
    else:
        y = x
    if factor > 2 and mode != "none":
        y = y - 1
    return y
