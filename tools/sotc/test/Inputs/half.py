import torch


def softmax(x):
    return torch.softmax(x, -1)


def axpy(x, y):
    return x * 2 + y


def linear(x, w):
    return torch.relu(x @ w)
