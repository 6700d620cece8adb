# sotc-trace: fn x=float32[4,4]
import paddle


def scale(t, factor=2.0, *, bias=0.0):
    return t * factor + bias


def combine(*args, **kwargs):
    total = args[0]
    for t in args[1:]:
        total = total + t
    return total * kwargs.get("weight", 1.0)


def fn(x):
    a = scale(x)
    b = scale(x, 3.0, bias=1.0)
    return combine(a, b, x, weight=0.5)
