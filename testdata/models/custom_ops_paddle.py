# sotc-model: make_model x=float32[4,32]
"""What model code does around its layers, in paddle: an operator of its own (a
paddle.autograd.PyLayer) and built-in layers constructed inside forward, whose attributes paddle
names after their parameters with an underscore (Softmax(axis) keeps ._axis)."""
import paddle
from paddle import nn


class ScaledTanh(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x, scale=1.0):
        y = paddle.tanh(x * scale)
        ctx.save_for_backward(y)
        (saved,) = ctx.saved_tensor()
        return saved

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensor()
        return grad * (1 - y * y)


class Block(nn.Layer):
    def __init__(self, dim=32):
        super().__init__()
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x):
        h = ScaledTanh.apply(self.fc1(x), scale=0.5)
        weights = nn.Softmax(axis=-1)(paddle.matmul(h, h, transpose_y=True))
        return nn.LeakyReLU(0.2)(self.fc2(paddle.matmul(weights, h))) + nn.GELU(True)(x)


def make_model():
    paddle.seed(0)
    model = Block()
    model.eval()
    return model
