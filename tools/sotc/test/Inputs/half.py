import torch


def softmax(x):
    return torch.softmax(x, -1)


def axpy(x, y):
    return x * 2 + y


def linear(x, w):
    return torch.relu(x @ w)


def column_and_row(x):
    e = torch.exp(x - 1)
    return e.sum(0, keepdim=True), e.mean(1)
