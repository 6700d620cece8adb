import paddle
import torch
import torch.nn.functional as F


def torch_cuda(x, w, b):
    with torch.autocast("cuda"):
        h = F.linear(x, w, b)
        p = torch.softmax(h, -1)
        with torch.autocast("cuda", enabled=False):
            plain = x @ w.t()
        s = h + p
    return h, p, plain, s, x @ w.t()


def torch_cpu(x, w):
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        y = torch.cat([x @ w, x.double()], -1)
    return y


def paddle_o1(x, w):
    with paddle.amp.auto_cast():
        y = paddle.matmul(x, w)
        z = paddle.exp(y)
        s = y + x
    return y, z, s


def bad_level(x):
    with paddle.amp.auto_cast(level="O2"):
        return x * 2
