"""Programs whose handlers catch Python's exceptions (exceptions.test): the path a handler
takes is compiled like any other."""

import torch

SCALES = {"a": 2.0}


def missing_key(x):
    try:
        scale = SCALES["b"]
    except KeyError:
        scale = 3.0
    return x * scale


def present_key(x):
    try:
        scale = SCALES["a"]
    except KeyError:
        scale = 3.0
    return x * scale


def _check_rows(n):
    if n > 2:
        raise ValueError("too many rows")
    return n


def raised_in_callee(x):
    try:
        _check_rows(x.shape[0])
    except (TypeError, ValueError) as error:
        return x - 1
    return x + 1


def handler_order(x):
    try:
        [1, 2][5]
    except KeyError:
        return x * 10
    except LookupError:  # IndexError is a LookupError
        return x * 20


def reraised(x):
    try:
        try:
            SCALES["c"]
        except KeyError:
            raise
    except KeyError:
        return x + 100
    return x


def finally_runs(x):
    y = x
    try:
        try:
            SCALES["d"]
        finally:
            y = y * 2
    except KeyError:
        y = y + 1
    return y


def through_builtin(x):
    try:
        scales = list(map(lambda k: SCALES[k], ["a", "z"]))
    except KeyError:
        scales = [5.0]
    return x * sum(scales)


class Options:
    def __init__(self):
        self.scale = 2.0


OPTIONS = Options()


def missing_attribute(x):
    try:
        shift = OPTIONS.shift
    except AttributeError:
        shift = 7.0
    return x * OPTIONS.scale + shift


class OwnError(Exception):
    pass


class NotFound(KeyError):
    pass


def raises_own_class(x):
    try:
        raise OwnError("own")
    except OwnError:
        x = x + 1
    try:
        try:
            raise NotFound("key")
        except OwnError:  # not a KeyError's base
            x = x * 100
    except KeyError:  # NotFound is a KeyError
        x = x * 2
    return x


def uncaught(x):
    try:
        SCALES["e"]
    except IndexError:
        return x
    return x * 2
