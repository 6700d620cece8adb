# sotc-trace: fn x=float32[8,8] y=float32[8,8] m=int32[8,8]
import paddle


def fn(x, y, m):
    a = 1 - x
    b = -y + +x
    c = x @ y
    d = x ** 2 // 3 % 5
    e = (3 & m) | (1 ^ m)
    f = ~m
    g = (x < y) == (y >= x)
    return a, b, c, d, e, f, g, abs(x)
