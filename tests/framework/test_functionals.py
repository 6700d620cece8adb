"""The framework functionals models use (activations, padding modes, interpolation, pixel
shuffles, one-hot, losses and distances), called as users write them in torch and paddle and
through the frameworks' own layer classes: traced, compiled for the CPU and for CUDA (run on
the CUDA emulator), and compared with each framework's eager result on the same inputs."""

import os
import subprocess
import sys
from typing import Dict, List, Optional

import numpy as np
import paddle
import paddle.nn.functional as PF
import pytest
import torch
import torch.nn.functional as F

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))

from test_programs_vs_framework import DEVICES, assert_same, sotc_bin  # noqa: E402,F401

import sotc  # noqa: E402

RTOL = 2e-6


# torch: each function is what a user writes; inputs are (kind, shape) specs.
def t_elu(x):
    return F.elu(x, alpha=0.7) + F.selu(x) + F.celu(x, 1.5)


def t_smooth(x):
    return F.softplus(x, beta=2, threshold=3) * F.softsign(x) - F.mish(x) + F.logsigmoid(x)


def t_shrink(x):
    return F.hardshrink(x, 1.2) + F.softshrink(x, lambd=0.5) + F.tanhshrink(x) + F.threshold(x, 0.5, -3.0)


def t_glu(x):
    return F.glu(x), F.glu(x, dim=0)


def t_prelu(x, w):
    return F.prelu(x, w)


def t_pad(x):
    return (F.pad(x, (2, 3, 1, 2), mode="reflect"), F.pad(x, (1, 1, 3, 0), mode="replicate"),
            F.pad(x, [2, 1, 0, 3], mode="circular"), F.pad(x, (1, -2, 0, 2), value=0.5))


def t_interpolate(x):
    return (F.interpolate(x, size=(7, 3), mode="bilinear"),
            F.interpolate(x, scale_factor=1.75, mode="bilinear", align_corners=True),
            F.interpolate(x, scale_factor=2), F.interpolate(x, size=(5, 9), mode="nearest-exact"),
            F.upsample_bilinear(x, size=(6, 6)), F.interpolate(x, size=(7, 9), mode="bicubic"),
            F.interpolate(x, scale_factor=1.5, mode="bicubic", align_corners=True))


def t_linear_1d(x):
    return F.interpolate(x, size=11, mode="linear"), F.interpolate(x, scale_factor=0.5)


def t_pixel_shuffle(x):
    y = F.pixel_shuffle(x, 2)
    return y, F.pixel_unshuffle(y, 2)


def t_one_hot(labels):
    return F.one_hot(labels, num_classes=6)


def t_cross_entropy(logits, labels, w):
    return (F.cross_entropy(logits, labels), F.cross_entropy(logits, labels, w, ignore_index=2),
            F.cross_entropy(logits, labels, reduction="none", label_smoothing=0.1),
            F.nll_loss(F.log_softmax(logits, 1), labels, reduction="sum"),
            F.multi_margin_loss(logits, labels, p=2, margin=0.6, weight=w),
            F.multi_margin_loss(logits, labels, reduction="none"))


def t_cross_entropy_map(logits, labels):
    return F.cross_entropy(logits, labels, label_smoothing=0.2), F.nll_loss(logits, labels)


def t_soft_targets(logits, probs):
    return F.cross_entropy(logits, probs)


def t_regression(x, y):
    return (F.mse_loss(x, y), F.l1_loss(x, y, reduction="sum"), F.smooth_l1_loss(x, y, beta=0.5),
            F.huber_loss(x, y, reduction="none", delta=0.5))


def t_vq_losses(z, table, codes):
    # A vector quantizer's straight-through output beside its two mean losses (one kernel,
    # the first loss's division in the stage of the second sum).
    q = F.embedding(codes, table).transpose(1, 2)
    commitment = F.mse_loss(z, q.detach())
    codebook = F.mse_loss(q, z.detach())
    return (z + (q - z).detach()).reshape(2, 8, 1, 7), commitment, codebook


def t_eye(x):
    # eye(64) is 4096 elements: computed from two ranges, as a constant it would be refused
    return x @ torch.eye(64, 48) + torch.eye(2, 48, dtype=torch.bool) * torch.eye(2, 48, dtype=torch.int32)


def t_alibi_slopes(x):
    # MPT's ALiBi slopes: a number raised to a tensor (torch.pow's Scalar-first form)
    base = torch.arange(1, 9, dtype=torch.int64).float() * 0.5
    return x / torch.pow(2, base) + torch.pow(1.5, x)


def t_row_sums_back(x, w):
    # a reduction of [1, 4, 4] whose row results come back over [4, 4] (the leading 1 gone)
    s = x.sum(-1)
    return s.reshape(4, 1).expand(4, 4) * w, s


def t_counts_laid_across(x, y):
    # a cumulative sum of a row laid along a new axis (a router's bins): rows of another kernel
    c = torch.cumsum(x, -1).reshape(1, 4)
    return (c.expand(4, 4) <= y).long(), c


def t_windows(x):
    # torchaudio's spectrogram windows (HDemucs' hann_window): periodic and symmetric
    return (x * torch.hann_window(16) + torch.hamming_window(16, periodic=False, alpha=0.5,
                                                             beta=0.4),
            x * torch.blackman_window(16, dtype=torch.float32),
            torch.bartlett_window(7), torch.bartlett_window(16, periodic=False) * x,
            torch.hann_window(1))


