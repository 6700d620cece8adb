# sotc-trace: fn x=float32[8] y=float32[8]
import paddle


def fn(x, y):
    items = [x, y]
    items.append(x * y)
    items[0] = items[0] + 1
    last = items.pop()
    items.extend([last, last])
    return items
