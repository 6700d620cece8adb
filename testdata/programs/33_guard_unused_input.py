# sotc-trace: fn x=float32[2,3] y=float32[2,3] z=float32[5] n=1 unused=7
import paddle


def fn(x, y, z, n, unused):
    # z is returned untouched and `unused` feeds nothing: neither is guarded.
    return x + y + n, z