def t_spectrogram(x, window):
    # HDemucs' spectrogram and its inverse (a complex mask between them), torchaudio's
    # power spectrogram (a shorter window, no centring), and a 1-d signal's frames
    z = torch.stft(x, 32, 8, window=window, normalized=True, center=True, pad_mode="reflect",
                   return_complex=True)[..., :-1, :]
    mask = torch.view_as_complex(torch.view_as_real(z) * 0.5)
    back = torch.istft(F.pad(mask, [0, 0, 0, 1]), 32, 8, window=window, normalized=True,
                       length=x.shape[-1])
    power = x.stft(24, 6, win_length=20, center=False, return_complex=True).abs().pow(2)
    frames = torch.stft(x[0], 16, return_complex=False)
    return torch.view_as_real(z), back, power, frames, torch.istft(torch.stft(x, 16, return_complex=True), 16)


def t_mask_handed_on(w):
    # FSMT's causal mask: added to the heads' scores, and also handed on broadcast to their
    # shape (a kernel output no index path connects to the softmax rows)
    causal = torch.triu(torch.zeros(8, 8).fill_(torch.finfo(torch.float32).min), diagonal=1)
    p = torch.softmax((w.view(2, 4, 8, 8) + causal).view(8, 8, 8), -1)
    return p, causal.expand(2, 4, 8, 8) * 0.5


def t_annotated_containers(x):
    # timm's CrossViT: containers typed for TorchScript, torch.jit.annotate(List[Tensor], [])
    outs = torch.jit.annotate(List[torch.Tensor], [])
    named = torch.jit.annotate(Dict[str, Optional[torch.Tensor]], {})
    outs.append(x * 2)
    named["shifted"] = x + 1
    return outs[0] - named["shifted"]


def p_eye(x):
    return paddle.matmul(x, paddle.eye(64, 48)) + paddle.eye(2, 48, dtype="int32").astype("float32")


def _linear_recurrence(left, right):
    (a_left, b_left), (a_right, b_right) = left, right
    return a_left * a_right, a_right * b_left + b_right


def t_associative_scan(a, b, x):
    # Mamba's selective scan as torch.compile runs it (Zamba, Jamba); and a cumulative max
    from torch._higher_order_ops.associative_scan import associative_scan
    _, states = associative_scan(_linear_recurrence, (a, b), dim=2, combine_mode="generic")
    return states, associative_scan(torch.maximum, x, 0, reverse=True)


def t_fold(cols, dilated, x, layer_cols):
    # VOLO's outlooker folds its attended windows back: strided and padded, dilated, the
    # layer, unbatched, and fold(unfold(x)) (each pixel times the windows covering it)
    return (F.fold(cols, (5, 6), 2, padding=1, stride=2),
            F.fold(dilated, output_size=(7, 7), kernel_size=3, dilation=2),
            torch.nn.Fold((5, 6), (2, 2), padding=(1, 0), stride=(2, 1))(layer_cols),
            F.fold(cols[0], (5, 6), 2, padding=1, stride=2),
            F.fold(F.unfold(x, 3, padding=1), x.shape[-2:], 3, padding=1))


def p_fold(cols, dilated, x):
    return (paddle.nn.functional.fold(cols, [5, 6], 2, strides=2, paddings=1),
            paddle.nn.functional.fold(dilated, [7, 7], 3, dilations=2),
            paddle.nn.functional.fold(paddle.nn.functional.unfold(x, 3, paddings=1), x.shape[-2:], 3,
                                      paddings=1))


def t_complex_rope(x, angles):
    # LLaMA 4's and DeepSeek-V2's rotary embedding with complex numbers, computed as pairs of
    # reals; products, sums, conj, slices, cat and the real and imaginary parts
    freqs = torch.polar(torch.ones_like(angles), angles)
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    rotated = torch.view_as_real(xc * freqs[None, :, None, :]).flatten(3).type_as(x)
    both = torch.cat([freqs, freqs.conj()], dim=-1)[..., 1:3] * 2.0 + freqs[:, :2]
    torch._check(xc.shape[-1] == 4, "half the head")
    return (rotated, torch.view_as_real(both - freqs[:, 1:3]), freqs.real * freqs.imag,
            xc.abs(), x.to(torch.float32, memory_format=torch.contiguous_format),
            torch.view_as_real(torch.cat(freqs.split([1, 3], dim=-1)[::-1], -1) * freqs.chunk(2)[0][:1]),
            torch.view_as_real(freqs.index_select(0, torch.tensor([4, 0, 2]))))


def t_batch_statistics(x, w, bn_weight, bn_bias):
    # timm's StdConv2d standardizes its weight with batch_norm(training=True) and no running
    # statistics; a BatchNorm with track_running_stats=False normalizes with the batch's in eval
    std = F.batch_norm(w.reshape(1, 6, -1), None, None, training=True, momentum=0.0,
                       eps=1e-6).reshape_as(w)
    y = F.conv2d(x, std, padding=1)
    return F.batch_norm(y, None, None, bn_weight, bn_bias, training=True, eps=1e-5), std


def t_gated_norm(x, g):
    # Qwen3.5's gated RMS norm: rows of heads transposed out of the attention, a gate reshaped
    rows = x.transpose(1, 2).reshape(-1, 8)
    normed = rows * torch.rsqrt(rows.pow(2).mean(-1, keepdim=True) + 1e-6)
    return (normed * F.silu(g.reshape(2, 3, 4, 8).reshape(-1, 8))).reshape(2, 3, 32)


def t_module_constants(x):
    # the frameworks' and numpy's own names for math's constants (Granite's -torch.inf mask)
    import numpy
    return (x.masked_fill(x > 1, -torch.inf).clamp(min=-torch.pi) * torch.e,
            torch.where(x > 2, torch.nan, x) + numpy.pi - numpy.e)


def t_many_pieces(x):
    # 70 pieces concatenated (a chunked attention's chunks): kernels take at most 64 buffers
    return torch.cat([x[:, i:i + 1] * i for i in range(70)], 1)


