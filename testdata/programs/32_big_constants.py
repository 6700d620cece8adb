# sotc-trace: fn x=int64[4]
import paddle


def fn(x):
    big = 2**80 + 7
    values = (None, True, 1.5, 2j, b"raw", ..., frozenset({3, 1, 2}))
    return x + (big % 1000), values
