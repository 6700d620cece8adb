# sotc-trace: fn x=float32[64]
import paddle
import paddle.nn.functional as F


def fn(x):
    return F.relu(paddle.sin(x))
