# sotc-trace: fn x=float32[8] y=float32[8]
import paddle


def fn(x, y):
    pair = (x, y)
    first, second = pair
    triple = pair + (first * second,)
    return triple[2] + triple[-1], len(triple)