def t_empty_chunks(x, w):
    # an empty axis chunks into as many empty pieces as asked for (a projection to width 0),
    # and an empty input runs (its array may have no data pointer)
    a, b = (x @ w).chunk(2, dim=-1)
    return a.sum(-1) + b.sum(-1) + x.sum(-1), a


def t_binary(p, y, logits):
    return (F.binary_cross_entropy(p, y), F.binary_cross_entropy_with_logits(logits, y),
            F.kl_div(logits, y, reduction="batchmean"))


def t_distance(a, b):
    return F.cosine_similarity(a, b, dim=-1), F.pairwise_distance(a, b), torch.cosine_similarity(a, b)


def t_channel_ops(x, w, b):
    y = F.channel_shuffle(x, 3) + F.local_response_norm(x, 3, alpha=0.3, k=2.0)
    return (y, F.unfold(x, (2, 3), padding=1, stride=(2, 1)), F.softmin(x, dim=1),
            F.rrelu(x), F.dropout2d(x, training=False),
            F.bilinear(x[:, 0, 0, :3], x[:, 1, 1, :2], w, b))


def t_margin_losses(x, y, z):
    return (F.margin_ranking_loss(x, y, torch.sign(z), margin=0.5), F.soft_margin_loss(x, torch.sign(z)),
            F.hinge_embedding_loss(x, torch.sign(z), margin=1.5, reduction="sum"),
            F.multilabel_soft_margin_loss(x, torch.sigmoid(y)),
            F.poisson_nll_loss(x, torch.abs(y), full=True), F.gaussian_nll_loss(x, y, torch.abs(z) + 0.1),
            F.cosine_embedding_loss(x, y, torch.sign(z[:, 0]), margin=0.2),
            F.triplet_margin_loss(x, y, z, swap=True))


def t_pools(x, line, w, b):
    return (F.adaptive_avg_pool2d(x, (3, 5)), F.adaptive_max_pool2d(x, 2),
            F.interpolate(x, size=(3, 2), mode="area"), F.adaptive_avg_pool1d(line, 4),
            F.adaptive_max_pool1d(line, 3), F.conv1d(line, w, b, stride=2, padding=1, groups=2),
            F.max_pool1d(line, 3, stride=2, padding=1), F.avg_pool1d(line, 2, ceil_mode=True),
            F.pad(x, (-1, 2, 1, -2), mode="replicate"), F.dropout(x, p=0.0, training=True),
            F.conv_transpose1d(line, w.reshape(4, 3, 3), stride=3, padding=1, output_padding=2),
            F.conv_transpose2d(x, x[:3, :, :2, :3].transpose(0, 1), stride=(2, 1), dilation=2))


def t_window_rows(x, w, w5, full, line):
    # Reductions over taps and middle dims that the CPU runs as lanes along the last dim
    # (interior lanes unchecked, borders checked), and im2col rows of a 7-wide map.
    return (F.conv2d(x, w, padding=1, groups=6), F.conv2d(x, w5, stride=2, padding=2, groups=6),
            F.conv2d(x, w, padding=2, dilation=2, groups=6), F.conv2d(x[:, :, :7, :7], w, groups=6),
            F.max_pool2d(x, 3, 2, 1, ceil_mode=True), F.avg_pool2d(x, 3, 1, 1, count_include_pad=False),
            F.avg_pool2d(x[:, :, :2, :3], 8, ceil_mode=True), F.max_pool2d(x[:, :, :3, :1], 6, ceil_mode=True),
            F.conv2d(x[:, :, 2:9, 3:10], full, padding=1), x.sum(1), x.amax((1, 2)),
            line.sum(1), line.mean(1))


def t_named_padding(x, w, even, line):
    # padding by name: "same" keeps the size (an even kernel's extra row and column at the
    # end), "valid" pads nothing; conv1d too.
    return (F.conv2d(x, w, padding="same"), F.conv2d(x, even, padding="same", dilation=(1, 2)),
            F.conv2d(x, w, stride=2, padding="valid"), F.conv1d(line, even[:, :, 0], padding="same"))


def t_conv3d(x, w, g, b):
    # depth taps stacked into the channels: padding, strides, dilation, groups, 'same'
    return (F.conv3d(x, w, b, padding=1), F.conv3d(x, w, stride=(2, 1, 2), padding=(0, 1, 1)),
            F.conv3d(x, w, dilation=(2, 1, 1), padding="same"), F.conv3d(x, g, groups=2),
            torch.nn.functional.adaptive_avg_pool3d(x, (1, 2, 2)),
            F.max_pool3d(x, (3, 2, 3), stride=(1, 2, 2), padding=1, ceil_mode=True),
            F.max_pool3d(x, 2, dilation=(2, 1, 1)), F.avg_pool3d(x, 3, stride=2, padding=1),
            F.avg_pool3d(x, (2, 3, 3), padding=(1, 1, 0), count_include_pad=False, ceil_mode=True),
            F.avg_pool3d(x, 2, divisor_override=3))


def t_grids(x, y, a, p, labels):
    """meshgrid in both indexings (YOLO's anchors), torch.div's rounding modes (EdgeNeXt)."""
    gy, gx = torch.meshgrid(x, y, indexing="ij")
    hx, hy = torch.meshgrid([x, y], indexing="xy")
    return (gy * 2 + gx, hx - hy, torch.div(a, p, rounding_mode="floor"),
            torch.div(a, p, rounding_mode="trunc"), labels.div(4, rounding_mode="floor"),
            torch.div(labels - 3, 2, rounding_mode="trunc"), a.div(p))


def t_index_after_slices(x, idx, pairs, j):
    """Tensor indices after full slices (LeViT's and EfficientFormer's attention biases),
    before them (CTRL's positional table pe[position_ids, :]), after `...` and among slices
    that are not full."""
    return (x[:, idx], x[:, :, pairs, j], x[:, pairs], x[:, 1, idx], x[:, idx, :], x[1][idx, :],
            x[1][pairs, :, 1:], x[..., idx, :], x[1:, idx, ::2], x[..., 1, idx, 2])


