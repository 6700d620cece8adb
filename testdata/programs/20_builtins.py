# sotc-trace: fn x=float32[4,6] sizes=[1,2,3]
import math

import paddle


def fn(x, sizes):
    n = len(sizes)
    total = sum(sizes)
    biggest = max(sizes)
    if isinstance(sizes, list) and all(s > 0 for s in sizes):
        scale = math.sqrt(total) / biggest
    else:
        scale = 1.0
    rows, cols = x.shape
    return x * scale + n + rows * cols + x.ndim
