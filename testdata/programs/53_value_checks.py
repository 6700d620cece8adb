# sotc-trace: fn x=float32[2,8] lengths=int64[4]
"""Checks of tensor values that raise (XLM's `assert lengths.max().item() <= slen`, a range
check that raises the program's own exception): the side that fails is compiled as a raise of
the program's exception, with its message and line, which the run raises when the values
choose that side; the side that passes goes on."""
import torch


class OutOfRange(ValueError):
    pass


def fn(x, lengths):
    assert lengths.max().item() < 50, "a length runs past the table"
    assert x.min().item() > -4, "x is below the range"
    if (x > 4).any():
        raise OutOfRange(f"x is above the range in its {x.shape[1]} columns")
    return x * 2 + lengths.float().mean()
