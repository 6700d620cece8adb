# sotc-trace: fn x=float32[8,6] sizes=[1,2,3,4]
import paddle


def fn(x, sizes):
    head = x[2:5]
    tail = x[:, 1:4]
    picked = sizes[1:3]
    copy = sizes[:]
    copy[0:2] = [5]
    copy[1:] = copy[1:] + [7]
    return head[:, 0:3] * picked[0] + tail[0:3] * len(copy), copy
