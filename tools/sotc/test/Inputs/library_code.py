import collections
import enum
import functools

import torch

import packaged
from packaged import dispatch, scale


def imports_inside(x):
    import math
    import torch.nn.functional as F
    from torch import nn  # noqa: F401

    if torch.cuda.is_current_stream_capturing() or torch.compiler.is_exporting():
        return x
    cache = None
    if hasattr(cache, "is_sliding"):  # None has no attributes
        return x * 0
    return F.relu(x) * math.pi


CONFIG = packaged.Config(3)


def reads_config(x):
    return scale(x, CONFIG)


def registry_call(x):
    return dispatch(x, "double")


def masked_fill_min(x):
    # torch.finfo/iinfo: the type's limits as constants (attention masks fill with .min).
    mask = torch.ones(4, 4, dtype=torch.bool).tril()
    filled = torch.where(mask, x, torch.full_like(x, torch.finfo(x.dtype).min))
    return filled, torch.iinfo(torch.int32).max, torch.finfo(torch.float16).eps


def bad_finfo(x):
    return x * torch.finfo(torch.int64).max


def registry_membership(x):
    # "double" in REGISTRY and "triple" not: Mapping's __contains__ catches the KeyError
    return x * 2 if packaged.has("double") and not packaged.has("triple") else x


def returns_record(x):
    out = packaged.Output(logits=x * 2, hidden=x)
    # The items are the fields that are set: indexed by name, by position, as attributes.
    assert list(out.keys()) == ["logits", "hidden"] and out.attentions is None
    return packaged.Output(out[0] + out["hidden"], out.logits)


GELU_TANH = functools.partial(torch.nn.functional.gelu, approximate="tanh")


def partial_calls(x):
    # a partial held in a global, and one made here: bound arguments first, keywords merged
    scaled = functools.partial(torch.mul, x)
    return GELU_TANH(x) + scaled(2.0)


EXPERTS = packaged.Experts("doubled")


def package_decorator(x):
    # the package's decorator on Experts.forward runs: it picks the doubling
    return EXPERTS.forward(x)


def _marked_constant(fn):
    fn._dynamo_marked_constant = True  # what torch.compiler.assume_constant_result sets
    return fn


@functools.lru_cache
@_marked_constant
def heads_probe():
    # transformers' install probes: a constant torch.compile bakes in, called when tracing
    return 3


CALLS = []


@functools.lru_cache
def cached_width(n):
    CALLS.append(n)  # a cached function that is not constant runs from its code
    return n * 2


def constant_probes(x):
    return x * heads_probe() + cached_width(4)


def ordered_features(x):
    # torchvision's IntermediateLayerGetter: features gathered in an OrderedDict (a dict)
    out = collections.OrderedDict([("low", x * 2)])
    out["high"] = x + 1
    return out


class Layout(str, enum.Enum):
    # timm's Format: members are their strings, compared with strings and with each other
    NCHW = "NCHW"
    NHWC = "NHWC"


LAYOUT = Layout.NHWC


def enum_layout(x):
    if LAYOUT != Layout.NCHW and LAYOUT == "NHWC":
        return x.permute(0, 2, 3, 1)
    return x
