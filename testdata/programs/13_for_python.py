# sotc-trace: fn x=float32[8] y=float32[8]
import paddle


def fn(x, y):
    acc = x
    for i in range(3):
        acc = acc + i
    for i, t in enumerate([x, y]):
        acc = acc + t * i
    for a, b in zip((x, y), (y, x)):
        acc = acc + a * b
    return acc
