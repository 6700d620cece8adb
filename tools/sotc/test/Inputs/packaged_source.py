"""An installed package's code (library-code.test copies it to site-packages/packaged.py): a
config object with a property, a method and class attributes, read by the package's
function; a registry that is a Mapping; an output record; a method under the package's own
decorator."""

import functools
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass


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


class Registry(Mapping):
    """A registry of functions by name, a Mapping subscripted like a dict (transformers'
    attention interfaces)."""

    _global_mapping = {"double": lambda x: x * 2}

    def __init__(self):
        self._local_mapping = {}

    def __getitem__(self, key):
        if key in self._local_mapping:
            return self._local_mapping[key]
        return self._global_mapping[key]

    def __iter__(self):
        return iter({**self._global_mapping, **self._local_mapping})

    def __len__(self):
        return len(self._global_mapping.keys() | self._local_mapping.keys())


REGISTRY = Registry()


def dispatch(x, name):
    return REGISTRY[name](x)


def has(name):
    return name in REGISTRY  # Mapping.__contains__: REGISTRY[name], KeyError -> False


@dataclass
class Output(OrderedDict):
    """transformers' ModelOutput: its fields set to something other than None are its items."""

    logits: object = None
    hidden: object = None
    attentions: object = None


def dispatched(method):
    """transformers' use_experts_implementation: the decorated method runs what the object's
    setting names, the method itself by default."""

    @functools.wraps(method)
    def wrapper(self, x):
        if self.implementation == "doubled":
            return x * 2
        return method(self, x)

    return wrapper


class Experts:
    def __init__(self, implementation):
        self.implementation = implementation

    @dispatched
    def forward(self, x):
        return x * 3
