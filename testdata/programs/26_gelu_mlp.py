# sotc-trace: fn x=float32[32,256] w1=float32[256,1024] b1=float32[1024] w2=float32[1024,256] b2=float32[256]
import paddle
import paddle.nn.functional as F


def fn(x, w1, b1, w2, b2):
    h = paddle.matmul(x, w1) + b1
    h = F.gelu(h, approximate=True)
    return paddle.matmul(h, w2) + b2
