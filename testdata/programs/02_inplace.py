# sotc-trace: fn x=float32[16] y=float32[16] n=3
import paddle


def fn(x, y, n):
    x += y
    x *= 2
    n += 1
    n **= 2
    x -= n
    x /= 4
    return x
