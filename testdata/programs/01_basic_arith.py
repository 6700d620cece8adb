# sotc-trace: fn x=float32[4,8] y=float32[4,8] k=2
import paddle


def fn(x, y, k):
    a = x + y
    b = a - 1.5
    c = b * k
    d = c / (k + 1)
    return d - x * 0.5
