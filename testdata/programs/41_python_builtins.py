# sotc-trace: fn x=float32[4,8] names=['b','a','c'] opts={}
import operator

import paddle


def double(v):
    return v * 2


def positive(v):
    return v > 0


def fn(x, names, opts):
    codes = [ord(n) - ord("a") for n in names]
    label = "".join(chr(c + ord("A")) for c in codes)
    scaled = list(map(double, codes))
    kept = list(filter(positive, codes))
    table = dict(zip(names, scaled))
    table.update(dict.fromkeys(["z"], 5))
    ordered = sorted(names, key=lambda n: table[n])
    order = list(ordered)
    order.sort(reverse=True)
    order.remove("c")
    q, r = divmod(pow(3, 4, 7) + 10, 4)
    text = "{}-{:.1f}-{name}".format(label, 2.5, name=ordered[0]).replace("-", "_").strip("_")
    parts = text.split("_")
    message = "%s:%d:%.2f" % (parts[0], q, 0.5)
    flags = (hasattr(x, "shape"), hasattr(x, "no_such_thing"), callable(double), len(opts))
    y = operator.mul(operator.add(x, q), r) + operator.getitem(scaled, 1)
    if operator.truth(kept) and names.index("a") == 1 and names.count("b") == 1:
        y = operator.neg(y)
    return y, message, flags, order, table, parts
