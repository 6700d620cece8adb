# sotc-trace: fn x=float32[32] alpha=0.1
import paddle


def fn(x, alpha):
    count = 0

    def leaky(t):
        nonlocal count
        count += 1
        return paddle.maximum(t, t * alpha)

    def twice(f):
        return lambda t: f(f(t))

    y = twice(leaky)(x)
    return y, count
