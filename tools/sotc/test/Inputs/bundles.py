"""Functions traced at several shapes and constants for one artifact (tools/sotc/test/bundles.test)."""
import torch


def scores(x, w, scale=2.0):
    # sin(x) is the same kernel in every trace of one x shape; the softmax after the GEMM is not.
    h = torch.sin(x)
    return torch.softmax(h @ w, -1) * scale


def other(x):
    return x + 1
