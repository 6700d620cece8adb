import paddle


def fn(x):
    return paddle.exp(x) + x
