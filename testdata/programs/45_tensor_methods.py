# sotc-trace: fn x=float32[4,6] w=float32[4,4]
import paddle


def fn(x, w):
    left, right = x.chunk(2, axis=1)
    y = left @ right.T
    y @= w
    x.clear_gradient()
    return y * x.is_tensor(), [part.sum() for part in x.chunk(3, axis=0 if x.ndim > 5 else 1)]
