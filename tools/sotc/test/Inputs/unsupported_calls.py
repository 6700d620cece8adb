import torch
import torch.nn.functional as F


def three(x, y):
    a = torch.special.zeta(x, 2.0) + 1
    b = F.ctc_loss(y, y, 2, 2)
    c = x.frobnicate().sum()
    return a, b * 2, c, torch.relu(x)


def decided(x):
    a = torch.special.zeta(x, 2.0)
    if a.shape[0] > 2:  # a decision on the unsupported result: what was found is reported
        x = x + 1
    return torch.special.bessel_j0(x) + a


def unused_draw(x, training):
    # wav2vec2's LayerDrop: a draw that only training reads is dead code while inferring.
    p = torch.rand([])
    if training and p < 0.1:
        return x
    return torch.relu(x)


def used_draws(x):
    noise = torch.rand_like(x)
    kept = x.long().bincount()
    unused = torch.randn(4)
    return x + noise, kept