def p_index_after_slices(x, idx, pairs):
    return x[:, idx], x[:, pairs], x[:, 1, idx]


def p_grids(x, y):
    gx, gy = paddle.meshgrid(x, y)
    return gx * 3 - gy, paddle.meshgrid([y, x])[1]


def p_conv3d(x, w, g, b):
    return (PF.conv3d(x, w, b, padding=1), PF.conv3d(x, w, stride=[2, 1, 2], padding=[0, 1, 1]),
            PF.conv3d(x, g, groups=2, padding="SAME"), PF.max_pool3d(x, 3, 2, 1, ceil_mode=True),
            PF.avg_pool3d(x, (2, 3, 3), padding=1), PF.avg_pool3d(x, 3, 2, 1, exclusive=False))


def p_named_padding(x, w, even, line):
    # paddle's SAME at a stride: the output ceil(size / stride), the odd pad at the end.
    return (PF.conv2d(x, w, padding="SAME"), PF.conv2d(x, even, stride=2, padding="same"),
            PF.conv2d(x, w, stride=[2, 3], padding="VALID"),
            PF.conv1d(line, even[:, :, 0], stride=2, padding="SAME"))


def p_window_rows(x, w, w5, full, line):
    return (PF.conv2d(x, w, padding=1, groups=6), PF.conv2d(x, w5, stride=2, padding=2, groups=6),
            PF.max_pool2d(x, 3, 2, 1, ceil_mode=True), PF.conv2d(x[:, :, 2:9, 3:10], full, padding=1),
            x.sum(1), line.mean(1))


class TorchImageHead(torch.nn.Module):
    """The functionals through torch's own layer classes."""

    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(
            torch.nn.ReflectionPad2d(1), torch.nn.Conv2d(4, 8, 3), torch.nn.PReLU(8),
            torch.nn.Upsample(scale_factor=2, mode="bilinear"), torch.nn.ELU(),
            torch.nn.PixelShuffle(2), torch.nn.Mish(), torch.nn.ReplicationPad2d((0, 1, 2, 0)),
            torch.nn.Softplus(beta=2), torch.nn.Hardshrink(0.1), torch.nn.GroupNorm(1, 2),
            torch.nn.ConvTranspose2d(2, 4, 3, stride=2, padding=1, output_padding=1),
            torch.nn.AdaptiveAvgPool2d((5, 3)))

    def forward(self, x):
        return self.body(x)


# paddle
def p_activations(x):
    return (PF.elu(x, alpha=0.7) + PF.selu(x) + PF.celu(x, 1.5) + PF.softplus(x, 2, 3)
            + PF.softsign(x) - PF.mish(x) + PF.log_sigmoid(x) + PF.tanhshrink(x)
            + PF.hardshrink(x, 1.2) + PF.softshrink(x, 0.5) + PF.thresholded_relu(x, 0.5))


def p_glu_prelu(x, w):
    return PF.glu(x, axis=1), PF.prelu(x, w)


def p_pad(x):
    return (PF.pad(x, [2, 3, 1, 2], mode="reflect"), PF.pad(x, [1, 1, 3, 0], mode="replicate"),
            PF.pad(x, [2, 1, 0, 3], mode="circular"), PF.pad(x, [0, 0, 1, 0, 0, 2, 1, 1], value=2.0),
            PF.pad(x, [1, 2], value=-1.0))


def p_interpolate(x):
    return (PF.interpolate(x, size=[7, 3], mode="bilinear"),
            PF.interpolate(x, size=[7, 3], mode="bilinear", align_mode=1),
            PF.interpolate(x, scale_factor=1.75, mode="bilinear", align_corners=True),
            PF.interpolate(x, scale_factor=2), PF.upsample(x, size=[5, 9], mode="nearest"),
            PF.interpolate(x, size=[7, 9], mode="bicubic"),
            PF.interpolate(x, size=[3, 8], mode="bicubic", align_corners=True))


def p_pixel_shuffle(x):
    y = PF.pixel_shuffle(x, 2)
    return y, PF.pixel_unshuffle(y, 2)


def p_one_hot(labels):
    return PF.one_hot(labels, 6)


def p_cross_entropy(logits, labels, w):
    return (PF.cross_entropy(logits, labels), PF.cross_entropy(logits, labels, w),
            PF.cross_entropy(logits, labels, ignore_index=2),
            PF.cross_entropy(logits, labels, reduction="none", label_smoothing=0.1),
            PF.nll_loss(PF.log_softmax(logits, 1), labels, reduction="sum"),
            PF.multi_margin_loss(logits, labels, p=2, margin=0.6, weight=w),
            PF.multi_margin_loss(logits, labels, reduction="none"))


def p_regression(x, y):
    return (PF.mse_loss(x, y), PF.l1_loss(x, y, reduction="sum"),
            PF.smooth_l1_loss(x, y, delta=0.5), PF.smooth_l1_loss(x, y, "none", 0.5, False))


def p_binary(p, y, logits):
    return (PF.binary_cross_entropy(p, y), PF.binary_cross_entropy_with_logits(logits, y),
            PF.kl_div(logits, y, reduction="batchmean"))


def p_distance(a, b):
    return PF.cosine_similarity(a, b, axis=2), PF.pairwise_distance(a, b)


def p_channel_ops(x, w, b):
    y = PF.channel_shuffle(x, 3) + PF.local_response_norm(x, 3, alpha=0.3, k=2.0)
    return (y, PF.unfold(x, [2, 3], strides=[2, 1], paddings=1),
            PF.rrelu(x, training=False), PF.dropout2d(x, training=False),
            PF.bilinear(x[:, 0, 0, :3], x[:, 1, 1, :2], w, b))


