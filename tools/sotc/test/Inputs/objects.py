"""A function that returns an object of its own class (as a decoder returns its cache)."""


class Pair:
    def __init__(self, low, high):
        self.low = low
        self.high = high
        self.count = 2


def split(x):
    return Pair(x - 1, x * 2)
