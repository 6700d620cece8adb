# sotc-trace: fn x=float32[2,3] y=float32[2,3] z=float32[2,3]
import paddle


def fn(x, y, z):
    first, *middle, last = (x, y, z, x + y)
    a, (b, c) = first, (last, middle[0])
    return a + b + c + middle[1]