def p_margin_losses(x, y, z):
    return (PF.margin_ranking_loss(x, y, paddle.sign(z), margin=0.5),
            PF.soft_margin_loss(x, paddle.sign(z)),
            PF.hinge_embedding_loss(x, paddle.sign(z), margin=1.5, reduction="sum"),
            PF.multi_label_soft_margin_loss(x, PF.sigmoid(y)),
            PF.poisson_nll_loss(x, paddle.abs(y), full=True),
            PF.gaussian_nll_loss(x, y, paddle.abs(z) + 0.1),
            PF.cosine_embedding_loss(x, y, paddle.sign(z[:, 0]), margin=0.2),
            PF.triplet_margin_loss(x, y, z, swap=True))


def p_pools(x, line, w, b):
    return (PF.adaptive_avg_pool2d(x, [3, 5]), PF.adaptive_max_pool2d(x, 2),
            PF.interpolate(x, size=[3, 2], mode="area"), PF.adaptive_avg_pool1d(line, 4),
            PF.adaptive_max_pool1d(line, 3), PF.conv1d(line, w, b, stride=2, padding=1, groups=2),
            PF.max_pool1d(line, 3, stride=2, padding=1), PF.avg_pool1d(line, 2, ceil_mode=True),
            PF.conv1d_transpose(line, w.reshape([4, 3, 3]), stride=3, padding=1,
                                output_padding=2),
            PF.conv2d_transpose(x, x[:3, :, :2, :3].transpose([1, 0, 2, 3]), stride=[2, 1],
                                dilation=2))


class PaddleImageHead(paddle.nn.Layer):
    """The functionals through paddle's own layer classes."""

    def __init__(self):
        super().__init__()
        self.body = paddle.nn.Sequential(
            paddle.nn.Pad2D(1, mode="reflect"), paddle.nn.Conv2D(4, 8, 3), paddle.nn.PReLU(8),
            paddle.nn.Upsample(scale_factor=2, mode="bilinear"), paddle.nn.ELU(),
            paddle.nn.PixelShuffle(2), paddle.nn.Mish(), paddle.nn.Softplus(beta=2),
            paddle.nn.Conv2DTranspose(2, 4, 3, stride=2, padding=1, groups=2),
            paddle.nn.AdaptiveMaxPool2D((5, 3)))

    def forward(self, x):
        return self.body(x)


def t_calculus(x, c, y):
    coords = torch.cumsum(c.abs() + 0.5, 0)  # increasing sample positions along dim 0
    return (torch.gradient(x, spacing=0.5, dim=1, edge_order=2)
            + torch.gradient(x, spacing=[coords], dim=0)
            + (torch.nextafter(x, c[:, None]), torch.as_strided_scatter(x, y, (2, 2), (1, 2), 1)))


def t_grid_sample(x, g, x3, g3):
    return (F.grid_sample(x, g, align_corners=False),
            F.grid_sample(x, g, mode="nearest", padding_mode="border", align_corners=True),
            F.grid_sample(x, g, mode="bicubic", padding_mode="reflection", align_corners=False),
            F.grid_sample(x3, g3, padding_mode="reflection", align_corners=True))


def p_grid_sample(x, g, x3, g3):
    return (PF.grid_sample(x, g), PF.grid_sample(x, g, mode="nearest", padding_mode="reflection",
                                                  align_corners=False),
            PF.grid_sample(x3, g3, padding_mode="border"))


def t_long_sorts(x, labels):  # rows past the fused sort's 1024: the runtime's argsort step
    holes = torch.where(x > 2.5, torch.nan, x)  # NaN the largest: last, first descending
    v, i = torch.sort(x, dim=1, descending=True)
    return (v, i, torch.topk(x, 5, dim=1), torch.median(x, dim=1), torch.kthvalue(x[0], 7),
            torch.sort(holes, dim=1, stable=True), torch.sort(holes, dim=1, descending=True, stable=True)[1],
            torch.argsort(labels, dim=0, stable=True), torch.msort(x.t()),
            torch.quantile(x, 0.25, dim=1))


def p_long_sorts(x, labels):
    return (paddle.sort(x, axis=1, descending=True), paddle.argsort(x, axis=1),
            paddle.topk(x, 5, axis=1, largest=False), paddle.argsort(labels, axis=0, stable=True),
            paddle.median(x, axis=1))


def t_filled_by_tensors(x, s, n):  # fill values held in tensors (YOLO's anchor strides)
    return (torch.full((2, 3), s), torch.full_like(x, s), x.new_full((4, 1), s, dtype=x.dtype),
            torch.full((3,), n), torch.full((2,), n > 1), torch.full_like(x, n))


def p_filled_by_tensors(x, s, n):
    return paddle.full([2, 3], s), paddle.full_like(x, s), paddle.full([3], n, dtype="int64")


F32, I64, PROB = "f32", "i64", "prob"

