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


def branch(x):
    """A decision node: a branch on a tensor value (sotc compiles both sides; the runtime
    reads one element back between two kernels)."""
    if x.mean() > 0:
        return torch.exp(-x) * x
    return torch.tanh(x) + 1


WORKLOADS["branch"] = (branch, {"x": (N, N)})


# The same math for peers that do not run torch code: `xp` is numpy or jax.numpy.
def array_api(name, xp, jax=None):
    def gelu(h):
        return 0.5 * h * (1 + xp.tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)))

    def softmax_(x):
        e = xp.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    def layer_norm_(x, weight, bias):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / xp.sqrt(var + 1e-5) * weight + bias

    def branch_(x):
        if jax is not None:  # traced by jax.jit: a value branch is lax.cond
            return jax.lax.cond(x.mean() > 0, lambda t: xp.exp(-t) * t,
                                lambda t: xp.tanh(t) + 1, x)
        return xp.exp(-x) * x if x.mean() > 0 else xp.tanh(x) + 1

    return {
        "exp_chain": lambda x: xp.exp(x - 1) * 2 + x,
        "ten_op_chain": lambda x: xp.exp(xp.tanh(xp.sin(x) * 1.5 + 0.25) - x * 0.5) * xp.cos(x)
        + 1.0,
        "softmax": softmax_,
        "layer_norm": layer_norm_,
        "rms_norm": lambda x, weight: x / xp.sqrt((x * x).mean(-1, keepdims=True) + 1e-6)
        * weight,
        "mlp": lambda x, w1, b1, w2, b2: gelu(x @ w1.T + b1) @ w2.T + b2,
        "branch": branch_,
    }[name]
