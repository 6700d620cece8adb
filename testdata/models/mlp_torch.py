# sotc-model: make_model x=float32[8,64]
"""A two-layer MLP with a GELU, in torch."""
import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, dim=64, hidden=256, out=10):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.drop = nn.Dropout(0.1)
        self.fc2 = nn.Linear(hidden, out)

    def forward(self, x):
        return self.fc2(self.drop(self.act(self.fc1(x))))


def make_model():
    torch.manual_seed(0)
    return MLP().eval()