CASES = {
    "torch_elu": (t_elu, [(F32, (3, 4))]),
    "torch_smooth": (t_smooth, [(F32, (3, 4))]),
    "torch_shrink": (t_shrink, [(F32, (3, 4))]),
    "torch_glu": (t_glu, [(F32, (6, 4))]),
    "torch_prelu": (t_prelu, [(F32, (2, 3, 4)), (F32, (3,))]),
    "torch_pad": (t_pad, [(F32, (2, 3, 4, 5))]),
    "torch_interpolate": (t_interpolate, [(F32, (2, 3, 4, 5))]),
    "torch_linear_1d": (t_linear_1d, [(F32, (2, 3, 6))]),
    "torch_pixel_shuffle": (t_pixel_shuffle, [(F32, (2, 8, 3, 2))]),
    "torch_one_hot": (t_one_hot, [(I64, (4, 5))]),
    "torch_cross_entropy": (t_cross_entropy, [(F32, (8, 6)), (I64, (8,)), (PROB, (6,))]),
    "torch_cross_entropy_map": (t_cross_entropy_map, [(F32, (2, 6, 3, 4)), (I64, (2, 3, 4))]),
    "torch_soft_targets": (t_soft_targets, [(F32, (8, 6)), (PROB, (8, 6))]),
    "torch_regression": (t_regression, [(F32, (3, 4)), (F32, (3, 4))]),
    "torch_vq_losses": (t_vq_losses, [(F32, (2, 8, 7)), (F32, (6, 8)), (I64, (2, 7))]),
    "torch_eye": (t_eye, [(F32, (2, 64))]),
    "paddle_eye": (p_eye, [(F32, (2, 64))]),
    "torch_alibi_slopes": (t_alibi_slopes, [(F32, (3, 8))]),
    "torch_row_sums_back": (t_row_sums_back, [(F32, (1, 4, 4)), (F32, (4, 4))]),
    "torch_counts_laid_across": (t_counts_laid_across, [(F32, (1, 4)), (F32, (4, 4))]),
    "torch_windows": (t_windows, [(F32, (2, 16))]),
    "torch_mask_handed_on": (t_mask_handed_on, [(F32, (8, 8, 8))]),
    "torch_annotated_containers": (t_annotated_containers, [(F32, (3, 4))]),
    "torch_spectrogram": (t_spectrogram, [(F32, (3, 100)), (PROB, (32,))]),
    "torch_associative_scan": (t_associative_scan, [(PROB, (2, 3, 5, 4)), (F32, (2, 3, 5, 4)),
                                                     (F32, (6, 3))]),
    "torch_fold": (t_fold, [(F32, (2, 12, 12)), (F32, (2, 18, 9)), (F32, (2, 3, 5, 4)),
                            (F32, (2, 12, 15))]),
    "paddle_fold": (p_fold, [(F32, (2, 12, 12)), (F32, (2, 18, 9)), (F32, (2, 3, 5, 4))]),
    "torch_complex_rope": (t_complex_rope, [(F32, (2, 5, 3, 8)), (F32, (5, 4))]),
    "torch_batch_statistics": (t_batch_statistics, [(F32, (2, 4, 5, 6)), (F32, (6, 4, 3, 3)),
                                                     (F32, (6,)), (F32, (6,))]),
    "torch_gated_norm": (t_gated_norm, [(F32, (2, 4, 3, 8)), (F32, (2, 3, 32))]),
    "torch_module_constants": (t_module_constants, [(F32, (3, 4))]),
    "torch_many_pieces": (t_many_pieces, [(F32, (3, 70))]),
    "torch_empty_chunks": (t_empty_chunks, [(F32, (3, 4)), (F32, (4, 0))]),
    "torch_binary": (t_binary, [(PROB, (3, 4)), (PROB, (3, 4)), (F32, (3, 4))]),
    "torch_distance": (t_distance, [(F32, (3, 1, 4)), (F32, (5, 4))]),
    "torch_layers": (TorchImageHead, [(F32, (2, 4, 6, 5))]),
    "torch_grids": (t_grids, [(F32, (3,)), (F32, (4,)), (F32, (3, 4)), (PROB, (3, 4)), (I64, (5,))]),
    "paddle_grids": (p_grids, [(F32, (3,)), (F32, (4,))]),
    "torch_index_after_slices": (t_index_after_slices, [(F32, (2, 6, 6, 3)), (I64, (3,)),
                                                        (I64, (2, 2)), (I64, (2,))]),
    "paddle_index_after_slices": (p_index_after_slices, [(F32, (2, 6, 6, 3)), (I64, (3,)),
                                                         (I64, (2, 2))]),
    "torch_pools": (t_pools, [(F32, (2, 3, 7, 6)), (F32, (2, 4, 9)), (F32, (6, 2, 3)), (F32, (6,))]),
    "torch_window_rows": (t_window_rows, [(F32, (2, 6, 11, 19)), (F32, (6, 1, 3, 3)),
                                          (F32, (6, 1, 5, 5)), (F32, (4, 6, 3, 3)), (F32, (3, 70, 9))]),
    "torch_named_padding": (t_named_padding, [(F32, (2, 6, 11, 9)), (F32, (4, 6, 3, 3)),
                                              (F32, (4, 6, 4, 4)), (F32, (2, 6, 9))]),
    "paddle_named_padding": (p_named_padding, [(F32, (2, 6, 11, 9)), (F32, (4, 6, 3, 3)),
                                               (F32, (4, 6, 4, 4)), (F32, (2, 6, 9))]),
    "torch_conv3d": (t_conv3d, [(F32, (2, 4, 5, 6, 7)), (F32, (3, 4, 3, 3, 3)),
                                (F32, (6, 2, 1, 3, 2)), (F32, (3,))]),
    "paddle_conv3d": (p_conv3d, [(F32, (2, 4, 5, 6, 7)), (F32, (3, 4, 3, 3, 3)),
                                 (F32, (6, 2, 1, 3, 2)), (F32, (3,))]),
    "paddle_window_rows": (p_window_rows, [(F32, (2, 6, 11, 19)), (F32, (6, 1, 3, 3)),
                                           (F32, (6, 1, 5, 5)), (F32, (4, 6, 3, 3)), (F32, (3, 70, 9))]),
    "torch_channel_ops": (t_channel_ops, [(F32, (2, 6, 3, 4)), (F32, (5, 3, 2)), (F32, (5,))]),
    "torch_margin_losses": (t_margin_losses, [(F32, (3, 4)), (F32, (3, 4)), (F32, (3, 4))]),
    "torch_calculus": (t_calculus, [(F32, (5, 4)), (F32, (5,)), (F32, (2, 2))]),
    "torch_filled_by_tensors": (t_filled_by_tensors, [(F32, (3, 4)), (F32, ()), (I64, ())]),
    "paddle_filled_by_tensors": (p_filled_by_tensors, [(F32, (3, 4)), (F32, ()), (I64, ())]),
    "torch_long_sorts": (t_long_sorts, [(F32, (3, 2000)), (I64, (1500, 2))]),
    "paddle_long_sorts": (p_long_sorts, [(F32, (3, 2000)), (I64, (1500, 2))]),
    "torch_grid_sample": (t_grid_sample, [(F32, (2, 3, 5, 6)), (F32, (2, 4, 3, 2)),
                                          (F32, (1, 2, 3, 4, 5)), (F32, (1, 2, 3, 2, 3))]),
    "paddle_grid_sample": (p_grid_sample, [(F32, (2, 3, 5, 6)), (F32, (2, 4, 3, 2)),
                                           (F32, (1, 2, 3, 4, 5)), (F32, (1, 2, 3, 2, 3))]),
    "paddle_activations": (p_activations, [(F32, (3, 4))]),
    "paddle_glu_prelu": (p_glu_prelu, [(F32, (2, 4, 3)), (F32, (4,))]),
    "paddle_pad": (p_pad, [(F32, (2, 3, 4, 5))]),
    "paddle_interpolate": (p_interpolate, [(F32, (2, 3, 4, 5))]),
    "paddle_pixel_shuffle": (p_pixel_shuffle, [(F32, (2, 8, 3, 2))]),
    "paddle_one_hot": (p_one_hot, [(I64, (4, 5))]),
    "paddle_cross_entropy": (p_cross_entropy, [(F32, (8, 6)), (I64, (8,)), (PROB, (6,))]),
    "paddle_regression": (p_regression, [(F32, (3, 4)), (F32, (3, 4))]),
    "paddle_binary": (p_binary, [(PROB, (3, 4)), (PROB, (3, 4)), (F32, (3, 4))]),
    "paddle_distance": (p_distance, [(F32, (3, 1, 4)), (F32, (1, 5, 4))]),
    "paddle_layers": (PaddleImageHead, [(F32, (2, 4, 6, 5))]),
    "paddle_pools": (p_pools, [(F32, (2, 3, 7, 6)), (F32, (2, 4, 9)), (F32, (6, 2, 3)), (F32, (6,))]),
    "paddle_channel_ops": (p_channel_ops, [(F32, (2, 6, 3, 4)), (F32, (5, 3, 2)), (F32, (1, 5))]),
    "paddle_margin_losses": (p_margin_losses, [(F32, (3, 4)), (F32, (3, 4)), (F32, (3, 4))]),
}


