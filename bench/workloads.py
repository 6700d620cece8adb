"""The benchmark workloads, each a plain torch function as a user would write it, with the
shapes it is traced for (float32). sotc traces them (no torch needed: the tracer stubs it);
peers run the same functions (torch eager, torch.compile) or the same math."""

import torch
import torch.nn.functional as F

N = 4096


def exp_chain(x):
    return torch.exp(x - 1) * 2 + x


def ten_op_chain(x):
    y = torch.sin(x) * 1.5 + 0.25
    y = torch.tanh(y) - x * 0.5
    return torch.exp(y) * torch.cos(x) + 1.0


def softmax(x):
    return torch.softmax(x, dim=-1)


def layer_norm(x, weight, bias):
    return F.layer_norm(x, (x.shape[-1],), weight, bias, 1e-5)


def rms_norm(x, weight):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight


def mlp(x, w1, b1, w2, b2):
    return F.linear(F.gelu(F.linear(x, w1, b1), approximate="tanh"), w2, b2)


# name -> (function, {parameter: shape})
WORKLOADS = {
    "exp_chain": (exp_chain, {"x": (N, N)}),
    "ten_op_chain": (ten_op_chain, {"x": (N, N)}),
    "softmax": (softmax, {"x": (N, N)}),
    "layer_norm": (layer_norm, {"x": (N, N), "weight": (N,), "bias": (N,)}),
    "rms_norm": (rms_norm, {"x": (N, N), "weight": (N,)}),
    "mlp": (mlp, {"x": (256, 1024), "w1": (4096, 1024), "b1": (4096,), "w2": (1024, 4096),
                  "b2": (1024,)}),
}
