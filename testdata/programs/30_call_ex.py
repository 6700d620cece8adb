# sotc-trace: fn x=float32[4] y=float32[4]
import paddle


def blend(a, b, *, alpha=0.5, beta=0.5):
    return a * alpha + b * beta


def fn(x, y):
    args = (x, y)
    kwargs = {"alpha": 0.25}
    kwargs["beta"] = 0.75
    return blend(*args, **kwargs), blend(*[y, x])
