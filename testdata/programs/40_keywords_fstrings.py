# sotc-trace: fn x=float32[4,8] eps=0.001 tag='n'
import paddle


def fn(x, eps, tag):
    m = paddle.mean(x, axis=1, keepdim=True)
    y = paddle.clip(x - m, min=-1.0, max=1.0)
    label = f"{tag}:{eps:.3f}:{x.shape[1]:03d}:{tag!r}"
    return y * len(label) + eps, label
