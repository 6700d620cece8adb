# sotc-trace: fn x=float32[4,8,16]
import paddle


def fn(x):
    s = x.sum(axis=-1, keepdim=True)
    m = x.mean(axis=1)
    r = x.reshape([4, -1])
    t = r.transpose([1, 0])
    return s, m, t.astype("float16")
