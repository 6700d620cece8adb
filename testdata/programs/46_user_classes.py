# sotc-trace: fn x=float32[4,8]
import paddle


class Scale:
    def __init__(self, factor):
        self.factor = factor

    def __call__(self, t):
        return t * self.factor

    @property
    def inverse(self):
        return 1.0 / self.factor


class Shifted(Scale):
    offset = 0.5

    def __call__(self, t):
        return t * self.factor + self.offset

    @staticmethod
    def clamp(t):
        return paddle.clip(t, -1.0, 1.0)

    @classmethod
    def unit(cls):
        return cls(1.0)


CONFIG = Shifted(2.0)


def fn(x):
    local = Scale(3.0)
    local.factor = 4.0
    y = local(x) * local.inverse
    z = CONFIG(y) + Shifted.unit()(x)
    return Shifted.clamp(z)
