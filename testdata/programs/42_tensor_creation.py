# sotc-trace: fn x=float32[3,4]
import paddle
from paddle.nn.functional import relu


def fn(x):
    bias = paddle.to_tensor([1.0, 2.0, 2.0, -1.0])
    scale = paddle.to_tensor(3)
    steps = paddle.arange(4, dtype="float32")
    ramp = paddle.linspace(0.0, 1.0, 4)
    rows = [row * i for i, row in enumerate(x)]
    total = rows[0] + rows[1] + rows[2]
    eye = paddle.eye(3)
    mixed = paddle.matmul(eye, x)
    return relu(total + bias * scale + steps * ramp), mixed
