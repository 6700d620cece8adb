"""An installed package's code (library-code.test copies it to site-packages/packaged.py): a
config object with a property, a method and class attributes, read by the package's
function."""


class Config:
    activation = "tanh"

    def __init__(self, width):
        self.width = width
        self._scale_internal = 0.5

    @property
    def scale(self):
        return self._scale_internal

    def doubled(self):
        return self.width * 2


def scale(x, config):
    y = x * config.scale * config.doubled()
    return y.tanh() if config.activation == "tanh" else y
