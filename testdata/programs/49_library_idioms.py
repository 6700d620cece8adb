# sotc-trace: fn x=float32[2,8,6] idx=int64[5]
"""What library model code does besides tensor math (torchvision's helpers, swin, maxvit):
framework queries that take the eager path, asserts on shapes, attributes of functions,
isinstance on classes, super(), a tensor indexed by an integer tensor, an in-place fill through a
slice, chunk, roll, pad, einsum, swapaxes and the hard activations."""
import torch
import torch.nn.functional as F


class Config:
    scale = 0.5

    def apply(self, t):
        return t * self.scale


class Scaled(Config):
    def apply(self, t):
        return super().apply(t) + super(Scaled, self).apply(t)


def helper(t):
    return t * 2


def fn(x, idx):
    if not torch.jit.is_scripting() and not torch.jit.is_tracing():
        torch._assert(x.shape[1] == 8, "x must have 8 rows")
    if f"{helper.__module__}.{helper.__class__.__name__}".endswith(".function"):
        x = helper(x)
    config = Scaled()
    if isinstance(config, Config):
        x = config.apply(x)
    rows = x.reshape(16, 6)[idx.abs() % 16]
    bias = x.new_zeros((6,)) + 1.0
    bias[2:4].zero_()
    a, b = torch.chunk(x, 2, dim=1)
    rolled = torch.roll(a, shifts=(1, -2), dims=(1, 2))
    padded = F.pad(b, (1, 2, 0, 0), value=0.5)[..., 1:-2]
    mixed = torch.einsum("b i d, b j d -> b i j", rolled, padded) / x.numel()
    return rows + bias, mixed, torch.swapaxes(F.hardswish(x), 1, 2), F.hardsigmoid(x)
