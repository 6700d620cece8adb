# sotc-model: make_model x=float32[4,32]
"""What model code does around its layers, in torch: operators of its own
(torch.autograd.Function subclasses, one with ctx in forward as Bloom's GeLUFunction, one with a
setup_context), built-in layers constructed inside forward (CodeGen's nn.Softmax(dim=-1)(x)),
a helper under torch's own decorator (torch.no_grad()) and a torch.jit.script function
(DeBERTa's helpers)."""
import torch
from torch import nn


def tanh_gelu(x):
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


class GeLUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        if ctx.needs_input_grad[0] and ctx.saved_tensors:  # never while inferring
            return x
        return tanh_gelu(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * torch.sigmoid(1.702 * x)


class ScaledClamp(torch.autograd.Function):
    """The newer form: forward without ctx, setup_context records for backward."""

    @staticmethod
    def forward(x, scale, limit=1.0):
        return torch.clamp(x * scale, -limit, limit)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.mark_non_differentiable(output)

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None


@torch.no_grad()
def normalized(x):
    return x / (x.norm(dim=-1, keepdim=True) + 1e-6)


@torch.jit.script
def scaled_size_sqrt(x: torch.Tensor, factor: int):
    return torch.sqrt(torch.tensor(x.size(-1), dtype=torch.float) * factor)


class Block(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x):
        h = GeLUFunction.apply(self.fc1(x))
        h = ScaledClamp.apply(h, 0.5, limit=2.0)
        scores = h @ h.transpose(0, 1) / scaled_size_sqrt(h, 2)
        weights = nn.Softmax(dim=-1)(scores)
        y = self.fc2(weights @ h)
        return nn.LeakyReLU(0.2)(normalized(nn.GELU(approximate="tanh")(y))) + x


def make_model():
    torch.manual_seed(0)
    return Block().eval()
