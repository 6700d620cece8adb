# sotc-trace: fn x=float32[32,256] w_gate=float32[256,512] w_up=float32[256,512] w_down=float32[512,256]
import paddle
import paddle.nn.functional as F


def fn(x, w_gate, w_up, w_down):
    gate = F.silu(paddle.matmul(x, w_gate))
    up = paddle.matmul(x, w_up)
    return paddle.matmul(gate * up, w_down)
