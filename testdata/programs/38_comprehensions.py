# sotc-trace: fn x=float32[4,8] scales=[0.5,2.0,3.0]
import paddle


def fn(x, scales):
    i = 10
    parts = [x * s for s in scales]
    shifted = {f"p{i}": p + i for i, p in enumerate(parts)}
    kept = {k for k in shifted if k != "p1"}
    total = shifted["p0"] + shifted["p2"]
    return total * len(kept) + i, parts[1]