def values(name, rng):
    """numpy inputs of a case: floats, labels in [0, 6) (some equal to the ignore_index 2),
    probabilities in (0.05, 0.95)."""
    out = []
    for kind, shape in CASES[name][1]:
        if kind == F32:
            out.append(np.asarray(rng.standard_normal(shape) * 2, dtype=np.float32))
        elif kind == I64:
            out.append(np.asarray(rng.integers(0, 6, shape), dtype=np.int64))
        else:
            out.append(np.asarray(rng.uniform(0.05, 0.95, shape), dtype=np.float32))
    return out


def framework_of(name):
    return torch if name.startswith("torch") else paddle


def as_tensors(name, arrays):
    if framework_of(name) is torch:
        return [torch.from_numpy(a.copy()) for a in arrays]
    return [paddle.to_tensor(a.copy()) for a in arrays]


def to_numpy(value):
    if isinstance(value, (tuple, list)):
        return tuple(to_numpy(v) for v in value)
    if isinstance(value, torch.Tensor):
        return value.detach().numpy()
    return value.numpy()


def callable_of(name):
    fn = CASES[name][0]
    if isinstance(fn, type):
        framework_of(name).manual_seed(0) if framework_of(name) is torch else paddle.seed(0)
        model = fn()
        model.eval()
        return model
    return fn


@pytest.fixture(scope="module")
def compiled(tmp_path_factory, sotc_bin):  # noqa: F811
    out, cache = tmp_path_factory.mktemp("functionals"), {}

    def get(name, device):
        if (name, device) not in cache:
            rng = np.random.default_rng(0)
            fn = callable_of(name)
            folder = out / name
            folder.mkdir(exist_ok=True)
            trace = folder / "t.pb"
            sotc.trace(fn, *as_tensors(name, values(name, rng)), sotc_root=str(folder)).save(str(trace))
            target = "cpu" if device == "cpu" else "cuda"
            artifact = folder / ("k.so" if target == "cpu" else "k.fatbin")
            r = subprocess.run([sotc_bin, "compile", str(trace), "--target", target, "-o",
                                str(artifact)], cwd=ROOT, capture_output=True, text=True)
            if r.returncode != 0:
                pytest.fail(f"sotc compile failed: {r.stderr.strip()}")
            cache[name, device] = (fn, sotc.load(artifact, device=device))
        return cache[name, device]
    return get


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_functional_matches_framework(name, device, compiled):
    fn, artifact = compiled(name, device)
    rng = np.random.default_rng(sum(map(ord, name)) + 1)  # not the trace's example inputs
    inputs = values(name, rng)
    with torch.no_grad():
        expected = to_numpy(fn(*as_tensors(name, inputs)))
    got = artifact(*inputs)
    assert_same(got if isinstance(expected, tuple) else got, expected, RTOL, where=name)


