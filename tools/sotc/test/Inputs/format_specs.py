def ok(x, n):
    return x * len(f"{n:+05d}|{n:x}|{n / 3:.2f}|{n:8.3e}")


def percent(x, n):
    return x * len(f"{n:.1%}")


def hostile(x, n):
    return x * len(f"{n:5%n d}")


def align(x, n):
    return x * len(f"{n:>8}")
