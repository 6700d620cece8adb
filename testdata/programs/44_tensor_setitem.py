# sotc-trace: fn x=float32[4,6] y=float32[6]
import paddle


def fn(x, y):
    rows = [x]
    x[0] = 3.0
    x[1:3, 2:5] = y[0:3] * 2
    y[y > 0] = 0.0
    x[..., -1] = y[1]
    x[3, ::2] = y[3:6]
    return rows[0] + x[2] + y
