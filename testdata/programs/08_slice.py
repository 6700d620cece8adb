# sotc-trace: fn x=float32[8,16,4]
import paddle


def fn(x):
    a = x[0]
    b = x[1:5, ::2]
    c = x[..., 0]
    d = x[:, None, 3]
    return a, b, c, d
