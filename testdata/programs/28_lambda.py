# sotc-trace: fn x=float32[8]
import paddle

square = lambda t: t * t


def fn(x):
    shift = lambda t, by=1.0: t + by
    ops = [square, shift, lambda t: shift(t, by=-2.0)]
    for op in ops:
        x = op(x)
    return x
