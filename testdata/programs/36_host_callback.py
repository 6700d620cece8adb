# sotc-trace: fn x=float32[4]
import paddle


def fn(x):
    y = paddle.exp(x)
    print("y:", y)
    z = paddle.sin(y) * 2
    return z, y.numpy()
