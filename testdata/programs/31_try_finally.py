# sotc-trace: fn x=float32[4] n=2
import paddle


def fn(x, n):
    try:
        y = x / n
    except ZeroDivisionError:
        y = x
    return y
