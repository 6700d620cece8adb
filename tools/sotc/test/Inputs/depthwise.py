import torch.nn.functional as F


def inverted_residual(x, expand, dw, dw_bias, project):
    # MobileNetV2's block: a pointwise expansion, a depthwise 3x3 (a filter per channel), a
    # pointwise projection, and the skip connection.
    h = F.relu6(F.conv2d(x, expand))
    h = F.relu6(F.conv2d(h, dw, dw_bias, padding=1, groups=dw.shape[0]))
    return x + F.conv2d(h, project)


def grouped(x, w):
    # Two groups of several channels each: not depthwise.
    return F.conv2d(x, w, padding=1, groups=2)
