# sotc-trace: fn x=float32[16,256] weight=float32[256]
import paddle


def rms_norm(x, weight, eps=1e-6):
    variance = x.pow(2).mean(axis=-1, keepdim=True)
    return x * paddle.rsqrt(variance + eps) * weight


def fn(x, weight):
    return rms_norm(x, weight)