def test_a_data_dependent_one_hot_is_refused_by_name(tmp_path, sotc_bin):  # noqa: F811
    def f(labels):
        return F.one_hot(labels)
    trace = tmp_path / "t.pb"
    sotc.trace(f, torch.zeros(4, dtype=torch.int64)).save(str(trace))
    r = subprocess.run([sotc_bin, "compile", str(trace), "--target", "cpu", "-o",
                        str(tmp_path / "k.so")], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode != 0 and "num_classes=-1" in r.stderr, r.stderr
    assert "test_functionals.py:" in r.stderr, r.stderr  # the user's line
    assert not (tmp_path / "k.so").exists()


def test_batch_norm_that_would_update_running_statistics_is_refused(tmp_path, sotc_bin):  # noqa: F811
    """training=True with running statistics updates them (a side effect the artifact would
    not have); without them it normalizes with the batch's (t_batch_statistics)."""
    def f(x, mean, var):
        return F.batch_norm(x, mean, var, training=True)
    trace = tmp_path / "t.pb"
    sotc.trace(f, torch.zeros(2, 3, 4), torch.zeros(3), torch.ones(3)).save(str(trace))
    r = subprocess.run([sotc_bin, "compile", str(trace), "--target", "cpu", "-o",
                        str(tmp_path / "k.so")], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode != 0 and "E2010" in r.stderr, r.stderr
    assert "training=True updates the running statistics" in r.stderr, r.stderr
    assert "test_functionals.py:" in r.stderr, r.stderr
    assert not (tmp_path / "k.so").exists()


def complex_returned(x):
    return torch.view_as_complex(x)


def complex_exp(x):
    return torch.view_as_real(torch.exp(torch.view_as_complex(x)))


@pytest.mark.parametrize("fn, message", [(complex_returned, "returning a complex tensor"),
                                         (complex_exp, "complex tensors: torch.exp")])
def test_complex_tensors_beyond_pairs_are_refused_by_name(fn, message, tmp_path, sotc_bin):  # noqa: F811
    trace = tmp_path / "t.pb"
    sotc.trace(fn, torch.zeros(3, 2)).save(str(trace))
    r = subprocess.run([sotc_bin, "compile", str(trace), "--target", "cpu", "-o",
                        str(tmp_path / "k.so")], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode != 0 and message in r.stderr, r.stderr
    assert "test_functionals.py:" in r.stderr, r.stderr
    assert not (tmp_path / "k.so").exists()


def item_returned(x):
    return (x > 0).any().item()


def item_computed_with(x):
    return x.sum() + (x > 0).any().item()


def item_compared_by_identity(x):
    return x + 1 if (x > 0).any().item() is True else x


def item_formatted(x):
    return f"{(x > 0).all().item()}"


@pytest.mark.parametrize("fn, message", [
    (item_returned, "returning the host value of"),
    (item_computed_with, "computing with the host value of"),
    (item_compared_by_identity, "'is' on the host value of"),
    (item_formatted, "formatting the host value of")])
def test_item_numbers_only_compared_and_tested(fn, message, tmp_path, sotc_bin):  # noqa: F811
    """x.item() is compiled where it is compared and tested (52_item_decisions); anything
    that needs its value ahead of time is E3005 naming the line, with nothing written."""
    trace = tmp_path / "t.pb"
    sotc.trace(fn, torch.zeros(3)).save(str(trace))
    r = subprocess.run([sotc_bin, "compile", str(trace), "--target", "cpu", "-o",
                        str(tmp_path / "k.so")], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode != 0 and "error E3005: " + message in r.stderr, r.stderr
    assert "test_functionals.py:" in r.stderr, r.stderr
    assert not (tmp_path / "k.so").exists()


def resize_then_scale(x, t):
    x.resize_as_(t)
    return x * 2


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_resize_as_writes_into_the_callers_tensor(kind, tmp_path, sotc_bin):  # noqa: F811
    """x.resize_as_(t) replaces x for the rest of the function and, x being an argument, the
    caller's array or tensor takes the new shape and the first elements, as in eager."""
    x, t = np.arange(6, dtype=np.float32).reshape(2, 3), np.zeros((4, 2), np.float32)
    trace = tmp_path / "t.pb"
    sotc.trace(resize_then_scale, torch.from_numpy(x.copy()), torch.from_numpy(t)).save(str(trace))
    r = subprocess.run([sotc_bin, "compile", str(trace), "--target", "cpu", "-o",
                        str(tmp_path / "k.so")], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    arg = x.copy() if kind == "numpy" else torch.tensor(x)  # a storage torch may resize
    got = sotc.load(tmp_path / "k.so")(arg, t if kind == "numpy" else torch.from_numpy(t))
    eager_arg = torch.tensor(x)
    expected = resize_then_scale(eager_arg, torch.from_numpy(t))
    assert tuple(arg.shape) == (4, 2)
    np.testing.assert_array_equal(np.asarray(got)[:3], expected.numpy()[:3])  # the kept elements
    np.testing.assert_array_equal(np.asarray(arg).reshape(-1)[:6], x.reshape(-1))


def sparse_like(x):
    return torch.zeros_like(x, layout=torch.sparse_coo)


def filled_by_rows(x):
    return torch.full((2,), x)


@pytest.mark.parametrize("fn,message", [
    (sparse_like, "E3004: torch.zeros_like(): layout torch.sparse_coo is not supported"),
    (filled_by_rows, "a tensor fill_value holds one element, not a tensor of shape [4]"),
])
def test_layouts_and_fill_values_that_do_not_compile(sotc_bin, tmp_path, fn, message):
    path = sotc.trace(fn, "float32[4]", sotc_framework="torch").save(str(tmp_path / "t.pb"))
    library = tmp_path / "t.so"
    r = subprocess.run([sotc_bin, "compile", path, "--target", "cpu", "-o", str(library)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and message in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not library.exists()
